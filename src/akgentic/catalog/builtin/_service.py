"""What the shipped services share: a forbid-extra config model holding its API key
privately, and the headers that carry it."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from akgentic.core.urls import http_url as checked_url

__all__ = ["KeyedService", "http_url"]


def http_url(value: Any) -> Any:
    """A base URL: ``http://`` or ``https://``, no trailing slash."""
    if isinstance(value, str):
        value = value.strip().rstrip("/")
    return checked_url(value, "http://localhost:8000")


class KeyedService(BaseModel):
    """A service's config; its API key arrives through ``bind_credential`` and stays in a
    private attribute (never serialized)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    _api_key: str | None = PrivateAttr(default=None)

    def bind_credential(self, secret: str) -> None:
        """The API key (kept private: never serialized)."""
        self._api_key = secret

    def key_header(self, name: str = "Authorization", scheme: str = "Bearer") -> dict[str, str]:
        """The header carrying the key (``{}`` without one): ``Authorization: Bearer <key>``
        by default, or ``name: <key>`` with an empty ``scheme``."""
        if not self._api_key:
            return {}
        return {name: f"{scheme} {self._api_key}" if scheme else self._api_key}
