"""Arguments checked against a callable's annotations, and bad ones explained.

One mechanism for both ways a capability is called with values it did not choose:

- a **tool** is called by a model (pydantic-ai validates against the schema first, but
  a tool is also called directly, by a program, by a test); :class:`Parameters` checks
  each given argument against its annotation, so ``search_planning(query=None)`` is a
  ``RetriableError`` saying what ``query`` must be, never an ``AttributeError`` from
  inside the tool;
- a **command** is typed as text; ``CommandRegistry`` converts each token with the same
  adapters and explains a failure with the same words.

An explanation names the argument and the item that is wrong (``ids[1]``, ``items[0].op``),
what was expected, and an excerpt of what was given (never the whole input).
Unannotated parameters, ``Any`` and annotations pydantic cannot build a validator for
pass through unchecked.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from akgentic.core.excerpt import excerpt, validator_words
from akgentic.tool.errors import RetriableError

__all__ = ["SEARCH_LIMIT_MAX", "Parameters", "SearchLimit", "explain_validation", "type_name"]

_UNCHECKED: tuple[Any, ...] = (Any, inspect.Parameter.empty, object)
_MODULE_PATH = re.compile(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])")
_SHOWN_ERRORS = 3

SEARCH_LIMIT_MAX = 100
"""Most hits one search of a team's shared state returns (the plan's, the graph's)."""

SearchLimit = Annotated[int, Field(ge=1, le=SEARCH_LIMIT_MAX)]
"""A search's ``limit``, in its callable's signature: out of bounds it is the command's
usage error (``/search_planning x limit=0`` answered "No task matches" of a plan with
matching tasks), and the model sees the bounds in the tool's schema."""


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations; unresolvable string annotations are left out (unchecked)."""
    try:
        return typing.get_type_hints(fn, include_extras=True)  # keeps discriminators
    except Exception:  # a forward reference to a closure-local type, for one
        raw: dict[str, Any] = dict(getattr(fn, "__annotations__", {}))
        return {name: hint for name, hint in raw.items() if not isinstance(hint, str)}


def _location(name: str, loc: tuple[int | str, ...]) -> str:
    parts = [name]
    for part in loc:
        if part in ("function-after", "function-before", "function-plain", "function-wrap"):
            continue
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
    return "".join(parts)


def explain_validation(exc: ValidationError, name: str) -> str:
    """``ids[1]: Input should be a valid integer, got 'x'`` — each problem (the first
    few) at its place inside argument ``name``, quoting an excerpt of the bad value."""
    problems = []
    errors = exc.errors(include_url=False)
    for error in errors[:_SHOWN_ERRORS]:
        where = _location(name, tuple(error["loc"]))
        said = _said(error)
        problems.append(f"{where}: {said}, got {excerpt(error.get('input'))}")
    if len(errors) > _SHOWN_ERRORS:
        problems.append(f"and {len(errors) - _SHOWN_ERRORS} more")
    return "; ".join(problems)


def _said(error: Any) -> str:
    """One error's words. pydantic says of an item that lacks the field choosing its kind
    in a tagged union ``Unable to extract tag using discriminator 'op'``: whoever typed
    ``/update_planning [{"title": "x"}]`` learns nothing from it."""
    if error["type"] == "union_tag_not_found":
        field = error.get("ctx", {}).get("discriminator", "the field")
        return f"has no {field}, the field that says which kind of item it is"
    return validator_words(error["msg"])


class Parameters:
    """A callable's parameters, their annotations and (lazily) a validator for each."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        """``name``: what the explanations call the tool (default: its ``__name__``)."""
        self.name = name or str(getattr(fn, "__name__", "this tool"))
        self.signature = inspect.signature(fn)
        self.hints = _type_hints(fn)
        self._adapters: dict[str, TypeAdapter[Any] | None] = {}

    def hint(self, name: str) -> Any:
        """The resolved annotation of parameter ``name`` (``Parameter.empty`` if none)."""
        return self.hints.get(name, inspect.Parameter.empty)

    def adapter(self, name: str) -> TypeAdapter[Any] | None:
        """The validator of parameter ``name``; None when it is not checked."""
        if name not in self._adapters:
            hint = self.hint(name)
            adapter: TypeAdapter[Any] | None = None
            if hint not in _UNCHECKED:
                try:
                    adapter = TypeAdapter(hint)
                except Exception:  # a type pydantic cannot validate: left to the callable
                    adapter = None
            self._adapters[name] = adapter
        return self._adapters[name]

    def check(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> inspect.BoundArguments:
        """The arguments bound and each one validated (and converted) by its annotation.

        Raises :class:`~akgentic.tool.errors.RetriableError` naming the argument, the
        item and what was expected; arguments left out keep the callable's defaults.
        """
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise RetriableError(
                f"{self.name}: {exc}. Call it as {self.name}{self.usage()}."
            ) from None
        for name, value in list(bound.arguments.items()):
            kind = self.signature.parameters[name].kind
            adapter = self.adapter(name)
            if adapter is None or kind is inspect.Parameter.VAR_KEYWORD:
                continue
            try:
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    bound.arguments[name] = tuple(adapter.validate_python(v) for v in value)
                else:
                    bound.arguments[name] = adapter.validate_python(value)
            except ValidationError as exc:
                raise RetriableError(
                    f"{self.name}: invalid argument {explain_validation(exc, name)}. "
                    f"Call it as {self.name}{self.usage()}."
                ) from None
        return bound

    def usage(self) -> str:
        """The signature as the model reads it: ``(query: str, limit: int = 5)``."""
        parts = []
        for param in self.signature.parameters.values():
            hint = self.hint(param.name)
            text = param.name
            if hint is not inspect.Parameter.empty:
                text += f": {type_name(hint)}"
            if param.default is not inspect.Parameter.empty:
                text += f" = {excerpt(param.default, 40)}"
            parts.append(text)
        return f"({', '.join(parts)})"


def type_name(hint: Any) -> str:
    """``int``, ``list[Entity]``, ``str | None``: a type as a person reads it (no module
    paths, no ``Annotated`` metadata)."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if hint in (str, Any, inspect.Parameter.empty):
        return "str"
    return _nested_name(hint)


def _nested_name(hint: Any) -> str:
    """:func:`type_name` inside a type: ``Annotated`` metadata dropped at every depth
    (``list[Annotated[A | B, FieldInfo(...)]]`` reads ``list[A | B]``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _nested_name(args[0])
    if hint is type(None):
        return "None"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_nested_name(arg) for arg in args)
    if origin is not None and args and origin is not typing.Literal:
        inner = ", ".join("..." if arg is Ellipsis else _nested_name(arg) for arg in args)
        return f"{getattr(origin, '__name__', None) or _nested_name(origin)}[{inner}]"
    if isinstance(hint, type) and not args:
        return hint.__name__
    return _MODULE_PATH.sub("", str(hint))
