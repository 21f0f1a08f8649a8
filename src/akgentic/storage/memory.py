"""The in-memory backend: for tests, and for runs that need no history after exit.

It keeps what the SQL backends keep, in the same form: messages, states, cards and
working memory items are stored as JSON text, so a stored value is a snapshot (later
changes to the object do not reach it) and decodes exactly as it would from a file.
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
    decode_event,
    decode_state,
    dump_object,
    dump_objects,
    encode_event,
    encode_state,
    load_object,
)
from akgentic.storage._rules import check_read_range, check_transition, team_not_found
from akgentic.storage.errors import StorageClosedError, TeamExistsError
from akgentic.storage.lease import Lease, LeaseHeldError, LeaseHolder, LeaseLostError, check_ttl
from akgentic.storage.records import (
    EventRecord,
    SkillRecord,
    StateRecord,
    TeamRecord,
    TeamStatus,
    utc_now,
)

__all__ = ["MemoryStorage"]


@dataclass(frozen=True, slots=True)
class _TeamRow:
    team_id: UUID
    name: str
    status: TeamStatus
    created_at: datetime
    updated_at: datetime
    card: str
    metadata: str

    def record(self) -> TeamRecord:
        return TeamRecord(
            team_id=self.team_id,
            name=self.name,
            status=self.status,
            created_at=self.created_at,
            updated_at=self.updated_at,
            card=load_object(self.card, f"team {self.team_id} card"),
            metadata=load_object(self.metadata, f"team {self.team_id} metadata"),
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
        self.events: dict[UUID, list[tuple[datetime, str]]] = {}
        self.states: dict[UUID, dict[UUID, _StateRow]] = {}
        self.memory: dict[tuple[UUID, UUID], list[str]] = {}
        self.skills: dict[str, SkillRecord] = {}
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
        now = utc_now()
        row = _TeamRow(
            team_id=team_id or uuid4(),
            name=name,
            status=TeamStatus.RUNNING,
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
            rows = [r for r in self._data.teams.values() if status is None or r.status is status]
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
        changes: dict[str, Any] = {"updated_at": utc_now()}
        if name is not None:
            changes["name"] = name
        if card is not None:
            changes["card"] = dump_object(card, "card")
        if metadata is not None:
            changes["metadata"] = dump_object(metadata, "metadata")
        return self._change(team_id, changes)

    def set_status(self, team_id: UUID, status: TeamStatus) -> TeamRecord:
        status = TeamStatus(status)
        return self._change(team_id, {"status": status, "updated_at": utc_now()})

    def delete(self, team_id: UUID) -> TeamRecord:
        return self.set_status(team_id, TeamStatus.DELETED)

    def _change(self, team_id: UUID, changes: dict[str, Any]) -> TeamRecord:
        with self._data.locked():
            row = self._data.teams.get(team_id)
            if row is None:
                raise team_not_found(team_id)
            if "status" in changes:
                check_transition(team_id, row.status, changes["status"])
            row = replace(row, **changes)
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
        row = encode_event(message)
        with self._data.locked():
            rows = self._data.events.setdefault(team_id, [])
            rows.append(row)
            return len(rows)

    def append_many(self, team_id: UUID, messages: Sequence[Message]) -> list[int]:
        batch = [encode_event(m) for m in messages]
        if not batch:
            return []
        with self._data.locked():
            rows = self._data.events.setdefault(team_id, [])
            first = len(rows) + 1
            rows.extend(batch)
        return list(range(first, first + len(batch)))

    def read(
        self,
        team_id: UUID,
        from_seq: int = 1,
        to_seq: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]:
        start = check_read_range(from_seq, to_seq, limit)
        with self._data.locked():
            rows = self._data.events.get(team_id, [])
            stop = len(rows) if to_seq is None else min(to_seq, len(rows))
            if limit is not None:
                stop = min(stop, start - 1 + limit)
            chosen = rows[start - 1 : stop]
        return [decode_event(team_id, start + i, ts, raw) for i, (ts, raw) in enumerate(chosen)]

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

    def replace(self, team_id: UUID, agent_id: UUID, items: Sequence[dict[str, Any]]) -> None:
        raws = dump_objects(items, "items")
        with self._data.locked():
            self._data.memory[(team_id, agent_id)] = raws

    def append(self, team_id: UUID, agent_id: UUID, items: Sequence[dict[str, Any]]) -> None:
        raws = dump_objects(items, "items")
        with self._data.locked():
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
    def _write_raw_event(self, team_id: UUID, seq: int, raw: str) -> None:
        """Overwrite the stored text of an event (simulates damage; tests only)."""
        with self._data.locked():
            rows = self._data.events[team_id]
            rows[seq - 1] = (rows[seq - 1][0], raw)

    def _write_raw_state(self, team_id: UUID, agent_id: UUID, raw: str) -> None:
        """Overwrite the stored text of a state snapshot (simulates damage; tests only)."""
        with self._data.locked():
            self._data.states[team_id][agent_id] = replace(
                self._data.states[team_id][agent_id], raw=raw
            )
