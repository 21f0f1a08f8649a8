"""The catalog's service layer: one facade for every surface that administers tools.

:class:`CatalogService` is what the CLI calls now and the HTTP admin endpoints will wrap:
``list``, ``show``, ``enable``, ``disable``, ``configure``, ``set_credential``, ``probe``,
``remove`` and ``audit``, each taking the acting :class:`Principal`; and ``resolve``,
which wiring uses to turn a named instance into a ready card.

The rules it keeps (seed 001):

- **The list is the live registry**, not a table: every discovered type is listed,
  unconfigured ones with every flag off. A row exists once an admin changed something.
- **Default off.** An instance serves a surface only while that surface's flag is on.
  *Serving* is being built with its config and credential to act: on ``agents``, being
  wired into an agent (:meth:`CatalogService.resolve`); on ``cli`` and ``api`` — the
  surface is the acting :class:`Principal`'s ``via`` — being probed, the one use those
  surfaces have (its outside exit opened with its credential, an ``mcp`` server started).
  Reading and administering the row (``list``, ``show``, ``audit``, ``enable``,
  ``disable``, ``configure``, ``set_credential``, ``remove``) is never gated: it is how a
  flag is turned on. A refusal is a :class:`NotEnabledError` naming the command that
  enables it. Python code (``via="python"``) is the operator's own, on no surface.
- **Audited admin actions.** Enabling, disabling, configuring, setting or clearing a
  credential and removing a row write who (``principal.actor``), when and what to the
  trail, in the same transaction as the change. A secret never: a credential change is
  recorded as ``{"credential": "set"}`` or ``"cleared"``. Reads and probes are not audited.
- **The credential is sealed** (AES-256-GCM, ``AKGENTIC_SECRET_KEY``) before it reaches
  the store, bound to its instance, shown only as ``credential_set``, and opened only to
  be handed to the built object (``bind_credential``) at wiring or probe time.
- **Orphaned rows** — their type is not installed — are listed apart and ignored: they
  cannot be enabled, configured, probed or wired until the type returns (or are removed).
- **Damaged rows** — a stored value that cannot be read — are listed as problems and
  refused the same way (each refusal names the row, the problem and the fix); ``remove``
  takes them, so one bad row never hides the others or blocks the catalog.
- **A name's type is fixed.** An instance called like a type is of that type; another
  name needs ``type_name`` on its first change.
"""

from __future__ import annotations

import builtins
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from akgentic.catalog.crypto import SecretBox
from akgentic.catalog.errors import (
    CatalogError,
    ConfigError,
    CredentialError,
    NotEnabledError,
    OrphanedInstanceError,
    UnknownToolError,
)
from akgentic.catalog.manifest import NAME_PATTERN
from akgentic.catalog.probe import DEFAULT_PROBE_TIMEOUT, ProbeResult, run_probe
from akgentic.catalog.records import CatalogListing, Principal, ToolDetail, ToolView
from akgentic.catalog.registry import ToolRegistry, ToolType, discover
from akgentic.core.serialization import non_finite
from akgentic.storage import (
    CATALOG_SURFACES,
    CatalogAuditEntry,
    CatalogAuditRecord,
    ConfigChangedError,
    InstanceGoneError,
    InstanceTypeError,
    ProbedWith,
    StorageBundle,
    ToolInstanceRecord,
)
from akgentic.storage.records import utc_now
from akgentic.tool.core import ToolCard

__all__ = ["CatalogService"]

_NAME = re.compile(NAME_PATTERN)
_MERGE_ATTEMPTS = 5
"""How often a merge is made again on a config other writers keep changing."""


def _context(name: str, type_name: str) -> str:
    """What a sealed credential is bound to (and how errors name it)."""
    return f"catalog instance {name!r} ({type_name})"


def _surfaces(surfaces: Iterable[str]) -> list[str]:
    chosen = list(dict.fromkeys(surfaces))
    unknown = [s for s in chosen if s not in CATALOG_SURFACES]
    if unknown or not chosen:
        raise ConfigError(
            f"surfaces are {', '.join(CATALOG_SURFACES)}"
            + (f"; unknown: {', '.join(unknown)}" if unknown else "; name at least one")
        )
    return chosen


class CatalogService:
    """The catalog over one storage bundle; see the module docstring.

    ``registry`` defaults to :func:`~akgentic.catalog.registry.discover` (run on first
    use); ``secrets`` to ``SecretBox.from_env()`` (read when a credential is sealed or
    opened, so a deployment without credentials needs no key).
    """

    def __init__(
        self,
        storage: StorageBundle,
        *,
        registry: ToolRegistry | None = None,
        secrets: SecretBox | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    ) -> None:
        self.storage = storage
        self._registry = registry
        self._secrets = secrets
        self.probe_timeout = probe_timeout
        self._lock = threading.Lock()

    @property
    def registry(self) -> ToolRegistry:
        """The types, discovered on first use."""
        with self._lock:
            if self._registry is None:
                self._registry = discover()
            return self._registry

    def _box(self) -> SecretBox:
        with self._lock:
            if self._secrets is None:
                self._secrets = SecretBox.from_env()
            return self._secrets

    # -- reading ------------------------------------------------------------------------
    def list(self, principal: Principal) -> CatalogListing:
        """Every type (with its same-named instance's state), every other named instance,
        the orphaned rows apart, and what discovery could not load."""
        registry = self.registry
        problems = list(registry.problems)
        rows: dict[str, ToolInstanceRecord] = {}
        for row in self.storage.catalog.list():
            if row.error is None:
                rows[row.name] = row
            else:
                problems.append(self._damaged_words(row))
        tools = [self._view(t.name, t, rows.pop(t.name, None)) for t in registry.types()]
        orphaned: list[ToolView] = []
        for name, row in rows.items():
            found = registry.get(row.type_name)
            if found is None:
                orphaned.append(self._view(name, None, row))
            else:
                tools.append(self._view(name, found, row))
        tools.sort(key=lambda v: v.name)
        return CatalogListing(tools=tools, orphaned=orphaned, problems=problems)

    def show(self, principal: Principal, name: str) -> ToolDetail:
        """One type or instance, with its config schema and the params the model sees."""
        row = self._get(name)
        found = self.registry.get(row.type_name if row is not None else name)
        if row is None and found is None:
            raise self._unknown(name)
        view = self._view(name, found, row)
        if found is None:
            return ToolDetail(**view.model_dump())
        return ToolDetail(
            **view.model_dump(), config_schema=found.config_schema(), params=found.params()
        )

    def audit(
        self, principal: Principal, name: str | None = None, limit: int | None = None
    ) -> builtins.list[CatalogAuditRecord]:
        """The audit trail, oldest first (of ``name`` only; the last ``limit`` lines)."""
        return self.storage.catalog.audit(name, limit)

    # -- administering (audited) -----------------------------------------------------------
    def enable(
        self,
        principal: Principal,
        name: str,
        surfaces: Iterable[str] = ("agents",),
        *,
        type_name: str | None = None,
    ) -> ToolView:
        """Turn the flags of ``surfaces`` on (the row is created if needed)."""
        return self._flag(principal, name, surfaces, True, type_name)

    def disable(
        self, principal: Principal, name: str, surfaces: Iterable[str] = CATALOG_SURFACES
    ) -> ToolView:
        """Turn the flags of ``surfaces`` off (all of them by default)."""
        return self._flag(principal, name, surfaces, False, None)

    def _flag(
        self,
        principal: Principal,
        name: str,
        surfaces: Iterable[str],
        on: bool,
        type_name: str | None,
    ) -> ToolView:
        chosen = _surfaces(surfaces)
        _, found = self._target(name, type_name)
        audit = self._entry(principal, "enable" if on else "disable", surfaces=chosen)
        flags = dict.fromkeys(chosen, on)
        return self._changed(
            name, found, lambda: self.storage.catalog.set_enabled(name, found.name, flags, audit)
        )

    def configure(
        self,
        principal: Principal,
        name: str,
        config: dict[str, Any],
        *,
        type_name: str | None = None,
        merge: bool = False,
        unset: Iterable[str] = (),
    ) -> ToolView:
        """Set the non-secret config, once the result validates against the type.

        ``config`` replaces the stored config; with ``merge`` its keys are laid over the
        stored ones (top level: a key's value is replaced whole) after removing the keys
        in ``unset``, so settings made one at a time add up. Unsetting a key that is not
        stored is a :class:`ConfigError` naming the stored ones. A merge is made on the
        stored config it read, written only while that is still the stored one: a writer
        that changed it meanwhile (another process) makes it read and merge again."""
        gone = list(dict.fromkeys(unset))
        if gone and not merge:
            raise ConfigError("unset removes stored keys: it merges, so it cannot replace too")
        for _ in range(_MERGE_ATTEMPTS):
            try:
                return self._configure(principal, name, config, type_name, merge, gone)
            except ConfigChangedError:
                continue  # merged on a config another writer has changed since: again
        raise CatalogError(
            f"the config of {name} kept changing while this change was merged on it "
            f"({_MERGE_ATTEMPTS} tries): run it again"
        )

    def _configure(
        self,
        principal: Principal,
        name: str,
        config: dict[str, Any],
        type_name: str | None,
        merge: bool,
        gone: builtins.list[str],
    ) -> ToolView:
        row, found = self._target(name, type_name)
        stored: dict[str, Any] | None = None
        if merge:
            stored = dict(row.config) if row is not None else {}
            missing = [key for key in gone if key not in stored]
            if missing:
                have = ", ".join(sorted(stored)) or "none"
                raise ConfigError(
                    f"cannot unset {', '.join(missing)}: not a stored setting of {name} "
                    f"(stored: {have})"
                )
            config = {**{k: v for k, v in stored.items() if k not in gone}, **config}
        odd = non_finite(config)
        if odd is not None:
            raise ConfigError(
                f"config of {name} does not validate: {odd[0]}: {odd[1]} is not a number JSON "
                f"holds (the store could not keep it, nor a client read it back); give a "
                f"finite number"
            )
        found.validate_config(config)
        audit = self._entry(principal, "configure", config=config)
        return self._changed(
            name,
            found,
            lambda: self.storage.catalog.set_config(
                name, found.name, config, audit, expected=stored
            ),
        )

    def set_credential(
        self,
        principal: Principal,
        name: str,
        secret: str | None,
        *,
        type_name: str | None = None,
    ) -> ToolView:
        """Seal and store ``secret`` (None clears it). The trail says "set" or "cleared"."""
        _, found = self._target(name, type_name)
        if found.manifest.credential is None:
            raise ConfigError(f"{found.name} takes no credential")
        blob: bytes | None = None
        if secret is not None:
            if not secret.strip():
                raise ConfigError("an empty credential: give the secret, or clear it instead")
            blob = self._box().seal(secret, _context(name, found.name))
        audit = self._entry(
            principal, "set_credential", credential="set" if blob is not None else "cleared"
        )
        return self._changed(
            name, found, lambda: self.storage.catalog.set_credential(name, found.name, blob, audit)
        )

    def remove(self, principal: Principal, name: str, *, force: bool = False) -> bool:
        """Remove an orphaned instance's row (its type is not installed); True when it
        existed. The row of an installed type is refused (:class:`CatalogError`, saying to
        disable it) unless ``force``: removing it loses its config and credential."""
        row = self.storage.catalog.get(name)
        if row is not None and not force and self.registry.get(row.type_name) is not None:
            raise CatalogError(
                f"catalog instance {name!r} is not orphaned (its type {row.type_name!r} is "
                f"installed), so it is kept: disable it (akgentic catalog disable {name}), or "
                f"remove it with its config and credential (akgentic catalog remove {name} "
                f"--force)"
            )
        return self.storage.catalog.remove(name, self._entry(principal, "remove"))

    # -- probing ------------------------------------------------------------------------
    def probe(
        self, principal: Principal, name: str, timeout: float | None = None
    ) -> tuple[ToolView, ProbeResult]:
        """Run the type's ``probe()`` on the instance (config + credential) and keep the
        outcome as its status and last-check time. A missing required credential is an
        ``error`` outcome too; a missing or wrong ``AKGENTIC_SECRET_KEY`` is raised.

        Asked through the CLI or the HTTP API (``principal.via``), the instance must be
        enabled on that surface: else :class:`NotEnabledError`, before its credential is
        opened (see the module docstring: a probe is that surface's use of it).

        The outcome is kept on the row the probe read only (its ``row_id``, in the store's
        one statement): when that row was removed while the probe ran — or removed and set
        up again, or set up where none was — nothing is written and a :class:`CatalogError`
        says so in one line, so a probe never brings back a row ``remove`` took. So too when
        its config or credential changed while the probe ran: the outcome was made with
        the old ones."""
        row, found = self._target(name, None)
        if not found.has_probe:
            raise CatalogError(f"{found.name} has no outside exit to probe")
        self._serves(principal, name, row)
        built, secret = self._build(name, found, row, require_credential=False)
        if secret is None and found.manifest.credential and found.manifest.credential_required:
            result = ProbeResult(
                status="error",
                detail=f"no {found.manifest.credential} is set: akgentic catalog "
                f"set-credential {name}",
                checked_at=utc_now(),
            )
        else:
            result = run_probe(
                built.probe,  # type: ignore[attr-defined]
                timeout if timeout is not None else self.probe_timeout,
                secrets=(secret,) if secret else (),
            )
        probed_with = (
            None
            if row is None
            else ProbedWith(config=row.config, credential_enc=row.credential_enc)
        )
        try:
            record = self._changed(
                name,
                found,
                lambda: self.storage.catalog.record_probe(
                    name,
                    found.name,
                    result.status,
                    result.detail,
                    result.checked_at,
                    row_id=None if row is None else row.row_id,
                    probed_with=probed_with,
                ),
            )
        except ConfigChangedError as exc:  # configured meanwhile: made with the old one
            raise CatalogError(str(exc)) from None
        return record, result

    # -- wiring -------------------------------------------------------------------------
    def resolve(self, name: str, surface: str = "agents") -> BaseModel:
        """The instance built for ``surface``: config validated, credential bound.

        Raises (never with a secret in the message): :class:`UnknownToolError`,
        :class:`NotEnabledError` (no row counts as every flag off),
        :class:`OrphanedInstanceError`, :class:`ConfigError`, :class:`CredentialError`
        (wrong key, altered bytes, or a required credential not set), ``SecretKeyError``.
        """
        _surfaces([surface])
        row = self._get(name)
        if row is None:
            if self.registry.get(name) is None:
                raise self._unknown(name)
            raise NotEnabledError(self._not_enabled(name, surface))
        found = self.registry.get(row.type_name)
        if found is None:
            raise self._orphaned(row)
        if not row.enabled_on(surface):
            raise NotEnabledError(self._not_enabled(name, surface))
        built, _ = self._build(name, found, row, require_credential=True)
        return built

    def resolve_card(self, name: str) -> ToolCard:
        """:meth:`resolve` for agents, refusing a type that is not a card (a service)."""
        built = self.resolve(name, "agents")
        if not isinstance(built, ToolCard):
            raise CatalogError(
                f"catalog instance {name!r} is a service ({type(built).__name__}), not a tool "
                f"card an agent can use"
            )
        return built

    def check(self, names: Iterable[str]) -> None:
        """Resolve each named instance for agents now; the first refusal is raised."""
        for name in dict.fromkeys(names):
            self.resolve_card(name)

    # -- internals ------------------------------------------------------------------------
    def _serves(self, principal: Principal, name: str, row: ToolInstanceRecord | None) -> None:
        """Refuse to use the instance on the principal's surface (``cli``, ``api``) while
        that surface's flag is off (no row: every flag off); ``python`` is no surface."""
        surface = principal.via
        if surface in CATALOG_SURFACES and (row is None or not row.enabled_on(surface)):
            raise NotEnabledError(self._not_enabled(name, surface))

    def _build(
        self,
        name: str,
        found: ToolType,
        row: ToolInstanceRecord | None,
        *,
        require_credential: bool,
    ) -> tuple[BaseModel, str | None]:
        built = found.validate_config(row.config if row is not None else {})
        blob = row.credential_enc if row is not None else None
        if blob is None:
            manifest = found.manifest
            if require_credential and manifest.credential and manifest.credential_required:
                raise CredentialError(
                    f"{_context(name, found.name)} needs its {manifest.credential}: "
                    f"akgentic catalog set-credential {name}"
                )
            return built, None
        secret = self._box().open(blob, _context(name, found.name))
        built.bind_credential(secret)  # type: ignore[attr-defined]
        return built, secret

    def _target(
        self, name: str, type_name: str | None
    ) -> tuple[ToolInstanceRecord | None, ToolType]:
        """The row (if any) and the type a change to ``name`` applies to."""
        row = self._get(name)
        if row is not None:
            found = self.registry.get(row.type_name)
            if found is None:
                raise self._orphaned(row)
            if type_name is not None and type_name != row.type_name:
                raise CatalogError(
                    f"catalog instance {name!r} is of type {row.type_name!r}, not {type_name!r}"
                )
            return row, found
        if not _NAME.match(name):
            raise ConfigError(
                f"invalid instance name {name!r}: lower-case letters, digits, '_', '.', '-', "
                f"starting with a letter"
            )
        if type_name is not None:
            return None, self.registry.require(type_name)
        found = self.registry.get(name)
        if found is None:
            raise self._unknown(name)
        return None, found

    def _get(self, name: str) -> ToolInstanceRecord | None:
        """The row of ``name`` to use: :class:`CatalogError` when it is damaged."""
        row = self.storage.catalog.get(name)
        if row is not None and row.error is not None:
            raise CatalogError(self._damaged_words(row))
        return row

    def _damaged_words(self, row: ToolInstanceRecord) -> str:
        force = " --force" if self.registry.get(row.type_name) is not None else ""
        return (
            f"{row.error}: the row cannot be read, so it is ignored; remove it "
            f"(akgentic catalog remove {row.name}{force}) and set the instance up again"
        )

    def _changed(
        self, name: str, found: ToolType, change: Callable[[], ToolInstanceRecord]
    ) -> ToolView:
        try:
            row = change()
        except (InstanceTypeError, InstanceGoneError) as exc:  # another process meanwhile
            raise CatalogError(str(exc)) from None
        return self._view(name, found, row)

    @staticmethod
    def _entry(principal: Principal, action: str, **detail: Any) -> CatalogAuditEntry:
        return CatalogAuditEntry(actor=principal.actor, action=action, detail=detail)

    def _view(self, name: str, found: ToolType | None, row: ToolInstanceRecord | None) -> ToolView:
        fields: dict[str, Any] = {"name": name}
        if found is None:
            assert row is not None
            fields.update(kind="orphaned", type_name=row.type_name, source="(not installed)")
        else:
            manifest = found.manifest
            fields.update(
                kind="card" if found.is_card else "service",
                type_name=found.name,
                description=manifest.description,
                access=manifest.access,
                credential_kind=manifest.credential,
                probe=found.has_probe,
                source=found.source,
            )
        if row is not None:
            fields.update(
                configured=True,
                enabled=[s for s in CATALOG_SURFACES if row.enabled_on(s)],
                config=row.config,
                credential_set=row.credential_set,
                status=row.status,
                status_detail=row.status_detail,
                last_check_at=row.last_check_at,
            )
        return ToolView(**fields)

    def _unknown(self, name: str) -> UnknownToolError:
        types = ", ".join(t.name for t in self.registry.types()) or "none"
        return UnknownToolError(
            f"no tool type or catalog instance is called {name!r}; types: {types} "
            f"(see: akgentic catalog list)"
        )

    @staticmethod
    def _orphaned(row: ToolInstanceRecord) -> OrphanedInstanceError:
        return OrphanedInstanceError(
            f"catalog instance {row.name!r} is orphaned: its type {row.type_name!r} is not "
            f"installed; install it again, or remove the row: akgentic catalog remove {row.name}"
        )

    @staticmethod
    def _not_enabled(name: str, surface: str) -> str:
        over_http = (
            f' (over HTTP: POST /catalog/tools/{name}/enable {{"surfaces": ["api"]}})'
            if surface == "api"
            else ""
        )
        return (
            f"catalog tool {name!r} is not enabled for {surface}: "
            f"akgentic catalog enable {name} --surface {surface}{over_http}"
        )
