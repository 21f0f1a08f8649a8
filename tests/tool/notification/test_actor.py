"""The #NotificationTool singleton: delivery, resume, grace, deltas, and the tick loop."""

from __future__ import annotations

import threading
import weakref
from datetime import timedelta
from typing import Any
from uuid import uuid4

import pykka
import pytest

from akgentic.core import ActorAddress, BaseConfig, StateChangedMessage, UserMessage
from akgentic.core.serialization import deserialize, model_path, serialize
from akgentic.tool.core import fold_deltas
from akgentic.tool.notification import (
    NotificationConfig,
    NotificationDelta,
    NotificationState,
    NotificationTick,
    NotificationTool,
    PendingNotification,
    default_message_class,
    replay_notification_state,
)
from akgentic.tool.notification.actor import _run_ticks

from ..conftest import Team
from .conftest import (
    ClockedNotificationActor,
    Harness,
    ManualClock,
    Owner,
    Reminder,
    bind,
    collected,
    wait_until,
)


def seeded_entry(
    owner: ActorAddress, clock: ManualClock, due_in: float, message_class: str = ""
) -> PendingNotification:
    now = clock.now()
    return PendingNotification(
        id=uuid4().hex[:8],
        owner=owner.snapshot(),
        due_at=now + timedelta(seconds=due_in),
        content=f"due in {due_in}",
        message_class=message_class or model_path(UserMessage),
        created_at=now - timedelta(hours=2),
    )


# -- delivery --------------------------------------------------------------------------------


def test_a_note_is_delivered_to_its_owner_once_due_and_not_before(harness: Harness) -> None:
    alice = harness.owner("@Alice")
    tools = harness.tools(alice)
    reply = tools["notify_me_in"](30, "check the build")
    (entry,) = harness.actor.pending()
    assert entry.id in reply and entry.owner == alice and entry.content == "check the build"
    assert entry.due_at == harness.clock.now() + timedelta(seconds=30)

    harness.clock.advance(29)
    assert harness.actor.deliver_due() == []  # runs on the actor's thread, on its clock
    assert harness.mail("@Alice") == []

    harness.clock.advance(1)  # now due: the tick thread delivers it
    (message,) = harness.wait_mail("@Alice")
    # The default class: the agent layer's AgentMessage once it is loaded, else UserMessage.
    assert isinstance(message, default_message_class())
    assert getattr(message, "content", None) == "check the build"
    assert message.sender is not None and message.sender.name == "#NotificationTool"
    assert harness.actor.pending() == []
    added, delivered = harness.wait_events(2)
    assert added.payload == NotificationDelta(added=[entry])
    assert delivered.payload == NotificationDelta(delivered=[entry.id])
    assert (added.seq, delivered.seq) == (1, 2)


def test_the_configured_message_class_is_what_arrives(harness: Harness) -> None:
    alice = harness.owner("@Alice")
    tools = harness.tools(alice, NotificationTool(message_class=model_path(Reminder)))
    tools["notify_me_in"](0, "now")
    (message,) = harness.wait_mail("@Alice")
    assert type(message) is Reminder and message.content == "now"


def test_due_notes_go_out_oldest_first(quiet: Harness) -> None:
    alice = quiet.owner("@Alice")
    actor = quiet.actor
    late = actor.register(alice, 20, "late", model_path(UserMessage))
    early = actor.register(alice, 10, "early", model_path(UserMessage))
    quiet.clock.advance(60)
    assert actor.deliver_due() == [early.id, late.id]
    assert [m.content for m in quiet.wait_mail("@Alice", 2)] == ["early", "late"]  # type: ignore[attr-defined]


# -- resume ----------------------------------------------------------------------------------


def test_overdue_entries_fire_on_resume_and_the_stream_continues(
    team: Team, clock: ManualClock
) -> None:
    harness = Harness(team, clock, team.orchestrator)  # actor_address set below
    alice = harness.owner("@Alice")
    overdue = seeded_entry(alice, clock, due_in=-3600)  # fell due while the team was stopped
    future = seeded_entry(alice, clock, due_in=+3600)
    seeded = NotificationState(pending=[overdue, future], event_seq=7)
    harness.actor_address = team.system.createActor(
        ClockedNotificationActor,
        config=NotificationConfig(tick_interval_seconds=0.01),
        team_id=team.orchestrator.team_id,
        restoring=True,
        state=seeded,
    )
    (message,) = harness.wait_mail("@Alice")  # on its first ticks, with no clock change
    assert message.content == overdue.content  # type: ignore[attr-defined]
    (event,) = harness.wait_events(1)
    assert event.seq == 8 and event.payload == NotificationDelta(delivered=[overdue.id])
    assert harness.actor.pending() == [future]


def test_a_class_no_longer_registered_degrades_to_user_message(
    quiet: Harness,
) -> None:
    alice = quiet.owner("@Alice")
    actor = quiet.actor
    actor.register(alice, 0, "still arrives", "acme.gone.Reminder")
    assert len(actor.deliver_due()) == 1
    (message,) = quiet.wait_mail("@Alice")
    assert type(message) is UserMessage and message.content == "still arrives"


# -- grace -----------------------------------------------------------------------------------


def test_an_unreachable_owner_is_retried_for_the_grace_then_dropped(
    team: Team, clock: ManualClock
) -> None:
    harness = Harness(
        team, clock, bind(team, tick_interval_seconds=3600, delivery_grace_seconds=30)
    )
    ghost = ActorAddress(agent_id=uuid4(), name="@Gone")  # no such actor is running
    actor = harness.actor
    entry = actor.register(ghost, 5, "for nobody", model_path(UserMessage))
    clock.advance(5)
    assert actor.deliver_due() == []  # first failed attempt: the grace starts now
    clock.advance(29)
    assert actor.deliver_due() == [] and actor.pending() == [entry]
    clock.advance(1)
    assert actor.deliver_due() == [] and actor.pending() == []
    events = harness.wait_events(2)
    assert events[-1].payload == NotificationDelta(dropped=[entry.id])


def test_a_returning_owner_within_the_grace_gets_its_note(quiet: Harness) -> None:
    alice = quiet.owner("@Alice")
    actor = quiet.actor
    entry = actor.register(alice, 1, "after the restart", model_path(UserMessage))
    alice.request_stop()  # type: ignore[attr-defined]
    assert alice.wait_stopped(30)  # type: ignore[attr-defined]
    quiet.clock.advance(1)
    assert actor.deliver_due() == [] and actor.pending() == [entry]  # owner down: kept
    quiet.team.system.createActor(  # restored, under the same agent id
        Owner,
        config=BaseConfig(name="@Alice"),
        team_id=quiet.team.orchestrator.team_id,
        agent_id=alice.agent_id,
    )
    assert actor.deliver_due() == [entry.id]
    assert [m.content for m in quiet.wait_mail("@Alice")] == ["after the restart"]  # type: ignore[attr-defined]


# -- persistence and deltas ------------------------------------------------------------------


def test_replaying_the_deltas_rebuilds_the_final_state_exactly(quiet: Harness) -> None:
    alice, bob = quiet.owner("@Alice"), quiet.owner("@Bob")
    actor = quiet.actor
    path = model_path(UserMessage)
    a1 = actor.register(alice, 10, "a1", path)
    actor.register(alice, 100, "a2", path)
    b1 = actor.register(bob, 50, "b1", path)
    actor.register(bob, 200, "b2", path)
    actor.cancel(bob, b1.id)
    quiet.clock.advance(20)
    assert actor.deliver_due() == [a1.id]
    actor.register(alice, 5, "a3", path)
    actor.deliver_due()  # nothing due: no event

    events = quiet.wait_events(7)  # four adds, a cancel, a delivery, an add
    stored = [deserialize(serialize(e)) for e in events]  # as a late client reads them
    assert [e.seq for e in stored] == [1, 2, 3, 4, 5, 6, 7]
    final = actor.state
    assert replay_notification_state(stored) == final
    assert final.event_seq == 7 and [e.content for e in final.pending] == ["a2", "b2", "a3"]

    def persisted() -> list[Any]:
        return [
            m.state
            for m in quiet.team.recorder.log
            if isinstance(m, StateChangedMessage)
            and m.sender is not None
            and m.sender.name == "#NotificationTool"
        ]

    # persisted as its deltas: one snapshot (at the first change), not one per change
    quiet.team.recorder.wait_for(lambda: len(persisted()) >= 1)
    assert [s.event_seq for s in persisted()] == [1]
    assert fold_deltas(persisted()[-1], stored) == final


# -- the tick loop ---------------------------------------------------------------------------


def test_the_tick_thread_stops_with_the_actor_and_does_not_keep_it_alive(
    team: Team, clock: ManualClock
) -> None:
    address = team.system.createActor(
        ClockedNotificationActor, config=NotificationConfig(tick_interval_seconds=0.01)
    )
    actor = team.system.get_actor(address)
    ref = weakref.ref(actor)
    wait_until(lambda: getattr(ref(), "_tick_thread", None) is not None)
    thread: threading.Thread = actor._tick_thread  # type: ignore[attr-defined]
    assert thread.is_alive() and thread.daemon
    del actor
    address.request_stop()  # type: ignore[attr-defined]
    assert address.wait_stopped(30)  # type: ignore[attr-defined]
    thread.join(30)
    assert not thread.is_alive()
    del address
    wait_until(lambda: collected(ref))


class FakeFuture:
    def __init__(self, timeouts: int, outcome: BaseException | None = None) -> None:
        self.timeouts = timeouts
        self.outcome = outcome
        self.gets = 0

    def get(self, timeout: float | None = None) -> None:
        self.gets += 1
        if self.gets <= self.timeouts:
            raise pykka.Timeout("slow")
        if self.outcome is not None:
            raise self.outcome


class FakeRef:
    """An ActorRef stand-in: hands out scripted futures and records the asks."""

    def __init__(self, *futures: FakeFuture) -> None:
        self.actor_stopped = threading.Event()
        self.futures = list(futures)
        self.asks: list[Any] = []

    def ask(self, message: Any, *, block: bool = True) -> FakeFuture:
        assert block is False
        self.asks.append(message)
        if not self.futures:
            self.actor_stopped.set()
            raise pykka.ActorDeadError("stopped")
        return self.futures.pop(0)


def test_a_slow_actor_is_waited_on_never_flooded() -> None:
    slow = FakeFuture(timeouts=3)
    ref = FakeRef(slow)
    _run_ticks(ref, interval=0.001, timeout=0.001)  # type: ignore[arg-type]
    assert slow.gets == 4  # three timed-out waits on the same tick, then its answer
    assert len(ref.asks) == 2  # one tick outstanding at a time; the second found it dead
    assert all(isinstance(m, NotificationTick) for m in ref.asks)


@pytest.mark.parametrize(
    "future",
    [FakeFuture(timeouts=0, outcome=pykka.ActorDeadError("gone")), FakeFuture(timeouts=1)],
    ids=["dead-while-waiting", "stopped-while-waiting"],
)
def test_the_loop_exits_when_the_actor_stops_mid_tick(future: FakeFuture) -> None:
    ref = FakeRef(future)
    if future.timeouts:
        original = future.get

        def get(timeout: float | None = None) -> None:
            ref.actor_stopped.set()
            original(timeout)

        future.get = get  # type: ignore[method-assign]
    _run_ticks(ref, interval=0.001, timeout=0.001)  # type: ignore[arg-type]
    assert len(ref.asks) == 1


def test_a_failing_tick_does_not_end_the_loop() -> None:
    ref = FakeRef(FakeFuture(timeouts=0, outcome=RuntimeError("boom")))
    _run_ticks(ref, interval=0.001, timeout=0.001)  # type: ignore[arg-type]
    assert len(ref.asks) == 2


def test_a_stopped_ref_is_never_asked() -> None:
    ref = FakeRef()
    ref.actor_stopped.set()
    _run_ticks(ref, interval=0.001, timeout=0.001)  # type: ignore[arg-type]
    assert ref.asks == []
