"""One fixture, three backends: every contract test runs on memory, SQLite and Postgres.

Postgres runs when ``AKGENTIC_TEST_POSTGRES_URL`` names a database the tests may write
to; each test gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.storage import MemoryStorage, SqliteStorage, StorageBundle

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
    write_raw_event: Callable[[UUID, int, str], None]
    """Overwrite a stored event's text behind the store's back."""
    write_raw_state: Callable[[UUID, UUID, str], None]
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
    )
    store.close()


def _sqlite(path: Path) -> Iterator[Backend]:
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
        url=f"sqlite://{path}",
        open_again=lambda: SqliteStorage(path),
        write_raw_event=lambda team, seq, raw: write(
            "UPDATE akgentic_events SET payload = ? WHERE team_id = ? AND seq = ?",
            (raw, str(team), seq),
        ),
        write_raw_state=lambda team, agent, raw: write(
            "UPDATE akgentic_states SET payload = ? WHERE team_id = ? AND agent_id = ?",
            (raw, str(team), str(agent)),
        ),
    )
    yield backend
    for store in (backend.store, *backend.opened):
        store.close()


def _postgres() -> Iterator[Backend]:
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"

    def write(statement: str, params: tuple[object, ...]) -> None:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            assert conn.execute(statement, params).rowcount == 1

    backend = Backend(
        name="postgres",
        store=PostgresStorage(POSTGRES_URL, schema=schema),
        url=f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}schema={schema}",
        open_again=lambda: PostgresStorage(POSTGRES_URL, schema=schema),
        write_raw_event=lambda team, seq, raw: write(
            "UPDATE akgentic_events SET payload = %s WHERE team_id = %s AND seq = %s",
            (raw, team, seq),
        ),
        write_raw_state=lambda team, agent, raw: write(
            "UPDATE akgentic_states SET payload = %s WHERE team_id = %s AND agent_id = %s",
            (raw, team, agent),
        ),
    )
    try:
        yield backend
    finally:
        for store in (backend.store, *backend.opened):
            store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(
    params=[
        pytest.param("memory"),
        pytest.param("sqlite"),
        pytest.param("postgres", marks=SKIP_POSTGRES),
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The store under test, once per backend."""
    if request.param == "memory":
        yield from _memory()
    elif request.param == "sqlite":
        yield from _sqlite(tmp_path / "store" / "teams.db")
    else:
        yield from _postgres()


@pytest.fixture
def store(backend: Backend) -> StorageBundle:
    return backend.store
