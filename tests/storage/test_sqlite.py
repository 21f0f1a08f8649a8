"""SQLite specifics: WAL mode, the chosen sync level, schema versioning."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.core import UserMessage
from akgentic.storage import SqliteStorage, StorageError

_SYNC = {1: "NORMAL", 2: "FULL"}


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SqliteStorage(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert conn.execute("PRAGMA user_version").fetchone() == (1,)
    conn.close()


@pytest.mark.parametrize("level", ["FULL", "NORMAL"])
def test_the_sync_level_is_applied(tmp_path: Path, level: str) -> None:
    store = SqliteStorage(tmp_path / "t.db", synchronous=level)  # type: ignore[arg-type]
    conn = store._driver._conn
    assert conn is not None
    (value,) = conn.execute("PRAGMA synchronous").fetchone()
    assert _SYNC[value] == level
    store.close()


def test_full_sync_is_the_default(tmp_path: Path) -> None:
    store = SqliteStorage(tmp_path / "t.db")
    assert store.options.synchronous == "FULL"
    store.close()


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SqliteStorage(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(StorageError, match="upgrade akgentic"):
        SqliteStorage(path)


def test_opening_twice_is_idempotent_and_shares_the_data(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SqliteStorage(path) as first, SqliteStorage(path) as second:
        team = uuid4()
        assert first.events.append(team, UserMessage(content="a")) == 1
        assert second.events.append(team, UserMessage(content="b")) == 2
        assert [r.seq for r in first.events.read(team)] == [1, 2]


def test_a_failed_write_rolls_back(tmp_path: Path) -> None:
    store = SqliteStorage(tmp_path / "t.db")
    team = uuid4()
    store.events.append(team, UserMessage(content="kept"))
    with pytest.raises(RuntimeError, match="boom"), store._driver.write() as cur:
        cur.execute(
            "INSERT INTO akgentic_events (team_id, seq, ts, payload) VALUES (?, 2, 'x', 'y')",
            (str(team),),
        )
        raise RuntimeError("boom")
    assert store.events.last_seq(team) == 1
    assert store.events.append(team, UserMessage(content="next")) == 2
    store.close()
