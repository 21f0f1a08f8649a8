"""WAL checkpoints run on a thread of their own: a ``Checkpointer`` copies the WAL into
the file every MiB committed, so the checkpoint SQLite runs inside a commit (kept as the
backstop that rewinds the WAL) finds little left to copy, and the WAL stays bounded."""

from __future__ import annotations

import gc
import logging
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.storage import SqliteStorage
from akgentic.storage import _checkpoint as checkpoint
from akgentic.storage._codec import EncodedEvent
from akgentic.storage._pack import pack_encoded


def events(count: int, size: int) -> list[EncodedEvent]:
    body = "x" * size
    return [(datetime.now(UTC), f'{{"__model__":"n/a","note":"{body}{i}"}}') for i in range(count)]


def test_the_wal_stays_bounded_whatever_is_written(tmp_path: Path) -> None:
    """States are counted as one page each, not their size: SQLite's own checkpoint is
    what keeps the WAL from growing by everything written (with it off, 60 states of
    1 MB left a 60 MB WAL)."""
    path = tmp_path / "team.db"
    with SqliteStorage(path) as storage:
        (setting,) = storage._driver._live().execute("PRAGMA wal_autocheckpoint").fetchone()
        assert setting == 1000
        team, agent = uuid4(), uuid4()
        big = '{"__model__":"n/a","blob":"' + "x" * 1_000_000 + '"}'
        for i in range(30):
            storage.events.append_encoded(
                team, events(1, 10), [(agent, "@Big", big.replace("n/a", f"n/a{i}"))]
            )
        wal = Path(f"{path}-wal")
        assert wal.stat().st_size < 16 * 1024 * 1024  # 30 MB written; SQLite's 8 MiB bound


def test_commits_past_the_threshold_are_checkpointed_into_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_BYTES", 256 * 1024)
    path = tmp_path / "team.db"
    with SqliteStorage(path) as storage:
        team = uuid4()
        small = path.stat().st_size
        checkpointer = storage._driver._checkpointer
        storage.events.append_packs(team, [pack_encoded(events(50, 100), '"t"')])
        assert checkpointer.runs == 0 and path.stat().st_size == small  # all in the WAL
        storage.events.append_packs(team, [pack_encoded(events(400, 1000), '"t"')])
        assert checkpointer.wait_runs(1, 30)
        assert checkpointer.last_error is None
        assert path.stat().st_size > small + 256 * 1024  # the pages are in the file now
        assert checkpointer._thread is not None and checkpointer._thread is not (
            threading.current_thread()
        )
        assert len(storage.events.read(team)) == 450
    assert checkpointer._thread is not None and not checkpointer._thread.is_alive()


def test_below_the_threshold_no_checkpoint_thread_starts(tmp_path: Path) -> None:
    with SqliteStorage(tmp_path / "team.db") as storage:
        storage.events.append_packs(uuid4(), [pack_encoded(events(10, 10), '"t"')])
        assert storage._driver._checkpointer._thread is None


def test_a_failing_checkpoint_is_logged_and_tried_again_at_the_next_threshold(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_BYTES", 10)
    missing = tmp_path / "no such directory" / "team.db"
    checkpointer = checkpoint.Checkpointer(missing, busy_timeout=1.0)
    try:
        with caplog.at_level(logging.WARNING, logger="akgentic.storage"):
            checkpointer.committed(100)
            assert checkpointer.wait_runs(1, 30)
            assert checkpointer.last_error is not None and "open" in checkpointer.last_error
            checkpointer.committed(100)  # the thread is still there, and tries again
            assert checkpointer.wait_runs(2, 30)
        assert any("WAL checkpoint failed" in r.getMessage() for r in caplog.records)
    finally:
        checkpointer.close()
    checkpointer.committed(100)  # closed: nothing more runs
    assert checkpointer.runs == 2


def test_a_store_dropped_without_close_stops_its_checkpoint_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "CHECKPOINT_BYTES", 10)
    storage = SqliteStorage(tmp_path / "team.db")
    storage.events.append_packs(uuid4(), [pack_encoded(events(5, 10), '"t"')])
    checkpointer = storage._driver._checkpointer
    assert checkpointer.wait_runs(1, 30)
    thread = checkpointer._thread
    assert thread is not None and thread.is_alive()
    del storage
    gc.collect()
    thread.join(30)
    assert not thread.is_alive()


def test_the_file_is_whole_after_close_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "team.db"
    team = uuid4()
    with SqliteStorage(path) as storage:
        storage.events.append_packs(team, [pack_encoded(events(30, 50), '"t"')])
    with sqlite3.connect(path) as conn:  # SQLite checkpoints when the last connection closes
        (count,) = conn.execute("SELECT count(*) FROM akgentic_event_packs").fetchone()
    assert count == 1
    with SqliteStorage(path) as again:
        assert len(again.events.read(team)) == 30
