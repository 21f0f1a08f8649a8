"""``open_storage``: the URL picks the backend; bad URLs fail with what is accepted."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.core import UserMessage
from akgentic.storage import (
    MemoryStorage,
    SqliteStorage,
    StorageBundle,
    open_storage,
)
from tests.storage.conftest import POSTGRES_URL, SKIP_POSTGRES


def test_memory_url_gives_a_fresh_store() -> None:
    a, b = open_storage("memory://"), open_storage("memory://")
    assert isinstance(a, MemoryStorage) and isinstance(a, StorageBundle)
    a.events.append(team := uuid4(), UserMessage(content="x"))
    assert b.events.last_seq(team) == 0
    with pytest.raises(ValueError, match="no path"):
        open_storage("memory://somewhere")


def test_sqlite_url_with_an_absolute_path(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "teams.db"
    store = open_storage(f"sqlite://{path}")  # sqlite:///tmp/... : three slashes
    assert isinstance(store, SqliteStorage) and store.path == path
    store.events.append(uuid4(), UserMessage(content="x"))
    store.close()
    assert path.exists()
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "akgentic_events" in tables


def test_sqlite_url_with_a_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_storage("sqlite://data/teams.db?synchronous=normal&busy_timeout=2.5")
    assert isinstance(store, SqliteStorage)
    assert store.path == Path("data/teams.db")
    assert store.options.synchronous == "NORMAL" and store.options.busy_timeout == 2.5
    store.close()
    assert (tmp_path / "data" / "teams.db").exists()


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("sqlite://", "names no file"),
        ("sqlite:///", "names no file"),
        ("sqlite://x.db?synchronus=FULL", "synchronus"),
        ("sqlite://x.db?synchronous=OFF", "synchronous"),
        ("sqlite://x.db?busy_timeout=-1", "busy_timeout"),
        ("sqlite://x.db?synchronous=FULL&synchronous=NORMAL", "twice"),
    ],
)
def test_bad_sqlite_urls_say_what_is_wrong(
    url: str, match: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=match):
        open_storage(url)
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(
    "url", ["mysql://u@h/db", "redis://h", "teams.db", "/tmp/teams.db", "", "file:///x.db"]
)
def test_an_unknown_scheme_lists_what_is_accepted(url: str) -> None:
    with pytest.raises(ValueError) as info:
        open_storage(url)
    text = str(info.value)
    for accepted in ("memory://", "sqlite:///", "postgresql://"):
        assert accepted in text


def test_an_unknown_scheme_does_not_echo_credentials() -> None:
    with pytest.raises(ValueError) as info:
        open_storage("mysql://user:s3cret@host/db")
    assert "s3cret" not in str(info.value)


def test_a_url_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="string"):
        open_storage(Path("teams.db"))  # type: ignore[arg-type]


@SKIP_POSTGRES
def test_postgres_url_with_a_schema() -> None:
    import psycopg
    from psycopg import sql

    from akgentic.storage import PostgresStorage

    schema = f"akgentic_url_{uuid4().hex[:10]}"
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        store = open_storage(f"{POSTGRES_URL}{sep}schema={schema}")
        assert isinstance(store, PostgresStorage) and store.options.schema_name == schema
        team = uuid4()
        assert store.events.append(team, UserMessage(content="x")) == 1
        store.close()
        with psycopg.connect(POSTGRES_URL) as conn:
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM {}.akgentic_events").format(sql.Identifier(schema))
            ).fetchone()
        assert row == (1,)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@SKIP_POSTGRES
def test_postgres_refuses_a_bad_schema_name() -> None:
    with pytest.raises(ValueError, match="schema_name"):
        open_storage(f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}schema=bad;name")
