"""akgentic.catalog: which tools exist, which are configured and allowed, whether they answer.

Seed 001's tool catalog. Types are classes in code that declare themselves
(:func:`register_tool` with a :class:`ToolManifest`) and are discovered at start
(:func:`discover`: the package's own types, the ``akgentic.tools`` entry points, the
in-tree ``akgentic.catalog.custom`` package). Instances are rows of the storage bundle's
catalog store: a flag per surface (agents, the HTTP API, the CLI — all off by default;
each gates the instance's use there: wiring it into an agent, probing it over HTTP or
from the CLI — administering it is never gated),
the non-secret config, the credential sealed with AES-256-GCM under
``AKGENTIC_SECRET_KEY`` and shown only as "set", the last probe's status and time.
:class:`CatalogService` administers them (every change audited: who, when, what — never a
secret); a team card names an instance with :class:`CatalogTool`. See README.md beside
this file.
"""

from akgentic.catalog.crypto import SECRET_KEY_ENV, SecretBox, generate_key
from akgentic.catalog.errors import (
    CatalogError,
    CatalogUnavailableError,
    ConfigError,
    CredentialError,
    NotEnabledError,
    OrphanedInstanceError,
    SecretKeyError,
    UnknownToolError,
)
from akgentic.catalog.manifest import Access, CredentialKind, ToolManifest, register_tool
from akgentic.catalog.probe import (
    DEFAULT_PROBE_TIMEOUT,
    HttpAnswer,
    ProbeFailedError,
    ProbeResult,
    http_check,
    run_probe,
)
from akgentic.catalog.records import CatalogListing, Principal, ToolDetail, ToolView
from akgentic.catalog.registry import (
    CUSTOM_PACKAGE,
    ENTRY_POINT_GROUP,
    ToolRegistry,
    ToolType,
    discover,
)
from akgentic.catalog.service import CatalogService
from akgentic.catalog.wiring import (
    CatalogTool,
    CatalogToolUnavailable,
    bind_catalog,
    catalog_for,
    catalog_tools,
    named_services,
    unbind_catalog,
)

__all__ = [
    "CUSTOM_PACKAGE",
    "DEFAULT_PROBE_TIMEOUT",
    "ENTRY_POINT_GROUP",
    "SECRET_KEY_ENV",
    "Access",
    "CatalogError",
    "CatalogListing",
    "CatalogService",
    "CatalogTool",
    "CatalogToolUnavailable",
    "CatalogUnavailableError",
    "ConfigError",
    "CredentialError",
    "CredentialKind",
    "HttpAnswer",
    "NotEnabledError",
    "OrphanedInstanceError",
    "Principal",
    "ProbeFailedError",
    "ProbeResult",
    "SecretBox",
    "SecretKeyError",
    "ToolDetail",
    "ToolManifest",
    "ToolRegistry",
    "ToolType",
    "ToolView",
    "UnknownToolError",
    "bind_catalog",
    "catalog_for",
    "catalog_tools",
    "discover",
    "generate_key",
    "http_check",
    "named_services",
    "register_tool",
    "run_probe",
    "unbind_catalog",
]
