"""Counts in the words a person reads: ``1 model request``, ``4 model requests``.

One helper for every layer that writes a count into a line (the CLI's output, a usage
report rendered as text), so that no line says ``1 model requests``.
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` (thousands separated) and ``noun``, in the plural unless ``count`` is 1:
    ``noun`` + ``s``, or ``plural`` for a noun that does not take an ``s``."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
