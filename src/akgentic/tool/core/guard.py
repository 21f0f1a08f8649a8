"""What a tool callable must be, and what its unexpected failure becomes.

Two contracts the factory enforces on every callable a card hands out on TOOL_CALL:

- **At wiring time** (:func:`check_tool`): a tool is a named function with a docstring
  and a type hint on every parameter. The model calls a tool by its name, decides when
  to call it from its docstring, and fills its arguments from a schema built from the
  hints; a lambda, a missing docstring or a bare parameter would otherwise surface as a
  confused model (or a failed run) deep in a turn. Each mistake is one ``TypeError``
  line naming the card, the tool and what to write instead, raised when the team is
  created.
- **At call time** (:func:`unexpected_failure`): a tool that raises anything but a
  ``RetriableError`` has a bug, but the turn must go on. The exception is logged with
  its traceback (for the developer) and becomes a ``RetriableError`` naming the tool and
  an excerpt of the error (for the model): nothing raw escapes a tool callable.
  :func:`passes_through` names the exceptions that are not failures but signals and
  are left alone: the framework's own (pydantic-ai's retry, deferral and run-control
  exceptions) and ``ToolObserverGone`` (the owner is gone: a defined outcome).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

from akgentic.core.excerpt import clip
from akgentic.tool.errors import RetriableError, ToolObserverGone

__all__ = ["check_tool", "passes_through", "unexpected_failure"]

logger = logging.getLogger("akgentic.tool")

_FRAMEWORK_PACKAGES = ("pydantic_ai",)
"""Packages whose exceptions raised in a tool are control flow (retry, defer, stop)."""


def check_tool(fn: Callable[..., Any], owner: str, *, documented: bool) -> None:
    """Refuse a tool the model could not use well; ``owner`` names its card.

    ``documented`` says whether the tool will carry a description (its own docstring, or
    the param's ``instructions``). Raises ``TypeError`` with one line saying what to do.
    """
    name = getattr(fn, "__name__", "")
    if not callable(fn) or not isinstance(name, str) or not name.isidentifier():
        raise TypeError(
            f"{owner}.get_tools() returned {fn!r}: a tool must be a named function "
            f"(def my_tool(...)) — the model calls a tool by its name"
        )
    where = f"{owner}.get_tools(): tool {name!r}"
    if not documented:
        raise TypeError(
            f"{where} has no docstring: write one saying what it does and when to call it "
            f"— the docstring is the only description the model reads"
        )
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return  # a builtin or another callable object: its schema is not ours to check
    signature = inspect.signature(fn)
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(
                f"{where} takes *{param.name}: give it named parameters, each with a type "
                f"hint — the model's argument schema is built from them"
            )
        if param.annotation is inspect.Parameter.empty:
            raise TypeError(
                f"{where}: parameter {param.name!r} has no type hint: annotate it "
                f"(e.g. {param.name}: str) — the model's argument schema is built from "
                f"the hints"
            )


def passes_through(exc: BaseException, retry: type[Exception] | None) -> bool:
    """Whether ``exc`` raised in a tool is a signal to leave alone rather than a failure."""
    if isinstance(exc, ToolObserverGone):
        return True
    if retry is not None and isinstance(exc, retry):
        return True
    module = type(exc).__module__ or ""
    return module.split(".", 1)[0] in _FRAMEWORK_PACKAGES


def unexpected_failure(name: str, exc: Exception) -> RetriableError:
    """Log ``exc`` (a bug in tool ``name``) and return the retry the model reads instead."""
    logger.error("tool %s raised %s", name, type(exc).__name__, exc_info=exc)
    return RetriableError(
        f"{name} failed ({type(exc).__name__}: {clip(str(exc))}). Try again; if it fails "
        f"again, report that {name} is not working."
    )
