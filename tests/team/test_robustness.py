"""What the event log promises under trouble: an event that cannot be stored, tables that
fall behind the log, workers caught mid-job by a stop."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.agent import BaseAgent
from akgentic.core import (
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    ErrorMessage,
    EventMessage,
    Orchestrator,
    SerializationError,
    TeamStoppingEvent,
    serialize,
)
from akgentic.storage import (
    CorruptRecordError,
    LeaseHolder,
    LeaseLostError,
    StorageBundle,
    StorageError,
    TeamStatus,
    open_storage,
    sqlite_url,
    team_resource,
)
from akgentic.team import TeamCard, TeamManager
from akgentic.team.manager import _ReleaseOnStop

from .test_team import EXAMPLE, final_answer


class Emitter(Akgent[BaseConfig, BaseState]):
    def emit(self, event: Any) -> None:
        self.notify_event(event)


def test_an_event_that_cannot_be_stored_is_reported_and_holds_nothing_back(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    emitter = system.createActor(
        Emitter, config=BaseConfig(name="@Emitter"), team_id=runtime.team_id
    )
    system.proxy_ask(emitter, Emitter, timeout=30).emit(object())  # not serializable
    runtime.send("why actors?")  # committed although the batch before it held a bad event
    assert final_answer(runtime).startswith("Here is what @Worker found:")
    errors = [
        r.message
        for r in storage.events.read(runtime.team_id)
        if isinstance(r.message, ErrorMessage)
    ]
    assert any("EventMessage could not be stored" in str(e.content) for e in errors)


class OddState(BaseState):
    thing: Any = None


class Holder(Akgent[BaseConfig, OddState]):
    def hold(self, thing: Any) -> None:
        self.update_state({"thing": thing})


def test_a_state_that_cannot_be_stored_holds_back_neither_the_log_nor_other_states(
    storage_url: str, system: ActorSystem
) -> None:
    """The latest-state rows go in the log's transaction: one that cannot be encoded is
    left out of the table, and its batch (and every one after) is still committed."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    holder = system.createActor(Holder, config=BaseConfig(name="@Holder"), team_id=runtime.team_id)
    system.proxy_ask(holder, Holder, timeout=30).hold(object())  # not serializable
    runtime.send("why actors?")
    assert final_answer(runtime).startswith("Here is what @Worker found:")
    boss = runtime.member("@Manager")
    assert boss is not None
    manager.stop_team(runtime.team_id)
    states = storage.states.load_states(runtime.team_id)
    assert boss.agent_id in states
    held = states.get(holder.agent_id)
    assert held is None or held.require() == OddState()  # never the one that failed
    errors = [
        str(r.message.content)
        for r in storage.events.read(runtime.team_id)
        if isinstance(r.message, ErrorMessage)
    ]
    assert any("StateChangedMessage could not be stored" in e for e in errors)


def test_restore_trusts_the_log_when_the_tables_beside_it_fall_behind(
    storage_url: str, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("table unavailable (simulated)")

    rows_only, packs_only = storage.events.append_encoded, storage.events.append_packs

    def no_states(
        team_id: Any, events: Any, states: Any = (), memory: Any = (), fence: Any = None
    ) -> list[int]:
        return rows_only(team_id, events, fence=fence)  # states and memory never reach theirs

    def packs_without_states(
        team_id: Any, packs: Any, states: Any = (), memory: Any = (), fence: Any = None
    ) -> list[int]:
        return packs_only(team_id, packs, fence=fence)

    monkeypatch.setattr(storage.states, "save_state", broken)
    monkeypatch.setattr(storage.events, "append_encoded", no_states)
    monkeypatch.setattr(storage.events, "append_packs", packs_without_states)
    monkeypatch.setattr(storage.working_memory, "append", broken)
    runtime.send("why actors?")
    final_answer(runtime)
    boss = runtime.member("@Manager")
    assert boss is not None
    before_state = system.get_actor(boss).state
    before_history = system.proxy_ask(boss, BaseAgent, timeout=30).get_history()
    assert storage.states.load_states(runtime.team_id) == {}  # the tables never caught up
    manager.stop_team(runtime.team_id)

    resumed = manager.resume_team(runtime.team_id)
    again = resumed.member("@Manager")
    assert again is not None
    assert system.get_actor(again).state == before_state
    history = system.proxy_ask(again, BaseAgent, timeout=30).get_history()
    assert len(history) == len(before_history) > 0


class Lingering(Akgent[BaseConfig, BaseState]):
    """A one-job worker caught mid-job by the stop."""

    transient = True

    def work(self, gate: threading.Event) -> None:
        gate.wait(30)


def test_workers_caught_by_a_stop_are_not_brought_back(tmp_path: Path, system: ActorSystem) -> None:
    storage = open_storage(sqlite_url(tmp_path / "team.db"))
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    orchestrator = system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=30)
    worker = orchestrator.getChildrenOrCreate(Lingering, BaseConfig(name="#defer-job"))
    gate = threading.Event()
    system.proxy_tell(worker, Lingering).work(gate)
    stopping = threading.Thread(target=manager.stop_team, args=(runtime.team_id, 5.0))
    stopping.start()
    for record in runtime.follow(1, idle_timeout=30):  # wait until the stop is under way
        msg = record.message
        if isinstance(msg, EventMessage) and isinstance(msg.event, TeamStoppingEvent):
            break
    gate.set()  # the worker finishes its job during the teardown
    stopping.join(30)
    assert system.wait_stopped(worker, 10) and system.wait_stopped(runtime.orchestrator, 10)
    resumed = manager.resume_team(runtime.team_id)
    names = sorted(a.name for a in resumed.members())
    assert names == ["@Human", "@Manager", "@Worker"]


def test_a_stored_card_nested_too_deep_fails_resume_naming_the_team_and_changes_nothing(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    card = serialize(TeamCard.from_yaml(EXAMPLE))
    member = card["members"][0]
    for _ in range(250):  # each level is a list and a member: 500 levels of JSON
        member = {**member, "members": [member]}
    card["members"] = [member]
    team_id = storage.teams.create("deep", card=card).team_id
    storage.teams.set_status(team_id, TeamStatus.STOPPED)

    with pytest.raises(SerializationError, match=rf"team {team_id}.*nested deeper than 100"):
        manager.resume_team(team_id)
    record = storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.STOPPED and record.card == card


def test_a_damaged_team_record_fails_resume_naming_the_team(
    tmp_path: Path, system: ActorSystem
) -> None:
    path = tmp_path / "team.db"
    storage = open_storage(sqlite_url(path))
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    manager.stop_team(runtime.team_id)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE akgentic_teams SET status = 'garbage'")
    conn.commit()
    conn.close()

    with pytest.raises(CorruptRecordError, match=rf"team {runtime.team_id}: .*'garbage'"):
        manager.resume_team(runtime.team_id)
    assert storage.events.last_seq(runtime.team_id) > 0  # the history is untouched


def a_team(
    tmp_path: Path, system: ActorSystem, stopped: bool = False
) -> tuple[StorageBundle, TeamManager, UUID]:
    """The example team created (and ``stopped``) by a manager over SQLite in ``tmp_path``:
    the store, the manager and the team's id."""
    storage = open_storage(sqlite_url(tmp_path / "team.db"))
    manager = TeamManager(system, storage)
    team_id = manager.create_team(TeamCard.from_yaml(EXAMPLE)).team_id
    if stopped:
        manager.stop_team(team_id)
    return storage, manager, team_id


def test_a_resume_whose_running_mark_fails_stops_the_team_and_gives_its_lease_back(
    tmp_path: Path, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, manager, team_id = a_team(tmp_path, system, stopped=True)
    mark = storage.teams.set_status

    def refused(team: Any, status: TeamStatus, **fenced: Any) -> None:
        if status is TeamStatus.RUNNING:
            raise StorageError("the disk is full")
        mark(team, status, **fenced)

    monkeypatch.setattr(storage.teams, "set_status", refused)
    with pytest.raises(StorageError, match="the disk is full"):
        manager.resume_team(team_id)
    # restored, then stopped: not left running unowned, nor holding the team's lease
    orchestrator = system.get_orchestrator(team_id)
    assert orchestrator is None or system.wait_stopped(orchestrator, 10)
    assert manager.get_team(team_id) is None and manager.lease_of(team_id) is None
    record = storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.STOPPED

    monkeypatch.undo()
    resumed = manager.resume_team(team_id)
    assert sorted(a.name for a in resumed.members()) == ["@Human", "@Manager", "@Worker"]
    assert storage.teams.get(team_id).status is TeamStatus.RUNNING  # type: ignore[union-attr]


def test_a_team_taken_over_while_it_was_restored_is_not_marked_running_by_the_resume(
    tmp_path: Path, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, manager, team_id = a_team(tmp_path, system, stopped=True)
    mark = storage.teams.set_status
    resource = f"team/{team_id}"
    other = LeaseHolder(owner="another-process", host="elsewhere", pid=4242)

    def taken_over_first(team: Any, status: TeamStatus, **fenced: Any) -> None:
        if status is TeamStatus.RUNNING:  # as after a pause: this process's lease is gone
            storage.leases.release(resource, manager.holder.owner)
            storage.leases.acquire(resource, other, 60.0)
        mark(team, status, **fenced)

    monkeypatch.setattr(storage.teams, "set_status", taken_over_first)
    with pytest.raises(LeaseLostError):
        manager.resume_team(team_id)
    orchestrator = system.get_orchestrator(team_id)
    assert orchestrator is None or system.wait_stopped(orchestrator, 10)
    lease = manager.lease_of(team_id)
    assert lease is not None and lease.holder.owner == "another-process"  # left to its holder
    record = storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.STOPPED  # neither mark is ours


def _stopped_mark_refused_once(
    storage: Any, monkeypatch: pytest.MonkeyPatch, then: Any = None
) -> None:
    """The team's own STOPPED mark (its recorder's, as it stops) fails once; ``then`` runs
    right after the manager's own fenced try that follows, as another process would."""
    mark = storage.teams.set_status
    fenced_marks: list[Any] = []

    def refused_once(team: Any, status: TeamStatus, **fenced: Any) -> None:
        if status is not TeamStatus.STOPPED or "fence" not in fenced:
            return mark(team, status, **fenced)
        fenced_marks.append(team)
        if len(fenced_marks) == 1:
            raise StorageError("the disk is full")
        try:
            return mark(team, status, **fenced)
        finally:
            if then is not None and len(fenced_marks) == 2:
                then(team)

    monkeypatch.setattr(storage.teams, "set_status", refused_once)


def test_a_stopped_mark_left_to_the_manager_is_written_and_its_lease_given_back(
    tmp_path: Path, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, manager, team_id = a_team(tmp_path, system)
    _stopped_mark_refused_once(storage, monkeypatch)
    manager.stop_team(team_id)
    record = storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.STOPPED
    assert manager.lease_of(team_id) is None  # taken for the mark, given back


def test_a_resume_elsewhere_between_the_stop_and_its_mark_is_left_running(
    tmp_path: Path, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop released the lease; another process resumed the team before the manager
    marked it STOPPED: the mark is not written over its RUNNING (its watcher would stop
    the team it just resumed)."""
    storage, manager, team_id = a_team(tmp_path, system)
    mark = storage.teams.set_status
    other = LeaseHolder(owner="another-process", host="elsewhere", pid=4242)

    def resumed_elsewhere(team: Any) -> None:
        storage.leases.acquire(f"team/{team}", other, 60.0)
        mark(team, TeamStatus.RUNNING)

    _stopped_mark_refused_once(storage, monkeypatch, then=resumed_elsewhere)
    manager.stop_team(team_id)
    record = storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.RUNNING
    lease = manager.lease_of(team_id)
    assert lease is not None and lease.holder.owner == "another-process"


def test_a_resume_here_between_the_stop_and_its_mark_keeps_its_lease_and_status(
    tmp_path: Path, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same as above within one process: its leases share an owner, so the mark
    cannot tell the resume's lease from its own. A resume here asked then waits for the
    stop to end, its mark written, and then resumes the team: RUNNING, its lease kept."""
    storage, manager, team_id = a_team(tmp_path, system)
    resumed: list[Any] = []
    resuming: list[threading.Thread] = []

    def resume(team: Any) -> None:
        resuming.append(threading.Thread(target=lambda: resumed.append(manager.resume_team(team))))
        resuming[0].start()

    _stopped_mark_refused_once(storage, monkeypatch, then=resume)
    manager.stop_team(team_id)
    [thread] = resuming
    thread.join(60)
    assert not thread.is_alive()
    record = storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.RUNNING
    lease = manager.lease_of(team_id)
    assert lease is not None and lease.holder == manager.holder
    [runtime] = resumed
    assert manager.get_team(team_id) is runtime and runtime.orchestrator.is_alive()
    monkeypatch.undo()
    manager.stop_team(team_id)
    assert storage.teams.get(team_id).status is TeamStatus.STOPPED  # type: ignore[union-attr]


def test_a_stop_that_ends_after_a_resume_here_leaves_the_resumed_team_its_lease(
    tmp_path: Path, system: ActorSystem
) -> None:
    """A team whose stop outlasted its wait ends later; meanwhile the team was resumed
    here, under a lease of the same owner. The late end gives back only the lease its own
    team ran under, so the resumed team keeps its own."""
    storage, manager, team_id = a_team(tmp_path, system)
    first = manager.get_team(team_id)
    assert first is not None
    [late_end] = [
        s
        for s in system.get_actor(first.orchestrator)._subscribers
        if isinstance(s, _ReleaseOnStop)
    ]
    manager.stop_team(team_id)
    resumed = manager.resume_team(team_id)
    late_end.on_stop(team_id)  # the first team's end, arriving only now
    lease = manager.lease_of(team_id)
    assert lease is not None and lease.holder == manager.holder
    assert team_resource(team_id) in manager._heartbeat.kept()  # and it is kept alive
    assert manager.get_team(team_id) is resumed and resumed.orchestrator.is_alive()
    manager.stop_team(team_id)  # the resumed team's own end gives its lease back
    assert manager.lease_of(team_id) is None
    assert storage.teams.get(team_id).status is TeamStatus.STOPPED  # type: ignore[union-attr]
