"""Orchestrator: roster, history, subscribers, tool actors, profiles, restore, teardown."""

from __future__ import annotations

import os
import select
import signal
import threading
from typing import Any, ClassVar

import pytest

from akgentic.core import (
    ActorAddress,
    ActorAddressImpl,
    ActorStartError,
    ActorSystem,
    AddressError,
    AgentCard,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    Message,
    Orchestrator,
    OrchestratorConfig,
    ProcessedMessage,
    ReceivedMessage,
    ResultMessage,
    SentMessage,
    StateChangedMessage,
    StopMessage,
    TeamStoppingEvent,
    TelemetryBatch,
    TelemetryRecord,
    UserMessage,
    UserProxy,
    is_tool_actor,
)
from akgentic.core.address import ActorAddressProxy

from .conftest import BatchedSubscriber, Recorder, Team, hand_on, make_team


class Member(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        assert sender is not None
        self.send(sender, ResultMessage(content=msg.content))


class ToolActor(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.calls = 0

    def call(self) -> int:
        self.calls += 1
        return self.calls


def _walk_addresses(value: Any) -> list[ActorAddress]:
    found: list[ActorAddress] = []
    if isinstance(value, ActorAddress):
        found.append(value)
    elif isinstance(value, Message):
        for name in type(value).model_fields:
            found.extend(_walk_addresses(getattr(value, name)))
    elif isinstance(value, list | tuple):
        for item in value:
            found.extend(_walk_addresses(item))
    return found


def test_subscribers_get_snapshots_never_live_addresses(system: ActorSystem, team: Team) -> None:
    member = system.createActor(Member, team_id=team.team_id)
    system.ask(member, UserMessage(content="hi"), timeout=30)
    team.recorder.wait_for_type(SentMessage, 2)
    addresses = [a for m in team.recorder.messages for a in _walk_addresses(m)]
    assert addresses and all(isinstance(a, ActorAddressProxy) for a in addresses)
    assert member in addresses


def test_roster_lists_running_members(system: ActorSystem, team: Team) -> None:
    writer = system.createActor(Member, config=BaseConfig(name="@Writer"), team_id=team.team_id)
    reader = system.createActor(Member, config=BaseConfig(name="@Reader"), team_id=team.team_id)
    assert set(team.proxy.get_team()) == {writer, reader}
    assert team.proxy.get_team_member("@Writer") == writer
    system.proxy_tell(writer, Member).stop()
    assert system.wait_stopped(writer, 30)
    team.recorder.wait_for_type(StopMessage)
    assert team.proxy.get_team() == [reader]
    assert team.proxy.get_team_member("@Writer") is None


def test_history_is_a_bounded_window(system: ActorSystem) -> None:
    team = make_team(system, history_window=5)
    member = system.createActor(Member, team_id=team.team_id)
    with system.private() as context:
        for i in range(20):
            context.tell(member, UserMessage(content=str(i)))
        for _ in range(20):
            assert context.listen(30) is not None
    messages = team.proxy.get_messages()
    assert len(messages) == 5
    assert [m.content for m in messages][-1] == "19"  # type: ignore[attr-defined]
    assert len(team.proxy.get_messages(limit=2)) == 2
    assert team.proxy.get_messages(limit=0) == []
    assert len(team.recorder.of_type(SentMessage)) == 40  # the subscriber saw everything


def test_get_children_or_create_is_race_free(system: ActorSystem, team: Team) -> None:
    barrier = threading.Barrier(10)
    results: list[ActorAddress] = []
    lock = threading.Lock()

    def bind() -> None:
        proxy = system.proxy_ask(team.orchestrator, Orchestrator, timeout=30)
        barrier.wait()
        address = proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))
        with lock:
            results.append(address)

    threads = [threading.Thread(target=bind) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 10 and len(set(results)) == 1
    tools = [m for m in team.proxy.get_team() if is_tool_actor(m)]
    assert tools == [results[0]]


def test_get_children_or_create_refuses_bad_requests(system: ActorSystem, team: Team) -> None:
    team.proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))
    with pytest.raises(TypeError, match="#Tool is already a ToolActor, not a Member: one '#'"):
        team.proxy.getChildrenOrCreate(Member, BaseConfig(name="#Tool"))
    with pytest.raises(ActorStartError, match="give one of the two actors another name"):
        team.proxy.getChildrenOrCreate(Member, BaseConfig(name="#Tool"))
    with pytest.raises(ValueError, match="needs a config with a name"):
        team.proxy.getChildrenOrCreate(ToolActor, BaseConfig())


def test_a_stopped_tool_actor_is_recreated(system: ActorSystem, team: Team) -> None:
    first = team.proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))
    system.proxy_tell(first, ToolActor).stop()
    assert system.wait_stopped(first, 30)
    second = team.proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))
    assert second != first and second.is_alive()


def test_profiles(team: Team) -> None:
    writer = AgentCard(role="Writer", description="writes", skills=["prose"], agent_class=Member)
    critic = AgentCard(role="Critic", skills=["prose", "review"], agent_class=Member)
    team.proxy.register_agent_profiles([writer, critic])
    assert {p.role for p in team.proxy.get_agent_catalog()} == {"Writer", "Critic"}
    assert team.proxy.get_agent_profile("Writer") == writer
    assert team.proxy.get_agent_profile("Nobody") is None
    assert {p.role for p in team.proxy.get_profiles_by_skill("review")} == {"Critic"}
    assert writer.get_agent_class() is Member
    with pytest.raises(LookupError, match="no Akgent subclass named 'nowhere.Agent'"):
        AgentCard(role="X", agent_class="nowhere.Agent").get_agent_class()


def test_metadata(team: Team) -> None:
    class Engagement(BaseState):
        fiscal_year: int = 2026

    assert team.proxy.get_metadata() is None
    team.proxy.set_metadata(Engagement())
    assert team.proxy.get_metadata() == Engagement()
    with pytest.raises(TypeError, match="pydantic model"):
        team.proxy.set_metadata("not a model")  # type: ignore[arg-type]


def test_subscribe_refuses_an_object_that_is_not_a_subscriber(team: Team) -> None:
    with pytest.raises(TypeError, match="not an EventSubscriber"):
        team.proxy.subscribe(object())  # type: ignore[arg-type]


def test_a_failing_subscriber_does_not_starve_the_others(system: ActorSystem, team: Team) -> None:
    class Failing(Recorder):
        def on_message(self, msg: Message) -> None:
            raise RuntimeError("subscriber bug")

    team.proxy.subscribe(Failing())
    member = system.createActor(Member, team_id=team.team_id)
    system.ask(member, UserMessage(content="x"), timeout=30)
    team.recorder.wait_for_type(SentMessage, 2)


def test_restore_replays_without_side_effects(system: ActorSystem, team: Team) -> None:
    class Memo(BaseState):
        note: str = ""

    old = UserMessage(content="from the past")
    source = ActorAddressProxy(agent_id=old.id, name="@Past")
    team.proxy.restore_message(SentMessage(message=old, sender=source))
    team.proxy.restore_message(StateChangedMessage(state=Memo(note="n"), sender=source))
    team.proxy.end_restoration()
    assert [c for c in team.recorder.calls if c[0] == "set_restoring"] == [
        ("set_restoring", True),
        ("set_restoring", False),
    ]
    assert team.proxy.get_messages()[-1] == old
    assert team.proxy.get_states()[source.agent_id] == Memo(note="n")
    assert len(team.recorder.of_type(SentMessage)) == 1  # handed on, inside the bracket


def test_the_user_proxy_is_flagged_and_can_reply(system: ActorSystem, team: Team) -> None:
    human = system.createActor(UserProxy, config=BaseConfig(name="@Human"), team_id=team.team_id)
    assert human.is_user_proxy
    system.tell(human, ResultMessage(content="question?"))
    sent = team.recorder.wait_for_type(SentMessage, where=lambda m: m.recipient == human)
    proxy = system.proxy_ask(human, UserProxy, timeout=30)
    proxy.reply(sent[0].message, "answer")
    reply = system.listen(30)
    assert isinstance(reply, UserMessage) and reply.content == "answer"
    assert reply.sender == human


# -- teardown ------------------------------------------------------------------------------

calls_during_stop: list[int] = []


class Caller(Akgent[BaseConfig, BaseState]):
    """On stop, calls the tool actor: it must still be there."""

    def on_start(self) -> None:
        assert self.orchestrator is not None
        orchestrator = self.proxy_ask(self.orchestrator, Orchestrator, timeout=30)
        self.tool = orchestrator.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))

    def on_stop(self) -> None:
        calls_during_stop.append(self.proxy_ask(self.tool, ToolActor, timeout=30).call())


def test_tool_actors_outlive_the_members_that_call_them(system: ActorSystem, team: Team) -> None:
    calls_during_stop.clear()
    callers = [
        system.createActor(Caller, config=BaseConfig(name=f"@C{i}"), team_id=team.team_id)
        for i in range(3)
    ]
    tool = team.proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))
    system.proxy_tell(team.orchestrator, Orchestrator).stop(5.0)
    assert system.wait_stopped(team.orchestrator, 10)
    assert sorted(calls_during_stop) == [1, 2, 3]
    stops = [m.sender for m in team.recorder.of_type(StopMessage) if m.sender]
    names = [s.name for s in stops]
    assert names.index("#Tool") > max(names.index(c.name) for c in callers)
    assert names[-1] == "@Orchestrator"
    assert not tool.is_alive()
    assert team.recorder.of_type(EventMessage)[0].event == TeamStoppingEvent(
        team_id=team.team_id, grace_timeout=5.0
    )
    kinds = [c[0] for c in team.recorder.calls]
    assert kinds == ["on_stop_request", "on_stop"]


class Stuck(Akgent[BaseConfig, BaseState]):
    def hold(self, gate: threading.Event) -> None:
        gate.wait(10)


def test_the_backstop_stops_tool_actors_when_grace_runs_out(
    system: ActorSystem, team: Team
) -> None:
    stuck = system.createActor(Stuck, config=BaseConfig(name="@Stuck"), team_id=team.team_id)
    tool = team.proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="#Tool"))
    gate = threading.Event()
    system.proxy_tell(stuck, Stuck).hold(gate)
    system.proxy_tell(team.orchestrator, Orchestrator).stop(0.2)
    try:
        assert system.wait_stopped(team.orchestrator, 10)
        assert not tool.is_alive()
        assert stuck.is_alive()  # still inside its handler: threads cannot be killed
    finally:
        gate.set()
    assert system.wait_stopped(stuck, 30)


def test_stop_via_stop_recursively_message(system: ActorSystem, team: Team) -> None:
    from akgentic.core import StopRecursively

    member = system.createActor(Member, team_id=team.team_id)
    system.tell(team.orchestrator, StopRecursively())
    assert system.wait_stopped(team.orchestrator, 10)
    assert not member.is_alive()
    assert isinstance(team.orchestrator, ActorAddressImpl)


def test_subscribers_with_flush_are_told_after_each_batch(system: ActorSystem, team: Team) -> None:
    class Batching(Recorder):
        def __init__(self) -> None:
            super().__init__()
            self.buffer: list[Message] = []
            self.batches: list[list[Message]] = []

        def on_message(self, msg: Message) -> None:
            self.buffer.append(msg)
            super().on_message(msg)

        def flush(self) -> None:
            self.batches.append(self.buffer)
            self.buffer = []

    batching = Batching()
    team.proxy.subscribe(batching)
    member = system.createActor(Member, team_id=team.team_id)
    system.ask(member, UserMessage(content="x"), timeout=30)
    hand_on(system, team.orchestrator, member)  # its receipt of "x" included
    assert batching.buffer == []
    flat = [m for batch in batching.batches for m in batch]
    assert flat == batching.messages and len(flat) >= 4


class Sink(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.received: list[str] = []

    def take(self, value: str) -> None:
        self.received.append(value)


finished: list[str] = []


class WorkerConfig(BaseConfig):
    sink: ActorAddress


class Worker(Akgent[WorkerConfig, BaseState]):
    """A transient worker the orchestrator created: one job, delivered to its sink (not its
    parent), then it stops."""

    transient = True

    def reports_to(self) -> list[ActorAddress]:
        return [*super().reports_to(), self.config.sink]

    def work(self, gate: threading.Event) -> None:
        gate.wait(60)
        self.proxy_tell(self.config.sink, Sink).take("result")
        finished.append("result")
        self.stop()


def test_a_tool_actor_stops_after_the_workers_reporting_to_it_and_only_those(
    system: ActorSystem, team: Team
) -> None:
    finished.clear()
    sink = team.proxy.getChildrenOrCreate(Sink, BaseConfig(name="#Sink"))
    other = team.proxy.getChildrenOrCreate(Sink, BaseConfig(name="#Other"))
    sink_actor = system.get_actor(sink)
    worker = team.proxy.getChildrenOrCreate(Worker, WorkerConfig(name="#defer-job", sink=sink))
    gate = threading.Event()
    system.proxy_tell(worker, Worker).work(gate)
    system.proxy_tell(team.orchestrator, Orchestrator).stop(60.0)
    # a tool actor the worker does not report to is released while the worker still works
    assert system.wait_stopped(other, 30)
    assert finished == [] and sink.is_alive()  # the one it reports to waits for it
    gate.set()
    assert system.wait_stopped(team.orchestrator, 30)
    assert sink_actor.received == ["result"]  # type: ignore[attr-defined]


class Leaver(Akgent[BaseConfig, BaseState]):
    """A tool actor whose stop can only finish once the other one is stopping too."""

    barrier: ClassVar[threading.Barrier]
    met: ClassVar[list[str]] = []

    def on_stop(self) -> None:
        Leaver.barrier.wait(timeout=30)
        Leaver.met.append(self.myAddress.name)


def test_a_tool_actor_name_without_the_prefix_is_refused_with_the_fix(team: Team) -> None:
    with pytest.raises(
        ValueError, match=r"^tool actor name 'Tally' must start with '#': name it '#Tally'"
    ):
        team.proxy.getChildrenOrCreate(ToolActor, BaseConfig(name="Tally"))
    assert [a.name for a in team.proxy.get_team()] == []  # nothing was created


def test_tool_actors_stop_in_parallel(system: ActorSystem, team: Team) -> None:
    Leaver.barrier = threading.Barrier(2)
    Leaver.met = []
    for name in ("#Left", "#Right"):
        team.proxy.getChildrenOrCreate(Leaver, BaseConfig(name=name))
    system.proxy_tell(team.orchestrator, Orchestrator).stop(60.0)
    assert system.wait_stopped(team.orchestrator, 60)
    assert sorted(Leaver.met) == ["#Left", "#Right"]  # neither waited for the other's stop


def test_reserved_names_are_unique_under_concurrency(system: ActorSystem, team: Team) -> None:
    system.createActor(Member, config=BaseConfig(name="@Helper"), team_id=team.team_id)
    barrier = threading.Barrier(8)
    names: list[str] = []
    lock = threading.Lock()

    def reserve() -> None:
        proxy = system.proxy_ask(team.orchestrator, Orchestrator, timeout=30)
        barrier.wait()
        name = proxy.reserve_name("@Helper")
        with lock:
            names.append(name)

    threads = [threading.Thread(target=reserve) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(names) == sorted(f"@Helper-{i}" for i in range(2, 10))
    started = system.createActor(Member, config=BaseConfig(name=names[0]), team_id=team.team_id)
    assert team.proxy.get_team_member(names[0]) == started
    assert team.proxy.reserve_name("@Other") == "@Other"


def test_a_reservation_with_a_bound_takes_a_place_until_its_member_starts_or_is_released(
    system: ActorSystem, team: Team
) -> None:
    """``reserve_name(base, max_members)`` counts the regular members and the names
    reserved and not started yet (not tool actors), and answers None when no place is left."""
    system.createActor(Member, config=BaseConfig(name="@Lead"), team_id=team.team_id)
    team.proxy.getChildrenOrCreate(Member, BaseConfig(name="#Tool"))  # takes no place
    assert team.proxy.reserve_name("@Helper", 3) == "@Helper"
    assert team.proxy.reserve_name("@Helper", 3) == "@Helper-2"
    assert team.proxy.reserve_name("@Helper", 3) is None  # @Lead and two reserved
    system.createActor(Member, config=BaseConfig(name="@Helper"), team_id=team.team_id)
    assert team.proxy.reserve_name("@Helper", 3) is None  # started: one place, not two
    team.proxy.release_name("@Helper-2")  # its creation failed: its place is free
    assert team.proxy.reserve_name("@Helper", 3) == "@Helper-2"
    assert team.proxy.reserve_name("@Helper") == "@Helper-3"  # no bound: always a name


def test_without_subscribers_records_wait_in_bounded_batches_and_queries_see_them(
    system: ActorSystem,
) -> None:
    from akgentic.core._telemetry import LAZY_BATCH

    orchestrator = system.createActor(Orchestrator)
    member = system.createActor(Member, team_id=orchestrator.team_id)
    count = 10 * LAZY_BATCH  # four records each: two sends, a receipt, a completion
    with system.private() as context:
        for i in range(count):
            context.tell(member, UserMessage(content=str(i)))
        for _ in range(count):
            assert context.listen(30) is not None
    actor: Any = system.get_actor(orchestrator)
    assert len(actor._channel._queue) < count  # drained by the batch: never the history
    proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=30)
    last = proxy.get_messages(limit=1)[0]
    assert isinstance(last, ResultMessage) and last.content == str(count - 1)
    assert proxy.get_team() == [member]


def test_an_orchestrator_accepts_a_plain_base_config(system: ActorSystem) -> None:
    """As code written for the published framework creates one: the fields it sets are
    kept, the orchestrator's own take their defaults, and the team works."""
    team = system.createActor(
        Orchestrator, config=BaseConfig(name="@Orchestrator", role="Orchestrator")
    )
    member = system.createActor(Member, config=BaseConfig(name="@Member"), team_id=team.team_id)
    assert system.ask(member, UserMessage(content="hi"), timeout=10).content == "hi"
    config = system.proxy_ask(team, Orchestrator).config
    assert type(config) is OrchestratorConfig
    assert (config.name, config.role, config.history_window) == (
        "@Orchestrator",
        "Orchestrator",
        OrchestratorConfig().history_window,
    )
    assert [a.name for a in system.proxy_ask(team, Orchestrator).get_team()] == ["@Member"]
    renamed = system.createActor(Orchestrator, config=BaseConfig(name="@Boss"))
    assert system.proxy_ask(renamed, Orchestrator).config.name == "@Boss"


def test_a_config_of_an_unrelated_class_is_still_refused(system: ActorSystem) -> None:
    class OtherConfig(BaseConfig):
        colour: str = "red"

    with pytest.raises(TypeError, match="Orchestrator is configured by OrchestratorConfig"):
        system.createActor(Orchestrator, config=OtherConfig())


def test_a_subscriber_with_on_record_reads_receipts_without_any_message_built(
    system: ActorSystem, team: Team
) -> None:
    class Lazy(Recorder):
        def __init__(self) -> None:
            super().__init__()
            self.receipts: list[tuple[Any, ...]] = []

        def on_record(self, record: TelemetryRecord) -> None:
            receipt = record.receipt
            if receipt is None:
                assert record.message() is record.message()  # built once
                self.on_message(record.message())
            else:
                self.receipts.append(receipt)

    lazy, eager = Lazy(), Recorder()
    team.proxy.subscribe(lazy)
    team.proxy.subscribe(eager)
    member = system.createActor(Member, team_id=team.team_id)
    asked = UserMessage(content="x")
    system.ask(member, asked, timeout=30)
    hand_on(system, team.orchestrator, member)  # the receipts, "processed" included
    kinds = [(cls, mid) for cls, mid, _, _ in lazy.receipts]
    assert kinds == [(ReceivedMessage, asked.id), (ProcessedMessage, asked.id)]
    who = lazy.receipts[0][2]
    assert isinstance(who, ActorAddressProxy) and who.agent_id == member.agent_id
    # the subscriber without on_record gets the same receipts as messages
    built = [(type(m), m.message_id) for m in eager.of_type(ReceivedMessage | ProcessedMessage)]  # type: ignore[arg-type]
    assert built == kinds
    assert not lazy.of_type(ReceivedMessage) and lazy.of_type(SentMessage)


def test_a_long_drain_hands_its_records_on_in_bounded_batches(system: ActorSystem) -> None:
    """A flood piles records up while a subscriber works: the drain that takes them tells
    its subscribers to flush every FLUSH_EVERY records, not once at the end, so an event
    store can write while the team runs — and nothing is lost or reordered."""
    from akgentic.core.orchestrator import FLUSH_EVERY

    gate = threading.Event()
    first = threading.Event()

    class Gated(Recorder):
        def __init__(self) -> None:
            super().__init__()
            self.pending = 0
            self.batches: list[int] = []

        def on_message(self, msg: Message) -> None:
            first.set()
            gate.wait(30)  # the orchestrator's thread stands still: the queue fills
            self.pending += 1
            super().on_message(msg)

        def flush(self) -> None:
            self.batches.append(self.pending)
            self.pending = 0

    orchestrator = system.createActor(Orchestrator)
    gated = Gated()
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(gated)
    member = system.createActor(Member, team_id=orchestrator.team_id)
    count = 3 * FLUSH_EVERY  # four records each
    with system.private() as context:
        context.tell(member, UserMessage(content="start"))
        assert first.wait(30)
        for i in range(count):
            context.tell(member, UserMessage(content=str(i)))
        for _ in range(count + 1):
            assert context.listen(30) is not None
    gate.set()
    hand_on(system, orchestrator, member)  # every record handed on, the last receipt too
    assert gated.pending == 0
    assert max(gated.batches) <= FLUSH_EVERY
    assert sum(gated.batches) == len(gated.messages) >= 4 * count
    results = [
        m.message.content
        for m in gated.messages
        if isinstance(m, SentMessage) and isinstance(m.message, ResultMessage)
    ]
    assert results == ["start", *(str(i) for i in range(count))]


class BatchTaker(BatchedSubscriber):
    """A batched subscriber (as an event store is): takes runs of raw records."""

    batched = True

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.senders: list[Any] = []
        self.reports: list[Message] = []
        self.batches = 0
        self.cond = threading.Condition()

    def on_message(self, msg: Message) -> None:  # pragma: no cover - never called
        raise AssertionError("a subscriber with on_batch gets no message one by one")

    def on_batch(self, batch: TelemetryBatch) -> None:
        with self.cond:
            self.batches += 1
            self.kinds_agree = getattr(self, "kinds_agree", True) and batch.kinds == bytes(
                record[0] for record in batch.records
            )
            for index, (kind, _, actor, _, _) in enumerate(batch.records):
                self.kinds.append(kind)
                self.senders.append(batch.snapshot(actor))
                if kind == TelemetryBatch.REPORT:
                    self.reports.append(batch.message(index))
            self.cond.notify_all()


def test_a_batched_subscriber_gets_raw_runs_of_records_in_order(system: ActorSystem) -> None:
    """on_batch replaces the per-record calls: the same records, in the same order as a
    per-message subscriber sees them, with snapshots and built reports on demand."""
    orchestrator = system.createActor(Orchestrator)
    taker, eager = BatchTaker(), Recorder()
    proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=30)
    proxy.subscribe(taker)
    proxy.subscribe(eager)
    member = system.createActor(Member, team_id=orchestrator.team_id)
    system.ask(member, UserMessage(content="x"), timeout=30)
    hand_on(system, orchestrator, member)
    kind_of = {
        SentMessage: TelemetryBatch.SENT,
        ReceivedMessage: TelemetryBatch.RECEIVED,
        ProcessedMessage: TelemetryBatch.PROCESSED,
    }
    expected = [kind_of.get(type(m), TelemetryBatch.REPORT) for m in eager.messages]
    assert taker.kinds == expected
    assert taker.kinds_agree  # batch.kinds: a byte per record, its kind
    assert TelemetryBatch.SENT in taker.kinds and TelemetryBatch.PROCESSED in taker.kinds
    assert all(isinstance(s, ActorAddressProxy) for s in taker.senders)
    assert [type(m) for m in taker.reports] == [
        type(m) for m in eager.messages if type(m) not in kind_of
    ]


def test_with_only_batched_subscribers_records_still_arrive_without_a_query(
    system: ActorSystem,
) -> None:
    """Deferred wake-ups: far fewer than a batch of records, no query, no stop — the clock
    wakes the orchestrator for them (within DEFER_DELAY); nothing waits forever."""
    orchestrator = system.createActor(Orchestrator)
    taker = BatchTaker()
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(taker)
    member = system.createActor(Member, team_id=orchestrator.team_id)
    actor: Any = system.get_actor(orchestrator)
    assert actor._channel._deferred and not actor._channel._eager
    for round_ in range(1, 4):  # again after each delivery: the clock is asked anew
        system.ask(member, UserMessage(content=str(round_)), timeout=30)
        with taker.cond:
            assert taker.cond.wait_for(
                lambda n=round_: taker.kinds.count(TelemetryBatch.PROCESSED) >= n, 30
            )


def test_an_eager_subscriber_beside_a_batched_one_keeps_wakeups_per_record(
    system: ActorSystem,
) -> None:
    orchestrator = system.createActor(Orchestrator)
    proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=30)
    actor: Any = system.get_actor(orchestrator)
    taker, eager = BatchTaker(), Recorder()
    proxy.subscribe(taker)
    assert (actor._channel._eager, actor._channel._deferred) == (False, True)
    proxy.subscribe(eager)
    assert (actor._channel._eager, actor._channel._deferred) == (True, False)
    proxy.unsubscribe(eager)
    assert (actor._channel._eager, actor._channel._deferred) == (False, True)
    proxy.unsubscribe(taker)
    assert (actor._channel._eager, actor._channel._deferred) == (False, False)


def test_subscribers_share_one_built_message_per_record(system: ActorSystem) -> None:
    orchestrator = system.createActor(Orchestrator)
    first, second = Recorder(), Recorder()
    proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=30)
    proxy.subscribe(first)
    proxy.subscribe(second)
    member = system.createActor(Member, team_id=orchestrator.team_id)
    system.ask(member, UserMessage(content="x"), timeout=30)
    hand_on(system, orchestrator, member)
    assert len(first.messages) == len(second.messages) > 3
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=True))


def test_a_forked_child_gets_a_clock_of_its_own() -> None:
    """Only the forking thread survives a fork: a child that inherited a running clock
    must start its own, or its deferred channels would never be woken."""
    from akgentic.core._telemetry import CLOCK, TeamChannel

    CLOCK.schedule(TeamChannel())  # the parent's clock thread is running
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a deferred channel's wake-up must come from a new clock
        try:
            woken = threading.Event()

            class Watched(TeamChannel):
                def deadline(self) -> None:
                    woken.set()

            CLOCK.schedule(Watched())
            os.write(write, b"1" if woken.wait(30) else b"0")
        finally:
            os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], 60)
    answer = os.read(read, 1) if ready else b"no answer (the child hung)"
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read)
    assert answer == b"1"


def test_records_waiting_when_a_channel_becomes_deferred_are_not_stranded() -> None:
    """A record queued while nobody listened (no wake-up asked) is still delivered once
    the channel turns deferred: the change of mode asks the clock itself."""
    from akgentic.core._telemetry import TeamChannel

    woken = threading.Event()

    class Watched(TeamChannel):
        def _wake(self) -> None:
            woken.set()

    channel = Watched()
    channel.emit(0, None, "a record")  # lazy: far from a full batch, nothing asked
    assert not woken.is_set()
    channel.set_eager(False, deferred=True)
    assert woken.wait(30)


def test_a_channel_that_fails_its_deadline_does_not_stop_the_clock() -> None:
    from akgentic.core._telemetry import CLOCK, TeamChannel

    woken = threading.Event()

    class Broken(TeamChannel):
        def deadline(self) -> None:
            raise RuntimeError("broken on purpose")

    class Watched(TeamChannel):
        def deadline(self) -> None:
            woken.set()

    CLOCK.schedule(Broken())
    CLOCK.schedule(Watched())
    assert woken.wait(30)
    woken.clear()
    CLOCK.schedule(Watched())  # and it goes on ticking after the failure
    assert woken.wait(30)


def sends_of(team: Team, content: str) -> list[SentMessage]:
    """The sends the team's recorder holds of messages with this ``content``."""
    return [
        m
        for m in team.recorder.messages
        if isinstance(m, SentMessage) and getattr(m.message, "content", None) == content
    ]


class Probe(Akgent[BaseConfig, BaseState]):
    """Takes the probe and signals it has finished with it."""

    handled: ClassVar[threading.Event]

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        if msg.content == "relay":  # from the test: send the probe on to the peer
            self.send(self.peer, UserMessage(content="probe"))
        elif msg.content == "probe":
            Probe.handled.set()

    def set_peer(self, peer: ActorAddress) -> None:
        self.peer = peer


@pytest.mark.parametrize("sender", ["outside", "member"])
def test_a_send_is_in_the_log_before_its_receipt_however_the_threads_interleave(
    system: ActorSystem, team: Team, monkeypatch: pytest.MonkeyPatch, sender: str
) -> None:
    """The sender's thread is held inside the delivery until the recipient has received
    and processed the probe: the send must still come first in the team's log (reported
    after the delivery, the receipt came first whenever the sender was preempted there)."""
    Probe.handled = threading.Event()
    probe = system.createActor(Probe, config=BaseConfig(name="@Probe"), team_id=team.team_id)
    relay = system.createActor(Probe, config=BaseConfig(name="@Relay"), team_id=team.team_id)
    system.proxy_ask(relay, Probe, timeout=30).set_peer(probe)
    real = ActorAddressImpl.deliver

    def deliver_then_wait(address: ActorAddressImpl, msg: Any) -> None:
        real(address, msg)
        if isinstance(msg, UserMessage) and msg.content == "probe":
            assert Probe.handled.wait(30), "the probe was never handled"

    monkeypatch.setattr(ActorAddressImpl, "deliver", deliver_then_wait)
    if sender == "outside":
        system.tell(probe, UserMessage(content="probe"))
    else:
        system.tell(relay, UserMessage(content="relay"))
    assert Probe.handled.wait(30)
    hand_on(system, team.orchestrator, probe, relay)
    probe_ids = {m.message.id for m in sends_of(team, "probe")}
    assert len(probe_ids) == 1
    steps = [
        type(m)
        for m in team.recorder.messages
        if (isinstance(m, SentMessage) and m.message.id in probe_ids)
        or (isinstance(m, ReceivedMessage | ProcessedMessage) and m.message_id in probe_ids)
    ]
    assert steps == [SentMessage, ReceivedMessage, ProcessedMessage]


def test_a_send_to_a_stopped_member_raises_and_is_not_in_the_log(
    system: ActorSystem, team: Team
) -> None:
    gone = system.createActor(Member, config=BaseConfig(name="@Gone"), team_id=team.team_id)
    gone.request_stop()
    assert gone.wait_stopped(30)
    with pytest.raises(AddressError, match="stopped"):
        system.tell(gone, UserMessage(content="late"))
    hand_on(system, team.orchestrator)
    assert not sends_of(team, "late")


def test_a_member_that_stops_between_the_check_and_the_delivery_has_the_send_unreceived(
    system: ActorSystem, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The send is reported before the delivery; when the recipient stops in between, the
    log says sent (never received) and the caller is not told otherwise: the two agree,
    as for a member that stopped with the message in its inbox."""
    gone = system.createActor(Member, config=BaseConfig(name="@Gone"), team_id=team.team_id)
    gone.request_stop()
    assert gone.wait_stopped(30)
    monkeypatch.setattr(ActorAddressImpl, "is_alive", lambda self: True)  # the check passed
    system.tell(gone, UserMessage(content="raced"))  # no AddressError: it is reported
    hand_on(system, team.orchestrator)
    raced = sends_of(team, "raced")
    assert len(raced) == 1
    assert not [
        m
        for m in team.recorder.messages
        if isinstance(m, ReceivedMessage) and m.message_id == raced[0].message.id
    ]
