"""Catalog types the tests declare: a card that takes a key, and services to probe."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr

from akgentic.catalog import ToolManifest, register_tool
from akgentic.tool.core import ToolCard

RELEASE = threading.Event()
"""Set at the end of a test to let a hanging probe's thread finish."""
PROBING = threading.Event()
"""Set by GatedService's probe once it runs: the probe has read its row."""
PROCEED = threading.Event()
"""Set by the test to let GatedService's probe answer (and at the end of every test)."""


def key_digest(secret: str) -> str:
    """What VaultTool reports of its key: enough to prove which key it got, never the key."""
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


@register_tool
class VaultTool(ToolCard):
    """A card whose one tool needs the key the catalog hands it at wiring time."""

    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="vault",
        description="Opens the vault with its key.",
        access="write",
        credential="api_key",
    )

    label: str = "main"

    _key: str | None = PrivateAttr(default=None)

    def bind_credential(self, secret: str) -> None:
        self._key = secret

    def get_tools(self) -> list[Callable[..., Any]]:
        card = self

        def vault_status() -> str:
            """Say whether the vault opens."""
            key = card._key
            if key is None:
                return "the vault is locked: no key"
            return f"the vault {card.label} opened with key {key_digest(key)}"

        return [vault_status]


@register_tool
class HangingService(BaseModel):
    """A service whose probe ignores its timeout (until RELEASE is set)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")
    manifest: ClassVar[ToolManifest] = ToolManifest(name="hanging", description="Never answers.")

    def probe(self, timeout: float) -> str:
        RELEASE.wait()
        return "released"


@register_tool
class GatedService(BaseModel):
    """A service whose probe is held in flight: it says it runs (PROBING), then answers
    once the test lets it (PROCEED) — what the test does meanwhile happens mid-probe."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")
    manifest: ClassVar[ToolManifest] = ToolManifest(name="gated", description="Answers when told.")

    note: str = ""  # a setting to change while a probe is in flight

    def probe(self, timeout: float) -> str:
        PROBING.set()
        PROCEED.wait()
        return "let through"


@register_tool
class LeakyService(BaseModel):
    """A service whose probe puts its credential in its error message."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")
    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="leaky", description="Says too much.", credential="token"
    )

    _token: str = PrivateAttr(default="")

    def bind_credential(self, secret: str) -> None:
        self._token = secret

    def probe(self, timeout: float) -> str:
        raise RuntimeError(f"the server rejected token {self._token} (twice: {self._token})")
