"""When an exchange is over, on hand-made records (no team needed): the answer, a failed
turn (its own, or one it caused), and what is work still in progress."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from types import SimpleNamespace
from uuid import UUID, uuid4

from rich.console import Console

from akgentic.agent import AgentMessage, TurnInterrupted
from akgentic.agent.turn import TurnEndedEvent
from akgentic.cli.live import LiveView
from akgentic.cli.watch import Watch
from akgentic.core import (
    ActorAddressProxy,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StopMessage,
    UserMessage,
)
from akgentic.storage import EventRecord

TEAM = uuid4()
HUMAN = ActorAddressProxy(agent_id=uuid4(), name="@Human")
BOSS = ActorAddressProxy(agent_id=uuid4(), name="@Boss")
WORKER = ActorAddressProxy(agent_id=uuid4(), name="@Worker")


class Recorded:
    """A TeamHandle whose log is ``messages``; it runs until the test closes the watch."""

    def __init__(self, messages: Sequence[Message]) -> None:
        self.team_id = TEAM
        self.card = SimpleNamespace(human="@Human")  # all a Watch reads of the card
        self.records = [
            EventRecord(team_id=TEAM, seq=n, timestamp=datetime.now(UTC), message=m, raw="{}")
            for n, m in enumerate(messages, 1)
        ]

    def is_running(self) -> bool:
        return True

    def follow(
        self, from_seq: int = 1, *, stop: threading.Event | None = None, **_: object
    ) -> Iterator[EventRecord]:
        yield from self.records[from_seq - 1 :]
        assert stop is not None
        stop.wait(60)


def sent(sender: ActorAddressProxy, to: ActorAddressProxy, message: Message) -> SentMessage:
    message.__dict__["sender"] = sender
    return SentMessage(message=message, recipient=to, sender=sender)


def ask(content: str) -> tuple[UserMessage, SentMessage]:
    message = UserMessage(content=content)
    return message, sent(HUMAN, BOSS, message)


def answer(by: ActorAddressProxy, to: ActorAddressProxy, parent: UUID, text: str) -> SentMessage:
    return sent(by, to, AgentMessage(content=text, type="response", parent_id=parent))


def ended(by: ActorAddressProxy, turn: UUID, error: str | None = None) -> EventMessage:
    outcome = "failed" if error else "completed"
    event = TurnEndedEvent(turn_id=turn, agent=by.name, outcome=outcome, error=error)
    return EventMessage(sender=by, event=event)


def watching(messages: Sequence[Message]) -> Watch:
    console = Console(file=io.StringIO(), width=100)
    view = LiveView(console, human="@Human", known={"@Human", "@Boss", "@Worker"})
    return Watch(Recorded(messages), view, 1).start()  # type: ignore[arg-type]


def test_the_turn_that_sent_the_answer_is_not_work_left() -> None:
    """The answer is recorded before its turn's end: the team is not busy after it."""
    message, asked = ask("hello")
    reply_to = answer(BOSS, HUMAN, message.id, "hi")
    watch = watching([asked, ReceivedMessage(message_id=message.id, sender=BOSS), reply_to])
    try:
        reply = watch.wait_reply(message.id, "@Boss", timeout=60, idle=60)
        assert reply.how == "answer" and reply.message is not None
        assert watch.busy()  # the turn's end is not on the log yet...
        assert not watch.busy(after=reply)  # ...but it is the answer's own turn
    finally:
        watch.close()


def test_a_failed_turn_ends_the_exchange_at_once() -> None:
    message, asked = ask("fail")
    failed = ended(BOSS, message.id, "ScenarioError: no such tool")
    watch = watching([asked, ReceivedMessage(message_id=message.id, sender=BOSS), failed])
    try:
        reply = watch.wait_reply(message.id, "@Boss", timeout=60, idle=600)
        assert (reply.how, reply.sender, reply.failure) == (
            "failed",
            "@Boss",
            "@Boss: ScenarioError: no such tool",
        )
        assert not watch.busy()
    finally:
        watch.close()


def test_a_failed_turn_it_caused_ends_the_exchange_once_nothing_is_left_to_do() -> None:
    message, asked = ask("delegate")
    task = AgentMessage(content="do it", type="request", parent_id=message.id)
    watch = watching(
        [
            asked,
            ReceivedMessage(message_id=message.id, sender=BOSS),
            sent(BOSS, WORKER, task),
            ended(BOSS, message.id),
            ProcessedMessage(message_id=message.id, sender=BOSS),
            ReceivedMessage(message_id=task.id, sender=WORKER),
            ended(WORKER, task.id, "RuntimeError: broken"),
            ProcessedMessage(message_id=task.id, sender=WORKER),
        ]
    )
    try:
        reply = watch.wait_reply(message.id, "@Boss", timeout=60, idle=0)
        assert (reply.how, reply.sender, reply.failure) == (
            "failed",
            "@Worker",
            "@Worker: RuntimeError: broken",
        )
    finally:
        watch.close()


def test_a_message_to_a_member_that_stopped_is_not_work_in_progress() -> None:
    """Recorded for a resume to deliver, it waits: the team is quiet."""
    message, asked = ask("hello")
    late = AgentMessage(content="late", type="response")
    watch = watching(
        [
            asked,
            ReceivedMessage(message_id=message.id, sender=BOSS),
            StopMessage(sender=WORKER),
            sent(BOSS, WORKER, late),
            ended(BOSS, message.id),
            ProcessedMessage(message_id=message.id, sender=BOSS),
        ]
    )
    try:
        assert watch.wait_reply(message.id, "@Boss", timeout=60, idle=0).how == "quiet"
        assert not watch.busy()
    finally:
        watch.close()


def cut_turn(by: ActorAddressProxy, turn: UUID, *, stopping: bool) -> list[Message]:
    """A turn ended "interrupted": by the team's stop (``TurnInterrupted``: a resume lists
    it), or by a cancel (a /stop, the page's button: the team goes on)."""
    event = TurnEndedEvent(turn_id=turn, agent=by.name, outcome="interrupted")
    ended_cut: list[Message] = [EventMessage(sender=by, event=event)]
    if stopping:
        kept = TurnInterrupted(message_id=turn, reason="the team is stopping")
        ended_cut.append(EventMessage(sender=by, event=kept))
    return [*ended_cut, ProcessedMessage(message_id=turn, sender=by)]


def test_only_a_turn_the_stop_cut_is_cut_not_one_a_cancel_cut() -> None:
    """The session lists (and sends to ``--retry-interrupted``) the turns a resume would
    offer: those the team's stop cut, not one a cancel cut while the team went on."""
    for stopping in (False, True):
        message, asked = ask("hello")
        received = ReceivedMessage(message_id=message.id, sender=BOSS)
        messages = [asked, received, *cut_turn(BOSS, message.id, stopping=stopping)]
        watch = watching(messages)
        try:
            watch.catch_up(len(messages), timeout=60)
            assert watch.cut() is stopping
        finally:
            watch.close()


def test_catching_up_past_a_range_record_reads_to_its_end() -> None:
    """A damaged pack (or a gap) is one record for its range: the log read so far reaches
    the range's end, so a catch-up to the log's last number does not wait for ever."""
    _, asked = ask("hello")
    recorded = Recorded([asked])
    damaged = EventRecord(
        team_id=TEAM, seq=2, timestamp=None, message=None, error="damaged", raw="", through=9
    )
    recorded.records.append(damaged)
    console = Console(file=io.StringIO(), width=100)
    view = LiveView(console, human="@Human", known={"@Human", "@Boss", "@Worker"})
    watch = Watch(recorded, view, 1).start()  # type: ignore[arg-type]
    try:
        done = threading.Event()
        catching = threading.Thread(
            target=lambda: (watch.catch_up(9, 600), done.set()), daemon=True
        )
        catching.start()
        assert done.wait(60)  # reached at once: not after the 600 s bound
    finally:
        watch.close()
