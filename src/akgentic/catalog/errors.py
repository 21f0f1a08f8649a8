"""The errors of the tool catalog. Each message says what to do next, and none ever
carries a secret (a credential or the key): they reach logs, CLIs and HTTP answers."""

from __future__ import annotations

__all__ = [
    "CatalogError",
    "CatalogUnavailableError",
    "ConfigError",
    "CredentialError",
    "NotEnabledError",
    "OrphanedInstanceError",
    "SecretKeyError",
    "UnknownToolError",
]


class CatalogError(Exception):
    """Base of every error raised by ``akgentic.catalog``."""


class UnknownToolError(CatalogError, LookupError):
    """No type and no instance has this name; the message lists the known ones."""


class OrphanedInstanceError(CatalogError, LookupError):
    """The instance's type is no longer installed: the row is ignored until it returns."""


class NotEnabledError(CatalogError):
    """The instance is not enabled on the surface that asked for it."""


class ConfigError(CatalogError, ValueError):
    """An instance's non-secret config does not validate against its type."""


class SecretKeyError(CatalogError):
    """``AKGENTIC_SECRET_KEY`` is needed and missing, or is not a 32-byte key."""


class CredentialError(CatalogError):
    """A stored credential cannot be decrypted: another key, or altered bytes. Never
    garbage: AES-GCM authenticates every byte."""


class CatalogUnavailableError(CatalogError):
    """A catalog tool was wired where no catalog is bound (see ``bind_catalog``)."""
