"""One fixture, three backends: every contract test runs on memory, SQLite and Postgres.

Postgres runs when ``AKGENTIC_TEST_POSTGRES_URL`` names a database the tests may write
to; each test gets a schema of its own, dropped afterwards. It runs twice: in that
database, and in a ``SQL_ASCII`` database made beside it (the one kind of Postgres
database whose text columns can hold bytes that are not UTF-8; skipped when the user may
not create databases).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID, uuid4

import pytest

from akgentic.storage import MemoryStorage, SqliteStorage, StorageBundle, sqlite_url

POSTGRES_ENV = "AKGENTIC_TEST_POSTGRES_URL"
POSTGRES_URL = os.environ.get(POSTGRES_ENV, "")
SKIP_POSTGRES = pytest.mark.skipif(
    not POSTGRES_URL,
    reason=f"set {POSTGRES_ENV}=postgresql://user@host:port/db to run the Postgres tests",
)


@dataclass
class Backend:
    """A store under test and the ways a test can reach behind it."""

    name: str
    store: StorageBundle
    url: str
    """``open_storage`` URL of the same data (another process may open it)."""
    open_again: Callable[[], StorageBundle] | None
    """Another connection to the same data; None when the data lives in one object."""
    write_raw_event: Callable[[UUID, int, str | bytes], None]
    """Overwrite a stored event's text behind the store's back (bytes: not UTF-8)."""
    write_raw_state: Callable[[UUID, UUID, str], None]
    write_raw_time: Callable[[UUID, int, str], None]
    """Overwrite a stored event's time behind the store's back."""
    write_raw_team: Callable[[UUID, str, str | bytes], None]
    """Overwrite one column (name, status, card...) of a team's row."""
    bad_times: tuple[str, str]
    """Two garbled times this backend's time column can hold."""
    holds_bytes: bool
    """Whether a text column can hold bytes that are not UTF-8."""
    write_raw_pack: Callable[[UUID, int, bytes], None] | None = None
    """Overwrite the bytes of the event pack stored from a first seq; None where packs
    are not kept as such (the memory backend stores their events)."""
    raw_sql: Callable[[str, tuple[object, ...]], None] | None = None
    """Run one statement (``?`` placeholders) changing exactly one row behind the store's
    back; None for the memory backend."""
    opened: list[StorageBundle] = field(default_factory=list)

    def another(self) -> StorageBundle:
        """A second handle on the same data (the same object for the memory backend)."""
        if self.open_again is None:
            return self.store
        other = self.open_again()
        self.opened.append(other)
        return other


def _memory() -> Iterator[Backend]:
    store = MemoryStorage()
    yield Backend(
        name="memory",
        store=store,
        url="memory://",
        open_again=None,
        write_raw_event=store._write_raw_event,
        write_raw_state=store._write_raw_state,
        write_raw_time=store._write_raw_time,
        write_raw_team=store._write_raw_team,
        bad_times=("garbage", ""),
        holds_bytes=True,
    )
    store.close()


def _sqlite(path: Path) -> Iterator[Backend]:
    def text(value: str | bytes) -> object:  # bytes are stored as (invalid) text, not a BLOB
        return value if isinstance(value, str) else sqlite3.Binary(value)

    def write(sql: str, params: tuple[object, ...]) -> None:
        conn = sqlite3.connect(path)
        try:
            with conn:
                assert conn.execute(sql, params).rowcount == 1
        finally:
            conn.close()

    backend = Backend(
        name="sqlite",
        store=SqliteStorage(path),
        url=sqlite_url(path),
        open_again=lambda: SqliteStorage(path),
        write_raw_event=lambda team, seq, raw: write(
            "UPDATE akgentic_events SET payload = CAST(? AS TEXT) WHERE team_id = ? AND seq = ?",
            (text(raw), str(team), seq),
        ),
        write_raw_state=lambda team, agent, raw: write(
            "UPDATE akgentic_states SET payload = ? WHERE team_id = ? AND agent_id = ?",
            (raw, str(team), str(agent)),
        ),
        write_raw_time=lambda team, seq, ts: write(
            "UPDATE akgentic_events SET ts = ? WHERE team_id = ? AND seq = ?",
            (ts, str(team), seq),
        ),
        write_raw_team=lambda team, column, value: write(
            f"UPDATE akgentic_teams SET {column} = CAST(? AS TEXT) WHERE team_id = ?",
            (text(value), str(team)),
        ),
        bad_times=("garbage", ""),
        holds_bytes=True,
        write_raw_pack=lambda team, first, data: write(
            "UPDATE akgentic_event_packs SET data = ? WHERE team_id = ? AND first_seq = ?",
            (data, str(team), first),
        ),
        raw_sql=write,
    )
    yield backend
    for store in (backend.store, *backend.opened):
        store.close()


def sql_ascii_url() -> str:
    """The URL of a ``SQL_ASCII`` database beside the test database (created once)."""
    import psycopg
    from psycopg import sql

    url = urlsplit(POSTGRES_URL)
    name = f"{url.path.strip('/') or 'akgentic'}_sql_ascii"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            try:
                conn.execute(
                    sql.SQL(
                        "CREATE DATABASE {} ENCODING 'SQL_ASCII' TEMPLATE template0 "
                        "LC_COLLATE 'C' LC_CTYPE 'C'"
                    ).format(sql.Identifier(name))
                )
            except psycopg.errors.InsufficientPrivilege:
                pytest.skip(f"the user of {POSTGRES_ENV} may not create a SQL_ASCII database")
            except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
                # another test process made it first (or at the same moment: two
                # concurrent CREATE DATABASE collide on pg_database's unique index)
                pass
    return urlunsplit(url._replace(path=f"/{name}"))


def _postgres(url: str, name: str) -> Iterator[Backend]:
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"

    def write(statement: str, params: tuple[object, ...]) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            assert conn.execute(statement, params).rowcount == 1

    def text(column: str) -> str:  # bytes go in unchecked, as a SQL_ASCII database keeps them
        return f"{column} = CASE WHEN %s THEN convert_from(%s, 'SQL_ASCII') ELSE %s END"

    def raw_text(value: str | bytes) -> tuple[object, ...]:
        binary = isinstance(value, bytes)
        return (binary, value if binary else b"", "" if binary else value)

    backend = Backend(
        name=name,
        store=PostgresStorage(url, schema=schema),
        url=f"{url}{'&' if '?' in url else '?'}schema={schema}",
        open_again=lambda: PostgresStorage(url, schema=schema),
        write_raw_event=lambda team, seq, raw: write(
            f"UPDATE akgentic_events SET {text('payload')} WHERE team_id = %s AND seq = %s",
            (*raw_text(raw), team, seq),
        ),
        write_raw_state=lambda team, agent, raw: write(
            "UPDATE akgentic_states SET payload = %s WHERE team_id = %s AND agent_id = %s",
            (raw, team, agent),
        ),
        write_raw_time=lambda team, seq, ts: write(
            "UPDATE akgentic_events SET ts = %s::timestamptz WHERE team_id = %s AND seq = %s",
            (ts, team, seq),
        ),
        write_raw_team=lambda team, column, value: write(
            f"UPDATE akgentic_teams SET {text(column)} WHERE team_id = %s",
            (*raw_text(value), team),
        ),
        bad_times=("infinity", "-infinity"),  # a TIMESTAMPTZ holds these; Python cannot
        holds_bytes=name == "postgres-sql_ascii",
        write_raw_pack=lambda team, first, data: write(
            "UPDATE akgentic_event_packs SET data = %s WHERE team_id = %s AND first_seq = %s",
            (data, team, first),
        ),
        raw_sql=lambda statement, params: write(statement.replace("?", "%s"), params),
    )
    try:
        yield backend
    finally:
        for store in (backend.store, *backend.opened):
            store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(
    params=[
        pytest.param("memory"),
        pytest.param("sqlite"),
        pytest.param("postgres", marks=SKIP_POSTGRES),
        pytest.param("postgres-sql_ascii", marks=SKIP_POSTGRES),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The store under test, once per backend."""
    if request.param == "memory":
        yield from _memory()
    elif request.param == "sqlite":
        yield from _sqlite(tmp_path / "store" / "teams.db")
    elif request.param == "postgres":
        yield from _postgres(POSTGRES_URL, "postgres")
    else:
        yield from _postgres(sql_ascii_url(), "postgres-sql_ascii")


@pytest.fixture
def store(backend: Backend) -> StorageBundle:
    return backend.store
