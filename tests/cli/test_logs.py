"""The framework's log records as the CLI prints them: one ``warning:``/``error:`` line
each, a repeated condition said once, a locked store said in words with what to do, and
when it is free again; with ``--debug`` every record whole."""

from __future__ import annotations

import io
import logging
import sqlite3
from pathlib import Path

import pytest

from akgentic.cli import logs
from akgentic.core import UserMessage
from akgentic.storage import (
    LEASE_LOST,
    READ_FAILED,
    RECOVERED,
    WRITE_FAILED,
    Heartbeat,
    LeaseHolder,
    StorageError,
)
from akgentic.storage.sqlite import SqliteStorage
from akgentic.team import EventRecorder

TEAM = "akgentic.team"


def _locked() -> StorageError:
    try:
        raise StorageError(
            "/tmp/x.db: database is locked: another process holds the file (this one waited "
            "its busy_timeout, 3 s); retry, or wait longer"
        )
    except StorageError as exc:
        return exc


def test_a_locked_store_is_one_line_whatever_says_it_then_one_when_it_is_free(
    stderr: io.StringIO,
) -> None:
    """The records a locked store causes during a run — a lease renewal, a batch with its
    working memory, the event log's batch, each retried — are one line that says what
    happens and what to do; the first write that goes through says it is free again; a
    later lock is news again."""
    team = logging.getLogger(TEAM)
    for _ in range(3):
        exc = _locked()
        logging.getLogger("akgentic.storage").error(
            "lease %s: renewal failed; retrying", "team/x", exc_info=exc
        )
        team.warning("team %s: a group could not be committed with its working memory (%r)", 1, exc)
        team.error("team %s: the event log refused a batch; it is kept", 1, exc_info=exc)
    team.info("team 1: took the kept records", extra={"akgentic_recovered": True})
    team.info("a recovery said once", extra={"akgentic_recovered": True})
    team.info("team 1 is STOPPED in storage: stopping it")  # below WARNING: not shown
    team.error("team %s: the event log refused a batch; it is kept", 1, exc_info=_locked())

    assert stderr.getvalue().splitlines() == [logs.STORE_BUSY, logs.STORE_FREE, logs.STORE_BUSY]
    assert logs.STORE_BUSY.startswith("warning: the store is busy (another process holds it")
    assert "nothing is lost" in logs.STORE_BUSY


def test_other_records_are_a_line_each_in_the_cli_format_said_once(stderr: io.StringIO) -> None:
    team = logging.getLogger(TEAM)
    try:
        raise OSError("disk full")
    except OSError:
        for _ in range(2):
            team.exception("team %s: could not update the working memory", 1)
    team.warning("team %s: slow", 1)
    team.warning("team %s: slow", 1)

    assert stderr.getvalue().splitlines() == [
        "error: team 1: could not update the working memory: OSError: disk full",
        "warning: team 1: slow",
    ]


def test_a_line_is_news_again_once_its_quiet_time_is_over(stderr: io.StringIO) -> None:
    """Said once within ``QUIET_FOR``; the same failure later (its time set back here, as
    if that long had passed) is said again: a session of hours hides no later incident."""
    team = logging.getLogger(TEAM)
    team.warning("team %s: slow", 1)
    team.warning("team %s: slow", 1)
    logs._HANDLER.said["warning: team 1: slow"] -= logs.QUIET_FOR + 1
    team.warning("team %s: slow", 1)

    assert stderr.getvalue().splitlines() == ["warning: team 1: slow"] * 2


def test_a_record_that_cannot_be_said_never_raises_into_the_code_that_logs(
    stderr: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library's record with arguments its format lacks, or an exception whose ``str``
    fails: the handler reports its own error (logging's ``handleError``) and the caller —
    a recorder's writer thread, say — goes on."""

    class UnprintableError(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no words")

    def record(name: str, msg: str, args: tuple[object, ...], exc: BaseException | None) -> None:
        info = (type(exc), exc, None) if exc is not None else None
        made = logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args, info)
        logs._HANDLER.handle(made)  # the handler alone (pytest's own would raise first)

    reported: list[logging.LogRecord] = []
    monkeypatch.setattr(logs._HANDLER, "handleError", reported.append)
    record("httpx", "bad %s %s", (1,), None)
    record(TEAM, "team %s: could not write", (1,), UnprintableError())
    record(TEAM, "team %s: still said", (1,), None)

    assert [r.name for r in reported] == ["httpx", TEAM]
    assert stderr.getvalue().splitlines() == ["warning: team 1: still said"]


def test_the_said_table_stays_bounded_and_keeps_the_latest(stderr: io.StringIO) -> None:
    team = logging.getLogger(TEAM)
    for n in range(1000):
        team.warning("team %s: slow", n)
    team.warning("team %s: slow", 999)  # said lately: left out

    assert len(logs._HANDLER.said) <= logs._SAID_KEPT + 1
    assert len(stderr.getvalue().splitlines()) == 1000


def test_serve_says_every_record(stderr: io.StringIO) -> None:
    """A server's log is read by counting: ``say_each_time`` leaves no repeat out, and
    remembers nothing for it."""
    logs.say_each_time()
    team = logging.getLogger(TEAM)
    for _ in range(3):
        team.error("team %s: request failed", 1)

    assert stderr.getvalue().splitlines() == ["error: team 1: request failed"] * 3
    assert logs._HANDLER.said == {}


def test_with_debug_every_record_is_printed_whole(stderr: io.StringIO) -> None:
    before = logs.show_tracebacks(True)
    try:
        for _ in range(2):
            logging.getLogger("akgentic.storage").error(
                "lease %s: renewal failed; retrying", "team/x", exc_info=_locked()
            )
    finally:
        logs.show_tracebacks(before)

    lines = stderr.getvalue().splitlines()
    heads = [line for line in lines if line.startswith("ERROR akgentic.storage: ")]
    assert heads == ["ERROR akgentic.storage: lease team/x: renewal failed; retrying"] * 2
    assert "Traceback (most recent call last):" in lines


def test_a_heartbeat_on_a_locked_store_says_so_once_then_that_it_is_free(
    stderr: io.StringIO, tmp_path: Path
) -> None:
    """The real records: a SQLite store another connection holds with BEGIN EXCLUSIVE;
    the heartbeat's renewals fail, then one goes through once it is released."""
    path = tmp_path / "x.db"
    store = SqliteStorage(path, busy_timeout=0.05)
    beat = Heartbeat(store.leases, ttl=60.0, on_lost=lambda *_: None)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        store.leases.acquire("team/x", LeaseHolder(owner="one", host="box", pid=1), 60.0)
        beat.keep("team/x", "one")
        other.execute("BEGIN EXCLUSIVE")
        beat.beat()
        beat.beat()
        other.execute("COMMIT")
        beat.beat()
    finally:
        beat.close()
        other.close()
        store.close()

    assert stderr.getvalue().splitlines() == [logs.STORE_BUSY, logs.STORE_FREE]


def test_a_store_that_refused_writes_for_another_reason_says_once_it_takes_them_again(
    stderr: io.StringIO, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real records: a recorder whose store refuses its batches (a disk full, a
    read-only file: no lock) says so, then — once the kept records are committed — one
    ``note:`` line that they are written; a later failure is news again, and so is its
    end."""
    store = SqliteStorage(tmp_path / "x.db")
    team = store.teams.create("full").team_id
    recorder = EventRecorder(store, team)
    real = store.events.append_encoded
    refusals = {"left": 2}

    def disk_full(*args: object, **kwargs: object) -> list[int]:
        if refusals["left"]:
            refusals["left"] -= 1
            raise OSError("database or disk is full (simulated)")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.events, "append_encoded", disk_full)
    try:
        for spell in range(2):
            refusals["left"] = 2 - spell
            recorder.on_message(UserMessage(content=f"kept {spell}", team_id=team))
            recorder.flush()
            assert recorder.written(30)
        recorder.on_stop(team)
    finally:
        store.close()

    refused = (
        f"error: team {team}: the event log refused a batch; it is kept: "
        f"OSError: database or disk is full (simulated)"
    )
    assert stderr.getvalue().splitlines() == [refused, logs.STORE_BACK] * 2
    assert logs.STORE_BACK == (
        "note: the store takes writes again; what was kept is written, nothing was lost"
    )


def test_the_store_is_said_to_take_writes_again_once_every_failed_write_went_through(
    stderr: io.StringIO,
) -> None:
    """A lease renewal and the event log both fail (a store that stopped answering), and
    its status cannot be read: the first failure is said, the others wait for the
    store's return. The renewal goes through first: no line yet (the log's records are
    still kept), then one line once the log's do. A recovery of a write whose failure
    was never said says nothing."""
    storage, team = logging.getLogger("akgentic.storage"), logging.getLogger(TEAM)
    team.info("team 2: took the kept records", extra={RECOVERED: "team 2"})
    for cause in ("AdminShutdown", "Connection refused"):
        storage.error(
            f"lease team/1: renewal failed: {cause}", extra={WRITE_FAILED: "lease team/1"}
        )
        team.error(
            f"team 1: the event log refused a batch: {cause}", extra={WRITE_FAILED: "team 1"}
        )
        team.error(f"team 1: could not read its status: {cause}", extra={READ_FAILED: True})
    storage.info("lease team/1: renewed again", extra={RECOVERED: "lease team/1"})
    assert stderr.getvalue().splitlines() == ["error: lease team/1: renewal failed: AdminShutdown"]
    team.info("team 1: took the kept records", extra={RECOVERED: "team 1"})
    team.info("team 1: took the kept records", extra={RECOVERED: "team 1"})
    assert stderr.getvalue().splitlines()[1:] == [logs.STORE_BACK]
    team.error("team 1: could not read its status: gone", extra={READ_FAILED: True})
    assert stderr.getvalue().splitlines()[2:] == [  # no outage said: a read failure is news
        "error: team 1: could not read its status: gone"
    ]


def test_a_lost_lease_the_session_said_is_not_said_again_as_the_team_stops_after_it(
    stderr: io.StringIO,
) -> None:
    """The recorder reports the records it dropped as the team shuts down, after the
    session ended: once the session said the loss in its own line, that report is not a
    second line; before that (a loss during a stop) it is the only word, and is said."""
    lost = "team T: another process runs it now (its lease was taken over): 3 records not written"
    with logs.stream_shown():
        logging.getLogger(TEAM).error("%s", lost, extra={LEASE_LOST: True})
    logging.getLogger(TEAM).error("%s", lost, extra={LEASE_LOST: True})
    assert stderr.getvalue().splitlines() == [f"error: {lost}"]

    logs.configure()  # a new command: nothing said yet
    stderr.truncate(0)
    stderr.seek(0)
    with logs.stream_shown():
        logs.lease_loss_said()
    logging.getLogger(TEAM).error("%s", lost, extra={LEASE_LOST: True})
    logging.getLogger(TEAM).error("team T: the disk is full")
    assert stderr.getvalue().splitlines() == ["error: team T: the disk is full"]
