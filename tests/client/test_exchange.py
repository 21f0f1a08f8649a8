"""The rules of :class:`~akgentic.team.ask.Exchange` on a log written by hand: a turn the
message caused (a delegation) that fails is the exchange's failure, once nothing of it is
left to do — not while the failed turn's message is still being handled."""

from __future__ import annotations

from uuid import UUID, uuid4

import pytest

from akgentic.agent import AgentMessage
from akgentic.agent.turn import TurnEndedEvent, TurnStartedEvent
from akgentic.client import NoReplyError, TurnFailedError
from akgentic.core import (
    ActorAddress,
    EventMessage,
    Message,
    ProcessedMessage,
    SentMessage,
    UserMessage,
)
from akgentic.storage import EventRecord
from akgentic.team.ask import Exchange

TEAM = uuid4()
HUMAN = ActorAddress(agent_id=uuid4(), name="@Human", role="Human")
BOSS = ActorAddress(agent_id=uuid4(), name="@Boss", role="Boss")
WORKER = ActorAddress(agent_id=uuid4(), name="@Worker", role="Worker")


def _record(seq: int, message: Message) -> EventRecord:
    return EventRecord(team_id=TEAM, seq=seq, timestamp=None, message=message, raw="")


def _sent(message: Message, sender: ActorAddress, to: ActorAddress) -> SentMessage:
    return SentMessage(message=message, recipient=to, sender=sender)


def _event(event: TurnStartedEvent | TurnEndedEvent, sender: ActorAddress) -> EventMessage:
    return EventMessage(event=event, sender=sender)


def _processed(message_id: UUID, by: ActorAddress) -> ProcessedMessage:
    return ProcessedMessage(message_id=message_id, sender=by)


def test_a_failed_delegation_fails_the_exchange_once_nothing_is_left_to_do() -> None:
    asked = UserMessage(content="why?")
    request = AgentMessage(content="find out", parent_id=asked.id)
    exchange = Exchange(asked.id, "@Boss", "@Human")
    log = [
        _sent(asked, HUMAN, BOSS),
        _event(TurnStartedEvent(turn_id=asked.id, agent="@Boss"), BOSS),
        _sent(request, BOSS, WORKER),
        _event(TurnEndedEvent(turn_id=asked.id, agent="@Boss"), BOSS),
        _processed(asked.id, BOSS),
        _event(TurnStartedEvent(turn_id=request.id, agent="@Worker"), WORKER),
        _event(
            TurnEndedEvent(turn_id=request.id, agent="@Worker", outcome="failed", error="boom"),
            WORKER,
        ),
    ]
    for seq, message in enumerate(log, start=1):
        assert exchange.take(_record(seq, message)) is None
        if seq == 2:
            assert exchange.running() == "@Boss's turn (from seq 2)"
    assert exchange.running() == "a message to @Worker not handled yet"
    with pytest.raises(TurnFailedError) as caught:
        exchange.take(_record(len(log) + 1, _processed(request.id, WORKER)))
    assert str(caught.value) == f"@Worker's turn (caused by message {asked.id}) failed: boom"
    assert (caught.value.agent, caught.value.outcome, caught.value.asked) == (
        "@Worker",
        "failed",
        asked.id,
    )


def test_another_exchange_s_answer_is_not_taken() -> None:
    """A response to the person from the member asked, but descending from another
    message (an earlier question answered late), is not this message's answer."""
    asked, earlier = UserMessage(content="now"), UserMessage(content="before")
    exchange = Exchange(asked.id, "@Boss", "@Human")
    late = AgentMessage(content="about before", type="response", parent_id=earlier.id)
    mine = AgentMessage(content="about now", type="response", parent_id=asked.id)
    assert exchange.take(_record(1, _sent(asked, HUMAN, BOSS))) is None
    assert exchange.take(_record(2, _sent(late, BOSS, HUMAN))) is None
    answer = exchange.take(_record(3, _sent(mine, BOSS, HUMAN)))
    assert answer is not None and (answer.content, answer.seq) == ("about now", 3)


def _told_then(later: AgentMessage | None) -> tuple[Exchange, list[Message], UUID]:
    """``@Boss`` tells the person (a notification) while ``@Worker`` works on its request;
    ``later`` (if any) is what the worker sends the person after."""
    asked = UserMessage(content="go")
    told = AgentMessage(content="on it", type="notification", parent_id=asked.id)
    request = AgentMessage(content="find out", parent_id=asked.id)
    log: list[Message] = [
        _sent(asked, HUMAN, BOSS),
        _event(TurnStartedEvent(turn_id=asked.id, agent="@Boss"), BOSS),
        _sent(told, BOSS, HUMAN),
        _sent(request, BOSS, WORKER),
        _event(TurnEndedEvent(turn_id=asked.id, agent="@Boss"), BOSS),
        _processed(asked.id, BOSS),
        _event(TurnStartedEvent(turn_id=request.id, agent="@Worker"), WORKER),
    ]
    if later is not None:
        log.append(_sent(later.model_copy(update={"parent_id": request.id}), WORKER, HUMAN))
    log.append(_event(TurnEndedEvent(turn_id=request.id, agent="@Worker"), WORKER))
    return Exchange(asked.id, "@Boss", "@Human"), log, request.id


def test_the_responder_s_closing_notification_answers_once_nothing_is_left_to_do() -> None:
    """No response came: the notification ``@Boss`` sent the person is the answer, but
    only once the delegation it made is handled too (it is not while work is left)."""
    exchange, log, request = _told_then(None)
    for seq, message in enumerate(log, start=1):
        assert exchange.take(_record(seq, message)) is None
    answer = exchange.take(_record(len(log) + 1, _processed(request, WORKER)))
    assert answer is not None
    assert (answer.sender, answer.content, answer.seq, answer.message.type) == (
        "@Boss",
        "on it",
        3,
        "notification",
    )


def test_a_notification_followed_by_a_question_is_no_answer() -> None:
    """The last message the person got is ``@Worker``'s question, not ``@Boss``'s
    notification: the exchange ended without an answer."""
    question = AgentMessage(content="which one?", type="request")
    exchange, log, request = _told_then(question)
    for seq, message in enumerate(log, start=1):
        assert exchange.take(_record(seq, message)) is None
    with pytest.raises(NoReplyError) as caught:
        exchange.take(_record(len(log) + 1, _processed(request, WORKER)))
    assert str(caught.value).endswith(
        "the last message to you was @Worker's request, which you may answer with "
        "process_human_input: 'which one?'"
    )
