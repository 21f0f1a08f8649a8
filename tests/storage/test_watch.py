"""Following a team's log from any process: Postgres notifies each append at commit and
a watch wakes its waiters at once; elsewhere the watch polls by sequence number. Either
way the store is the truth, so nothing is missed — not even while the listening
connection is down."""

from __future__ import annotations

import threading
from pathlib import Path
from uuid import UUID, uuid4

import psycopg
import pytest

from akgentic.core import UserMessage
from akgentic.storage import StorageBundle, open_storage, open_watch
from akgentic.storage._pack import pack_count
from akgentic.storage.watch import NotifyWatch, PollingWatch
from tests.storage.conftest import POSTGRES_URL, SKIP_POSTGRES
from tests.storage.test_packs import busy


def waiting(
    watch: object, team_id: UUID, seq: int, timeout: float
) -> tuple[threading.Thread, list[bool]]:
    """A thread waiting for the team's log to pass ``seq``; its result lands in the list."""
    result: list[bool] = []
    thread = threading.Thread(
        target=lambda: result.append(watch.wait_past(team_id, seq, timeout))  # type: ignore[attr-defined]
    )
    thread.start()
    return thread, result


def bounded(check: object, timeout: float = 20.0) -> bool:
    pause = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if check():  # type: ignore[operator]
            return True
        pause.wait(0.02)
    return False


def test_a_polling_watch_sees_what_another_handle_appends(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'watch.db'}"
    mine, theirs = open_storage(url), open_storage(url)
    try:
        team = mine.teams.create("followed").team_id
        watch = open_watch(mine, poll_interval=0.05)
        assert isinstance(watch, PollingWatch)
        assert watch.wait_past(team, 0, timeout=0.1) is False  # nothing yet
        thread, result = waiting(watch, team, 0, timeout=60)
        theirs.events.append(team, UserMessage(content="hello"))
        thread.join(70)
        assert result == [True]
        assert watch.wait_past(team, 0, timeout=0) is True  # already past: at once
        watch.close()
        assert watch.wait_past(team, 5, timeout=60) is False  # closed: no wait
    finally:
        mine.close()
        theirs.close()


@pytest.fixture
def postgres() -> object:
    schema = f"watch_{uuid4().hex[:12]}"
    stores: list[StorageBundle] = []

    def open_one() -> StorageBundle:
        store = open_storage(f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}schema={schema}")
        stores.append(store)
        return store

    yield open_one
    for store in stores:
        store.close()
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@SKIP_POSTGRES
def test_every_postgres_append_notifies_its_team_and_last_seq(postgres: object) -> None:
    mine, theirs = postgres(), postgres()  # type: ignore[operator]
    team = mine.teams.create("followed").team_id
    listener = mine.listener()
    try:
        theirs.events.append_many(team, [UserMessage(content="a"), UserMessage(content="b")])
        ours = []  # the channel is the database's: other teams' appends may come too
        for note in listener.notifies(timeout=10):
            assert note.channel == "akgentic_events"
            if note.payload.startswith(str(team)):
                ours.append(note.payload)
                break
        assert ours == [f"{team}:2"]  # one notification per append, with its last seq
    finally:
        listener.close()


@SKIP_POSTGRES
def test_a_notify_watch_is_woken_by_another_process_append(postgres: object) -> None:
    mine, theirs = postgres(), postgres()  # type: ignore[operator]
    team = mine.teams.create("followed").team_id
    watch = open_watch(mine, poll_interval=120)  # polling alone would take two minutes
    assert isinstance(watch, NotifyWatch)
    try:
        assert watch.listening.wait(20)
        thread, result = waiting(watch, team, 0, timeout=60)
        theirs.events.append(team, UserMessage(content="hello"))
        thread.join(70)
        assert result == [True]
        assert bounded(lambda: watch.heard(team) == 1)  # announced by a notification
    finally:
        watch.close()


@SKIP_POSTGRES
def test_a_notify_watch_misses_nothing_while_its_connection_is_down(postgres: object) -> None:
    mine, theirs = postgres(), postgres()  # type: ignore[operator]
    team = mine.teams.create("followed").team_id
    watch = open_watch(mine, poll_interval=0.1)
    assert isinstance(watch, NotifyWatch)
    try:
        assert watch.listening.wait(20)
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query = 'LISTEN akgentic_events'"
            )
        theirs.events.append(team, UserMessage(content="while down"))
        assert watch.wait_past(team, 0, timeout=60)  # the store is read anyway
        assert bounded(lambda: watch.connections >= 2, 30)  # listening again
        assert watch.listening.wait(20)
        theirs.events.append(team, UserMessage(content="after"))
        assert bounded(lambda: watch.heard(team) == 2, 30)
    finally:
        watch.close()


def test_a_polling_watch_sees_a_pack_another_handle_appends(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'watch.db'}"
    mine, theirs = open_storage(url), open_storage(url)
    try:
        team = mine.teams.create("followed").team_id
        theirs.events.append(team, UserMessage(content="row"))
        watch = open_watch(mine, poll_interval=0.05)
        thread, result = waiting(watch, team, 1, timeout=60)
        pack = busy(team, 1).pack()
        theirs.events.append_packs(team, [pack])
        thread.join(70)
        assert result == [True]
        assert mine.events.last_seq(team) == 1 + pack_count(pack)
        watch.close()
    finally:
        mine.close()
        theirs.close()


@SKIP_POSTGRES
def test_a_postgres_pack_append_notifies_its_last_seq_and_wakes_a_watch(
    postgres: object,
) -> None:
    mine, theirs = postgres(), postgres()  # type: ignore[operator]
    team = mine.teams.create("followed").team_id
    pack = busy(team, 1).pack()
    last = 1 + pack_count(pack)
    listener = mine.listener()
    watch = open_watch(mine, poll_interval=120)  # polling alone would take two minutes
    assert isinstance(watch, NotifyWatch)
    try:
        assert watch.listening.wait(20)
        thread, result = waiting(watch, team, 1, timeout=60)
        theirs.events.append(team, UserMessage(content="row"))
        theirs.events.append_packs(team, [pack])
        thread.join(70)
        assert result == [True]
        assert bounded(lambda: watch.heard(team) == last)  # announced by a notification
        ours = []
        for note in listener.notifies(timeout=10):
            if note.payload.startswith(str(team)):
                ours.append(note.payload)
                if len(ours) == 2:
                    break
        assert ours == [f"{team}:1", f"{team}:{last}"]  # the row's, then the pack's
    finally:
        watch.close()
        listener.close()
