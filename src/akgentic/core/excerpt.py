"""How an error message quotes a value it was given: enough to recognise it, never all.

A model can send a tool a megabyte, a person can paste one, a damaged row can hold one;
an error that echoes it whole floods the model's context, the terminal and the log.
Every message that quotes input quotes it through :func:`excerpt` (a value, as its
``repr``) or :func:`clip` (text that is already a message, e.g. a nested error's). An
answer too long for a model's context (a page, a server's result) is :func:`cut`, with a
note saying how much was left out and how to get less.
"""

from __future__ import annotations

__all__ = ["EXCERPT_CHARS", "clip", "cut", "exception_line", "exception_words", "excerpt"]

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


def exception_words(exc: BaseException) -> str:
    """``exc``'s words on one line, whitespace runs (a pydantic ``ValidationError``, a
    database driver's message span several lines) made single spaces; empty when its
    ``str()`` raises. Not clipped: for a message that already names what failed."""
    try:
        return " ".join(str(exc).split())
    except Exception:
        return ""


def exception_line(exc: BaseException, limit: int = 400) -> str:
    """``exc`` on one line for a message: its class and its words
    (:func:`exception_words`), through :func:`clip`. An exception whose ``str()`` raises
    is named by its class."""
    words = exception_words(exc)
    name = type(exc).__name__
    return clip(f"{name}: {words}" if words else name, limit)


def cut(text: str, budget: int, hint: str) -> str:
    """``text`` stripped, or its first ``budget`` characters and a note naming how many
    more there were and ``hint`` (how to get less)."""
    text = text.strip()
    if len(text) <= budget:
        return text
    return f"{text[:budget].rstrip()}\n[cut: {len(text) - budget:,} more characters; {hint}]"
