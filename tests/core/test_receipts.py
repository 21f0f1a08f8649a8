"""Held receipts: in a deferred channel (every subscriber takes batches, as an event store
does) a member holds the receipt of the message it handles, and a turn that ends before
anything releases it is one ``HANDLED`` record — while every reader still sees a receipt
then a completion, with their own times, and a turn that runs is seen as received.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    Message,
    Orchestrator,
    ProcessedMessage,
    ReceivedMessage,
    ResultMessage,
    SentMessage,
    TelemetryBatch,
    UserMessage,
)
from akgentic.core._telemetry import (
    KIND_HANDLED,
    KIND_PROCESSED,
    KIND_RECEIVED,
    KIND_SENT,
    TeamChannel,
)
from akgentic.core.address import ActorAddressProxy

from .conftest import BatchedSubscriber, Recorder, hand_on

GATES: dict[str, threading.Event] = {}


class Quiet(Akgent[BaseConfig, BaseState]):
    """Handles a message without reporting anything else: a receipt that stays held."""

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        gate = GATES.get(msg.content)
        if gate is not None:
            assert gate.wait(60)


class Replier(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        assert sender is not None
        self.send(sender, ResultMessage(content=msg.content))


class Messages(BatchedSubscriber):
    """A batched subscriber that keeps every record's messages (``TelemetryBatch.messages``)
    and the raw kinds, and lets a test wait on them."""

    batched = True

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.messages: list[Message] = []
        self.cond = threading.Condition()

    def on_message(self, msg: Message) -> None:  # pragma: no cover - never called
        raise AssertionError("a batched subscriber gets no message one by one")

    def on_batch(self, batch: TelemetryBatch) -> None:
        with self.cond:
            self.kinds.extend(batch.kinds)
            self.messages.extend(batch.messages())
            self.cond.notify_all()

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> None:
        with self.cond:
            assert self.cond.wait_for(predicate, timeout), "not within the timeout"

    def about(self, message_id: UUID) -> list[type[Message]]:
        """The kinds of telemetry message about ``message_id``, in order."""
        with self.cond:
            return [
                type(m)
                for m in self.messages
                if (isinstance(m, SentMessage) and m.message.id == message_id)
                or (
                    isinstance(m, ReceivedMessage | ProcessedMessage) and m.message_id == message_id
                )
            ]


def deferred_team(system: ActorSystem, member: type[Akgent[Any, Any]]) -> tuple[Any, Any, Messages]:
    orchestrator = system.createActor(Orchestrator)
    taker = Messages()
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(taker)
    worker = system.createActor(
        member, config=BaseConfig(name="@Worker"), team_id=orchestrator.team_id
    )
    return orchestrator, worker, taker


def test_a_quiet_turn_reads_as_its_receipt_then_its_completion_each_at_its_time(
    system: ActorSystem,
) -> None:
    orchestrator, worker, taker = deferred_team(system, Quiet)
    message = UserMessage(content="hello")
    system.tell(worker, message)
    hand_on(system, orchestrator, worker)
    # one record — unless the clock came by mid-turn (a machine busy enough to pause the
    # member's thread for DEFER_DELAY): then the two, apart (the channel tests below hold
    # the one record where no clock can come)
    assert KIND_HANDLED in taker.kinds or KIND_PROCESSED in taker.kinds
    assert taker.about(message.id) == [SentMessage, ReceivedMessage, ProcessedMessage]
    received, processed = (
        m
        for m in taker.messages
        if isinstance(m, ReceivedMessage | ProcessedMessage) and m.message_id == message.id
    )
    assert received.timestamp <= processed.timestamp  # each its own time
    assert received.sender is not None and received.sender.name == "@Worker"
    assert processed.sender == received.sender


def test_a_turn_that_runs_is_seen_received_while_it_runs(system: ActorSystem) -> None:
    """The clock releases a held receipt within DEFER_DELAY: a client sees the turn
    begin, and a crash mid-turn leaves it received (a resume lists it as interrupted)."""
    _, worker, taker = deferred_team(system, Quiet)
    GATES["slow"] = gate = threading.Event()
    message = UserMessage(content="slow")
    try:
        system.tell(worker, message)
        taker.wait_for(lambda: ReceivedMessage in taker.about(message.id))
        assert ProcessedMessage not in taker.about(message.id)  # it runs still
    finally:
        gate.set()
    taker.wait_for(lambda: ProcessedMessage in taker.about(message.id))
    assert taker.about(message.id) == [SentMessage, ReceivedMessage, ProcessedMessage]
    assert KIND_RECEIVED in taker.kinds and KIND_PROCESSED in taker.kinds  # apart


def test_a_turn_that_sends_has_its_receipt_before_its_sends(system: ActorSystem) -> None:
    orchestrator, worker, taker = deferred_team(system, Replier)
    reply = system.ask(worker, UserMessage(content="ping"), timeout=30)
    assert isinstance(reply, ResultMessage)
    hand_on(system, orchestrator, worker)
    order = [
        (type(m).__name__, m.message.id if isinstance(m, SentMessage) else m.message_id)
        for m in taker.messages
        if isinstance(m, SentMessage | ReceivedMessage | ProcessedMessage)
    ]
    asked = next(i for i, (_, mid) in enumerate(order) if mid == reply.parent_id)
    names = [name for name, _ in order[asked:]]
    assert names == [
        "SentMessage",  # the question
        "ReceivedMessage",  # the worker took it...
        "SentMessage",  # ...then replied (never before its receipt)
        "ProcessedMessage",
    ]


def test_a_subscriber_that_wants_every_record_releases_a_held_receipt_at_once(
    system: ActorSystem,
) -> None:
    orchestrator, worker, taker = deferred_team(system, Quiet)
    GATES["held"] = gate = threading.Event()
    message = UserMessage(content="held")
    eager = Recorder()
    try:
        system.tell(worker, message)
        actor: Any = system.get_actor(worker)
        channel: TeamChannel = actor._channel
        # held, or already released by the clock: either way it is on its way
        with taker.cond:
            taker.cond.wait_for(lambda: bool(channel._held) or taker.about(message.id), 30)
        system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(eager)
        assert not channel._held  # released by the subscription, not by the turn's end
    finally:
        gate.set()
    eager.wait_for_type(ProcessedMessage, where=lambda m: m.message_id == message.id)
    assert taker.about(message.id) == [SentMessage, ReceivedMessage, ProcessedMessage]


def deferred_without_the_clock(channel: TeamChannel) -> TeamChannel:
    """``channel`` made deferred (receipts are held), with the process's clock kept away
    (as if it were already asked): a test that plays the releases itself must not meet
    the real clock's, which comes by after DEFER_DELAY — sooner than a busy machine runs
    the test's next lines."""
    channel.set_eager(False, deferred=True)
    channel._scheduled = True
    return channel


def test_a_quiet_turn_is_one_handled_record_with_both_its_times() -> None:
    channel = deferred_without_the_clock(TeamChannel())
    member, message_id = ActorAddressProxy(agent_id=uuid4(), name="@M"), uuid4()
    channel.receive(member, message_id)
    channel.processed(member, message_id)
    [(kind, processed, actor, named, received)] = list(channel.take())
    assert (kind, actor, named) == (KIND_HANDLED, member, message_id)
    assert isinstance(received, float) and received <= processed


def test_a_release_racing_a_turns_end_never_puts_its_completion_before_its_receipt() -> None:
    """Thousands of turns on one thread while another releases held receipts as fast as
    it can (as the clock and a subscription do): each message's receipt is queued before
    its completion, exactly once, and each turn ends as HANDLED or as the two apart."""
    channel = TeamChannel()
    channel.set_eager(False, deferred=True)
    member = ActorAddressProxy(agent_id=uuid4(), name="@Busy")
    done = threading.Event()

    def release() -> None:
        while not done.is_set():
            channel.release_held()

    releaser = threading.Thread(target=release)
    releaser.start()
    ids = [uuid4() for _ in range(3_000)]
    try:
        for message_id in ids:
            channel.receive(member, message_id)
            channel.processed(member, message_id)
    finally:
        done.set()
        releaser.join(30)
    records = list(channel.take())
    seen: dict[UUID, list[int]] = {}
    for kind, _, actor, message_id, _ in records:
        assert actor is member and kind in (KIND_RECEIVED, KIND_PROCESSED, KIND_HANDLED)
        seen.setdefault(message_id, []).append(kind)
    assert list(seen) == ids  # in order of the turns
    for kinds in seen.values():
        assert kinds in ([KIND_HANDLED], [KIND_RECEIVED, KIND_PROCESSED])
    assert not channel._held


def test_a_send_the_member_reports_itself_goes_after_its_own_receipt_not_others() -> None:
    channel = deferred_without_the_clock(TeamChannel())
    quiet, busy = (ActorAddressProxy(agent_id=uuid4(), name=n) for n in ("@Quiet", "@Busy"))
    first, second, sent = uuid4(), uuid4(), UserMessage(content="x")
    channel.receive(quiet, first)
    channel.receive(busy, second)
    channel.emit(KIND_SENT, busy, sent, quiet)  # busy's own receipt first; quiet's held
    channel.processed(quiet, first)
    channel.processed(busy, second)
    kinds = [(kind, actor.name) for kind, _, actor, _, _ in channel.take()]
    assert kinds == [
        (KIND_RECEIVED, "@Busy"),
        (KIND_SENT, "@Busy"),
        (KIND_HANDLED, "@Quiet"),
        (KIND_PROCESSED, "@Busy"),
    ]


def drained(channel: TeamChannel) -> list[int]:
    """The kinds queued, taken off the queue (as the orchestrator's drain does)."""
    queue = channel.take()
    kinds = [record[0] for record in queue]
    queue.clear()
    return kinds


def test_without_a_deferred_subscriber_receipts_are_queued_at_once() -> None:
    for eager in (True, False):  # a subscriber wanting every record; nobody
        channel = TeamChannel()
        channel.set_eager(eager)
        member = ActorAddressProxy(agent_id=uuid4(), name="@M")
        message_id = uuid4()
        channel.receive(member, message_id)
        assert drained(channel) == [KIND_RECEIVED]
        channel.processed(member, message_id)
        assert drained(channel) == [KIND_PROCESSED]


class SpyLock:
    """The channel's release lock, telling which threads asked for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.askers: list[str] = []
        self.cond = threading.Condition()

    def __enter__(self) -> None:
        with self.cond:
            self.askers.append(threading.current_thread().name)
            self.cond.notify_all()
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


@pytest.mark.parametrize("what", ["a send", "a turn inside the turn"])
def test_a_member_whose_receipt_a_release_is_queueing_waits_for_it(what: str) -> None:
    """A release (the clock's) has taken the member's held receipt and not queued it yet;
    the member then reports a send, or takes another message inside its turn: it waits
    for the release (it asks for the release's lock) instead of going first."""
    taken, go_on = threading.Event(), threading.Event()

    class Paused(TeamChannel):
        __slots__ = ()

        def _put(self, record: Any) -> None:
            if threading.current_thread().name == "clock" and record[0] == KIND_RECEIVED:
                taken.set()  # popped, not queued: the member acts now
                assert go_on.wait(30)
            super()._put(record)

    channel = deferred_without_the_clock(Paused())
    spy = SpyLock()
    channel._held_lock = spy  # type: ignore[assignment]
    member, peer = (ActorAddressProxy(agent_id=uuid4(), name=n) for n in ("@M", "@P"))
    turn, inner = uuid4(), uuid4()
    channel.receive(member, turn)
    clock = threading.Thread(target=channel.release_held, name="clock")
    clock.start()
    assert taken.wait(30)

    def act() -> None:
        if what == "a send":
            channel.emit(KIND_SENT, member, UserMessage(content="x"), peer)
        else:
            channel.receive(member, inner)

    member_thread = threading.Thread(target=act, name="member")
    member_thread.start()
    with spy.cond:  # the member asks for the release's lock: it waits for it
        assert spy.cond.wait_for(lambda: "member" in spy.askers, 30)
    go_on.set()
    clock.join(30)
    member_thread.join(30)
    queued = [(kind, message_id) for kind, _, _, message_id, _ in channel.take()]
    assert queued[0] == (KIND_RECEIVED, turn)  # the turn's receipt first
    assert len(queued) == 1 + (what == "a send")
