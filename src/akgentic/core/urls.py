"""The check every configured endpoint URL goes through, said in words.

A pydantic ``pattern`` constraint refuses a bad URL with the regular expression itself
(``String should match pattern '^https?://'``), which tells whoever wrote the card
nothing they can act on; this check says what is expected and shows an example.
"""

from __future__ import annotations

from typing import TypeVar

from akgentic.core.excerpt import excerpt

__all__ = ["http_url"]

T = TypeVar("T")


def http_url(value: T, example: str, *, alternative: str = "") -> T:
    """``value`` when it is an ``http://`` or ``https://`` URL; otherwise ValueError:
    ``must be an http:// or https:// URL, e.g. https://api.tavily.com, got 'x'``
    (``alternative`` names another accepted form, said before the example). A value that
    is no string is returned for the field's own type to refuse."""
    if isinstance(value, str) and not value.strip().startswith(("http://", "https://")):
        also = f" or {alternative}" if alternative else ""
        raise ValueError(
            f"must be an http:// or https:// URL{also}, e.g. {example}, got {excerpt(value)}"
        )
    return value
