"""A team is never lost or split: a failed resume changes nothing, one process runs a team
at a time (a lease with a heartbeat), and Ctrl-C reports the turns it cut as interrupted."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from akgentic.agent import AgentConfig, BaseAgent, TurnInterrupted
from akgentic.core import (
    ActorSystem,
    AddressError,
    AgentCard,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    SentMessage,
    StartMessage,
    StopMessage,
    TeamStoppingEvent,
)
from akgentic.storage import (
    Fence,
    LeaseHolder,
    StorageBundle,
    TeamStatus,
    open_storage,
    saving_resource,
    sqlite_url,
    stopping_resource,
)
from akgentic.team import (
    MemberSpec,
    ResumeError,
    StopWait,
    TeamCard,
    TeamManager,
    TeamRunningElsewhereError,
    TeamRuntime,
    TeamStillStoppingError,
    plan_restore,
    restorer,
    team_resource,
)
from akgentic.team import manager as manager_module
from tests.processes import a_dead_pid, wait_until

from .conftest import answer
from .gated import Gate, GatedStep
from .test_crash import run_child_until_ready
from .test_team import EXAMPLE, final_answer

HERE = Path(__file__).resolve().parent


def snapshot(storage: StorageBundle, runtime_or_id: Any) -> tuple[Any, ...]:
    """What a failed resume must not change: the log, the status, the roster it implies,
    the interrupted and the undelivered turns."""
    team_id = getattr(runtime_or_id, "team_id", runtime_or_id)
    plan = plan_restore(storage.events.read(team_id))
    record = storage.teams.get(team_id)
    assert record is not None
    return (
        storage.events.last_seq(team_id),
        record.status,
        sorted(m.name for m in plan.members),
        [getattr(m, "content", None) for m in plan.interrupted],
        [getattr(m, "content", None) for m in plan.undelivered],
    )


@pytest.fixture
def new_manager(system: ActorSystem) -> Iterator[Callable[[StorageBundle], TeamManager]]:
    """``TeamManager(system, storage)``, each shut down after the test (before the
    system is: this fixture's teardown runs first)."""
    made: list[TeamManager] = []

    def make(storage: StorageBundle) -> TeamManager:
        made.append(TeamManager(system, storage))
        return made[-1]

    yield make
    for manager in made:
        manager.shutdown(10)


# -- a failed resume leaves the stored team exactly as it was ---------------------------------


def test_a_resume_without_its_models_key_changes_nothing_and_says_what_to_set(
    storage_url: str,
    new_manager: Callable[[StorageBundle], TeamManager],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    team_id = run_child_until_ready(storage_url)  # killed mid-turn: one turn interrupted
    storage = open_storage(storage_url)
    before = snapshot(storage, team_id)
    assert before[1:] == (
        TeamStatus.RUNNING,
        ["@Boss", "@Human"],
        ["block please"],
        ["after block"],
    )
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    manager = new_manager(storage)

    for _ in range(2):  # and again: every failed attempt sees the same team
        with pytest.raises(ResumeError, match=r"@Boss: .*OPENAI_API_KEY") as failed:
            manager.resume_team(team_id, model="openai:gpt-5.2")
        assert failed.value.member is None  # not a member's own failure: another model helps
        assert snapshot(storage, team_id) == before
        assert manager.get_team(team_id) is None and manager.lease_of(team_id) is None

    runtime = manager.resume_team(team_id)  # on its own model, it resumes whole
    assert runtime.member("@Boss") is not None
    assert [getattr(m, "content", None) for m in runtime.interrupted] == ["block please"]
    manager.stop_team(team_id)


class Keeper(Akgent[BaseConfig, BaseState]):
    """A member whose start fails on restore while ``sealed`` (after any model check)."""

    sealed: ClassVar[bool] = False

    def on_start(self) -> None:
        if self.restoring and Keeper.sealed:
            raise RuntimeError("the vault is sealed")


def keeper_card() -> TeamCard:
    card = TeamCard.from_yaml(EXAMPLE)
    keeper = AgentCard(role="Keeper", agent_class=Keeper, config=BaseConfig(name="@Keeper"))
    return card.model_copy(update={"members": [*card.members, MemberSpec(card=keeper)]})


def test_a_member_failing_to_start_undoes_the_whole_resume(
    storage_url: str, new_manager: Callable[[StorageBundle], TeamManager]
) -> None:
    storage = open_storage(storage_url)
    manager = new_manager(storage)
    runtime = manager.create_team(keeper_card())
    runtime.send("why actors?")
    final_answer(runtime)
    manager.stop_team(runtime.team_id)
    before = snapshot(storage, runtime)
    Keeper.sealed = True
    try:
        with pytest.raises(ResumeError, match="@Keeper could not start: .*the vault is sealed"):
            manager.resume_team(runtime.team_id)
        assert snapshot(storage, runtime) == before  # nothing recorded, status untouched
        assert manager.lease_of(runtime.team_id) is None
    finally:
        Keeper.sealed = False
    again = manager.resume_team(runtime.team_id)
    assert {m.name for m in again.members()} >= {"@Manager", "@Worker", "@Keeper"}
    manager.stop_team(runtime.team_id)


def test_resume_on_another_model(
    storage_url: str, system: ActorSystem, new_manager: Callable[[StorageBundle], TeamManager]
) -> None:
    storage = open_storage(storage_url)
    manager = new_manager(storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    manager.stop_team(runtime.team_id)
    resumed = manager.resume_team(runtime.team_id, model="test:resumed")
    for name in ("@Manager", "@Worker"):
        address = resumed.member(name)
        assert address is not None
        config = system.get_actor(address).config
        assert isinstance(config, AgentConfig) and config.models.active_key == "test:resumed"
    manager.stop_team(runtime.team_id)
    # the restored members' start records carry it: a later resume keeps it
    plan = plan_restore(storage.events.read(runtime.team_id))
    keys = {m.name: m.config.models.active_key for m in plan.members if m.name.startswith("@M")}
    assert keys == {"@Manager": "test:resumed"}


# -- one process runs a team at a time --------------------------------------------------------


@contextlib.contextmanager
def process(storage_url: str, **options: Any) -> Iterator[TeamManager]:
    """A manager with an actor system and a handle on the store of its own: another
    process, as far as the store can tell. On exit the manager is shut down (its teams,
    its status watcher, its heartbeat), then its system."""
    system = ActorSystem()
    try:
        manager = TeamManager(system, open_storage(storage_url), **options)
        try:
            yield manager
        finally:
            manager.shutdown(10)
    finally:
        system.shutdown(10)


@contextlib.contextmanager
def two_processes(storage_url: str) -> Iterator[tuple[TeamManager, TeamManager]]:
    """Two managers over one store, each with its own actor system: the second stands
    for another process."""
    with process(storage_url) as first, process(storage_url) as second:
        yield first, second


def test_a_second_process_is_refused_naming_the_holder(storage_url: str) -> None:
    with two_processes(storage_url) as (first, second):
        runtime = first.create_team(TeamCard.from_yaml(EXAMPLE))
        with pytest.raises(TeamRunningElsewhereError) as info:
            second.resume_team(runtime.team_id)
        assert info.value.lease.holder == first.holder
        assert f"pid {os.getpid()} on host {socket.gethostname()} since " in str(info.value)
        assert second.get_team(runtime.team_id) is None
        first.stop_team(runtime.team_id)  # the lease goes with the stop
        assert first.lease_of(runtime.team_id) is None
        resumed = second.resume_team(runtime.team_id)
        lease = second.lease_of(resumed.team_id)
        assert lease is not None and lease.holder == second.holder
        second.stop_team(runtime.team_id)


@pytest.mark.parametrize("purge", [False, True])
def test_a_delete_of_a_team_another_process_runs_is_refused_and_changes_nothing(
    storage_url: str, purge: bool
) -> None:
    """A plain delete as a purge: the process running the team would go on writing into a
    DELETED team, and its session would offer a resume that a DELETED team refuses."""
    with two_processes(storage_url) as (first, second):
        runtime = first.create_team(TeamCard.from_yaml(EXAMPLE))
        with pytest.raises(TeamRunningElsewhereError) as info:
            second.delete_team(runtime.team_id, purge=purge)
        assert info.value.lease.holder == first.holder
        assert second.record(runtime.team_id).status == TeamStatus.RUNNING
        assert runtime.orchestrator.is_alive() and runtime.stop_reason is None
        first.stop_team(runtime.team_id)
        second.delete_team(runtime.team_id, purge=purge)  # stopped: it goes
        if purge:
            assert second.storage.teams.get(runtime.team_id) is None
        else:
            assert second.record(runtime.team_id).status == TeamStatus.DELETED


def test_a_team_whose_process_is_gone_is_deleted(storage_url: str) -> None:
    """A crash leaves the lease behind; once it has expired nobody runs the team."""
    with process(storage_url, lease_ttl=0) as stalled, process(storage_url) as other:
        runtime = stalled.create_team(TeamCard.from_yaml(EXAMPLE))
        assert stalled.lease_of(runtime.team_id).expired  # type: ignore[union-attr]
        other.delete_team(runtime.team_id)
        assert other.record(runtime.team_id).status == TeamStatus.DELETED


def test_a_team_that_starts_after_shutdown_began_is_stopped_not_left_running(
    storage_url: str,
) -> None:
    """A create that passed a server's draining check just before shutdown() listed the
    running teams must not run on unowned: it is stopped, kept to resume, and said."""
    system = ActorSystem()
    try:
        manager = TeamManager(system, open_storage(storage_url))
        manager.shutdown(5)
        with pytest.raises(RuntimeError, match="shutting down: team .* was stopped as it started"):
            manager.create_team(TeamCard.from_yaml(EXAMPLE))
        [record] = manager.list_teams()
        assert record.status == TeamStatus.STOPPED
        assert manager.lease_of(record.team_id) is None
        orchestrator = system.get_orchestrator(record.team_id)
        assert orchestrator is None or not orchestrator.is_alive()
    finally:
        system.shutdown(10)


def test_a_created_team_is_on_disk_when_create_team_returns(storage_url: str) -> None:
    """A take-over right after creation must rebuild the whole roster: every member's start
    is committed before ``create_team`` returns (the recorder writes on its own thread)."""
    with process(storage_url) as manager:
        runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
        reader = open_storage(storage_url)
        started = {
            r.message.sender.name
            for r in reader.events.read(runtime.team_id)
            if isinstance(r.message, StartMessage) and r.message.sender is not None
        }
        assert {"@Manager", "@Worker", "@Human"} <= started
        manager.stop_team(runtime.team_id)


def test_an_expired_lease_is_taken_over_and_its_old_holder_stops(storage_url: str) -> None:
    # a holder whose lease is never renewed for long: as if its process had hung
    with (
        process(storage_url, lease_ttl=0, watch_interval=0.05) as stalled,
        process(storage_url) as taker,
    ):
        runtime = stalled.create_team(TeamCard.from_yaml(EXAMPLE))
        assert stalled.lease_of(runtime.team_id).expired  # type: ignore[union-attr]
        resumed = taker.resume_team(runtime.team_id)  # expired: taken over
        assert taker.lease_of(runtime.team_id).holder == taker.holder  # type: ignore[union-attr]
        # the old holder learns it at its next beat: it stops, recording nothing more
        assert stalled.system.wait_stopped(runtime.orchestrator, 30)
        assert runtime.stop_reason is not None and "lease was lost" in runtime.stop_reason
        resumed.send("still mine?")
        assert final_answer(resumed).startswith("Here is what @Worker found")
        taker.stop_team(runtime.team_id)


def taken_over(stalled: TeamManager, taker: TeamManager) -> tuple[TeamRuntime, TeamRuntime]:
    """A team created by ``stalled`` (whose lease expires at once) and resumed by
    ``taker``: the first runtime, stopped once ``stalled`` learned of the loss, and the
    one that runs it now."""
    runtime = stalled.create_team(TeamCard.from_yaml(EXAMPLE))
    resumed = taker.resume_team(runtime.team_id)
    assert stalled.system.wait_stopped(runtime.orchestrator, 30)
    assert runtime.stop_reason is not None and "lease was lost" in runtime.stop_reason
    return runtime, resumed


def test_a_process_whose_team_was_taken_over_leaves_it_running_there_as_it_shuts_down(
    storage_url: str,
) -> None:
    """The team stopped here when its lease was lost; it runs in the process that took it
    over. This process' shutdown stops the teams it runs: not that one, whose status it
    would mark STOPPED (and the new holder's watcher would then stop it)."""
    with (
        process(storage_url, lease_ttl=0, watch_interval=0.05) as stalled,
        process(storage_url, watch_interval=0.05) as taker,
    ):
        runtime, resumed = taken_over(stalled, taker)
        stalled.shutdown(10)
        assert taker.record(runtime.team_id).status == TeamStatus.RUNNING
        resumed.send("still mine?")  # not stopped by its watcher meanwhile
        assert final_answer(resumed).startswith("Here is what @Worker found")
        assert resumed.orchestrator.is_alive() and resumed.stop_reason is None
        taker.stop_team(runtime.team_id)


def test_a_stop_asked_here_after_the_loss_is_known_leaves_the_new_holders_team_running(
    storage_url: str,
) -> None:
    """The session's Ctrl-C comes after this process learned its lease was lost (the team
    no longer among the ones it runs): the stop is the new holder's business, and its
    STOPPED mark, fenced, is refused — not written over the new holder's RUNNING."""
    with (
        process(storage_url, lease_ttl=0, watch_interval=0.05) as stalled,
        process(storage_url, watch_interval=0.05) as taker,
    ):
        runtime, resumed = taken_over(stalled, taker)
        stalled.interrupt_team(runtime.team_id, grace_timeout=1)
        stalled.stop_team(runtime.team_id)
        assert taker.record(runtime.team_id).status == TeamStatus.RUNNING
        resumed.send("still mine?")  # not stopped by its watcher meanwhile
        assert final_answer(resumed).startswith("Here is what @Worker found")
        assert resumed.stop_reason is None
        taker.stop_team(runtime.team_id)


def test_a_team_taken_over_while_it_is_stopped_here_is_not_marked_stopped_there(
    storage_url: str,
) -> None:
    """Stopped here after a pause past its lease, taken over meanwhile: the stop finds
    the lease lost, and the status stays the new holder's (RUNNING, or its watcher would
    stop the team there)."""
    with (
        process(storage_url, lease_ttl=0.2, watch_interval=60) as stalled,
        process(storage_url, watch_interval=0.05) as taker,
    ):
        runtime = stalled.create_team(TeamCard.from_yaml(EXAMPLE))
        lease = stalled.lease_of
        wait_until(lambda: lease(runtime.team_id).expired, 10, "the lease expired")  # type: ignore[union-attr]
        resumed = taker.resume_team(runtime.team_id)
        stalled.stop_team(runtime.team_id)
        assert not runtime.orchestrator.is_alive()
        assert taker.record(runtime.team_id).status == TeamStatus.RUNNING
        resumed.send("still mine?")  # not stopped by its watcher meanwhile
        assert final_answer(resumed).startswith("Here is what @Worker found")
        assert resumed.stop_reason is None
        taker.stop_team(runtime.team_id)


def test_a_holder_paused_past_its_lease_writes_nothing_once_taken_over(storage_url: str) -> None:
    """A process paused longer than its lease (SIGSTOP, a suspended laptop, a VM pause)
    whose team was taken over meanwhile wakes before its next heartbeat: what it then
    does is not written into the log the new holder now writes."""
    # renewed every 60 s, lasting 0.2 s: past 0.2 s it is as if paused
    with (
        process(storage_url, lease_ttl=0.2, watch_interval=60) as stalled,
        process(storage_url) as taker,
    ):
        runtime = stalled.create_team(TeamCard.from_yaml(EXAMPLE))
        lease = stalled.lease_of
        wait_until(lambda: lease(runtime.team_id).expired, 10, "the lease expired")  # type: ignore[union-attr]
        resumed = taker.resume_team(runtime.team_id)

        runtime.commit_timeout = 5.0
        with pytest.raises(AddressError, match="was taken over by another process"):
            runtime.send("from the paused holder")  # not accepted: never committed
        assert runtime.lease_lost is not None
        assert stalled.system.wait_stopped(runtime.orchestrator, 30)
        assert runtime.stop_reason is not None and "lease was lost" in runtime.stop_reason
        log = taker.storage.events.read(runtime.team_id)
        assert not any(
            isinstance(r.message, SentMessage)
            and getattr(r.message.message, "content", None) == "from the paused holder"
            for r in log
        )
        assert taker.lease_of(runtime.team_id).holder == taker.holder  # type: ignore[union-attr]
        taker.stop_team(resumed.team_id)


def test_a_team_stopped_from_elsewhere_says_so(tmp_path: Any) -> None:
    url = sqlite_url(tmp_path / "shared.db")
    with process(url, watch_interval=0.05) as runner, process(url) as other:
        runtime = runner.create_team(TeamCard.from_yaml(EXAMPLE))
        other.stop_team(runtime.team_id)
        assert runner.system.wait_stopped(runtime.orchestrator, 30)
        assert runtime.stop_reason == "it was stopped from elsewhere (akgentic teams stop)"
        assert runner.lease_of(runtime.team_id) is None  # released once it stopped


# -- a resume that lands while the team stops waits for the stop -------------------------------


def stop_held_at_the_gate(
    manager: TeamManager, grace: float = 30.0
) -> tuple[TeamRuntime, threading.Thread]:
    """A team of ``manager`` whose turn is at the gate, stopped on a thread (with
    ``grace``): the team and the thread, once the stop has started (held in its grace
    until the gate opens)."""
    runtime = manager.create_team(blocking_card())
    runtime.send("please block")
    assert Gate.entered.wait(60)  # the turn is inside its tool call
    stopping = threading.Thread(target=manager.stop_team, args=(runtime.team_id, grace))
    stopping.start()
    for record in runtime.follow(1, idle_timeout=60):  # until the stop has started
        msg = record.message
        if isinstance(msg, EventMessage) and isinstance(msg.event, TeamStoppingEvent):
            break
    return runtime, stopping


def resume_in_the_background(
    resumer: TeamManager, team_id: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[threading.Thread, list[Any], threading.Event]:
    """``resumer.resume_team(team_id)`` on a thread: what it returned or raised, and an
    event set once it has looked whether a stop is in progress (read the team's stop
    marker) or has ended."""
    outcome: list[Any] = []
    progress = threading.Event()
    leases = resumer.storage.leases
    inspect = leases.inspect

    def spy(resource: str) -> Any:
        try:
            return inspect(resource)
        finally:
            if resource == stopping_resource(team_id):
                progress.set()

    monkeypatch.setattr(leases, "inspect", spy)

    def resume() -> None:
        try:
            outcome.append(resumer.resume_team(team_id))
        except Exception as exc:
            outcome.append(exc)
        finally:
            progress.set()

    thread = threading.Thread(target=resume)
    thread.start()
    return thread, outcome, progress


@pytest.mark.parametrize("where", ["another process", "this process"])
def test_a_resume_while_the_team_stops_waits_for_the_stop_then_resumes_it(
    storage_url: str, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The stop is held in its grace by a turn at the gate: a resume then — from another
    process on the same store, or from the one stopping it — waits for the stop (it was
    refused: running elsewhere, or already running here), telling ``on_stop_wait`` once
    as its wait begins, and, once the turn has ended and the team is STOPPED, resumes
    it."""
    Gate.entered.clear()
    Gate.release.clear()
    try:
        with process(storage_url) as first, process(storage_url) as second:
            resumer = second if where == "another process" else first
            notices: list[StopWait] = []
            resumer.on_stop_wait = notices.append
            runtime, stopping = stop_held_at_the_gate(first)
            team_id = runtime.team_id
            resuming, outcome, progress = resume_in_the_background(resumer, team_id, monkeypatch)
            assert progress.wait(60)
            assert outcome == []  # neither refused nor resumed: waiting for the stop
            Gate.release.set()
            stopping.join(60)
            resuming.join(60)
            assert not stopping.is_alive() and not resuming.is_alive()
            # who stops it, and for how long at most: a stop's grace (30s) and margin
            assert notices == [StopWait(team_id, first.holder, manager_module.RESUME_WAIT)]

            [resumed] = outcome
            assert isinstance(resumed, TeamRuntime), resumed
            assert resumed is not runtime and resumed.is_running()
            assert resumer.lease_of(team_id).holder == resumer.holder  # type: ignore[union-attr]
            assert resumer.record(team_id).status == TeamStatus.RUNNING
            assert resumer.storage.leases.inspect(stopping_resource(team_id)) is None
            assert resumer.get_team(team_id) is resumed
            after = resumer.storage.events.last_seq(team_id)
            resumed.send("please go on")  # the gate is open: it answers
            assert answer(resumed, after)[1] == "[scripted] done: go on"
            # the resumed run's records come after what the stop wrote while it waited (read
            # once its answer is committed: the log is committed in order, so its start is)
            logged = {r.seq: r.message for r in resumer.storage.events.read(team_id)}
            stop_ended, resumed_began = logged[resumed.first_seq - 1], logged[resumed.first_seq]
            assert isinstance(stop_ended, StopMessage)
            assert stop_ended.sender is not None and stop_ended.sender.name == "@Orchestrator"
            assert isinstance(resumed_began, StartMessage)
            resumer.stop_team(team_id)
    finally:
        Gate.release.set()


def test_a_resume_whose_wait_for_the_stop_runs_out_is_refused_in_one_line(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop that outlasts its grace and margin (here, a margin of 0 and a turn held
    past the grace's end): the resume waiting for it gives up once they are over, saying
    who is still stopping the team and what to do; nothing changed in the store."""
    monkeypatch.setattr(manager_module, "STOP_MARGIN", 0.0)
    Gate.entered.clear()
    Gate.release.clear()
    try:
        with process(storage_url) as first, process(storage_url) as second:
            runtime = first.create_team(blocking_card())
            team_id = runtime.team_id
            runtime.send("please block")
            assert Gate.entered.wait(60)
            first.storage.leases.acquire(stopping_resource(team_id), first.holder, 0.5)
            # what a stop with a grace of 0.5s says, while the turn holds it for ever
            with pytest.raises(TeamStillStoppingError) as refused:
                second.resume_team(team_id)
            said = str(refused.value)
            assert said.startswith(f"team {team_id} is still stopping in another process (pid ")
            assert said.endswith(
                "a member there has not ended its turn; resume it once that process has "
                "stopped it, or end that process"
            )
            assert "\n" not in said
            assert refused.value.lease.holder == first.holder
            assert second.get_team(team_id) is None
            assert second.record(team_id).status == TeamStatus.RUNNING
            assert second.lease_of(team_id).holder == first.holder  # type: ignore[union-attr]
            Gate.release.set()  # the turn ends: the shutdown stops the team at once
    finally:
        Gate.release.set()


@pytest.mark.parametrize("saving", [False, True])
def test_a_stop_whose_process_died_is_no_stop_in_progress(storage_url: str, saving: bool) -> None:
    """A process killed while it stopped a team leaves its stop marker (and its saving
    marker, when its stop was at the last records) behind until they run out: its holder
    known dead, no stop is in progress — a resume does not wait it out, and says nothing
    of a stop. A live holder's same markers are a stop in progress."""
    with two_processes(storage_url) as (first, second):
        runtime = first.create_team(TeamCard.from_yaml(EXAMPLE))
        team_id = runtime.team_id
        first.stop_team(team_id)
        dead = LeaseHolder(owner="killed-mid-stop", host=socket.gethostname(), pid=a_dead_pid())
        live = LeaseHolder(owner="stopping-now", host=socket.gethostname(), pid=os.getpid())
        markers = [stopping_resource(team_id)] + ([saving_resource(team_id)] if saving else [])
        for resource in markers:
            second.storage.leases.acquire(resource, live, 60)
        stop = second.stop_in_progress(team_id)
        assert stop is not None and stop.saving is saving

        for resource in markers:
            second.storage.leases.release(resource, live.owner)
            second.storage.leases.acquire(resource, dead, 60)
            lease = second.storage.leases.inspect(resource)
            assert lease is not None and not lease.expired and not lease.alive()
        assert second.stop_in_progress(team_id) is None
        assert not second.stopping(team_id)
        notices: list[StopWait] = []
        second.on_stop_wait = notices.append
        resumed = second.resume_team(team_id)
        assert resumed.is_running() and notices == []
        # its next stop takes the dead holder's markers over: seen, as any stop is
        second._stopping(team_id, 30.0)
        if saving:
            second._saving(team_id, 30.0)
        for resource in markers:
            lease = second.storage.leases.inspect(resource)
            assert lease is not None and lease.holder == second.holder and lease.alive()
        assert first.stop_in_progress(team_id) is not None
        second.stop_team(team_id)


def test_a_resume_of_a_stopped_team_another_process_took_since_waits_for_it_in_silence(
    storage_url: str,
) -> None:
    """A STOPPED team another process leased after its mark is being resumed there (its
    restore not done), not stopped: a resume here waits in silence — ``on_stop_wait`` is
    never told "stopping" — and once that process has it RUNNING, the wait ends at once,
    refused as running there, not after the whole wait as if still stopping."""
    with process(storage_url) as first, process(storage_url) as second:
        team_id = first.create_team(blocking_card()).team_id
        first.stop_team(team_id)
        rival = LeaseHolder.here()  # a resume elsewhere: leased, restoring
        second.storage.leases.acquire(team_resource(team_id), rival, 30)
        notices: list[StopWait] = []
        second.on_stop_wait = notices.append
        # as the wait looks, the rival's restore ends: RUNNING under its lease
        second.stop_wait_check = lambda: second.storage.teams.set_status(
            team_id,
            TeamStatus.RUNNING,
            fence=Fence(resource=team_resource(team_id), owner=rival.owner),
        )
        with pytest.raises(TeamRunningElsewhereError) as refused:
            second.resume_team(team_id)
        assert not isinstance(refused.value, TeamStillStoppingError)
        assert refused.value.lease.holder == rival
        assert notices == []
        assert not second.stopping(team_id)
        assert second.get_team(team_id) is None
        second.storage.leases.release(team_resource(team_id), rival.owner)


def test_the_loser_of_two_resumes_racing_for_a_stopped_team_is_never_told_it_is_stopping(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes resume one STOPPED team at once: the first leases it and restores
    it (held at the restore until the second has looked); the second, refused the lease,
    is not told that the first "is stopping" the team (nobody stops it), nor does
    ``stopping`` say so meanwhile: it waits for the first's resume to decide, then is
    refused as running there. The first's resume is whole."""
    restore = restorer.restore
    restoring, looked = threading.Event(), threading.Event()

    with process(storage_url) as first, process(storage_url) as second:

        def restore_once_looked(manager: TeamManager, *args: Any, **kwargs: Any) -> Any:
            if manager is first:
                restoring.set()  # leased, restoring
                assert looked.wait(60)
            return restore(manager, *args, **kwargs)

        monkeypatch.setattr(restorer, "restore", restore_once_looked)
        team_id = first.create_team(blocking_card()).team_id
        first.stop_team(team_id)
        notices: list[StopWait] = []
        second.on_stop_wait = notices.append
        said_stopping: list[bool] = []

        def look() -> None:  # each look of the second's wait
            said_stopping.append(second.stopping(team_id))
            looked.set()

        second.stop_wait_check = look
        outcome: list[Any] = []
        winner = threading.Thread(target=lambda: outcome.append(first.resume_team(team_id)))
        winner.start()
        assert restoring.wait(60)
        with pytest.raises(TeamRunningElsewhereError) as refused:
            second.resume_team(team_id)
        winner.join(60)

        assert not isinstance(refused.value, TeamStillStoppingError)
        assert refused.value.lease.holder == first.holder
        assert notices == []
        assert said_stopping and not any(said_stopping)
        [resumed] = outcome
        assert isinstance(resumed, TeamRuntime) and resumed.is_running()
        assert second.record(team_id).status == TeamStatus.RUNNING
        first.stop_team(team_id)


# -- Ctrl-C: cut at a step boundary, reported as interrupted ----------------------------------


def blocking_card() -> TeamCard:
    config = AgentConfig(
        name="@Boss",
        role="Boss",
        models="scripted:blocking.scenario.yaml",
        scenario_dir=str(HERE),
        tools=[GatedStep()],
    )
    boss = AgentCard(role="Boss", agent_class=BaseAgent, config=config)
    return TeamCard(name="blocking", entry_point="@Boss", members=[MemberSpec(card=boss)])


def test_interrupt_cuts_the_turn_at_a_step_and_a_resume_offers_it_again(
    storage_url: str, new_manager: Callable[[StorageBundle], TeamManager]
) -> None:
    Gate.entered.clear()
    Gate.release.clear()
    storage = open_storage(storage_url)
    manager = new_manager(storage)
    runtime: TeamRuntime = manager.create_team(blocking_card())
    message_id = runtime.send("please block")
    assert Gate.entered.wait(60)  # the turn is inside its tool call
    result: list[Any] = []
    stopping = threading.Thread(
        target=lambda: result.append(manager.interrupt_team(runtime.team_id))
    )
    stopping.start()
    # the cancel is delivered before the tool returns: the next step boundary finds it
    for record in runtime.follow(1, idle_timeout=60):
        msg = record.message
        if isinstance(msg, SentMessage) and type(msg.message).__name__ == "CancelMessage":
            break
    Gate.release.set()
    stopping.join(60)
    assert not stopping.is_alive()
    [cut] = result[0]
    assert cut.id == message_id and getattr(cut, "content", None) == "please block"
    records = storage.events.read(runtime.team_id)
    events = [r.message.event for r in records if isinstance(r.message, EventMessage)]
    assert [e.message_id for e in events if isinstance(e, TurnInterrupted)] == [message_id]
    answers = [
        r.message.message
        for r in records
        if isinstance(r.message, SentMessage) and r.message.recipient.name == "@Human"  # type: ignore[union-attr]
    ]
    assert answers == []  # cut, not answered: nobody was told a cancellation they did not ask
    assert storage.teams.get(runtime.team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]

    resumed = manager.resume_team(runtime.team_id)
    assert [m.id for m in resumed.interrupted] == [message_id]
    resumed.retry_interrupted()  # the gate is open now: the turn runs to its end
    assert final_answer(resumed) == "[scripted] done: block"
    manager.stop_team(runtime.team_id)
    plan = plan_restore(storage.events.read(runtime.team_id))
    assert plan.interrupted == []  # retried: no longer interrupted


def test_the_interrupts_cancelled_call_comes_once_every_turn_would_be_cut_at_its_next_step(
    storage_url: str, new_manager: Callable[[StorageBundle], TeamManager]
) -> None:
    """``interrupt_team(cancelled=)`` is called once every member has its cancel (the CLI
    says "cancelling the turns" then): a tool call let go from that call returns into a
    turn that is cut at its next step, never answered, however late the call ran."""
    Gate.entered.clear()
    Gate.release.clear()
    storage = open_storage(storage_url)
    manager = new_manager(storage)
    runtime: TeamRuntime = manager.create_team(blocking_card())
    message_id = runtime.send("please block")
    assert Gate.entered.wait(60)  # the turn is inside its tool call
    calls: list[bool] = []

    def cancelled() -> None:
        calls.append(runtime.is_running())  # before the wait for the stop
        Gate.release.set()

    cut = manager.interrupt_team(runtime.team_id, grace_timeout=60, cancelled=cancelled)
    assert calls == [True]
    assert [m.id for m in cut] == [message_id]
    answers = [
        r.message
        for r in storage.events.read(runtime.team_id)
        if isinstance(r.message, SentMessage) and r.message.recipient.name == "@Human"  # type: ignore[union-attr]
    ]
    assert answers == []


def test_a_cancelled_call_that_fails_still_leaves_the_team_stopped(
    storage_url: str, new_manager: Callable[[StorageBundle], TeamManager]
) -> None:
    """The members are closed to new turns once told: whatever the caller's call does
    (its output's pipe broken, say), the team is stopped, its failure raised after."""
    storage = open_storage(storage_url)
    manager = new_manager(storage)
    runtime: TeamRuntime = manager.create_team(blocking_card())

    def cancelled() -> None:
        raise BrokenPipeError("the output's reader went")

    with pytest.raises(BrokenPipeError):
        manager.interrupt_team(runtime.team_id, grace_timeout=60, cancelled=cancelled)
    assert storage.teams.get(runtime.team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]
    assert not runtime.is_running()
