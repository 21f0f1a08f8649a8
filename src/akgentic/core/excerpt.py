"""How an error message quotes a value it was given: enough to recognise it, never all.

A model can send a tool a megabyte, a person can paste one, a damaged row can hold one;
an error that echoes it whole floods the model's context, the terminal and the log.
Every message that quotes input quotes it through :func:`excerpt` (a value, as its
``repr``) or :func:`clip` (text that is already a message, e.g. a nested error's). An
answer too long for a model's context (a page, a server's result) is :func:`cut`, with a
note saying how much was left out and how to get less.

A pydantic ``ValidationError`` is worded here too, once for every surface (the CLI's
``error:`` line, a server's ``detail``, a tool's refusal): :func:`validation_words`,
``field.path: message`` on one line, a validator's own words without pydantic's
``Value error, `` (:func:`validator_words`), never its title, ``[type=…]`` or link.
"""

from __future__ import annotations

from pydantic import ValidationError

__all__ = [
    "EXCERPT_CHARS",
    "clip",
    "cut",
    "exception_line",
    "exception_words",
    "excerpt",
    "validation_words",
    "validator_words",
]

EXCERPT_CHARS = 80
"""The longest quotation of a value in an error message, in characters."""


def clip(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut at ``limit`` characters with ``…`` and its full length when longer."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text)} characters)"


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` through :func:`clip`: ``'mmmm…' (1000002 characters)``."""
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails (or recurses too deep) is still named
        text = f"<{type(value).__name__}>"
    return clip(text, limit)


_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")
"""What pydantic puts before the words of a validator that raised ``ValueError`` (or
failed an ``assert``)."""


def validator_words(msg: str) -> str:
    """A pydantic error's ``msg`` as people read it: a validator's own words, without
    pydantic's ``Value error, `` (or ``Assertion failed, ``) in front of them."""
    for prefix in _PYDANTIC_PREFIXES:
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def validation_words(exc: ValidationError, limit: int = 5, top: str = "(top)") -> str:
    """A pydantic ``ValidationError`` on one line: ``field.path: message`` parts (the
    first ``limit``, and how many more), ``top`` for an error of the whole object, the
    messages through :func:`validator_words`; never pydantic's title line, ``[type=…,
    input_value=…]`` or link to its site."""
    found = exc.errors(include_url=False)
    parts = [
        f"{'.'.join(map(str, e['loc'])) or top}: {validator_words(' '.join(e['msg'].split()))}"
        for e in found
    ]
    more = f" (and {len(parts) - limit} more)" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more


def exception_words(exc: BaseException) -> str:
    """``exc``'s words on one line: a pydantic ``ValidationError`` as
    :func:`validation_words` says it, any other with its whitespace runs (a database
    driver's message spans several lines) made single spaces; empty when its ``str()``
    raises. Not clipped: for a message that already names what failed."""
    try:
        if isinstance(exc, ValidationError):
            return validation_words(exc)
        return " ".join(str(exc).split())
    except Exception:
        return ""


def exception_line(exc: BaseException, limit: int = 400) -> str:
    """``exc`` on one line for a message: its class and its words
    (:func:`exception_words`), through :func:`clip`; a ``ValidationError`` also names the
    model that refused (``ValidationError for Settings: port: …``). An exception whose
    ``str()`` raises is named by its class."""
    words = exception_words(exc)
    name = type(exc).__name__
    if isinstance(exc, ValidationError):
        name = f"{name} for {exc.title}"
    return clip(f"{name}: {words}" if words else name, limit)


def cut(text: str, budget: int, hint: str) -> str:
    """``text`` stripped, or its first ``budget`` characters and a note naming how many
    more there were and ``hint`` (how to get less)."""
    text = text.strip()
    if len(text) <= budget:
        return text
    return f"{text[:budget].rstrip()}\n[cut: {len(text) - budget:,} more characters; {hint}]"
