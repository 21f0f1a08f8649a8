"""The SQL stores, written once for every SQL backend.

A backend supplies a :class:`Driver`: how to open a transaction, how ids and times are
bound and read back, and how a team's next events are numbered and inserted without a
race. The stores below hold the rules (gap-free numbering, purge, latest-wins states,
decoding that reports instead of raising) and are identical for SQLite and Postgres.
SQL text uses ``?`` placeholders; a driver whose library wants another style converts.

Rows are fetched while the driver's lock is held and decoded after it is released, so
a long restore does not stall writers on decoding.

A team's events live in two tables: ``akgentic_events``, one row per event, and
``akgentic_event_packs``, one row per event pack (``akgentic.storage._pack``) holding the
consecutive numbers ``first_seq`` to ``last_seq``. Both share the team's numbering, and
every reader merges them by number, so a pack's events read as if they were rows.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from itertools import compress
from typing import Any, Protocol
from uuid import UUID, uuid4

from pydantic import BaseModel

from akgentic.core.excerpt import excerpt
from akgentic.core.messages.message import Message
from akgentic.storage._codec import (
    EncodedEvent,
    MemoryRow,
    StateRow,
    decode_audit_row,
    decode_catalog_row,
    decode_event,
    decode_state,
    decode_team,
    dump_object,
    dump_objects,
    encode_event,
    encode_state,
    fold_memory,
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
    team_not_found,
)
from akgentic.storage._sql_lease import SqlLeases
from akgentic.storage.errors import StorageError, TeamExistsError
from akgentic.storage.lease import Fence
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

__all__ = ["Cursor", "Driver", "SqlStorage", "check_tables", "create_schema", "team_head"]


class Cursor(Protocol):
    """The part of a DB-API cursor the stores use."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any:
        """The columns of the last query's result: a sequence of entries, each led by the
        column's name (DB-API)."""
        ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...

    def executemany(self, sql: str, params: Iterable[Sequence[Any]]) -> object: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> builtins.list[Any]: ...


class Driver(Protocol):
    """What a SQL backend provides to the shared stores.

    Text columns come back as ``str``, or as ``bytes`` when the stored text is not valid
    UTF-8 (see ``_codec.text_or_bytes``): a damaged value never fails a whole query.
    """

    team_tables: tuple[str, ...]
    """Every table with a ``team_id`` column, emptied by ``purge``."""

    epoch_now: str
    """A SQL expression: the database clock now, in seconds since the epoch (a float),
    the same value wherever it appears in one statement (leases expire on it)."""

    def write(self) -> AbstractContextManager[Cursor]:
        """One transaction, committed when the block exits normally, rolled back if not.

        Writers are serialized per team at least; the commit is durable on exit."""
        ...

    def read(self) -> AbstractContextManager[Cursor]:
        """A cursor for reads (each statement sees committed data)."""
        ...

    def uid(self, value: UUID) -> Any:
        """``value`` as a bind parameter."""
        ...

    def load_uid(self, value: Any) -> UUID:
        """A stored id back to a UUID."""
        ...

    def time(self, value: datetime) -> Any:
        """A UTC time as a bind parameter."""
        ...

    def load_time(self, value: Any) -> datetime:
        """A stored time back to a timezone-aware UTC datetime; raises for a value that
        is not one (the row is then reported as corrupt)."""
        ...

    def insert_events(
        self,
        team_id: UUID,
        rows: builtins.list[tuple[datetime, str]],
        also: Callable[[Cursor], None] | None = None,
        fence: Fence | None = None,
    ) -> int:
        """Store ``rows`` (timestamp, payload) as the team's next events; the first number.

        One transaction, committed on return. Numbering must be race-free against every
        other writer of the same store (threads, connections, processes) and a failed
        insert must give its numbers back (no gaps). ``also``, when given, runs in that
        same transaction after the rows (the latest-state rows that go with them).
        ``fence``, when given, is checked in that transaction, race-free against a
        concurrent take-over of the lease: when its owner does not hold the lease,
        nothing is stored (``also`` does not run) and ``fence_refused``'s
        ``LeaseLostError`` is raised."""
        ...

    def insert_packs(
        self,
        team_id: UUID,
        packs: list[bytes],
        counts: list[int],
        also: Callable[[Cursor], None] | None = None,
        fence: Fence | None = None,
    ) -> int:
        """Store each pack (holding ``counts[i]`` events) as one row of
        ``akgentic_event_packs``, numbered as the team's next events, in order, in one
        transaction; the first number. The rules of :meth:`insert_events` hold: the
        numbering is shared with the rows, race-free, gap-free, and ``also`` and
        ``fence`` are as there."""
        ...

    def lock_working_memory(self, cur: Cursor, team_id: UUID, agent_id: UUID) -> None:
        """Inside a write transaction: serialize writers of one agent's working memory."""
        ...

    def check_fence(self, cur: Cursor, fence: Fence) -> None:
        """Inside a write transaction: ``fence_refused``'s ``LeaseLostError`` unless the
        fence's owner holds the lease, read as the backend's fenced inserts read it, so
        that no take-over commits between this check and the transaction's commit."""
        ...


_TEAM_COLUMNS = "team_id, name, status, created_at, updated_at, card, metadata"
_SKILL_COLUMNS = "name, description, content, source, toolset, updated_at"

TABLE_COLUMNS: dict[str, str] = {
    "akgentic_teams": _TEAM_COLUMNS,
    "akgentic_events": "team_id, seq, ts, payload",
    "akgentic_event_packs": "team_id, first_seq, last_seq, data",
    "akgentic_states": "team_id, agent_id, agent_name, updated_at, payload",
    "akgentic_working_memory": "team_id, agent_id, pos, item",
    "akgentic_skills": _SKILL_COLUMNS,
}
"""The columns the stores read, by table."""

ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("akgentic_skills", "toolset", "TEXT"),  # schema version 3: a skill's toolset link
)
"""Columns a table gained after its first version: (table, column, SQL type), each
nullable. A store an older akgentic made gains them in place when opened
(:func:`create_schema`); its existing rows read NULL there."""


def check_tables(cur: Cursor, where: str) -> None:
    """Refuse a database whose tables of our names were made by another program.

    ``CREATE TABLE IF NOT EXISTS`` keeps a table that already has the name; reading its
    columns finds out. Call it inside the schema transaction; ``where`` names the file or
    schema in the error.
    """
    for table, columns in TABLE_COLUMNS.items():
        try:
            cur.execute(f"SELECT {columns} FROM {table} WHERE 1 = 0")
        except Exception as exc:  # the driver's own error type: it names the column
            said = (str(exc).strip().splitlines() or [type(exc).__name__])[0]  # not LINE 1: ...
            raise StorageError(
                f"{where}: the table {table} was not made by akgentic (it needs the columns "
                f"{columns}; the database says: {said}). Use another database for akgentic."
            ) from exc


_CREATE_TABLE = re.compile(r"\s*CREATE\s+(?:\w+\s+)?TABLE\b", re.IGNORECASE)


def add_columns(cur: Cursor) -> None:
    """Give each table the :data:`ADDED_COLUMNS` it lacks (an older akgentic made it): the
    upgrade in place of a store opened at an older schema version. Read off the table
    itself, not the version: a table made at this version has them, and one another
    program made is refused by :func:`check_tables` next, in the same transaction, which
    rolls this change back with it."""
    for table, column, kind in ADDED_COLUMNS:
        cur.execute(f"SELECT * FROM {table} WHERE 1 = 0")
        if column not in {entry[0] for entry in cur.description or ()}:
            cur.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def create_schema(cur: Cursor, statements: Sequence[str], where: str) -> None:
    """Run a schema's statements (``IF NOT EXISTS`` each), the tables first, bring an
    older version's tables up to date (:func:`add_columns`), then check them
    (:func:`check_tables`), then the rest (indexes): a table of our name another
    program made is said as such, not as the index on a column it lacks
    (``no such column: status``)."""
    tables = [bool(_CREATE_TABLE.match(statement)) for statement in statements]
    for statement in compress(statements, tables):
        cur.execute(statement)
    add_columns(cur)
    check_tables(cur, where)
    for statement, table in zip(statements, tables, strict=True):
        if not table:
            cur.execute(statement)


def identify_catalog_rows(cur: Cursor, has_row_id: bool) -> None:
    """Bring a catalog table made before rows had an identity (schema 3) up to date: add
    ``row_id`` when the table lacks it (``has_row_id``, read by the backend) and give each
    row without one its own. Call it inside the schema transaction, after
    :func:`create_schema`."""
    if not has_row_id:
        cur.execute("ALTER TABLE akgentic_catalog ADD COLUMN row_id TEXT NOT NULL DEFAULT ''")
    for (name,) in cur.execute("SELECT name FROM akgentic_catalog WHERE row_id = ''").fetchall():
        cur.execute("UPDATE akgentic_catalog SET row_id = ? WHERE name = ?", (new_row_id(), name))


HEAD_SQL = (
    "SELECT (SELECT MAX(seq) FROM akgentic_events WHERE team_id = ?), "
    "(SELECT last_seq FROM akgentic_event_packs WHERE team_id = ? "
    "ORDER BY first_seq DESC LIMIT 1)"
)
"""The highest number of a team's rows and of its packs (NULL for none), read off the
primary keys (packs never overlap: the last one ends highest)."""


def team_head(cur: Cursor, team: Any) -> int:
    """The team's highest event number, rows and packs alike (0: none); ``team`` is the
    bound id. Inside a write transaction it is the number the next append follows."""
    rows, packs = cur.execute(HEAD_SQL, (team, team)).fetchone()
    return max(int(rows or 0), int(packs or 0))


_READ_EVENTS = (
    "SELECT seq, seq, ts, payload, NULL FROM akgentic_events "
    "WHERE team_id = ? AND seq >= ?{rows_to} "
    "UNION ALL "
    "SELECT first_seq, last_seq, NULL, NULL, data FROM akgentic_event_packs "
    "WHERE team_id = ? AND last_seq >= ? AND first_seq >= COALESCE(("
    "SELECT first_seq FROM akgentic_event_packs WHERE team_id = ? AND first_seq <= ? "
    "ORDER BY first_seq DESC LIMIT 1), ?){packs_to} "
    "ORDER BY 1{limit}"
)
"""A team's rows and packs in a range, in number order, as ``(first, last, ts, payload,
data)``: one statement, so one snapshot (two would let a concurrent append show a pack
without the row numbered before it). The packs are found from the one holding the
range's start, along the primary key."""


def _pack_events(
    db: Driver, team_id: UUID, first: int, last: int, data: Any, lo: int, hi: int, room: int | None
) -> builtins.list[EventRecord]:
    """The records of events ``lo`` to ``hi`` (at most ``room`` of them) of the pack
    numbered ``first`` to ``last``, each decoded as its row would be (its time through the
    backend's conversion). A pack that does not decode, or whose contents do not fill the
    range it is numbered for, is one record for ``lo`` to ``hi`` (``EventRecord.through``):
    its stored range may be the damage, so nothing here is sized by it."""
    try:
        events = decode_pack(data)
        if len(events) != last - first + 1:
            raise ValueError(
                f"it holds {len(events)} events but is numbered for {last - first + 1}"
            )
    except Exception as exc:  # ValueError; a value of the wrong type may raise anything
        reason = f"the stored event pack numbered {first} to {last} cannot be read: {exc}"
        return [_span(team_id, lo, hi, reason, excerpt(data))]
    if room is not None:
        hi = min(hi, lo + room - 1)
    time, load_time = db.time, db.load_time
    return [
        decode_event(team_id, seq, time(stamp), text, load_time)
        for seq, (stamp, text) in zip(
            range(lo, hi + 1), events[lo - first : hi - first + 1], strict=True
        )
    ]


def _span(team_id: UUID, lo: int, hi: int, reason: str, raw: str = "") -> EventRecord:
    """One error record standing for event numbers ``lo`` to ``hi``."""
    seqs = f"event seq {lo}" if lo == hi else f"event seqs {lo} to {hi}"
    return EventRecord(
        team_id=team_id,
        seq=lo,
        through=hi,
        timestamp=None,
        message=None,
        error=f"team {team_id}, {seqs}: {reason}",
        raw=raw,
    )


GAP_REASON = "missing from the log (a gap in its numbering: rows were deleted or lost)"
"""Why a gap record cannot be read."""


def _records(
    db: Driver,
    team_id: UUID,
    rows: Sequence[Any],
    start: int,
    to_seq: int | None,
    limit: int | None,
) -> builtins.list[EventRecord]:
    """The records of ``rows`` (``_READ_EVENTS``'s, in number order) from ``start`` on, at
    most ``limit``. Numbers are dense from 1: where the next row starts past the number
    expected, the numbers between are one gap record (``EventRecord.through``); a row
    that a damaged pack's claimed range covers is left out (the claim's record stands for
    it), so no number is read twice and records stay in order."""
    records: builtins.list[EventRecord] = []
    expected = start
    for first, last, ts, raw, data in rows:
        first, last = int(first), int(last)
        if first > expected:
            if limit is not None and len(records) >= limit:
                break
            records.append(_span(team_id, expected, first - 1, GAP_REASON))
        if last < expected:  # under a damaged pack's claim, already read as its record
            continue
        room = None if limit is None else limit - len(records)
        if room is not None and room <= 0:
            break
        lo = max(first, expected)  # a row partly under such a claim: the rest of it
        expected = last + 1
        if data is None:
            records.append(decode_event(team_id, first, ts, raw, db.load_time))
            continue
        hi = last if to_seq is None else min(last, to_seq)
        records += _pack_events(db, team_id, first, last, data, lo, hi, room)
    return records


class _Teams:
    def __init__(self, driver: Driver) -> None:
        self._db = driver

    def _record(self, row: Sequence[Any]) -> TeamRecord:
        team_id, name, status, created_at, updated_at, card, metadata = row
        return decode_team(
            self._db.load_uid(team_id),
            name,
            status,
            created_at,
            updated_at,
            card,
            metadata,
            load_time=self._db.load_time,
        )

    def create(
        self,
        name: str,
        *,
        card: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        team_id: UUID | None = None,
    ) -> TeamRecord:
        db = self._db
        team_id = team_id or uuid4()
        now = db.time(utc_now())
        row = (
            db.uid(team_id),
            check_team_name(name),
            TeamStatus.RUNNING.value,
            now,
            now,
            dump_object(card or {}, "card"),
            dump_object(metadata or {}, "metadata"),
        )
        with db.write() as cur:
            cur.execute(
                f"INSERT INTO akgentic_teams ({_TEAM_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT (team_id) DO NOTHING",
                row,
            )
            if cur.rowcount == 0:
                raise TeamExistsError(f"team {team_id} already exists")
        return self._record(row)

    def get(self, team_id: UUID) -> TeamRecord | None:
        with self._db.read() as cur:
            row = cur.execute(
                f"SELECT {_TEAM_COLUMNS} FROM akgentic_teams WHERE team_id = ?",
                (self._db.uid(team_id),),
            ).fetchone()
        return None if row is None else self._record(row)

    def list(self, status: TeamStatus | None = None) -> builtins.list[TeamRecord]:
        sql = f"SELECT {_TEAM_COLUMNS} FROM akgentic_teams"
        params: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status = ?"
            params = (TeamStatus(status).value,)
        with self._db.read() as cur:
            rows = cur.execute(sql + " ORDER BY created_at, team_id", params).fetchall()
        return [self._record(row) for row in rows]

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
        return self._change(team_id, changes, None)

    def set_status(
        self, team_id: UUID, status: TeamStatus, *, fence: Fence | None = None
    ) -> TeamRecord:
        status = TeamStatus(status)
        return self._change(team_id, {"status": status.value}, status, fence)

    def delete(self, team_id: UUID) -> TeamRecord:
        return self.set_status(team_id, TeamStatus.DELETED)

    def _change(
        self,
        team_id: UUID,
        changes: dict[str, Any],
        status: TeamStatus | None,
        fence: Fence | None = None,
    ) -> TeamRecord:
        """Apply ``changes`` unless :func:`check_transition` refuses them, in one statement:
        the refusal of a DELETED team is the UPDATE's own condition, so a delete committed
        by another process meanwhile is seen (Postgres re-reads a row it waited for), never
        overwritten by a status read before it."""
        db = self._db
        changes["updated_at"] = db.time(utc_now())
        assignments = ", ".join(f"{column} = ?" for column in changes)
        params: tuple[Any, ...] = (*changes.values(), db.uid(team_id))
        guard = ""
        if status is not TeamStatus.DELETED:  # anything else a DELETED team refuses
            guard = " AND (status IS NULL OR status <> ?)"
            params = (*params, TeamStatus.DELETED.value)
        with db.write() as cur:
            if fence is not None:
                db.check_fence(cur, fence)
            cur.execute(f"UPDATE akgentic_teams SET {assignments} WHERE team_id = ?{guard}", params)
            changed = cur.rowcount
            row = cur.execute(
                f"SELECT {_TEAM_COLUMNS} FROM akgentic_teams WHERE team_id = ?",
                (db.uid(team_id),),
            ).fetchone()
            if row is None:
                raise team_not_found(team_id)
            if not changed:  # refused by the guard: the team is DELETED
                check_transition(team_id, TeamStatus.DELETED, status)
        return self._record(row)

    def purge(self, team_id: UUID) -> bool:
        removed = 0
        with self._db.write() as cur:
            for table in self._db.team_tables:
                cur.execute(f"DELETE FROM {table} WHERE team_id = ?", (self._db.uid(team_id),))
                removed += max(cur.rowcount, 0)
        return removed > 0


def upsert_states(cur: Cursor, db: Driver, team_id: UUID, states: Sequence[StateRow]) -> None:
    """Make each (encoded) state its agent's latest, in the caller's transaction."""
    now = db.time(utc_now())
    cur.executemany(
        "INSERT INTO akgentic_states (team_id, agent_id, agent_name, updated_at, payload) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (team_id, agent_id) DO UPDATE SET "
        "agent_name = excluded.agent_name, updated_at = excluded.updated_at, "
        "payload = excluded.payload",
        [(db.uid(team_id), db.uid(agent_id), name, now, raw) for agent_id, name, raw in states],
    )


def write_memory(
    cur: Cursor, db: Driver, team_id: UUID, folded: dict[UUID, tuple[bool, builtins.list[str]]]
) -> None:
    """Apply folded working-memory changes (``fold_memory``) in the caller's transaction:
    per agent, under its lock, clear when asked, then add the items after the last one.

    Agents are locked in id order, so two transactions changing the same agents cannot
    each hold one lock and wait for the other's; every item of every agent is then
    inserted by one statement."""
    team = db.uid(team_id)
    rows: builtins.list[tuple[Any, Any, int, str]] = []
    for agent_id in sorted(folded):
        cleared, items = folded[agent_id]
        if not cleared and not items:
            continue
        key = (team, db.uid(agent_id))
        db.lock_working_memory(cur, team_id, agent_id)
        if cleared:
            cur.execute(
                "DELETE FROM akgentic_working_memory WHERE team_id = ? AND agent_id = ?", key
            )
            start = 0
        else:
            row = cur.execute(
                "SELECT COALESCE(MAX(pos), -1) FROM akgentic_working_memory "
                "WHERE team_id = ? AND agent_id = ?",
                key,
            ).fetchone()
            start = int(row[0]) + 1
        rows += [(*key, start + i, item) for i, item in enumerate(items)]
    if rows:
        cur.executemany(
            "INSERT INTO akgentic_working_memory (team_id, agent_id, pos, item) "
            "VALUES (?, ?, ?, ?)",
            rows,
        )


def _tables_with(
    db: Driver, team_id: UUID, states: Sequence[StateRow], memory: Sequence[MemoryRow]
) -> Callable[[Cursor], None] | None:
    """The ``also`` of an append: the latest-state and working-memory rows written in its
    transaction. The memory rows are checked when it runs, after the events are inserted:
    a bad one rolls them back too (the append is all or nothing)."""
    if not states and not memory:
        return None

    def also(cur: Cursor) -> None:
        if states:
            upsert_states(cur, db, team_id, states)
        if memory:
            write_memory(cur, db, team_id, fold_memory(memory))

    return also


class _Events:
    def __init__(self, driver: Driver) -> None:
        self._db = driver

    def append(self, team_id: UUID, message: Message) -> int:
        return self.append_many(team_id, (message,))[0]

    def append_many(self, team_id: UUID, messages: Sequence[Message]) -> builtins.list[int]:
        return self.append_encoded(team_id, [encode_event(m) for m in messages])

    def append_encoded(
        self,
        team_id: UUID,
        events: Sequence[EncodedEvent],
        states: Sequence[StateRow] = (),
        memory: Sequence[MemoryRow] = (),
        *,
        fence: Fence | None = None,
    ) -> builtins.list[int]:
        if not events:
            return []
        also = _tables_with(self._db, team_id, states, memory)
        first = self._db.insert_events(team_id, list(events), also, fence)
        return list(range(first, first + len(events)))

    def append_packs(
        self,
        team_id: UUID,
        packs: Sequence[bytes],
        states: Sequence[StateRow] = (),
        memory: Sequence[MemoryRow] = (),
        *,
        fence: Fence | None = None,
    ) -> builtins.list[int]:
        counts = check_packs(packs)
        if not packs:
            return []
        also = _tables_with(self._db, team_id, states, memory)
        first = self._db.insert_packs(team_id, [bytes(p) for p in packs], counts, also, fence)
        return list(range(first, first + sum(counts)))

    def read(
        self,
        team_id: UUID,
        from_seq: int = 1,
        to_seq: int | None = None,
        limit: int | None = None,
    ) -> builtins.list[EventRecord]:
        start, to_seq, limit = check_read_range(from_seq, to_seq, limit)
        db = self._db
        team = db.uid(team_id)
        bounded = to_seq is not None
        sql = _READ_EVENTS.format(
            rows_to=" AND seq <= ?" if bounded else "",
            packs_to=" AND first_seq <= ?" if bounded else "",
            limit=" LIMIT ?" if limit is not None else "",  # a pack holds one event or more
        )
        params: builtins.list[Any] = [team, start, *([to_seq] if bounded else [])]
        params += [team, start, team, start, start, *([to_seq] if bounded else [])]
        if limit is not None:
            params.append(limit)
        with db.read() as cur:
            rows = cur.execute(sql, params).fetchall()
        return _records(db, team_id, rows, start, to_seq, limit)

    def last_seq(self, team_id: UUID) -> int:
        with self._db.read() as cur:
            return team_head(cur, self._db.uid(team_id))


class _States:
    def __init__(self, driver: Driver) -> None:
        self._db = driver

    def save_state(self, team_id: UUID, agent_id: UUID, agent_name: str, state: BaseModel) -> None:
        row = (agent_id, agent_name, encode_state(state))  # encoded before the lock
        with self._db.write() as cur:
            upsert_states(cur, self._db, team_id, [row])

    def load_states(self, team_id: UUID) -> dict[UUID, StateRecord]:
        db = self._db
        with db.read() as cur:
            rows = cur.execute(
                "SELECT agent_id, agent_name, updated_at, payload FROM akgentic_states "
                "WHERE team_id = ? ORDER BY agent_id",
                (db.uid(team_id),),
            ).fetchall()
        records: dict[UUID, StateRecord] = {}
        for agent, name, updated_at, raw in rows:
            agent_id = db.load_uid(agent)
            records[agent_id] = decode_state(team_id, agent_id, name, db.load_time(updated_at), raw)
        return records


class _WorkingMemory:
    def __init__(self, driver: Driver) -> None:
        self._db = driver

    def get(self, team_id: UUID, agent_id: UUID) -> builtins.list[dict[str, Any]]:
        db = self._db
        with db.read() as cur:
            rows = cur.execute(
                "SELECT item FROM akgentic_working_memory WHERE team_id = ? AND agent_id = ? "
                "ORDER BY pos",
                (db.uid(team_id), db.uid(agent_id)),
            ).fetchall()
        where = f"working memory of agent {agent_id} in team {team_id}"
        return [load_object(row[0], f"{where}, item {i}") for i, row in enumerate(rows)]

    def replace(
        self,
        team_id: UUID,
        agent_id: UUID,
        items: Sequence[dict[str, Any]],
        *,
        fence: Fence | None = None,
    ) -> None:
        self._write(team_id, agent_id, dump_objects(items, "items"), True, fence)

    def append(
        self,
        team_id: UUID,
        agent_id: UUID,
        items: Sequence[dict[str, Any]],
        *,
        fence: Fence | None = None,
    ) -> None:
        raws = dump_objects(items, "items")
        if raws:
            self._write(team_id, agent_id, raws, False, fence)

    def clear(self, team_id: UUID, agent_id: UUID) -> None:
        self._write(team_id, agent_id, [], True, None)

    def _write(
        self,
        team_id: UUID,
        agent_id: UUID,
        raws: builtins.list[str],
        clear: bool,
        fence: Fence | None,
    ) -> None:
        """One transaction: the ``fence`` checked first (its lease held until the commit),
        then the change."""
        with self._db.write() as cur:
            if fence is not None:
                self._db.check_fence(cur, fence)
            write_memory(cur, self._db, team_id, {agent_id: (clear, raws)})


class _Skills:
    def __init__(self, driver: Driver) -> None:
        self._db = driver

    def _record(self, row: Sequence[Any]) -> SkillRecord:
        return SkillRecord(
            name=row[0],
            description=row[1],
            content=row[2],
            source=row[3],
            toolset=row[4],
            updated_at=self._db.load_time(row[5]),
        )

    def list(self) -> builtins.list[SkillRecord]:
        with self._db.read() as cur:
            rows = cur.execute(f"SELECT {_SKILL_COLUMNS} FROM akgentic_skills ORDER BY name")
            return [self._record(row) for row in rows.fetchall()]

    def get(self, name: str) -> SkillRecord | None:
        with self._db.read() as cur:
            row = cur.execute(
                f"SELECT {_SKILL_COLUMNS} FROM akgentic_skills WHERE name = ?", (name,)
            ).fetchone()
        return None if row is None else self._record(row)

    def upsert(self, skill: SkillRecord) -> SkillRecord:
        stored = skill.model_copy(update={"updated_at": utc_now()})
        with self._db.write() as cur:
            cur.execute(
                f"INSERT INTO akgentic_skills ({_SKILL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET description = excluded.description, "
                "content = excluded.content, source = excluded.source, "
                "toolset = excluded.toolset, updated_at = excluded.updated_at",
                (
                    stored.name,
                    stored.description,
                    stored.content,
                    stored.source,
                    stored.toolset,
                    self._db.time(stored.updated_at),
                ),
            )
        return stored

    def remove(self, name: str) -> bool:
        with self._db.write() as cur:
            cur.execute("DELETE FROM akgentic_skills WHERE name = ?", (name,))
            return cur.rowcount > 0


_CATALOG_COLUMNS = (
    "name, type_name, enabled_agents, enabled_api, enabled_cli, config, credential_enc, "
    "status, status_detail, last_check_at, created_at, updated_at, row_id"
)
_AUDIT_COLUMNS = "seq, at, instance, type_name, actor, action, detail"


class _Catalog(CatalogChanges):
    """Every change is one upsert (``ON CONFLICT ... WHERE`` the type matches) and its
    audit line, in one transaction: the row is created by its first change, never
    checked-then-created, and a change naming another type updates nothing. A probe's
    outcome is one ``UPDATE ... WHERE row_id`` (or one ``INSERT ... DO NOTHING`` when it
    read no row): a row removed meanwhile is not made again."""

    def __init__(self, driver: Driver) -> None:
        self._db = driver

    def _record(self, row: Sequence[Any]) -> ToolInstanceRecord:
        return decode_catalog_row(row, self._db.load_time)

    def list(self) -> builtins.list[ToolInstanceRecord]:
        with self._db.read() as cur:
            rows = cur.execute(f"SELECT {_CATALOG_COLUMNS} FROM akgentic_catalog ORDER BY name")
            return [self._record(row) for row in rows.fetchall()]

    def get(self, name: str) -> ToolInstanceRecord | None:
        with self._db.read() as cur:
            row = cur.execute(
                f"SELECT {_CATALOG_COLUMNS} FROM akgentic_catalog WHERE name = ?", (name,)
            ).fetchone()
        return None if row is None else self._record(row)

    def _change(
        self,
        name: str,
        type_name: str,
        changes: dict[str, Any],
        audit: CatalogAuditEntry | None,
        expected_config: dict[str, Any] | None = None,
    ) -> ToolInstanceRecord:
        db = self._db
        now = db.time(utc_now())
        columns = ["name", "type_name", *changes, "created_at", "updated_at", "row_id"]
        updates = ", ".join(f"{c} = excluded.{c}" for c in [*changes, "updated_at"])
        guard = ""
        guarded: tuple[Any, ...] = ()
        with db.write() as cur:
            if expected_config is not None:
                # the text read is the condition of the update, so a writer that commits
                # between this read and the update (Postgres) is caught there too
                found = cur.execute(
                    "SELECT config FROM akgentic_catalog WHERE name = ?", (name,)
                ).fetchone()
                text = "{}" if found is None else found[0]
                if load_object(text, "config") != expected_config:
                    raise config_changed(name)
                guard, guarded = " AND akgentic_catalog.config = ?", (text,)
            cur.execute(
                f"INSERT INTO akgentic_catalog ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)}) "
                f"ON CONFLICT (name) DO UPDATE SET {updates} "
                f"WHERE akgentic_catalog.type_name = excluded.type_name{guard}",
                (name, type_name, *changes.values(), now, now, new_row_id(), *guarded),
            )
            if cur.rowcount == 0:
                stored = cur.execute(
                    "SELECT type_name FROM akgentic_catalog WHERE name = ?", (name,)
                ).fetchone()
                if guard and stored is not None and stored[0] == type_name:
                    raise config_changed(name)
                raise instance_type_mismatch(name, stored[0] if stored else "?", type_name)
            if audit is not None:
                self._append(cur, now, name, type_name, audit)
            row = cur.execute(
                f"SELECT {_CATALOG_COLUMNS} FROM akgentic_catalog WHERE name = ?", (name,)
            ).fetchone()
        return self._record(row)

    def _probed(
        self,
        name: str,
        type_name: str,
        changes: dict[str, Any],
        row_id: str | None,
        probed_with: ProbedWith | None,
    ) -> ToolInstanceRecord:
        db = self._db
        now = db.time(utc_now())
        guard = ""
        guarded: tuple[Any, ...] = ()
        with db.write() as cur:
            if row_id is not None and probed_with is not None:
                # what was read is the condition of the update, as for a merged config:
                # a writer that commits between this read and the update is caught there
                found = cur.execute(
                    "SELECT config, credential_enc FROM akgentic_catalog "
                    "WHERE name = ? AND row_id = ? AND type_name = ?",
                    (name, row_id, type_name),
                ).fetchone()
                if found is not None:
                    text, blob = found
                    if probed_differs(text, blob, probed_with):
                        raise probe_outdated(name)
                    guard = " AND config = ?"
                    guarded = (text,)
                    if blob is None:
                        guard += " AND credential_enc IS NULL"
                    else:
                        guard += " AND credential_enc = ?"
                        guarded += (blob,)
            if row_id is None:
                columns = ["name", "type_name", *changes, "created_at", "updated_at", "row_id"]
                cur.execute(
                    f"INSERT INTO akgentic_catalog ({', '.join(columns)}) "
                    f"VALUES ({', '.join('?' for _ in columns)}) ON CONFLICT (name) DO NOTHING",
                    (name, type_name, *changes.values(), now, now, new_row_id()),
                )
            else:
                sets = ", ".join(f"{c} = ?" for c in [*changes, "updated_at"])
                cur.execute(
                    f"UPDATE akgentic_catalog SET {sets} "
                    f"WHERE name = ? AND row_id = ? AND type_name = ?{guard}",
                    (*changes.values(), now, name, row_id, type_name, *guarded),
                )
            if cur.rowcount == 0:  # words only: the statement above decided
                stored = cur.execute(
                    "SELECT type_name, row_id FROM akgentic_catalog WHERE name = ?", (name,)
                ).fetchone()
                if guard and stored is not None and tuple(stored) == (type_name, row_id):
                    raise probe_outdated(name)
                raise probe_refused(name, type_name, row_id, stored)
            row = cur.execute(
                f"SELECT {_CATALOG_COLUMNS} FROM akgentic_catalog WHERE name = ?", (name,)
            ).fetchone()
        return self._record(row)

    def _append(
        self, cur: Cursor, now: Any, name: str, type_name: str, audit: CatalogAuditEntry
    ) -> None:
        cur.execute(
            "INSERT INTO akgentic_catalog_audit (at, instance, type_name, actor, action, detail) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                now,
                name,
                type_name,
                audit.actor,
                audit.action,
                dump_object(audit.detail, "audit detail"),
            ),
        )

    def _bind_time(self, when: datetime) -> Any:
        return self._db.time(when)

    def remove(self, name: str, audit: CatalogAuditEntry) -> bool:
        db = self._db
        with db.write() as cur:
            row = cur.execute(
                "SELECT type_name FROM akgentic_catalog WHERE name = ?", (name,)
            ).fetchone()
            if row is None:
                return False
            cur.execute("DELETE FROM akgentic_catalog WHERE name = ?", (name,))
            self._append(cur, db.time(utc_now()), name, row[0], audit)
        return True

    def audit(
        self, name: str | None = None, limit: int | None = None
    ) -> builtins.list[CatalogAuditRecord]:
        keep = check_limit(limit)
        sql = f"SELECT {_AUDIT_COLUMNS} FROM akgentic_catalog_audit"
        params: builtins.list[Any] = []
        if name is not None:
            sql += " WHERE instance = ?"
            params.append(name)
        sql += " ORDER BY seq DESC"
        if keep is not None:
            sql += " LIMIT ?"
            params.append(keep)
        with self._db.read() as cur:
            rows = cur.execute(sql, params).fetchall()
        return [decode_audit_row(row, self._db.load_time) for row in reversed(rows)]


class SqlStorage:
    """The bundle over a :class:`Driver`; backends subclass it and add opening/closing."""

    def __init__(self, driver: Driver) -> None:
        self._teams = _Teams(driver)
        self._events = _Events(driver)
        self._states = _States(driver)
        self._memory = _WorkingMemory(driver)
        self._skills = _Skills(driver)
        self._catalog = _Catalog(driver)
        self._leases = SqlLeases(driver)

    @property
    def teams(self) -> _Teams:
        """Team records (see :class:`akgentic.storage.TeamStore`)."""
        return self._teams

    @property
    def events(self) -> _Events:
        """The per-team event logs (see :class:`akgentic.storage.EventLog`)."""
        return self._events

    @property
    def states(self) -> _States:
        """Latest state per agent (see :class:`akgentic.storage.StateStore`)."""
        return self._states

    @property
    def working_memory(self) -> _WorkingMemory:
        """Per-agent model context (see :class:`akgentic.storage.WorkingMemoryStore`)."""
        return self._memory

    @property
    def skills(self) -> _Skills:
        """The skill catalog (see :class:`akgentic.storage.SkillStore`)."""
        return self._skills

    @property
    def catalog(self) -> _Catalog:
        """The tool catalog's instances and audit (see :class:`akgentic.storage.CatalogStore`)."""
        return self._catalog

    @property
    def leases(self) -> SqlLeases:
        """Leases on named resources (see :class:`akgentic.storage.LeaseStore`)."""
        return self._leases
