"""The storage bundle: one small protocol per kind of data a team keeps.

Every backend (``memory``, ``sqlite``, ``postgres``) implements all of them and passes
the same contract tests. The rules, stated once here:

- **Durability.** A call that writes has committed before it returns: an accepted
  append survives the process (and, for the SQL backends, the machine; see each
  backend's note on syncing).
- **Event log.** Append-only. The store assigns each team its own sequence numbers,
  1, 2, 3 ... with no gap and no duplicate, even with many writers (threads, and for
  the SQL backends, connections and processes). ``append_many`` is one transaction:
  all of the batch or none of it.
- **Corrupt rows.** Reading never raises because a stored payload cannot be decoded.
  The record carries ``error`` (naming team, row and reason) and ``raw``; the rest of
  the history still loads. :func:`akgentic.storage.corrupt_rows` lists the damage.
- **Purge.** ``teams.purge`` removes the team and everything kept for it: events,
  states, working memory. ``teams.delete`` only marks the team DELETED.
- **Catalog.** A catalog row is created by its first change, never checked-then-created;
  a change and its audit line are one transaction; a name keeps the type it was created
  with.
- **Leases.** ``leases`` (:class:`~akgentic.storage.lease.LeaseStore`): who holds a
  resource and until when; acquisition is one atomic statement (see ``lease.py``).
  ``append_encoded`` and ``append_packs`` take a ``fence``
  (:class:`~akgentic.storage.lease.Fence`): the append, its states and its memory are
  stored only if the fence's owner holds the lease when the transaction commits —
  checked inside it — else nothing is and ``LeaseLostError`` is raised. So do the
  working memory's ``replace`` and ``append``, and ``teams.set_status``.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from pydantic import BaseModel

from akgentic.core.messages.message import Message
from akgentic.storage._codec import EncodedEvent, MemoryRow, StateRow
from akgentic.storage.lease import Fence, LeaseStore
from akgentic.storage.records import (
    CatalogAuditEntry,
    CatalogAuditRecord,
    EventRecord,
    ProbedWith,
    SkillRecord,
    StateRecord,
    TeamRecord,
    TeamStatus,
    ToolInstanceRecord,
)

__all__ = [
    "CatalogStore",
    "EventLog",
    "SkillStore",
    "StateStore",
    "StorageBundle",
    "TeamStore",
    "WorkingMemoryStore",
]


@runtime_checkable
class TeamStore(Protocol):
    """Team records: identity, status, the serialized card and free metadata."""

    def create(
        self,
        name: str,
        *,
        card: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        team_id: UUID | None = None,
    ) -> TeamRecord:
        """Record a new RUNNING team (a fresh id unless given); TeamExistsError if taken,
        ValueError for a name with a control character (``check_team_name``)."""
        ...

    def get(self, team_id: UUID) -> TeamRecord | None:
        """The team, or None when there is no record (a DELETED team is still returned)."""
        ...

    def list(self, status: TeamStatus | None = None) -> builtins.list[TeamRecord]:
        """The teams, oldest first; only those in ``status`` when given."""
        ...

    def update(
        self,
        team_id: UUID,
        *,
        name: str | None = None,
        card: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> TeamRecord:
        """Replace the given fields; TeamNotFoundError when there is no record, ValueError
        for a name with a control character (``check_team_name``)."""
        ...

    def set_status(
        self, team_id: UUID, status: TeamStatus, *, fence: Fence | None = None
    ) -> TeamRecord:
        """Move the team to ``status``. RUNNING and STOPPED go both ways; DELETED is
        terminal (InvalidTransitionError). TeamNotFoundError when there is no record.
        With a ``fence``, only while its owner holds the lease, checked first in the
        same transaction (as ``WorkingMemoryStore.replace``): else nothing changes and
        :class:`~akgentic.storage.lease.LeaseLostError` is raised."""
        ...

    def delete(self, team_id: UUID) -> TeamRecord:
        """Mark the team DELETED, keeping its rows (idempotent)."""
        ...

    def purge(self, team_id: UUID) -> bool:
        """Remove the team record and its events, states and working memory, in one
        transaction. True when anything was removed."""
        ...


@runtime_checkable
class EventLog(Protocol):
    """A team's append-only log of everything its orchestrator saw."""

    def append(self, team_id: UUID, message: Message) -> int:
        """Store ``message`` and return its sequence number, committed on return."""
        ...

    def append_many(self, team_id: UUID, messages: Sequence[Message]) -> list[int]:
        """Store ``messages`` in order in one transaction; their consecutive numbers."""
        ...

    def append_encoded(
        self,
        team_id: UUID,
        events: Sequence[EncodedEvent],
        states: Sequence[StateRow] = (),
        memory: Sequence[MemoryRow] = (),
        *,
        fence: Fence | None = None,
    ) -> list[int]:
        """``append_many`` for events already encoded (``encode_event``,
        ``encode_receipt``, ``encode_sent``): a writer that encodes off the store's lock,
        or without building the messages, hands their text over as it is. ``states``
        (agent id, name, ``encode_state`` text) become those agents' latest states in
        the same transaction, so the latest-state table never lags the log it summarises.
        ``memory`` (:class:`~akgentic.storage.MemoryRow`) changes agents' working memory
        in that transaction too, applied in order, as ``WorkingMemoryStore.replace`` and
        ``append`` would (under the same per-agent lock): one commit for a group, not one
        more per change. All or nothing: a state or memory row the store cannot take
        (``TypeError`` for one that is not text) leaves the events unstored as well. With
        no events nothing is stored, ``states`` and ``memory`` included.

        With a ``fence``, the transaction first makes sure the fence's owner holds its
        lease (an expired lease nobody took still counts); if not, nothing is stored and
        :class:`~akgentic.storage.lease.LeaseLostError` names the lease as it now is. On
        a backend shared by processes the check holds against a concurrent take-over: the
        take-over waits for the append, or the append sees it."""
        ...

    def append_packs(
        self,
        team_id: UUID,
        packs: Sequence[bytes],
        states: Sequence[StateRow] = (),
        memory: Sequence[MemoryRow] = (),
        *,
        fence: Fence | None = None,
    ) -> list[int]:
        """``append_encoded`` for event packs (``akgentic.storage._pack``): their events
        take the next consecutive numbers, in order, in one transaction with ``states``
        and ``memory`` (under ``fence``, as there), committed on return; their numbers.
        Every reader sees them as if appended one by one (the SQL stores keep each pack
        as one row). An empty pack, or one whose header is damaged, raises
        ``ValueError`` before anything is stored."""
        ...

    def read(
        self,
        team_id: UUID,
        from_seq: int = 1,
        to_seq: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]:
        """Records with ``from_seq <= seq <= to_seq``, in order, at most ``limit``.

        Never raises for a payload that does not decode: see the module docstring.
        """
        ...

    def last_seq(self, team_id: UUID) -> int:
        """The highest sequence number of the team; 0 when it has no events."""
        ...


@runtime_checkable
class StateStore(Protocol):
    """The latest state snapshot of each agent of a team (latest save wins)."""

    def save_state(self, team_id: UUID, agent_id: UUID, agent_name: str, state: BaseModel) -> None:
        """Replace the agent's snapshot, committed on return."""
        ...

    def load_states(self, team_id: UUID) -> dict[UUID, StateRecord]:
        """Every agent's latest snapshot, by agent id; corrupt ones carry ``error``."""
        ...


@runtime_checkable
class WorkingMemoryStore(Protocol):
    """Each agent's working memory: the model context, a mutable list of JSON objects.

    Unlike the event log it is edited freely: compaction replaces it wholesale.
    """

    def get(self, team_id: UUID, agent_id: UUID) -> list[dict[str, Any]]:
        """The items in order; an empty list when there are none."""
        ...

    def replace(
        self,
        team_id: UUID,
        agent_id: UUID,
        items: Sequence[dict[str, Any]],
        *,
        fence: Fence | None = None,
    ) -> None:
        """Make ``items`` the whole working memory (one transaction). With a ``fence``,
        only while its owner holds the lease, checked in that transaction as
        ``EventLog.append_encoded`` checks it: else nothing changes and
        :class:`~akgentic.storage.lease.LeaseLostError` is raised."""
        ...

    def append(
        self,
        team_id: UUID,
        agent_id: UUID,
        items: Sequence[dict[str, Any]],
        *,
        fence: Fence | None = None,
    ) -> None:
        """Add ``items`` at the end (one transaction; under ``fence`` as ``replace``)."""
        ...

    def clear(self, team_id: UUID, agent_id: UUID) -> None:
        """Remove every item."""
        ...


@runtime_checkable
class SkillStore(Protocol):
    """Skills by name (a catalog shared by every team of the store)."""

    def list(self) -> builtins.list[SkillRecord]:
        """Every skill, ordered by name."""
        ...

    def get(self, name: str) -> SkillRecord | None:
        """The skill called ``name``, or None."""
        ...

    def upsert(self, skill: SkillRecord) -> SkillRecord:
        """Insert or replace by name; returns the stored record (``updated_at`` now)."""
        ...

    def remove(self, name: str) -> bool:
        """Remove the skill; True when it existed."""
        ...


@runtime_checkable
class CatalogStore(Protocol):
    """The tool catalog's instances (state per configured tool) and its audit trail.

    Shared by every team of the store. A write names the instance and its type: the row
    is created by the first change (flags off, no config, no credential) and a row of
    that name with another type is an ``InstanceTypeError`` that changes nothing. Each
    audited change appends its :class:`CatalogAuditRecord` in the same transaction: the
    trail holds a change exactly when the change happened.
    """

    def list(self) -> builtins.list[ToolInstanceRecord]:
        """Every instance, ordered by name (rows whose type is gone included)."""
        ...

    def get(self, name: str) -> ToolInstanceRecord | None:
        """The instance called ``name``, or None."""
        ...

    def set_enabled(
        self, name: str, type_name: str, surfaces: Mapping[str, bool], audit: CatalogAuditEntry
    ) -> ToolInstanceRecord:
        """Set the flags of the given surfaces (others keep theirs); audited."""
        ...

    def set_config(
        self,
        name: str,
        type_name: str,
        config: dict[str, Any],
        audit: CatalogAuditEntry,
        *,
        expected: dict[str, Any] | None = None,
    ) -> ToolInstanceRecord:
        """Replace the non-secret config (a JSON object); audited. With ``expected`` (the
        config a merge was made on), only while the stored one (``{}`` for no row) still
        equals it: else ``ConfigChangedError`` and nothing is written."""
        ...

    def set_credential(
        self, name: str, type_name: str, credential_enc: bytes | None, audit: CatalogAuditEntry
    ) -> ToolInstanceRecord:
        """Store the credential's ciphertext (None clears it); audited."""
        ...

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
        """Keep the outcome of a probe: status, detail, time of the check (not audited),
        on the row the probe read only: ``row_id`` is its ``row_id`` (None: no row was
        stored, and one is created only while there is still none). A row removed since,
        or made again under the same name, is an ``InstanceGoneError`` and nothing is
        written — never checked and then created: one statement decides. With
        ``probed_with`` (the config and credential the probe ran with), only while the row
        still holds both: a ``configure`` or ``set-credential`` that landed while the probe
        ran is a ``ConfigChangedError``, nothing written."""
        ...

    def remove(self, name: str, audit: CatalogAuditEntry) -> bool:
        """Remove the instance (an orphaned row, say); True, and audited, when it existed."""
        ...

    def audit(
        self, name: str | None = None, limit: int | None = None
    ) -> builtins.list[CatalogAuditRecord]:
        """The trail, oldest first: of ``name`` only when given; the last ``limit`` lines."""
        ...


@runtime_checkable
class StorageBundle(Protocol):
    """Everything a deployment stores, behind one object opened from a URL."""

    @property
    def teams(self) -> TeamStore: ...

    @property
    def events(self) -> EventLog: ...

    @property
    def states(self) -> StateStore: ...

    @property
    def working_memory(self) -> WorkingMemoryStore: ...

    @property
    def skills(self) -> SkillStore: ...

    @property
    def catalog(self) -> CatalogStore: ...

    @property
    def leases(self) -> LeaseStore: ...

    def close(self) -> None:
        """Release connections; idempotent. Any later call raises StorageClosedError."""
        ...
