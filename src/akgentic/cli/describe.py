"""One-line descriptions of what a team did, shared by the live view, ``events`` and ``show``.

Everything here is pure: it reads decoded messages and returns text. :class:`Describer`
gives each event record a *kind* (the class name of the telemetry message, or of the event
an ``EventMessage`` carries) and a one-line summary; it remembers the messages it saw sent
so that "received" and "processed" lines can say which message they mean.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from akgentic.agent import AgentMessage, TurnInterrupted
from akgentic.agent.accounting import PromptAccountingEvent
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent, TurnStartedEvent
from akgentic.cli.output import ONE_LINE, member_name, printable
from akgentic.core import (
    EXTERNAL_ROLE,
    ActorAddress,
    CancelMessage,
    ClosedNotification,
    EventMessage,
    Message,
    NotificationMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamStoppingEvent,
    UserMessage,
    counted,
)
from akgentic.llm import (
    LlmAnswerRestartedEvent,
    LlmMessageEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.storage import EventRecord
from akgentic.tool.core import CommandsAnnouncedEvent, ToolStateEvent
from akgentic.tool.workspace import ExecFinishedEvent, ExecStartedEvent, WorkspaceChangeEvent

__all__ = [
    "Describer",
    "call_text",
    "change_text",
    "exec_finished_text",
    "kind_of",
    "label_of",
    "last_exchange",
    "name_of",
    "one_line",
    "sent_line",
    "text_of",
    "to_person",
    "usage_text",
    "who_of",
]


def name_of(address: ActorAddress | None) -> str:
    """The actor's name (``@Worker``), or ``?`` when there is none: as it is, to compare
    with other names; a line prints it through :func:`~akgentic.cli.output.member_name`
    (:func:`who_of`)."""
    return address.name if address is not None else "?"


def who_of(address: ActorAddress | None) -> str:
    """The actor's name as a line prints it: :func:`name_of` through
    :func:`~akgentic.cli.output.member_name` (escaped, on one line, clipped)."""
    return member_name(name_of(address))


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line (whitespace collapsed) through :func:`printable`: its controls
    escaped, clipped at ``limit`` characters (``… (1,234 characters)``)."""
    return printable(" ".join(text.split()), keep=ONE_LINE, limit=limit)


def text_of(message: object) -> str:
    """What a message says: its ``content`` as text, else its class name."""
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if content is not None:
        return str(content)
    if isinstance(message, CancelMessage) and message.reason:
        return message.reason
    return type(message).__name__


def label_of(message: Message) -> str:
    """`` (request)`` for an agent message, nothing for a person's words, else the class."""
    if isinstance(message, AgentMessage):
        return f" ({message.type})"
    if isinstance(message, UserMessage):
        return ""
    return f" ({type(message).__name__})"


def to_person(sent: SentMessage, human: str | None) -> bool:
    """Whether ``sent`` goes to the person: to the card's ``human`` proxy, or to the outside
    caller that wrote to a team without one (``@System``, a ``human: null`` card). Either
    takes no turn: nothing receives it in the team."""
    recipient = sent.recipient or sent.message.recipient
    if recipient is None:
        return False
    return (human is not None and recipient.name == human) or recipient.role == EXTERNAL_ROLE


def sent_line(sent: SentMessage, arrow: str = "→", limit: int | None = None) -> str:
    """``@A → @B (type): content`` for a sent message: the content kept whole, or clipped
    at ``limit`` characters by :func:`printable` (``… (1,048,576 characters)``)."""
    recipient = sent.recipient or sent.message.recipient
    head = f"{who_of(sent.sender)} {arrow} {who_of(recipient)}{label_of(sent.message)}"
    text = text_of(sent.message)
    return f"{head}: {text if limit is None else printable(text, limit=limit)}"


def last_exchange(records: Iterable[EventRecord], human: str) -> list[SentMessage]:
    """The person's last message in ``records`` and the messages sent to them after it, in
    log order: what a crash may have kept from their screen (the log holds an answer the
    CLI never printed). Empty when nothing answered that message: a turn the crash cut is
    listed as interrupted instead."""
    exchange: list[SentMessage] = []
    for record in records:
        message = record.message
        if not isinstance(message, SentMessage):
            continue
        if name_of(message.sender) == human:
            exchange = [message]
        elif exchange and name_of(message.recipient or message.message.recipient) == human:
            exchange.append(message)
    return exchange if len(exchange) > 1 else []


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return one_line(text, 60)


def call_text(event: ToolCallEvent) -> str:
    """``tool(name=value, ...)`` for a tool call (long values cut)."""
    args = ", ".join(f"{key}={_value(value)}" for key, value in event.arguments.items())
    return f"{event.tool_name}({args})"


def change_text(event: WorkspaceChangeEvent) -> str:
    """``@Coder modified app/slug.py (+1 -1)`` for a file a workspace mutation changed."""
    if event.action == "directory":
        return f"{member_name(event.agent)} created directory {event.path}/"
    counts = ""
    if event.action != "deleted" and (event.added or event.removed):
        counts = f" (+{event.added} -{event.removed})"
    by = " (by a command)" if event.op == "exec" else ""
    return f"{member_name(event.agent)} {event.action} {event.path}{counts}{by}"


def exec_finished_text(event: ExecFinishedEvent) -> str:
    """How a sandboxed command ended: its exit code and time, or why it never ran."""
    command = one_line(event.command, 80)
    agent = member_name(event.agent)
    if event.error is not None or event.exit_code is None:
        return f"{agent}'s command did not run: {one_line(event.error or 'unknown', 120)}"
    if event.timed_out:
        return f"{agent}'s {command} was killed at its budget (exit {event.exit_code})"
    took = f"{event.duration_seconds:.2f}s"
    return f"{agent}'s {command} ended: exit {event.exit_code} ({took})"


def usage_text(requests: int, input_tokens: int, output_tokens: int) -> str:
    """``3 requests, 415 input / 160 output tokens``."""
    tokens = f"{input_tokens:,} input / {output_tokens:,} output tokens"
    return f"{counted(requests, 'request')}, {tokens}"


def kind_of(message: Message) -> str:
    """The class name of the telemetry message, or of the event an EventMessage carries."""
    if isinstance(message, EventMessage):
        return type(message.event).__name__
    return type(message).__name__


class Describer:
    """Kinds and one-line summaries of a team's event records, in log order."""

    def __init__(self, arrow: str = "→") -> None:
        self.arrow = arrow
        self._sent: dict[UUID, str] = {}

    def describe(self, record: EventRecord) -> tuple[str, str]:
        """(kind, summary) of ``record``; a corrupt row is ``("CORRUPT", its error)``."""
        message = record.message
        if message is None:
            return "CORRUPT", record.error or f"event seq {record.seq} could not be decoded"
        return kind_of(message), self.summary(message)

    def remember(self, sent: SentMessage) -> None:
        """Note a sent message, for the "received"/"processed" lines that refer to it."""
        inner = sent.message
        noun = inner.type if isinstance(inner, AgentMessage) else "message"
        self._sent[inner.id] = f"{who_of(sent.sender)}'s {noun}"

    def summary(self, message: Message) -> str:
        """One line saying what ``message`` records."""
        who = who_of(message.sender)
        if isinstance(message, SentMessage):
            self.remember(message)
            return one_line(sent_line(message, self.arrow))
        if isinstance(message, ReceivedMessage | ProcessedMessage):
            verb = "received" if isinstance(message, ReceivedMessage) else "processed"
            what = self._sent.get(message.message_id, f"message {str(message.message_id)[:8]}")
            return f"{who} {verb} {what}"
        if isinstance(message, StartMessage):
            cls = (message.sender.agent_class if message.sender else "").rsplit(".", 1)[-1]
            parent = f" under {who_of(message.parent)}" if message.parent is not None else ""
            return f"{who} started ({cls}){parent}"
        if isinstance(message, StopMessage):
            return f"{who} stopped"
        if isinstance(message, StateChangedMessage):
            return f"{who} state changed ({type(message.state).__name__})"
        if isinstance(message, NotificationMessage):
            return f"{who}: {one_line(text_of(message))}"
        if isinstance(message, EventMessage):
            return self._event(who, message.event)
        return f"{who}: {one_line(text_of(message))}"

    def _event(self, who: str, event: object) -> str:
        if isinstance(event, ToolCallEvent):
            return one_line(f"{who} {self.arrow} {call_text(event)}")
        if isinstance(event, ToolReturnEvent):
            if event.success:
                return f"{who}: {event.tool_name} returned"
            return f"{who}: {event.tool_name} {event.outcome}"
        if isinstance(event, LlmTextDeltaEvent):  # quoted: its spaces and newlines show
            return f"{who}: '{printable(event.delta, keep=ONE_LINE, limit=160)}'"
        if isinstance(event, LlmAnswerRestartedEvent):
            dropped = f"{event.chars:,} characters dropped"
            return f"{who}: its answer was cut off ({dropped}): it starts again"
        if isinstance(event, LlmUsageEvent):
            used = usage_text(event.requests, event.input_tokens, event.output_tokens)
            return f"{who}: {used} ({event.model})"
        if isinstance(event, PromptAccountingEvent):
            return one_line(f"{who}: {event.summary()}", limit=240)
        if isinstance(event, LlmMessageEvent):
            return f"{who}: model context of run {event.run_id[:8]} recorded"
        if isinstance(event, ToolStateEvent):
            payload = type(event.payload).__name__
            return f"{member_name(event.tool_id)} state changed (#{event.seq}: {payload})"
        if isinstance(event, WorkspaceChangeEvent):
            return change_text(event)
        if isinstance(event, ExecStartedEvent):
            return one_line(f"{member_name(event.agent)} $ {event.command}")
        if isinstance(event, ExecFinishedEvent):
            return exec_finished_text(event)
        if isinstance(event, CommandsAnnouncedEvent):
            names = ", ".join(f"/{c.name}" for c in event.commands) or "no commands"
            return one_line(f"{who} answers {names}")
        if isinstance(event, TeamStoppingEvent):
            return f"the team is stopping (grace {event.grace_timeout:g}s)"
        if isinstance(event, TurnStartedEvent):
            return f"{who}: turn {str(event.turn_id)[:8]} started"
        if isinstance(event, TurnEndedEvent):
            failed = f": {one_line(event.error)}" if event.error else ""
            return one_line(f"{who}: turn {str(event.turn_id)[:8]} {event.outcome}{failed}")
        if isinstance(event, TurnInterruptedEvent):
            by = f" by {member_name(event.by)}" if event.by else ""
            return f"{who}: turn {str(event.turn_id)[:8]} cancelled{by}"
        if isinstance(event, TurnInterrupted):
            why = f" ({event.reason})" if event.reason else ""
            return one_line(
                f"{who}: message {str(event.message_id)[:8]} left for a resume to offer again{why}"
            )
        if isinstance(event, ClosedNotification):
            return f"{who}: conversation {str(event.message_id)[:8]} closed"
        return one_line(f"{who}: {event}")
