"""Seed 003's turn protocol: a team's stored records as the API sends them.

Each record of the log becomes one :class:`~akgentic.client.models.WireEvent`: its
sequence number (the SSE id), a protocol ``type`` with a few camelCase ``data`` fields for
any language, and the stored record itself (``message``), spliced in as stored — the
transport only serializes. One record, one event: a failed turn is two records (the
``Error`` the actor reported, then ``End``), so history and live stream agree.

| record | type | data |
|---|---|---|
| ``TurnStartedEvent`` | ``StartResponse`` | turnId, agent |
| ``LlmTextDeltaEvent`` | ``AppendText`` | text, index, runId |
| ``LlmAnswerRestartedEvent`` | ``RestartAnswer`` | chars, runId |
| ``ToolCallEvent`` | ``ToolCall`` | id, toolName, arguments |
| ``ToolReturnEvent`` | ``ToolResult`` | id, toolCallId, toolName, success, outcome, content |
| ``ErrorMessage`` / ``WarningMessage`` | ``Error`` / ``Warning`` | message, turnId |
| ``TurnInterruptedEvent`` | ``Interrupted`` | turnId, agent, by |
| ``TurnEndedEvent`` | ``End`` | turnId, agent, outcome, error |
| ``SentMessage`` | ``Message`` | id, from, to, kind, type, content, parentId, failed, agentHops |
| ``ToolStateEvent`` | ``ToolState`` | toolId, seq, kind, delta |
| ``CommandsAnnouncedEvent`` | ``Commands`` | commands |
| ``LlmUsageEvent`` | ``Usage`` | model, inputTokens, outputTokens, requests, toolCalls |
| ``StartMessage`` / ``StopMessage`` | ``MemberStarted`` / ``MemberStopped`` | name, role, agentId |

A ``RestartAnswer`` says the turn's last ``chars`` characters of ``AppendText`` (counted
in code points, as Python counts) were an answer cut off or failed: a client drops them,
and the answer asked again (or a fallback's) follows.

A ``Message``'s ``failed`` is true for the answer to a ``/command`` that is unknown or
failed (``AgentMessage.failed``; its ``content`` says why), false otherwise: how a client
of ``POST /teams/{id}/commands`` tells a failed command from a successful one. Its
``agentHops`` is ``AgentMessage.agent_hops``: how many messages between agents in a row it
ends since a person last wrote, which the team's ``max_agent_hops``
(``TeamInfo.max_agent_hops``) bounds — how a page watching two agents answer each other
sees them near the bound; 0 for a message of any other class (a person's, a cancel), as
the agents count it.

A ``ToolState``'s ``delta`` is its payload as plain JSON (no class markers), so a client
in any language can fold it with the tool's reducer (``reduce_planning``,
``reduce_graph``) onto the state ``GET /teams/{id}/state/{tool}`` gave.

Anything else keeps its class name as ``type`` (``Received``, ``Processed``, ``State``...
are bookkeeping a page may ignore).
"""

from __future__ import annotations

import json
from typing import Any

from akgentic.agent import AgentMessage
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent, TurnStartedEvent
from akgentic.core import (
    ErrorMessage,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    WarningMessage,
)
from akgentic.llm import (
    LlmAnswerRestartedEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.storage import EventRecord
from akgentic.tool.core import CommandsAnnouncedEvent, ToolStateEvent

__all__ = ["encode_record", "protocol_of"]


def _id(value: object) -> str | None:
    return None if value is None else str(value)


def _event(event: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(event, LlmTextDeltaEvent):
        return "AppendText", {"text": event.delta, "index": event.index, "runId": event.run_id}
    if isinstance(event, LlmAnswerRestartedEvent):
        return "RestartAnswer", {"chars": event.chars, "runId": event.run_id}
    if isinstance(event, TurnStartedEvent):
        return "StartResponse", {"turnId": str(event.turn_id), "agent": event.agent}
    if isinstance(event, TurnEndedEvent):
        return "End", {
            "turnId": str(event.turn_id),
            "agent": event.agent,
            "outcome": event.outcome,
            "error": event.error,
        }
    if isinstance(event, TurnInterruptedEvent):
        return "Interrupted", {"turnId": str(event.turn_id), "agent": event.agent, "by": event.by}
    if isinstance(event, ToolCallEvent):
        return "ToolCall", {
            "id": event.tool_call_id,
            "toolName": event.tool_name,
            "arguments": event.arguments,
        }
    if isinstance(event, ToolReturnEvent):
        return "ToolResult", {
            "id": f"{event.tool_call_id}/result",
            "toolCallId": event.tool_call_id,
            "toolName": event.tool_name,
            "success": event.success,
            "outcome": event.outcome,
            "content": event.content,
        }
    if isinstance(event, ToolStateEvent):
        return "ToolState", {
            "toolId": event.tool_id,
            "seq": event.seq,
            "kind": type(event.payload).__name__,
            "delta": event.payload.model_dump(mode="json"),
        }
    if isinstance(event, CommandsAnnouncedEvent):
        return "Commands", {"commands": [c.model_dump(mode="json") for c in event.commands]}
    if isinstance(event, LlmUsageEvent):
        return "Usage", {
            "model": event.model,
            "inputTokens": event.input_tokens,
            "outputTokens": event.output_tokens,
            "requests": event.requests,
            "toolCalls": event.tool_calls,
        }
    return type(event).__name__, {}


def protocol_of(message: Message) -> tuple[str, dict[str, Any]]:
    """The protocol ``type`` and ``data`` of one stored message (see the module table)."""
    if isinstance(message, EventMessage):
        return _event(message.event)
    if isinstance(message, SentMessage):
        inner = message.message
        content = getattr(inner, "content", None)
        return "Message", {
            "id": str(inner.id),
            "from": message.sender.name if message.sender else None,
            "to": message.recipient.name if message.recipient else None,
            "kind": type(inner).__name__,
            "type": inner.type if isinstance(inner, AgentMessage) else None,
            "content": content if isinstance(content, str) else None,
            "parentId": _id(inner.parent_id),
            "failed": isinstance(inner, AgentMessage) and inner.failed,
            "agentHops": inner.agent_hops if isinstance(inner, AgentMessage) else 0,
        }
    if isinstance(message, ErrorMessage | WarningMessage):
        current = message.current_message
        return "Error" if isinstance(message, ErrorMessage) else "Warning", {
            "message": str(message.content),
            "turnId": _id(current.id if current is not None else None),
        }
    if isinstance(message, StartMessage | StopMessage):
        who = message.sender
        return "MemberStarted" if isinstance(message, StartMessage) else "MemberStopped", {
            "name": who.name if who else None,
            "role": who.role if who else None,
            "agentId": _id(who.agent_id if who else None),
        }
    if isinstance(message, ReceivedMessage | ProcessedMessage):
        kind = "Received" if isinstance(message, ReceivedMessage) else "Processed"
        return kind, {"messageId": str(message.message_id)}
    if isinstance(message, StateChangedMessage):
        return "State", {"kind": type(message.state).__name__}
    if isinstance(message, ToolStateEvent):
        return _event(message)
    return type(message).__name__, {}


def encode_record(record: EventRecord) -> tuple[str, str]:
    """``(type, JSON text of the WireEvent)`` for ``record``; the stored text is spliced in
    as it is, not decoded and encoded again. ``through`` carries the range a damaged
    pack's or a gap's record stands for, so a client pages on after its last number."""
    message = record.message
    head: dict[str, Any] = {
        "seq": record.seq,
        "team_id": str(record.team_id),
        "time": record.timestamp.isoformat() if record.timestamp is not None else None,
        "through": record.through,
    }
    if message is None:
        head.update(type="Corrupt", sender=None, data={}, message=None, error=record.error)
        return "Corrupt", json.dumps(head, separators=(",", ":"))
    kind, data = protocol_of(message)
    head.update(type=kind, sender=message.sender.name if message.sender else None, data=data)
    text = json.dumps(head, separators=(",", ":"), default=str)
    return kind, f'{text[:-1]},"message":{record.raw}}}'
