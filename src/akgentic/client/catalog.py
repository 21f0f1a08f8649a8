"""The tool catalog over HTTP: ``CatalogService``'s verbs, acting as the server's token.

``AkgenticClient.catalog`` is a :class:`RemoteCatalog`; its verbs are those of
:class:`~akgentic.catalog.CatalogService` without the principal — the server takes it from
the request (``api:token-<id>``, see the server's README)::

    client.catalog.configure("web_search", {"api_base_url": "https://api.tavily.com"})
    client.catalog.set_credential("web_search", key)  # sent in the body, never echoed
    client.catalog.enable("web_search", ["agents", "api"])  # api: this client may probe it
    view, result = client.catalog.probe("web_search")

The request bodies here are the contract the server's ``/catalog`` routes read; the
answers are the catalog's own views (:class:`~akgentic.catalog.ToolView`, ...), which never
hold a secret. Any refusal raises :class:`~akgentic.client.ServerError` with its reason.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from akgentic.catalog import CatalogListing, ProbeResult, ToolDetail, ToolView
from akgentic.catalog.manifest import NAME_PATTERN
from akgentic.storage import CATALOG_SURFACES, CatalogAuditRecord

if TYPE_CHECKING:
    from akgentic.client.client import AkgenticClient

__all__ = [
    "ConfigureTool",
    "DisableTool",
    "EnableTool",
    "ProbeOutcome",
    "ProbeTool",
    "RemoteCatalog",
    "SetCredential",
]

T = TypeVar("T")

Surface = Literal["agents", "api", "cli"]
TypeName = Field(
    default=None,
    pattern=NAME_PATTERN,
    description="The type of a new instance whose name is not a type's name.",
)


def _surfaces(*names: str) -> list[Surface]:
    return [cast(Surface, name) for name in names]


class _Request(BaseModel):
    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")


class EnableTool(_Request):
    """Turn a tool on for ``surfaces`` (default: agents). Audited."""

    surfaces: list[Surface] = Field(default_factory=lambda: _surfaces("agents"), min_length=1)
    type_name: str | None = TypeName


class DisableTool(_Request):
    """Turn a tool off for ``surfaces`` (default: every surface). Audited."""

    surfaces: list[Surface] = Field(
        default_factory=lambda: _surfaces(*CATALOG_SURFACES), min_length=1
    )


class ConfigureTool(_Request):
    """Replace a tool's non-secret config, validated against its type. Audited (the config
    is not secret)."""

    config: dict[str, Any]
    type_name: str | None = TypeName


class SetCredential(_Request):
    """A tool's secret, sealed by the server (``AKGENTIC_SECRET_KEY``) and never answered
    back: the audit says "set", views say ``credential_set``."""

    secret: SecretStr = Field(min_length=1, max_length=16_384)
    type_name: str | None = TypeName


class ProbeTool(_Request):
    """Check that the tool's outside service answers, within ``timeout`` seconds."""

    timeout: float | None = Field(default=None, gt=0, le=120)


class ProbeOutcome(BaseModel):
    """The tool's view with its new status, and the probe's result."""

    tool: ToolView
    result: ProbeResult


class RemoteCatalog:
    """A server's tool catalog, driven with ``CatalogService``'s verbs (see the module
    docstring)."""

    def __init__(self, client: AkgenticClient) -> None:
        self.client = client

    def _send(
        self, method: str, path: str, shape: type[T], body: BaseModel | None = None, **kwargs: Any
    ) -> T:
        if body is not None:
            kwargs["json"] = body.model_dump(mode="json", exclude_none=True) | _secret(body)
        return self.client.request_json(method, f"/catalog{path}", shape, **kwargs)

    def list(self) -> CatalogListing:
        """Every type and named instance, the orphaned rows, discovery's problems."""
        return self._send("GET", "/tools", CatalogListing)

    def show(self, name: str) -> ToolDetail:
        return self._send("GET", _tool(name), ToolDetail)

    def enable(
        self, name: str, surfaces: Iterable[str] = ("agents",), *, type_name: str | None = None
    ) -> ToolView:
        body = EnableTool.model_validate({"surfaces": list(surfaces), "type_name": type_name})
        return self._send("POST", _tool(name, "/enable"), ToolView, body)

    def disable(self, name: str, surfaces: Iterable[str] = CATALOG_SURFACES) -> ToolView:
        body = DisableTool.model_validate({"surfaces": list(surfaces)})
        return self._send("POST", _tool(name, "/disable"), ToolView, body)

    def configure(
        self, name: str, config: dict[str, Any], *, type_name: str | None = None
    ) -> ToolView:
        body = ConfigureTool(config=config, type_name=type_name)
        return self._send("PUT", _tool(name, "/config"), ToolView, body)

    def set_credential(
        self, name: str, secret: str | None, *, type_name: str | None = None
    ) -> ToolView:
        """Store ``secret`` (in the request body only); None clears it."""
        if secret is None:
            params = {"type_name": type_name} if type_name else {}
            return self._send("DELETE", _tool(name, "/credential"), ToolView, params=params)
        body = SetCredential(secret=SecretStr(secret), type_name=type_name)
        return self._send("PUT", _tool(name, "/credential"), ToolView, body)

    def probe(self, name: str, timeout: float | None = None) -> tuple[ToolView, ProbeResult]:
        body = ProbeTool(timeout=timeout)
        outcome = self._send(
            "POST", _tool(name, "/probe"), ProbeOutcome, body, timeout=(timeout or 10.0) + 30.0
        )
        return outcome.tool, outcome.result

    def remove(self, name: str, *, force: bool = False) -> bool:
        """Remove an orphaned instance's row (an installed type's only with ``force``);
        False when none is stored."""
        from akgentic.client.client import ServerError

        params = {"force": "true"} if force else None
        try:
            self.client.request("DELETE", "/catalog" + _tool(name), params=params)
        except ServerError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def audit(
        self, name: str | None = None, limit: int | None = None
    ) -> builtins.list[CatalogAuditRecord]:
        """The audit trail, oldest first (of ``name`` only; the last ``limit`` lines)."""
        params = {k: v for k, v in {"name": name, "limit": limit}.items() if v is not None}
        return self._send("GET", "/audit", builtins.list[CatalogAuditRecord], params=params)


def _tool(name: str, tail: str = "") -> str:
    """The path of an instance's (or type's) route under ``/catalog``: the name as one
    segment (:func:`~akgentic.client.client.path_segment`), then ``tail``."""
    from akgentic.client.client import path_segment

    return f"/tools/{path_segment(name)}{tail}"


def _secret(body: BaseModel) -> dict[str, Any]:
    """The secret of a :class:`SetCredential`, revealed for the request body only."""
    if isinstance(body, SetCredential):
        return {"secret": body.secret.get_secret_value()}
    return {}
