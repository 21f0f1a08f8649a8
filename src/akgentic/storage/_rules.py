"""Rules every backend applies the same way, kept in one place."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from akgentic.storage._codec import dump_object, load_object, to_utc
from akgentic.storage._pack import pack_count
from akgentic.storage.errors import (
    ConfigChangedError,
    CorruptRecordError,
    InstanceGoneError,
    InstanceTypeError,
    InvalidTransitionError,
    TeamNotFoundError,
)
from akgentic.storage.records import (
    CATALOG_STATUSES,
    CATALOG_SURFACES,
    CatalogAuditEntry,
    ProbedWith,
    TeamStatus,
    ToolInstanceRecord,
)

__all__ = [
    "MAX_SEQ",
    "CatalogChanges",
    "check_limit",
    "check_packs",
    "check_probe_status",
    "check_read_range",
    "check_surfaces",
    "check_team_name",
    "check_transition",
    "config_changed",
    "instance_gone",
    "instance_type_mismatch",
    "new_row_id",
    "probe_outdated",
    "probe_refused",
    "probed_differs",
    "readable_status",
    "team_not_found",
]


def readable_status(stored: Any) -> TeamStatus | None:
    """The stored status, or None when the row holds something else."""
    try:
        return TeamStatus(stored)
    except ValueError:
        return None


def check_transition(team_id: UUID, current: TeamStatus | None, new: TeamStatus | None) -> None:
    """RUNNING and STOPPED go both ways; DELETED is terminal (re-deleting is a no-op).

    ``new`` is None for a change of the record's fields (name, card, metadata): a DELETED
    team stays as it was deleted, so that is refused too. ``current`` is None when the
    stored status cannot be read: any change replaces it."""
    if current is not TeamStatus.DELETED or new is TeamStatus.DELETED:
        return
    if new is None:
        raise InvalidTransitionError(
            f"team {team_id} is DELETED and cannot be changed; a deleted team stays as it "
            f"was deleted (purge it, or create a new team)"
        )
    raise InvalidTransitionError(
        f"team {team_id} is DELETED and cannot become {new.value}; a deleted team "
        f"stays deleted (purge it, or create a new team)"
    )


_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""The characters that reorder the text around them (embeddings, overrides, isolates,
marks): in a name they make a row of a listing read other than it is."""


def check_team_name(name: str) -> str:
    """``name`` when it may name a team; ``ValueError`` saying what is wrong otherwise.

    A team name is printed on terminals (``akgentic teams list``, ``teams show``, every line
    naming a team): a control character in it (Unicode category Cc: newline, carriage
    return, tab, ESC, BEL, DEL, the C1 range) would let whoever names a team retitle the
    terminal, colour it or forge a row; a line or paragraph separator (U+2028, U+2029)
    breaks the line as a newline does; a bidirectional control (U+202E...) makes the row
    read other than it is. A name of spaces alone names nothing a person can tell apart.
    Every store checks a name here when it creates a team or renames one; the API's
    request models call this same function, so a request is refused before a team starts.
    Any other text is allowed, emoji and scripts included. Names stored before the rule
    are still read as they are (the CLI shows them escaped).
    """
    for at, char in enumerate(name, start=1):
        category = unicodedata.category(char)
        if category == "Cc":
            what = "control characters"
        elif category in ("Zl", "Zp"):
            what = "line or paragraph separators"
        elif char in _BIDI_CONTROLS:
            what = "bidirectional text controls"
        else:
            continue
        raise ValueError(
            f"a team name may not contain {what}: {char!r} (U+{ord(char):04X}) at "
            f"character {at}; use printable text on one line (letters, digits, spaces, "
            f"punctuation, emoji)"
        )
    if name and not name.strip():
        raise ValueError(
            "a team name may not be blank (spaces alone): give it a word, or no name at all"
        )
    return name


def check_packs(packs: Sequence[bytes]) -> list[int]:
    """How many events each pack holds; ``ValueError`` when one holds none, or when its
    header is damaged (checked before anything is stored)."""
    counts = [pack_count(pack) for pack in packs]
    if 0 in counts:
        raise ValueError("an event pack must hold at least one event; append nothing instead")
    return counts


MAX_SEQ = 2**63 - 1
"""The largest sequence number a store holds (a signed 64-bit column, in SQLite and
Postgres alike); a read from past it finds nothing, as from any number past the end."""


def check_read_range(
    from_seq: int, to_seq: int | None, limit: int | None
) -> tuple[int, int | None, int | None]:
    """Validate read arguments; returns them as a database takes them: the first sequence
    number (>= 1), the last and the limit, each at most :data:`MAX_SEQ` (a larger number
    read from a URL must not overflow the column)."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    if to_seq is not None and to_seq < 0:
        raise ValueError(f"to_seq must be >= 0 or None, got {to_seq}")
    return (
        min(max(from_seq, 1), MAX_SEQ),
        None if to_seq is None else min(to_seq, MAX_SEQ),
        None if limit is None else min(limit, MAX_SEQ),
    )


def team_not_found(team_id: UUID) -> TeamNotFoundError:
    """The error for a team with no record."""
    return TeamNotFoundError(f"no team {team_id} in this store")


def check_surfaces(surfaces: Mapping[str, bool]) -> dict[str, bool]:
    """The catalog flags to set, by column (``enabled_<surface>``); unknown surfaces and
    an empty change are ``ValueError``s."""
    unknown = [s for s in surfaces if s not in CATALOG_SURFACES]
    if unknown or not surfaces:
        raise ValueError(
            f"surfaces must name at least one of {', '.join(CATALOG_SURFACES)}"
            + (f"; unknown: {', '.join(map(repr, unknown))}" if unknown else "")
        )
    return {f"enabled_{s}": bool(on) for s, on in surfaces.items()}


def instance_type_mismatch(name: str, stored: str, given: str) -> InstanceTypeError:
    """The error for a change naming an existing instance with another type."""
    return InstanceTypeError(
        f"catalog instance {name!r} is of type {stored!r}, not {given!r}: one name, one "
        f"type (pick another instance name for a second {given!r})"
    )


def config_changed(name: str) -> ConfigChangedError:
    """The error for a config merged on a stored one that changed meanwhile."""
    return ConfigChangedError(
        f"the config of catalog instance {name!r} changed while a change was made on it: "
        f"nothing was written; read it again and retry"
    )


def probe_outdated(name: str) -> ConfigChangedError:
    """The error for a probe's outcome whose row's config or credential changed while the
    probe ran: the outcome says nothing of what is stored now."""
    return ConfigChangedError(
        f"catalog instance {name!r} was configured while the probe ran (its config or "
        f"credential changed): the outcome was not kept; probe it again"
    )


def probed_differs(config_text: str, credential_enc: Any, probed_with: ProbedWith) -> bool:
    """Whether a row's stored config (its JSON text) and credential ciphertext are not what
    a probe ran with. A config that cannot be read differs."""
    try:
        config = load_object(config_text, "config")
    except CorruptRecordError:
        return True
    blob = None if credential_enc is None else bytes(credential_enc)
    return config != probed_with.config or blob != probed_with.credential_enc


def new_row_id() -> str:
    """The identity of a catalog row being created (see ``ToolInstanceRecord.row_id``):
    random, so no store needs to remember the rows it removed to never give one twice."""
    return uuid4().hex


def instance_gone(name: str, probed: str | None, stored: str | None) -> InstanceGoneError:
    """The error for a probe's outcome whose row is no longer the stored one: ``probed``
    is the id of the row it read (None: none was stored), ``stored`` the id stored now."""
    if stored is None:
        what = "was removed while the probe ran"
    elif probed is None:
        what = "was set up while the probe ran (it probed the defaults)"
    else:
        what = "was removed while the probe ran, and set up again since"
    return InstanceGoneError(
        f"catalog instance {name!r} {what}: its outcome was not kept"
        + ("" if stored is None else " (probe it again)")
    )


def probe_refused(
    name: str, type_name: str, probed: str | None, stored: Sequence[str] | None
) -> InstanceTypeError | InstanceGoneError:
    """Why a probe's outcome made for row ``probed`` (None: no row) of ``type_name`` was
    not written, ``stored`` being the ``(type_name, row_id)`` stored now (None: no row):
    the row probed is there with another type, or it is gone."""
    if stored is not None and stored[0] != type_name and probed in (None, stored[1]):
        return instance_type_mismatch(name, stored[0], type_name)
    return instance_gone(name, probed, None if stored is None else stored[1])


def check_probe_status(status: str) -> str:
    """A probe outcome is ``active`` or ``error`` (``unchecked`` is only the start)."""
    if status not in CATALOG_STATUSES[1:]:
        raise ValueError(f"a probe status is 'active' or 'error', got {status!r}")
    return status


def check_limit(limit: int | None) -> int | None:
    """How many of the latest lines to keep (None: all); a negative limit is an error."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    return limit


class CatalogChanges:
    """The catalog store's writes, each one change of columns, checked the same way on
    every backend. A backend supplies :meth:`_change` (create-or-update the row of that
    type and append the audit line, in one transaction), :meth:`_probed` (a probe's
    outcome, kept only on the row it was made for) and how it binds a time. With
    ``expected_config``, the change is made only while the stored config (``{}`` for no
    row) still equals it, checked in the same transaction: else ``ConfigChangedError``.
    A row's ``row_id`` is made by the change that creates it and never changed."""

    def _change(
        self,
        name: str,
        type_name: str,
        changes: dict[str, Any],
        audit: CatalogAuditEntry | None,
        expected_config: dict[str, Any] | None = None,
    ) -> ToolInstanceRecord:
        raise NotImplementedError

    def _probed(
        self,
        name: str,
        type_name: str,
        changes: dict[str, Any],
        row_id: str | None,
        probed_with: ProbedWith | None,
    ) -> ToolInstanceRecord:
        """Write ``changes`` on the row ``row_id`` only (None: create the row, only while
        none is stored), in one statement: else ``InstanceGoneError`` (or
        ``InstanceTypeError`` for a row of another type), nothing written. With
        ``probed_with``, only while that row still holds that config and credential: else
        ``ConfigChangedError`` (:func:`probe_outdated`), nothing written."""
        raise NotImplementedError

    def _bind_time(self, when: datetime) -> Any:
        return to_utc(when)

    def set_enabled(
        self, name: str, type_name: str, surfaces: Mapping[str, bool], audit: CatalogAuditEntry
    ) -> ToolInstanceRecord:
        return self._change(name, type_name, check_surfaces(surfaces), audit)

    def set_config(
        self,
        name: str,
        type_name: str,
        config: dict[str, Any],
        audit: CatalogAuditEntry,
        *,
        expected: dict[str, Any] | None = None,
    ) -> ToolInstanceRecord:
        changes = {"config": dump_object(config, "config")}
        return self._change(name, type_name, changes, audit, expected)

    def set_credential(
        self, name: str, type_name: str, credential_enc: bytes | None, audit: CatalogAuditEntry
    ) -> ToolInstanceRecord:
        blob = None if credential_enc is None else bytes(credential_enc)
        return self._change(name, type_name, {"credential_enc": blob}, audit)

    def record_probe(
        self,
        name: str,
        type_name: str,
        status: str,
        detail: str,
        checked_at: datetime,
        *,
        row_id: str | None,
        probed_with: ProbedWith | None = None,
    ) -> ToolInstanceRecord:
        changes = {
            "status": check_probe_status(status),
            "status_detail": detail,
            "last_check_at": self._bind_time(checked_at),
        }
        return self._probed(name, type_name, changes, row_id, probed_with)
