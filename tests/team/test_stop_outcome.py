"""A stop whose last records the store refuses for longer than ``stop_team`` waits for
the team: the STOPPED mark waits for the recorder's outcome, whatever the timing. The
ordering is forced with gates: the manager's wait for the orchestrator runs out (as
past the grace and its margin) while the recorder's closing tries are held."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from akgentic.core import ActorAddress, ActorSystem
from akgentic.storage import StorageBundle, TeamStatus, open_storage
from akgentic.storage._sql import _Events
from akgentic.team import EventRecorder, TeamCard, TeamManager, TeamRuntime
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
