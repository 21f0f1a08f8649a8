"""The Postgres backend (psycopg 3): for several processes or machines sharing teams.

- **Connection.** One connection per store, guarded by a lock, in autocommit mode with
  an explicit transaction per write; any thread may call any method. A connection found
  closed (server restart, network) is replaced on the next call; the call that saw it
  break fails and stored nothing. Open one store per process; more throughput across
  threads of one process would need a pool, which this store does not need to be.
- **A server that stops answering** is noticed in about a minute, not the quarter of an
  hour the kernel's TCP retries take: unless the URL (or ``PGCONNECT_TIMEOUT``) says
  otherwise, a connection gives up connecting after 10 s, probes an idle link with TCP
  keepalives, and drops one whose sent data goes unacknowledged for 60 s
  (:data:`CONNECTION_DEFAULTS`). The call fails, the connection is replaced on the next
  one, and the lease's fence keeps a team from writing where it no longer holds it.
- **Durability.** A write has committed before the call returns, with Postgres'
  ``synchronous_commit`` deciding how far (``on``, its default, means flushed to the WAL).
- **Notifications.** Each append notifies the channel ``akgentic_events`` with
  ``<team id>:<last seq>``, inside the transaction that commits it (Postgres delivers it at
  commit, never before): a process following a team another process or machine runs is
  woken at once (:mod:`akgentic.storage.watch`; :meth:`PostgresStorage.listener`).
- **Sequence numbers.** A per-team counter row, bumped with
  ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` in the same statement that inserts
  the events (one round trip, one transaction): the row stays locked until commit, so
  concurrent appenders to one team — in any process — take turns, and a failed batch
  gives its numbers back (no gaps). Appends to different teams do not wait for each
  other.
- **Fenced appends** read the lease row ``FOR SHARE`` in that same statement: a take-over
  waits for the append to commit, or, committed first, makes it store nothing. A fenced
  working-memory change reads it so first in its transaction.
- **Schema.** Created on open, idempotently, under an advisory lock (so processes
  starting together do not race), in ``schema`` (default ``public``; created if
  missing). Payloads are ``TEXT``, not ``JSONB``: the store returns exactly what it
  wrote, and a damaged payload can be reported rather than refused. Tables of our
  names that another program made are refused with a :class:`StorageError`.
- **Damaged values.** A time Python cannot hold (``infinity``, year 300000) and, in a
  ``SQL_ASCII`` database, text that is not UTF-8 reach the decoders as they are, so
  only their row is reported; the query never fails for them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

import psycopg
from psycopg import sql
from psycopg.adapt import Buffer, Loader
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import Format
from pydantic import BaseModel, ConfigDict, Field

from akgentic.storage._codec import text_or_bytes, to_utc
from akgentic.storage._sql import Cursor, SqlStorage, create_schema, identify_catalog_rows
from akgentic.storage._sql_lease import fence_refused
from akgentic.storage.errors import StorageClosedError, StorageError
from akgentic.storage.lease import Fence

__all__ = ["CONNECTION_DEFAULTS", "EVENTS_CHANNEL", "PostgresOptions", "PostgresStorage"]

SCHEMA_VERSION = 3
"""2: event packs (``akgentic_event_packs``), which an older akgentic would not see. 3: a
catalog row's identity (``akgentic_catalog.row_id``), which it would not give, and a
skill's ``toolset`` (``akgentic_skills.toolset``), which an older akgentic's upsert would
leave stale; a schema of version 2 gains both columns on open."""
CONNECTION_DEFAULTS: dict[str, str] = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",  # milliseconds
}
"""libpq parameters a connection gets unless its URL sets them (see the module notes)."""


def with_connection_defaults(conninfo: str) -> str:
    """``conninfo`` with :data:`CONNECTION_DEFAULTS` for what it leaves unset: the URL's
    own values win, and so does ``PGCONNECT_TIMEOUT`` over the default connect timeout."""
    given = conninfo_to_dict(conninfo)
    defaults = dict(CONNECTION_DEFAULTS)
    if os.environ.get("PGCONNECT_TIMEOUT"):
        del defaults["connect_timeout"]
    return make_conninfo("", **{**defaults, **given})


_SCHEMA_LOCK = 0x616B67656E746963  # "akgentic": the advisory lock taken while creating

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS akgentic_meta (
        key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS akgentic_teams (
        team_id UUID PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL,
        card TEXT NOT NULL, metadata TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS akgentic_teams_status ON akgentic_teams (status, created_at)",
    """CREATE TABLE IF NOT EXISTS akgentic_team_seq (
        team_id UUID PRIMARY KEY, last_seq BIGINT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS akgentic_events (
        team_id UUID NOT NULL, seq BIGINT NOT NULL, ts TIMESTAMPTZ NOT NULL,
        payload TEXT NOT NULL, PRIMARY KEY (team_id, seq))""",
    # event packs: many consecutive events of a team in one row (akgentic.storage._pack)
    """CREATE TABLE IF NOT EXISTS akgentic_event_packs (
        team_id UUID NOT NULL, first_seq BIGINT NOT NULL, last_seq BIGINT NOT NULL,
        data BYTEA NOT NULL, PRIMARY KEY (team_id, first_seq))""",
    """CREATE TABLE IF NOT EXISTS akgentic_states (
        team_id UUID NOT NULL, agent_id UUID NOT NULL, agent_name TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (team_id, agent_id))""",
    """CREATE TABLE IF NOT EXISTS akgentic_working_memory (
        team_id UUID NOT NULL, agent_id UUID NOT NULL, pos BIGINT NOT NULL,
        item TEXT NOT NULL, PRIMARY KEY (team_id, agent_id, pos))""",
    """CREATE TABLE IF NOT EXISTS akgentic_skills (
        name TEXT PRIMARY KEY, description TEXT NOT NULL, content TEXT NOT NULL,
        source TEXT NOT NULL, updated_at TIMESTAMPTZ NOT NULL, toolset TEXT)""",
    # the tool catalog (akgentic.catalog): one row per configured tool, and its audit trail
    """CREATE TABLE IF NOT EXISTS akgentic_catalog (
        name TEXT PRIMARY KEY, type_name TEXT NOT NULL,
        enabled_agents BOOLEAN NOT NULL DEFAULT FALSE,
        enabled_api BOOLEAN NOT NULL DEFAULT FALSE,
        enabled_cli BOOLEAN NOT NULL DEFAULT FALSE, config TEXT NOT NULL DEFAULT '{}',
        credential_enc BYTEA, status TEXT NOT NULL DEFAULT 'unchecked',
        status_detail TEXT NOT NULL DEFAULT '', last_check_at TIMESTAMPTZ,
        created_at TIMESTAMPTZ NOT NULL, updated_at TIMESTAMPTZ NOT NULL,
        row_id TEXT NOT NULL DEFAULT '')""",
    """CREATE TABLE IF NOT EXISTS akgentic_catalog_audit (
        seq BIGSERIAL PRIMARY KEY, at TIMESTAMPTZ NOT NULL, instance TEXT NOT NULL,
        type_name TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
        detail TEXT NOT NULL)""",
    # issue 9: leases (times in seconds since the epoch, on the server's clock)
    """CREATE TABLE IF NOT EXISTS akgentic_leases (
        resource TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL,
        pid BIGINT NOT NULL, since DOUBLE PRECISION NOT NULL,
        renewed_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL)""",
)


EVENTS_CHANNEL = "akgentic_events"
"""The channel every append notifies (payload ``<team id>:<last seq>``)."""

# One statement, so one round trip and its own transaction (autocommit): bump the team's
# counter row (locked until commit) by the ``count`` events appended, insert them
# numbered from it and notify the followers (delivered at commit). If the insert fails,
# the counter bump and the notification roll back with it. Rows and event packs share
# the counter. Fenced (the second form of each), the counter is bumped only from a row
# of ``fence``: the lease row while the fence's owner holds it, locked ``FOR SHARE``
# until commit. A take-over (an update of that row) waits for the append to commit; one
# that committed first changed the owner, which the lock's recheck of the row sees: then
# no counter row, nothing inserted, no notification, and no row comes back.
_APPEND = """
WITH {fence}counter AS (
    INSERT INTO akgentic_team_seq (team_id, last_seq) {source}
    ON CONFLICT (team_id) DO UPDATE
    SET last_seq = akgentic_team_seq.last_seq + excluded.last_seq
    RETURNING last_seq
), inserted AS ({insert}
)
SELECT last_seq, pg_notify('akgentic_events', %(team)b::text || ':' || last_seq::text)
FROM counter
"""

_FENCE = "SELECT 1 FROM akgentic_leases WHERE resource = {} AND owner = {} FOR SHARE"
"""The lease row while the fence's owner holds it, locked until commit: a fenced
append's ``fence`` (below), and a fenced working-memory change's check
(:meth:`_Driver.check_fence`)."""

_OPEN = {"fence": "", "source": "VALUES (%(team)b, %(count)b)"}
_FENCED = {
    "fence": f"fence AS ({_FENCE.format('%(resource)b', '%(owner)b')}), ",
    "source": "SELECT %(team)b, %(count)b FROM fence",
}

_EVENTS = """
    INSERT INTO akgentic_events (team_id, seq, ts, payload)
    SELECT %(team)b, counter.last_seq - %(count)b + batch.ord, batch.ts, batch.payload
    FROM counter,
         unnest(%(times)b::timestamptz[], %(payloads)b::text[])
             WITH ORDINALITY AS batch(ts, payload, ord)"""

_PACKS = """
    INSERT INTO akgentic_event_packs (team_id, first_seq, last_seq, data)
    SELECT %(team)b, counter.last_seq - %(count)b + batch.start,
           counter.last_seq - %(count)b + batch.stop, batch.data
    FROM counter,
         unnest(%(starts)b::bigint[], %(stops)b::bigint[], %(packs)b::bytea[])
             AS batch(start, stop, data)"""
"""Each pack numbered ``start`` to ``stop`` (1-based, within the ``count`` appended)."""

_INSERT_EVENTS = {
    False: _APPEND.format(insert=_EVENTS, **_OPEN),
    True: _APPEND.format(insert=_EVENTS, **_FENCED),
}
_INSERT_PACKS = {
    False: _APPEND.format(insert=_PACKS, **_OPEN),
    True: _APPEND.format(insert=_PACKS, **_FENCED),
}
"""The statements, by whether the append is fenced."""


class PostgresOptions(BaseModel):
    """Options of a Postgres store (``schema`` is also read from a URL: ``?schema=x``)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    schema_name: str = Field(default="public", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


_TIMESTAMPTZ = psycopg.adapters.types["timestamptz"].oid
_DefaultTimeLoader = psycopg.adapters.get_loader(_TIMESTAMPTZ, Format.TEXT)


class _TimeLoader(Loader):
    """psycopg's own timestamptz loader, but a time Python cannot hold comes back as its
    text (for ``load_time`` to refuse, so only its row is reported)."""

    def __init__(self, oid: int, context: Any = None) -> None:
        super().__init__(oid, context)
        assert _DefaultTimeLoader is not None
        self._inner = _DefaultTimeLoader(oid, context)

    def load(self, data: Buffer) -> Any:
        try:
            return self._inner.load(data)
        except psycopg.DataError:
            return bytes(data).decode("utf-8", "replace")


class _SqlAsciiTextLoader(Loader):
    """Text of a ``SQL_ASCII`` database (stored unchecked) as str, or bytes if not UTF-8."""

    def load(self, data: Buffer) -> Any:
        return text_or_bytes(bytes(data))


class _PgCursor:
    """A psycopg cursor speaking the ``?`` placeholders of the shared SQL."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def description(self) -> Any:
        return self._cur.description

    def execute(self, query: str, params: Sequence[Any] = ()) -> _PgCursor:
        self._cur.execute(query.replace("?", "%s"), params)
        return self

    def executemany(self, query: str, params: Iterable[Sequence[Any]]) -> object:
        self._cur.executemany(query.replace("?", "%s"), params)
        return None

    def fetchone(self) -> Any:
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall()


class _Driver:
    # The counter goes first: deleting it waits for an append in flight on the team,
    # whose rows the following DELETEs then see and remove.
    team_tables: tuple[str, ...] = (
        "akgentic_team_seq",
        "akgentic_teams",
        "akgentic_events",
        "akgentic_event_packs",
        "akgentic_states",
        "akgentic_working_memory",
    )
    # the statement's start on the server's clock: one value per statement
    epoch_now = "extract(epoch from statement_timestamp())::double precision"

    def __init__(self, conninfo: str, options: PostgresOptions) -> None:
        self._conninfo = with_connection_defaults(conninfo)
        self._schema = options.schema_name
        self._lock = threading.Lock()
        self._closed = False
        self._conn = self._connect()
        try:
            self._create_schema()
        except BaseException:
            self.close()
            raise

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(self._conninfo, autocommit=True)
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self._schema)))
        conn.adapters.register_loader("timestamptz", _TimeLoader)
        if conn.info.encoding == "ascii":  # SQL_ASCII: the server checks no encoding
            conn.adapters.register_loader("text", _SqlAsciiTextLoader)
        return conn

    def _create_schema(self) -> None:
        with self.write() as cur:
            cur.execute(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})")
            if self._schema != "public":
                schema = sql.Identifier(self._schema).as_string(self._conn)
                cur.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            # the version first, before any table is made or checked: a newer akgentic's
            # tables may differ from ours (a renamed column), which is not "a table
            # another program made", and this code must not add its tables to them
            cur.execute(_SCHEMA[0])
            row = cur.execute(
                "SELECT value FROM akgentic_meta WHERE key = 'schema_version'"
            ).fetchone()
            if row is not None and int(row[0]) > SCHEMA_VERSION:
                raise StorageError(
                    f"schema {self._schema!r} has akgentic schema version {row[0]}, newer "
                    f"than this akgentic ({SCHEMA_VERSION}): upgrade akgentic to open it"
                )
            create_schema(cur, _SCHEMA[1:], f"Postgres schema {self._schema!r}")
            has_row_id = cur.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = 'akgentic_catalog' AND column_name = 'row_id'"
            ).fetchone()
            identify_catalog_rows(cur, has_row_id is not None)
            cur.execute(
                "INSERT INTO akgentic_meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

    def _live(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise StorageClosedError("this PostgresStorage is closed")
        if self._conn.closed:
            self._conn = self._connect()
        return self._conn

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        with self._lock:
            conn = self._live()
            with conn.transaction(), conn.cursor() as cur:
                yield _PgCursor(cur)

    @contextmanager
    def read(self) -> Iterator[Cursor]:
        with self._lock, self._live().cursor() as cur:
            yield _PgCursor(cur)

    def uid(self, value: UUID) -> Any:
        return value

    def load_uid(self, value: Any) -> UUID:
        return value if isinstance(value, UUID) else UUID(str(value))

    def time(self, value: datetime) -> Any:
        return to_utc(value)

    def load_time(self, value: Any) -> datetime:
        if not isinstance(value, datetime):
            raise ValueError("outside the range of Python's datetime (years 1 to 9999)")
        return to_utc(value)

    def insert_events(
        self,
        team_id: UUID,
        rows: list[tuple[datetime, str]],
        also: Callable[[Cursor], None] | None = None,
        fence: Fence | None = None,
    ) -> int:
        params = {
            "times": [to_utc(ts) for ts, _ in rows],
            "payloads": [raw for _, raw in rows],
        }
        return self._append(_INSERT_EVENTS, team_id, len(rows), params, also, fence)

    def insert_packs(
        self,
        team_id: UUID,
        packs: list[bytes],
        counts: list[int],
        also: Callable[[Cursor], None] | None = None,
        fence: Fence | None = None,
    ) -> int:
        starts, stops, at = [], [], 1
        for count in counts:
            starts.append(at)
            stops.append(at + count - 1)
            at += count
        params = {"starts": starts, "stops": stops, "packs": packs}
        return self._append(_INSERT_PACKS, team_id, sum(counts), params, also, fence)

    def _append(
        self,
        statements: dict[bool, str],
        team_id: UUID,
        count: int,
        params: dict[str, Any],
        also: Callable[[Cursor], None] | None,
        fence: Fence | None,
    ) -> int:
        """Run an :data:`_APPEND` statement for ``count`` events (its fenced form when
        there is a ``fence``); the first number."""
        params = {"team": team_id, "count": count, **params}
        if fence is not None:
            params.update(resource=fence.resource, owner=fence.owner)
        statement = statements[fence is not None]
        with self._lock:
            conn = self._live()
            # without ``also``, one statement: its own transaction (autocommit)
            txn: AbstractContextManager[Any] = nullcontext() if also is None else conn.transaction()
            with txn, conn.cursor() as cur:
                row = cur.execute(statement, params).fetchone()
                if row is None and fence is not None:  # nothing stored (``also`` neither)
                    raise fence_refused(_PgCursor(cur), self, fence)
                if also is not None:
                    also(_PgCursor(cur))
        if row is None:  # the statement always returns the counter's row
            raise StorageError(f"team {team_id}: the event insert returned no sequence number")
        last = row[0]
        return int(last) - count + 1

    def lock_working_memory(self, cur: Cursor, team_id: UUID, agent_id: UUID) -> None:
        cur.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
            (f"akgentic.working_memory:{team_id}:{agent_id}",),
        )

    def check_fence(self, cur: Cursor, fence: Fence) -> None:
        """:data:`_FENCE`, first in the caller's transaction: a take-over waits for its
        commit, or, committed first, leaves no row (the lock's recheck sees the owner)."""
        if cur.execute(_FENCE.format("?", "?"), (fence.resource, fence.owner)).fetchone() is None:
            raise fence_refused(cur, self, fence)

    def listener(self) -> psycopg.Connection[Any]:
        """A new connection of its own, listening on :data:`EVENTS_CHANNEL`."""
        if self._closed:
            raise StorageClosedError("this PostgresStorage is closed")
        conn = psycopg.connect(self._conninfo, autocommit=True)
        conn.execute(f"LISTEN {EVENTS_CHANNEL}")
        return conn

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()


class PostgresStorage(SqlStorage):
    """A :class:`~akgentic.storage.StorageBundle` in a Postgres database (see module notes).

    ``PostgresStorage("postgresql://user@host/db", schema="akgentic")`` or
    ``open_storage("postgresql://user@host/db?schema=akgentic")``.
    """

    def __init__(self, conninfo: str, *, schema: str = "public") -> None:
        self.options = PostgresOptions(schema_name=schema)
        self._driver = _Driver(conninfo, self.options)
        super().__init__(self._driver)

    def listener(self) -> psycopg.Connection[Any]:
        """A new connection, listening to the notifications of every append (channel
        :data:`EVENTS_CHANNEL`, payload ``<team id>:<last seq>``); the caller closes it."""
        return self._driver.listener()

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise StorageClosedError."""
        self._driver.close()

    def __enter__(self) -> PostgresStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStorage(schema={self.options.schema_name!r})"


if TYPE_CHECKING:  # the type checker proves the bundle honours the protocols
    from akgentic.storage.protocols import StorageBundle

    _check: StorageBundle = PostgresStorage("")
