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
  a redacted excerpt of the error (for the model): nothing raw escapes a tool callable.
  :func:`passes_through` names the exceptions that are not failures but signals and
  are left alone: pydantic-ai's tool control flow (``ModelRetry``, ``ToolFailed``,
  ``CallDeferred``, ``ApprovalRequired``), the configured retry class, our own
  ``RetriableError`` and ``ToolObserverGone`` (the owner is gone: a defined outcome), and
  ``ToolNotWiredError`` (uninitialised state: a programming error, let propagate).
  Any other pydantic-ai exception (``ModelHTTPError``, ``UnexpectedModelBehavior``,
  ``UserError``, ... from a tool that runs a nested agent) is a failure like any other.

What the model reads of an exception is :func:`describe_exception`: ``"Type: text"``,
never raising (an exception whose ``__str__`` fails is ``"Type (unprintable)"``), with
URLs cut to their scheme and host and anything shaped like a credential (``key=...``,
``token: ...``, ``Bearer ...``, ``sk-...``) replaced by ``…`` (:func:`redact`). The full
text, with its traceback, goes to the log only.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic_ai import exceptions as pydantic_ai_exceptions
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry
from pydantic_ai.messages import tool_return_ta
from pydantic_core import PydanticSerializationError

from akgentic.core.excerpt import clip
from akgentic.core.surrogates import replace_lone_surrogates, replace_lone_surrogates_in
from akgentic.tool.errors import RetriableError, ToolNotWiredError, ToolObserverGone

__all__ = [
    "CONTROL_FLOW",
    "as_the_model_reads",
    "check_command",
    "check_return",
    "check_tool",
    "describe_exception",
    "passes_through",
    "redact",
    "unexpected_failure",
]

logger = logging.getLogger("akgentic.tool")

_TOOL_FAILED: tuple[type[BaseException], ...] = tuple(
    getattr(pydantic_ai_exceptions, name)
    for name in ("ToolFailed",)  # pydantic-ai >= 2: not in every version we accept
    if hasattr(pydantic_ai_exceptions, name)
)

CONTROL_FLOW: tuple[type[BaseException], ...] = (
    ModelRetry,
    *_TOOL_FAILED,
    CallDeferred,
    ApprovalRequired,
    RetriableError,
    ToolObserverGone,
    ToolNotWiredError,
)
"""Exceptions a tool raises on purpose (retry, terminal failure, defer, approval, owner
gone) and uninitialised state (a card used unwired: a programming error, not an LLM
error, so it propagates): left alone by the wrapper. Everything else is a failure."""

_URL = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)"
    r"(?:[^\s/?#@'\"<>]*@)?"  # user:password@ — never shown
    r"(?P<host>[A-Za-z0-9.\-_:\[\]]*)"
    r"(?P<rest>[^\s'\"<>]*)"
)
"""A URL: its scheme and host are kept; credentials, path, query and fragment are not."""

_SECRET_NAME = (
    r"(?:\b(?:[A-Za-z0-9]+[_\-])*"
    r"(?:api[_\-]?key|apikey|key|token|secret|passw(?:or)?d|pwd|auth|authorization"
    r"|credentials?|signature|sig|session|cookie)s?\b"
    r"|(?-i:\b[a-z][a-zA-Z0-9]*(?:Key|Token|Secret|Password|Auth))\b)"
)
_CREDENTIAL = re.compile(
    # name: value / name=value / "name": "value" (the value may carry a scheme word)
    rf"(?P<name>{_SECRET_NAME}[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(?:bearer|basic|digest|token)\s+)?[^\s&,;'\"<>)\]}]+"
    # Bearer <token> on its own
    r"|(?P<scheme>\b(?:bearer|basic)\s+)[A-Za-z0-9\-._~+/]+=*"
    # well-known key shapes: sk-/pk-/rk-..., GitHub, Slack, AWS, Google, JWT
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"
    r"|\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{10,}"
    r"|\bxox[a-z]-[A-Za-z0-9\-]{8,}"
    r"|\bA(?:KI|SI)A[0-9A-Z]{12,}"
    r"|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
    re.IGNORECASE,
)
"""Something that looks like a credential; only its name (or scheme word) is kept."""


def redact(text: str) -> str:
    """``text`` with URLs cut to ``scheme://host/…`` and credentials replaced by ``…``.

    What an error says about a request can carry its secrets (an API key in a query
    string, an ``Authorization`` header); a model, a transcript or a UI gets this
    version, the log gets the original.
    """

    def url(match: re.Match[str]) -> str:
        tail = "/…" if match["rest"] else ""
        return f"{match['scheme']}{match['host']}{tail}"

    def credential(match: re.Match[str]) -> str:
        return f"{match['name'] or match['scheme'] or ''}…"

    return _CREDENTIAL.sub(credential, _URL.sub(url, text))


def describe_exception(exc: BaseException) -> str:
    """``"Type: text"`` for ``exc``, redacted and clipped; never raises.

    ``"Type"`` when the exception has no text, ``"Type (unprintable)"`` when its
    ``__str__`` raises (or returns something that is not a string).
    """
    name = type(exc).__name__
    try:
        text = str(exc)
        return f"{name}: {clip(redact(text))}" if text else name
    except Exception:  # its __str__ raised: still named
        return f"{name} (unprintable)"


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


def check_command(fn: Callable[..., Any], owner: str) -> None:
    """Refuse a command ``/help`` could not describe; ``owner`` names its card.

    A command is registered under its ``__name__`` and described by its docstring (see
    ``CommandRegistry``); without one, ``/help`` lists a bare name. Raises ``TypeError``
    with one line saying what to do, as :func:`check_tool` does for a tool."""
    name = getattr(fn, "__name__", "")
    if not callable(fn) or not isinstance(name, str) or not name.isidentifier():
        raise TypeError(
            f"{owner}.get_commands() returned {fn!r}: a command must be a named function "
            f"(def my_command(...)) — it is typed as /its_name"
        )
    if not (inspect.getdoc(fn) or "").strip():
        raise TypeError(
            f"{owner}.get_commands(): command /{name} has no docstring: write one saying "
            f"what it does — /help shows it to whoever types the command"
        )


def check_return(value: Any) -> Any:
    """``value``, a tool's return, once it is known to serialize the way pydantic-ai
    sends it to the model (its own serializer); else a ``TypeError`` saying what to
    return instead. Raised inside :func:`as_the_model_reads`, it is a bug like any
    other: logged, and a retry naming the tool for the model — never a turn that ends
    with no answer because the reply could not be built.

    Text with a lone surrogate (a file or an answer decoded loosely, ``"\\udce9"`` in a
    server's JSON) is not a bug of the tool: every one becomes U+FFFD here, where each
    tool's output enters the model's context — left in, neither the next model request
    nor the run's events could be encoded, and the turn (and its resume) would fail. A
    return that is not text then comes back as the JSON data the model reads."""
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    try:
        tool_return_ta.dump_json(value, by_alias=True)
    except PydanticSerializationError as exc:
        sound = _without_lone_surrogates(value)
        if sound is None:
            raise TypeError(
                f"returned a {type(value).__name__}; return str, a model or JSON data"
            ) from exc
        return sound
    return value


def _without_lone_surrogates(value: Any) -> Any:
    """``value`` as the JSON data the model reads, its lone surrogates as U+FFFD; None
    when it does not serialize for another reason (or holds no lone surrogate)."""
    try:  # as Python data: JSON mode refuses a dict key holding a lone surrogate outright
        data = tool_return_ta.dump_python(value, by_alias=True)
        sound = replace_lone_surrogates_in(data)
        return None if sound is data else tool_return_ta.dump_python(sound, mode="json")
    except (PydanticSerializationError, UnicodeEncodeError):
        return None


def passes_through(exc: BaseException, retry: type[Exception] | None) -> bool:
    """Whether ``exc`` raised in a tool is a signal to leave alone rather than a failure:
    one of :data:`CONTROL_FLOW` or the configured ``retry`` class."""
    if isinstance(exc, CONTROL_FLOW):
        return True
    return retry is not None and isinstance(exc, retry)


def unexpected_failure(name: str, exc: Exception) -> RetriableError:
    """Log ``exc`` (a bug in tool ``name``) and return the retry the model reads instead.

    The log has the full text and the traceback; the model reads
    :func:`describe_exception` (redacted, clipped, never raising).
    """
    logger.error("tool %s raised %s", name, type(exc).__name__, exc_info=exc)
    return RetriableError(
        f"{name} failed ({describe_exception(exc)}). Try again; if it fails "
        f"again, report that {name} is not working."
    )


@contextmanager
def as_the_model_reads(name: str, retry: type[Exception] | None) -> Iterator[None]:
    """Around a call of tool ``name``: what escapes it is what the model may read. A
    :class:`RetriableError` (the tool's own, or :func:`unexpected_failure` for any other
    exception but the :func:`passes_through` signals) is raised as ``retry`` when one is
    configured, its lone surrogates as U+FFFD (see :func:`check_return`);
    ``BaseException`` (cancellation, Ctrl-C) is left alone."""
    try:
        try:
            yield
        except RetriableError:
            raise
        except Exception as exc:
            if passes_through(exc, retry):
                raise
            raise unexpected_failure(name, exc) from exc
    except RetriableError as exc:
        if retry is None:
            raise
        # the retry enters the model's context: its words may quote what the tool read
        raise retry(replace_lone_surrogates(str(exc))) from exc
