"""How an error message quotes a value it was given: enough to recognise it, never all.

A model can send a tool a megabyte, a person can paste one, a damaged row can hold one;
an error that echoes it whole floods the model's context, the terminal and the log.
Every message that quotes input quotes it through :func:`excerpt` (a value, as its
``repr``) or :func:`clip` (text that is already a message, e.g. a nested error's).
"""

from __future__ import annotations

__all__ = ["EXCERPT_CHARS", "clip", "excerpt"]

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
