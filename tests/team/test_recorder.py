"""The EventRecorder's writer: commits gather into groups while records keep coming,
yet nobody who waits for a commit is kept waiting, and a stop writes everything."""

from __future__ import annotations

from uuid import uuid4

import pytest

from akgentic.core import UserMessage
from akgentic.storage import open_storage
from akgentic.team import EventRecorder
from akgentic.team import recorder as recorder_module


@pytest.fixture
def slow_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gap no test would wait out: a commit inside it proves something cut it short."""
    monkeypatch.setattr(recorder_module, "COMMIT_GAP", 600.0)


@pytest.mark.usefixtures("slow_gap")
def test_commits_gather_yet_a_caller_waiting_for_one_is_served_at_once(
    storage_url: str,
) -> None:
    storage = open_storage(storage_url)
    team = uuid4()
    recorder = EventRecorder(storage, team)
    first, second, third = (UserMessage(content=str(i), team_id=team) for i in range(3))
    recorder.on_message(first)
    recorder.flush()
    assert recorder.wait_seq(1, 30)  # after a quiet spell: committed at once
    recorder.on_message(second)
    recorder.flush()
    assert not recorder.wait_seq(2, 0.3)  # within the gap: the group gathers
    assert storage.events.last_seq(team) == 1
    assert recorder.wait_committed(second.id, 30) == 2  # a caller waits: written now
    recorder.on_message(third)
    recorder.flush()
    assert recorder.written(30)  # so does one that waits for everything
    assert [r.require() for r in storage.events.read(team)] == [first, second, third]
    recorder.on_stop(team)


@pytest.mark.usefixtures("slow_gap")
def test_a_stop_writes_what_is_gathering_without_waiting_out_the_gap(storage_url: str) -> None:
    storage = open_storage(storage_url)
    team = uuid4()
    recorder = EventRecorder(storage, team)
    messages = [UserMessage(content=str(i), team_id=team) for i in range(5)]
    recorder.on_message(messages[0])
    recorder.flush()
    assert recorder.wait_seq(1, 30)
    for message in messages[1:]:
        recorder.on_message(message)
        recorder.flush()
    recorder.on_stop(team)  # returns once everything handed on is committed
    assert [r.require() for r in storage.events.read(team)] == messages
