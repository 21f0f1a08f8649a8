"""The in-memory backend: for tests, and for runs that need no history after exit.

It keeps what the SQL backends keep, in the same form: messages, states, cards and
working memory items are stored as JSON text, times and statuses as text, so a stored
value is a snapshot (later changes to the object do not reach it) and decodes — or is
reported as damaged — exactly as it would from a file.
One lock guards everything; every call is atomic, and "committed" means "visible to
every later call" — nothing survives the process.
"""

from __future__ import annotations

import builtins
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

from pydantic import BaseModel

from akgentic.core.messages.message import Message
from akgentic.storage._codec import (
    EncodedEvent,
    MemoryRow,
    StateRow,
    decode_event,
    decode_state,
    decode_team,
    dump_object,
    dump_objects,
    encode_event,
    encode_state,
    fold_memory,
    iso_time,
    load_iso_time,
    load_object,
)
from akgentic.storage._pack import decode_pack
from akgentic.storage._rules import (
    CatalogChanges,
    check_limit,
    check_packs,
    check_read_range,
    check_team_name,
    check_transition,
    config_changed,
    instance_type_mismatch,
    new_row_id,
    probe_outdated,
    probe_refused,
    probed_differs,
    readable_status,
    team_not_found,
)
from akgentic.storage.errors import StorageClosedError, TeamExistsError
from akgentic.storage.lease import (
    Fence,
    Lease,
    LeaseHeldError,
    LeaseHolder,
    LeaseLostError,
    check_ttl,
)
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
    utc_now,
)

__all__ = ["MemoryStorage"]


Text = str | bytes
"""Stored text; bytes only where a test wrote damage that is not UTF-8."""


@dataclass(frozen=True, slots=True)
class _TeamRow:
    team_id: UUID
    name: Text
    status: Text
    created_at: str
    updated_at: str
    card: Text
    metadata: Text

    def record(self) -> TeamRecord:
        return decode_team(
            self.team_id,
            self.name,
            self.status,
            self.created_at,
            self.updated_at,
            self.card,
            self.metadata,
            load_time=load_iso_time,
        )


@dataclass(frozen=True, slots=True)
class _StateRow:
    agent_name: str
    updated_at: datetime
    raw: str


@dataclass(frozen=True, slots=True)
class _LeaseRow:
    holder: LeaseHolder
    since: float
    renewed_at: float
    expires_at: float

    def lease(self, resource: str, now: float) -> Lease:
        return Lease(
            resource=resource,
            holder=self.holder,
            since=datetime.fromtimestamp(self.since, UTC),
            renewed_at=datetime.fromtimestamp(self.renewed_at, UTC),
            expires_at=datetime.fromtimestamp(self.expires_at, UTC),
            expired=self.expires_at <= now,
        )


class _Data:
    """Everything the bundle holds, and the one lock over it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.closed = False
        self.teams: dict[UUID, _TeamRow] = {}
        self.events: dict[UUID, list[tuple[str, Text]]] = {}
        self.states: dict[UUID, dict[UUID, _StateRow]] = {}
        self.memory: dict[tuple[UUID, UUID], list[str]] = {}
        self.skills: dict[str, SkillRecord] = {}
        self.catalog: dict[str, tuple[ToolInstanceRecord, str]] = {}  # record, config JSON
        self.audit: list[CatalogAuditRecord] = []
        self.leases: dict[str, _LeaseRow] = {}

    @contextmanager
    def locked(self) -> Iterator[None]:
        with self._lock:
            if self.closed:
                raise StorageClosedError("this MemoryStorage is closed")
            yield

    def close(self) -> None:
        with self._lock:
            self.closed = True

    def check_fence(self, fence: Fence) -> None:
        """Inside ``locked()``: LeaseLostError unless ``fence.owner`` holds the lease
        (expired or not: an expired lease nobody took is still its holder's)."""
        row = self.leases.get(fence.resource)
        if row is None or row.holder.owner != fence.owner:
            lease = None if row is None else row.lease(fence.resource, time.time())
            raise LeaseLostError(fence.resource, fence.owner, lease)


class _Teams:
    def __init__(self, data: _Data) -> None:
        self._data = data

    def create(
        self,
        name: str,
        *,
        card: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        team_id: UUID | None = None,
    ) -> TeamRecord:
        now = iso_time(utc_now())
        row = _TeamRow(
            team_id=team_id or uuid4(),
            name=check_team_name(name),
            status=TeamStatus.RUNNING.value,
            created_at=now,
            updated_at=now,
            card=dump_object(card or {}, "card"),
            metadata=dump_object(metadata or {}, "metadata"),
        )
        with self._data.locked():
            if row.team_id in self._data.teams:
                raise TeamExistsError(f"team {row.team_id} already exists")
            self._data.teams[row.team_id] = row
        return row.record()

    def get(self, team_id: UUID) -> TeamRecord | None:
        with self._data.locked():
            row = self._data.teams.get(team_id)
        return None if row is None else row.record()

    def list(self, status: TeamStatus | None = None) -> builtins.list[TeamRecord]:
        with self._data.locked():
            wanted = None if status is None else TeamStatus(status).value
            rows = [r for r in self._data.teams.values() if wanted is None or r.status == wanted]
        rows.sort(key=lambda r: (r.created_at, str(r.team_id)))
        return [r.record() for r in rows]

    def update(
        self,
        team_id: UUID,
        *,
        name: str | None = None,
        card: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> TeamRecord:
        changes: dict[str, Any] = {}
        if name is not None:
            changes["name"] = check_team_name(name)
        if card is not None:
            changes["card"] = dump_object(card, "card")
        if metadata is not None:
            changes["metadata"] = dump_object(metadata, "metadata")
        return self._change(team_id, changes)

    def set_status(
        self, team_id: UUID, status: TeamStatus, *, fence: Fence | None = None
    ) -> TeamRecord:
        return self._change(team_id, {"status": TeamStatus(status)}, fence)

    def delete(self, team_id: UUID) -> TeamRecord:
        return self.set_status(team_id, TeamStatus.DELETED)

    def _change(
        self, team_id: UUID, changes: dict[str, Any], fence: Fence | None = None
    ) -> TeamRecord:
        with self._data.locked():
            if fence is not None:
                self._data.check_fence(fence)
            row = self._data.teams.get(team_id)
            if row is None:
                raise team_not_found(team_id)
            new = changes.get("status")
            check_transition(team_id, readable_status(row.status), new)
            if new is not None:
                changes = {**changes, "status": new.value}
            row = replace(row, **changes, updated_at=iso_time(utc_now()))
            self._data.teams[team_id] = row
        return row.record()

    def purge(self, team_id: UUID) -> bool:
        data = self._data
        with data.locked():
            found = [
                data.teams.pop(team_id, None) is not None,
                data.events.pop(team_id, None) is not None,
                data.states.pop(team_id, None) is not None,
            ]
            for key in [k for k in data.memory if k[0] == team_id]:
                del data.memory[key]
                found.append(True)
        return any(found)


class _Events:
    def __init__(self, data: _Data) -> None:
        self._data = data

    def append(self, team_id: UUID, message: Message) -> int:
        when, raw = encode_event(message)
        row = (iso_time(when), raw)
        with self._data.locked():
            rows = self._data.events.setdefault(team_id, [])
            rows.append(row)
            return len(rows)

    def append_many(self, team_id: UUID, messages: Sequence[Message]) -> list[int]:
        return self.append_encoded(team_id, [encode_event(m) for m in messages])

    def append_encoded(
        self,
        team_id: UUID,
        events: Sequence[EncodedEvent],
        states: Sequence[StateRow] = (),
        memory: Sequence[MemoryRow] = (),
        *,
        fence: Fence | None = None,
    ) -> list[int]:
        """Everything checked and built first, then stored under the one lock: nothing
        left to fail half-way, so the append is all or nothing. The ``fence`` is checked
        under that lock too (leases live under it)."""
        batch: list[tuple[str, Text]] = [(iso_time(when), raw) for when, raw in events]
        if not batch:
            return []
        now = utc_now()
        latest = {
            agent_id: _StateRow(agent_name=name, updated_at=now, raw=raw)
            for agent_id, name, raw in states
        }
        folded = fold_memory(memory)
        data = self._data
        with data.locked():
            if fence is not None:
                data.check_fence(fence)
            rows = data.events.setdefault(team_id, [])
            first = len(rows) + 1
            rows.extend(batch)
            if latest:
                data.states.setdefault(team_id, {}).update(latest)
            for agent_id, (cleared, items) in folded.items():
                key = (team_id, agent_id)
                if cleared:
                    data.memory[key] = items
                else:
                    data.memory.setdefault(key, []).extend(items)
        return list(range(first, first + len(batch)))

    def append_packs(
        self,
        team_id: UUID,
        packs: Sequence[bytes],
        states: Sequence[StateRow] = (),
        memory: Sequence[MemoryRow] = (),
        *,
        fence: Fence | None = None,
    ) -> list[int]:
        """Expanded into their events, stored as ``append_encoded`` stores them: here a
        row costs no more than a pack would, and a pack that does not decode whole is
        refused before anything is stored."""
        check_packs(packs)
        return self.append_encoded(
            team_id,
            [event for pack in packs for event in decode_pack(pack)],
            states,
            memory,
            fence=fence,
        )

    def read(
        self,
        team_id: UUID,
        from_seq: int = 1,
        to_seq: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]:
        start, to_seq, limit = check_read_range(from_seq, to_seq, limit)
        with self._data.locked():
            rows = self._data.events.get(team_id, [])
            stop = len(rows) if to_seq is None else min(to_seq, len(rows))
            if limit is not None:
                stop = min(stop, start - 1 + limit)
            chosen = rows[start - 1 : stop]
        return [
            decode_event(team_id, start + i, ts, raw, load_iso_time)
            for i, (ts, raw) in enumerate(chosen)
        ]

    def last_seq(self, team_id: UUID) -> int:
        with self._data.locked():
            return len(self._data.events.get(team_id, ()))


class _States:
    def __init__(self, data: _Data) -> None:
        self._data = data

    def save_state(self, team_id: UUID, agent_id: UUID, agent_name: str, state: BaseModel) -> None:
        row = _StateRow(agent_name=agent_name, updated_at=utc_now(), raw=encode_state(state))
        with self._data.locked():
            self._data.states.setdefault(team_id, {})[agent_id] = row

    def load_states(self, team_id: UUID) -> dict[UUID, StateRecord]:
        with self._data.locked():
            rows = dict(self._data.states.get(team_id, {}))
        return {
            agent_id: decode_state(team_id, agent_id, row.agent_name, row.updated_at, row.raw)
            for agent_id, row in rows.items()
        }


class _WorkingMemory:
    def __init__(self, data: _Data) -> None:
        self._data = data

    def get(self, team_id: UUID, agent_id: UUID) -> list[dict[str, Any]]:
        with self._data.locked():
            raws = list(self._data.memory.get((team_id, agent_id), ()))
        where = f"working memory of agent {agent_id} in team {team_id}"
        return [load_object(raw, f"{where}, item {i}") for i, raw in enumerate(raws)]

    def replace(
        self,
        team_id: UUID,
        agent_id: UUID,
        items: Sequence[dict[str, Any]],
        *,
        fence: Fence | None = None,
    ) -> None:
        raws = dump_objects(items, "items")
        with self._data.locked():
            if fence is not None:
                self._data.check_fence(fence)
            self._data.memory[(team_id, agent_id)] = raws

    def append(
        self,
        team_id: UUID,
        agent_id: UUID,
        items: Sequence[dict[str, Any]],
        *,
        fence: Fence | None = None,
    ) -> None:
        raws = dump_objects(items, "items")
        with self._data.locked():
            if fence is not None:
                self._data.check_fence(fence)
            self._data.memory.setdefault((team_id, agent_id), []).extend(raws)

    def clear(self, team_id: UUID, agent_id: UUID) -> None:
        with self._data.locked():
            self._data.memory.pop((team_id, agent_id), None)


class _Skills:
    def __init__(self, data: _Data) -> None:
        self._data = data

    def list(self) -> builtins.list[SkillRecord]:
        with self._data.locked():
            return [self._data.skills[name] for name in sorted(self._data.skills)]

    def get(self, name: str) -> SkillRecord | None:
        with self._data.locked():
            return self._data.skills.get(name)

    def upsert(self, skill: SkillRecord) -> SkillRecord:
        stored = skill.model_copy(update={"updated_at": utc_now()})
        with self._data.locked():
            self._data.skills[stored.name] = stored
        return stored

    def remove(self, name: str) -> bool:
        with self._data.locked():
            return self._data.skills.pop(name, None) is not None


class _Catalog(CatalogChanges):
    """Rows as records whose config is kept as JSON text (a snapshot, as in a file)."""

    def __init__(self, data: _Data) -> None:
        self._data = data

    def _record(self, name: str) -> ToolInstanceRecord | None:
        found = self._data.catalog.get(name)
        if found is None:
            return None
        record, config = found
        return record.model_copy(
            update={"config": load_object(config, f"catalog instance {name!r} config")}
        )

    def list(self) -> builtins.list[ToolInstanceRecord]:
        with self._data.locked():
            names = sorted(self._data.catalog)
            return [r for r in map(self._record, names) if r is not None]

    def get(self, name: str) -> ToolInstanceRecord | None:
        with self._data.locked():
            return self._record(name)

    def _change(
        self,
        name: str,
        type_name: str,
        changes: dict[str, Any],
        audit: CatalogAuditEntry | None,
        expected_config: dict[str, Any] | None = None,
    ) -> ToolInstanceRecord:
        now = utc_now()
        config = changes.pop("config", None)
        line = None if audit is None else self._line(now, name, type_name, audit)
        with self._data.locked():
            found = self._data.catalog.get(name)
            if found is None:
                record = ToolInstanceRecord(
                    name=name,
                    type_name=type_name,
                    created_at=now,
                    updated_at=now,
                    row_id=new_row_id(),
                )
                stored_config = "{}"
            else:
                record, stored_config = found
                if record.type_name != type_name:
                    raise instance_type_mismatch(name, record.type_name, type_name)
            if expected_config is not None and load_object(stored_config, "config") != (
                expected_config
            ):
                raise config_changed(name)
            record = record.model_copy(update={**changes, "updated_at": now})
            self._data.catalog[name] = (record, config if config is not None else stored_config)
            if line is not None:
                self._append(line)
            result = self._record(name)
        assert result is not None
        return result

    def _probed(
        self,
        name: str,
        type_name: str,
        changes: dict[str, Any],
        row_id: str | None,
        probed_with: ProbedWith | None,
    ) -> ToolInstanceRecord:
        now = utc_now()
        with self._data.locked():
            found = self._data.catalog.get(name)
            if found is None and row_id is None:
                record, config = (
                    ToolInstanceRecord(
                        name=name,
                        type_name=type_name,
                        created_at=now,
                        updated_at=now,
                        row_id=new_row_id(),
                    ),
                    "{}",
                )
            elif found is not None and (found[0].row_id, found[0].type_name) == (
                row_id,
                type_name,
            ):
                record, config = found
                if probed_with is not None and probed_differs(
                    config, record.credential_enc, probed_with
                ):
                    raise probe_outdated(name)
            else:
                stored = None if found is None else (found[0].type_name, found[0].row_id or "")
                raise probe_refused(name, type_name, row_id, stored)
            self._data.catalog[name] = (
                record.model_copy(update={**changes, "updated_at": now}),
                config,
            )
            result = self._record(name)
        assert result is not None
        return result

    @staticmethod
    def _line(
        now: datetime, name: str, type_name: str, audit: CatalogAuditEntry
    ) -> CatalogAuditRecord:
        """The audit line, numbered when appended; a detail that is not JSON raises here."""
        return CatalogAuditRecord(
            seq=0,
            at=now,
            instance=name,
            type_name=type_name,
            actor=audit.actor,
            action=audit.action,
            detail=load_object(dump_object(audit.detail, "audit detail"), "audit detail"),
        )

    def _append(self, line: CatalogAuditRecord) -> None:
        trail = self._data.audit
        trail.append(line.model_copy(update={"seq": len(trail) + 1}))

    def remove(self, name: str, audit: CatalogAuditEntry) -> bool:
        with self._data.locked():
            found = self._data.catalog.get(name)
            if found is None:
                return False
            self._append(self._line(utc_now(), name, found[0].type_name, audit))
            del self._data.catalog[name]
            return True

    def audit(
        self, name: str | None = None, limit: int | None = None
    ) -> builtins.list[CatalogAuditRecord]:
        keep = check_limit(limit)
        with self._data.locked():
            rows = [r for r in self._data.audit if name is None or r.instance == name]
        return rows[len(rows) - keep :] if keep is not None else rows


class _Leases:
    """Leases on the wall clock of this process; every call is atomic under the lock."""

    def __init__(self, data: _Data) -> None:
        self._data = data

    def acquire(
        self, resource: str, holder: LeaseHolder, ttl: float, *, take_over: str | None = None
    ) -> Lease:
        ttl = check_ttl(ttl)
        with self._data.locked():
            now = time.time()
            row = self._data.leases.get(resource)
            if row is not None and not (
                row.holder.owner in (holder.owner, take_over) or row.expires_at <= now
            ):
                raise LeaseHeldError(row.lease(resource, now))
            since = row.since if row is not None and row.holder.owner == holder.owner else now
            row = self._data.leases[resource] = _LeaseRow(holder, since, now, now + ttl)
            return row.lease(resource, now)

    def renew(self, resource: str, owner: str, ttl: float) -> Lease:
        ttl = check_ttl(ttl)
        with self._data.locked():
            now = time.time()
            row = self._data.leases.get(resource)
            if row is None or row.holder.owner != owner:
                raise LeaseLostError(
                    resource, owner, row.lease(resource, now) if row is not None else None
                )
            row = self._data.leases[resource] = replace(row, renewed_at=now, expires_at=now + ttl)
            return row.lease(resource, now)

    def release(self, resource: str, owner: str) -> bool:
        with self._data.locked():
            row = self._data.leases.get(resource)
            if row is None or row.holder.owner != owner:
                return False
            del self._data.leases[resource]
            return True

    def inspect(self, resource: str) -> Lease | None:
        with self._data.locked():
            row = self._data.leases.get(resource)
            return None if row is None else row.lease(resource, time.time())

    def list(self, prefix: str = "") -> builtins.list[Lease]:
        with self._data.locked():
            now = time.time()
            return [
                row.lease(resource, now)
                for resource, row in sorted(self._data.leases.items())
                if resource.startswith(prefix)
            ]


class MemoryStorage:
    """A :class:`~akgentic.storage.StorageBundle` held in this process' memory.

    Thread-safe. Opened with ``open_storage("memory://")``; each instance is its own
    empty store.
    """

    def __init__(self) -> None:
        self._data = _Data()
        self._teams = _Teams(self._data)
        self._events = _Events(self._data)
        self._states = _States(self._data)
        self._memory = _WorkingMemory(self._data)
        self._skills = _Skills(self._data)
        self._catalog = _Catalog(self._data)
        self._leases = _Leases(self._data)

    @property
    def teams(self) -> _Teams:
        return self._teams

    @property
    def leases(self) -> _Leases:
        return self._leases

    @property
    def events(self) -> _Events:
        return self._events

    @property
    def states(self) -> _States:
        return self._states

    @property
    def working_memory(self) -> _WorkingMemory:
        return self._memory

    @property
    def skills(self) -> _Skills:
        return self._skills

    @property
    def catalog(self) -> _Catalog:
        return self._catalog

    def close(self) -> None:
        """Drop nothing, refuse everything after (idempotent)."""
        self._data.close()

    def __enter__(self) -> MemoryStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "MemoryStorage()"

    # -- test hooks ---------------------------------------------------------------------
    def _write_raw_event(self, team_id: UUID, seq: int, raw: Text) -> None:
        """Overwrite the stored text of an event (simulates damage; tests only)."""
        with self._data.locked():
            rows = self._data.events[team_id]
            rows[seq - 1] = (rows[seq - 1][0], raw)

    def _write_raw_time(self, team_id: UUID, seq: int, ts: str) -> None:
        """Overwrite the stored time of an event (simulates damage; tests only)."""
        with self._data.locked():
            rows = self._data.events[team_id]
            rows[seq - 1] = (ts, rows[seq - 1][1])

    def _write_raw_team(self, team_id: UUID, column: str, value: Text) -> None:
        """Overwrite one column of a team's row (simulates damage; tests only)."""
        with self._data.locked():
            damage: dict[str, Any] = {column: value}
            self._data.teams[team_id] = replace(self._data.teams[team_id], **damage)

    def _write_raw_state(self, team_id: UUID, agent_id: UUID, raw: str) -> None:
        """Overwrite the stored text of a state snapshot (simulates damage; tests only)."""
        with self._data.locked():
            self._data.states[team_id][agent_id] = replace(
                self._data.states[team_id][agent_id], raw=raw
            )
