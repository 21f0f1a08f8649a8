"""A stop whose last records the store refuses for longer than ``stop_team`` waits for
the team: the STOPPED mark waits for the recorder's outcome, whatever the timing. The
ordering is forced with gates: the manager's wait for the orchestrator runs out (as
past the grace and its margin) while the recorder's closing tries are held."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import ActorAddress, ActorSystem
from akgentic.storage import (
    StorageBundle,
    TeamStatus,
    open_storage,
    saving_resource,
    stopping_resource,
)
from akgentic.storage._sql import _Events
from akgentic.team import (
    EventRecorder,
    TeamCard,
    TeamManager,
    TeamRunningElsewhereError,
    TeamRuntime,
    TeamStillStoppingError,
    still_stopping_words,
)
from akgentic.team import manager as manager_module
from akgentic.team import recorder as recorder_module

from .test_graceful_stop import member


class _Window:
    """The store refuses the log's writes while ``down`` is set. A closing recorder's
    refused try sets ``refused`` and waits for ``go_on`` before it goes on (gives up, or
    tries again); the wait for the team's orchestrator runs out once ``refused`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.down = threading.Event()
        self.refused = threading.Event()
        self.go_on = threading.Event()
        self.orchestrator: ActorAddress | None = None
        for name in ("append_packs", "append_encoded"):
            real = getattr(_Events, name)

            def refusing(self_: _Events, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
                if self.down.is_set():
                    raise OSError("database or disk is full (simulated)")
                return _real(self_, *args, **kwargs)

            monkeypatch.setattr(_Events, name, refusing)
        retry = EventRecorder._retry

        def held(recorder: EventRecorder, *args: Any) -> bool:
            if recorder.closing:
                self.refused.set()
                assert self.go_on.wait(30)
            return retry(recorder, *args)

        monkeypatch.setattr(EventRecorder, "_retry", held)
        wait_stopped = ActorSystem.wait_stopped

        def ran_out(system: ActorSystem, addr: ActorAddress, timeout: float | None = None) -> bool:
            if self.orchestrator is None or addr.agent_id != self.orchestrator.agent_id:
                return wait_stopped(system, addr, timeout)
            assert self.refused.wait(30)  # the recorder is retrying the stop's last records
            return False  # as a wait past the grace and its margin ends

        monkeypatch.setattr(ActorSystem, "wait_stopped", ran_out)


@pytest.fixture
def window(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Window]:
    gates = _Window(monkeypatch)
    try:
        yield gates
    finally:
        gates.go_on.set()


def _team(manager: TeamManager, window: _Window) -> TeamRuntime:
    card = TeamCard(name="one", entry_point="@Boss", members=[member("@Boss", gated=False)])
    runtime = manager.create_team(card)
    window.orchestrator = runtime.orchestrator
    return runtime


def _status(storage: StorageBundle, runtime: TeamRuntime) -> TeamStatus:
    record = storage.teams.get(runtime.team_id)
    assert record is not None
    return record.status


def test_a_stop_that_loses_records_after_the_manager_stopped_waiting_is_not_marked_stopped(
    storage_url: str, system: ActorSystem, window: _Window, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manager's wait for the team ends while the recorder still tries to write the
    stop's last records; then it gives them up. The team is left RUNNING — as after a
    crash, its log lacking its end — not marked STOPPED by the manager before the loss
    was known, nor by a second stop_team meanwhile."""
    monkeypatch.setattr(recorder_module, "CLOSING_TRIES_FOR", 0.0)  # gives up once let go
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = _team(manager, window)
    window.down.set()

    manager.stop_team(runtime.team_id, grace_timeout=0)
    assert runtime.recorder.end_saved is None  # still trying: the outcome is not known
    manager.stop_team(runtime.team_id, grace_timeout=0)  # `teams stop` again, meanwhile
    assert _status(storage, runtime) == TeamStatus.RUNNING
    window.go_on.set()
    assert runtime.orchestrator.wait_stopped(30)

    assert runtime.recorder.unsaved > 0 and runtime.recorder.end_saved is False
    assert _status(storage, runtime) == TeamStatus.RUNNING


def test_a_stop_that_saves_its_records_after_the_manager_stopped_waiting_is_marked_by_them(
    storage_url: str, system: ActorSystem, window: _Window
) -> None:
    """The same stop, the store taking the records again while the recorder still tries:
    nothing is lost, and the recorder marks the team STOPPED once they are written."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = _team(manager, window)
    window.down.set()

    manager.stop_team(runtime.team_id, grace_timeout=0)
    assert _status(storage, runtime) == TeamStatus.RUNNING  # not known yet
    window.down.clear()
    window.go_on.set()
    assert runtime.orchestrator.wait_stopped(30)

    assert runtime.recorder.unsaved == 0 and runtime.recorder.end_saved is True
    assert _status(storage, runtime) == TeamStatus.STOPPED


def test_a_stop_whose_wait_runs_out_says_how_many_records_are_not_saved_yet(
    storage_url: str,
    system: ActorSystem,
    window: _Window,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The wait for the stop runs out (past the recorder's tries and their margin) with
    records the store still refuses: no line said so, and a command ending then lost
    them unsaid. One ``error`` line says how many are not saved yet, that the process
    ending first loses them, and what to do."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = _team(manager, window)
    window.down.set()

    with caplog.at_level("ERROR", logger="akgentic.team"):
        manager.stop_team(runtime.team_id, grace_timeout=0)
    said = [r.getMessage() for r in caplog.records if "its stop did not end in time" in r.message]

    assert runtime.recorder.end_saved is None  # still trying
    [line] = said
    assert re.fullmatch(
        rf"team {runtime.team_id}: its stop did not end in time: "
        # the count is of the rows the writer holds apart from the try the window holds
        # (none, while it holds them all: "its last records"); the refusal is said once
        # counted, and the held closing try may be the writer's first
        r"(\d+ records?|its last records) not saved yet"
        r"( \(the store refuses them\))?, lost if the process ends before they are; the stored "
        r"log ends before them, .*; free the store \(disk space, permissions, a process "
        r"holding it\) before resuming",
        line,
    ), line


def _retried(runtime: TeamRuntime) -> threading.Event:
    """Set once the recorder has told its manager of a try of the stop's last records
    (``EventRecorder.on_retrying``), and the manager has done with it."""
    told = threading.Event()
    tell = runtime.recorder.on_retrying
    assert tell is not None

    def telling(left: float) -> None:
        tell(left)
        told.set()

    runtime.recorder.on_retrying = telling
    return told


def _resume_elsewhere(storage_url: str, system: ActorSystem, team_id: UUID) -> Exception:
    """What a resume of the team by another process says, at once (no wait for a stop)."""
    other = TeamManager(system, open_storage(storage_url))
    try:
        with pytest.raises(TeamRunningElsewhereError) as refused:
            other.resume_team(team_id)
        return refused.value
    finally:
        other.shutdown()


def test_a_stop_retrying_its_last_records_keeps_its_stop_marker_fresh(
    storage_url: str, system: ActorSystem, window: _Window, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop's grace and margin are over (a margin of 0: its marker ran out as it was
    written) while its recorder still tries to write the team's last records: a resume
    from another process was then told the team runs there (stop it first), and let in
    once the team's lease lapsed, mid-retry. The marker is written again at each try, for
    as long as they go on: the team reads as stopping, and the resume is refused as still
    stopping; once the stop has ended, both its markers are gone."""
    monkeypatch.setattr(manager_module, "STOP_MARGIN", 0.0)
    monkeypatch.setattr(manager_module, "RESUME_WAIT", 0.0)  # the resume does not wait
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = _team(manager, window)
    retried = _retried(runtime)
    window.down.set()

    manager.stop_team(runtime.team_id, grace_timeout=0)
    assert manager.stop_in_progress(runtime.team_id) is None  # its marker has run out
    window.go_on.set()  # the recorder tries again (and is refused again)
    assert retried.wait(30)

    stop = manager.stop_in_progress(runtime.team_id)
    assert stop is not None and stop.holder == manager.holder and stop.saving
    refused = _resume_elsewhere(storage_url, system, runtime.team_id)
    assert isinstance(refused, TeamStillStoppingError), refused
    window.down.clear()  # the store takes them: the stop ends
    assert runtime.orchestrator.wait_stopped(30)
    assert runtime.recorder.end_saved is True
    for resource in (stopping_resource, saving_resource):
        assert storage.leases.inspect(resource(runtime.team_id)) is None


def test_a_resume_refused_while_the_stop_retries_its_last_records_says_so(
    storage_url: str, system: ActorSystem, window: _Window, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume from another process gives up waiting for a stop whose turns have ended
    and which still tries to write the team's last records to a store that refuses them:
    it said a member there had not ended its turn (and to end that process, which would
    lose the records). It says what the stop is at, and to free the store."""
    monkeypatch.setattr(manager_module, "RESUME_WAIT", 0.0)  # the resume does not wait
    manager = TeamManager(system, open_storage(storage_url))
    runtime = _team(manager, window)
    retried = _retried(runtime)
    window.down.set()

    manager.stop_team(runtime.team_id, grace_timeout=0)
    window.go_on.set()
    assert retried.wait(30)
    refused = _resume_elsewhere(storage_url, system, runtime.team_id)

    assert isinstance(refused, TeamStillStoppingError) and refused.saving, refused
    said = str(refused)
    assert said.startswith(f"team {runtime.team_id} is still stopping in another process (pid ")
    assert said.endswith(
        "of waiting: its turns have ended, and its stop there still tries to save the "
        "team's last records, which the store refuses; free the store (disk space, "
        "permissions, a process holding it) and resume it once that stop has ended"
    ), said
    assert "has not ended its turn" not in said
    window.down.clear()
    assert runtime.orchestrator.wait_stopped(30)


@pytest.mark.parametrize(
    ("saving", "elsewhere", "verb", "ending"),
    [
        (True, True, "delete", "a process holding it) and delete it once that stop has ended"),
        (True, False, None, "free the store (disk space, permissions, a process holding it)"),
        (False, True, "delete", "delete it once that process has stopped it, or end that process"),
        (False, False, "resume", "a member has not ended its turn; resume it once it has stopped"),
        (False, True, None, "a member there has not ended its turn yet; the stop waits for it"),
    ],
)
def test_what_a_stop_in_progress_is_at_is_said_with_what_to_do(
    saving: bool, elsewhere: bool, verb: str | None, ending: str
) -> None:
    words = still_stopping_words(saving, elsewhere=elsewhere, verb=verb)
    assert words.endswith(ending)
    assert ("the store refuses" in words) is saving
    assert ("its stop there" in words) is (saving and elsewhere)
