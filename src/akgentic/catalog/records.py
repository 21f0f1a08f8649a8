"""What the catalog's service hands out: who acts, and views that never hold a secret.

Views are what a CLI prints and an HTTP endpoint returns. A credential appears in them
only as ``credential_set``; the ciphertext and the secret never leave the service.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from akgentic.catalog.manifest import Access, CredentialKind

__all__ = ["CatalogListing", "Principal", "ToolDetail", "ToolView"]


class Principal(BaseModel):
    """Who acts, and through which surface: what the audit trail records as ``actor``."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    via: Literal["cli", "api", "python"] = "python"

    @property
    def actor(self) -> str:
        """``via:name``, e.g. ``cli:alice``."""
        return f"{self.via}:{self.name}"


class ToolView(BaseModel):
    """One line of the catalog: a type (configured or not), or an orphaned instance.

    ``kind`` is ``card`` (agents can use it), ``service`` (an endpoint behind cards) or
    ``orphaned`` (a stored instance whose type is not installed: ignored). ``enabled``
    lists the surfaces whose flag is on; ``configured`` says whether a row exists.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str
    type_name: str
    kind: Literal["card", "service", "orphaned"]
    description: str = ""
    access: Access | None = None
    credential_kind: CredentialKind | None = None
    credential_set: bool = False
    enabled: list[str] = Field(default_factory=list)
    configured: bool = False
    config: dict[str, Any] = Field(default_factory=dict)
    probe: bool = False
    status: Literal["unchecked", "active", "error"] = "unchecked"
    status_detail: str = ""
    last_check_at: datetime | None = None
    source: str = ""


class ToolDetail(ToolView):
    """A view with the schemas: the config the admin sets, the params the model sees."""

    config_schema: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, dict[str, Any]] = Field(default_factory=dict)


class CatalogListing(BaseModel):
    """The whole catalog: types and named instances, orphaned rows, discovery problems."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    tools: list[ToolView] = Field(default_factory=list)
    orphaned: list[ToolView] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
