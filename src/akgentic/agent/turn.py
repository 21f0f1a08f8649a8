"""The turn protocol: what an agent publishes around each turn it takes.

A turn is an agent handling one message with its model (commands are not turns). Seed
003's protocol on the team stream, in the order a client sees it:

- :class:`TurnStartedEvent` (``StartResponse``) when the turn begins;
- the run's text deltas, tool calls and tool returns (``AppendText``, ``ToolCall``,
  ``ToolResult``: :mod:`akgentic.llm.events`);
- on a failure, the ``ErrorMessage`` the actor reports (``Error``), or a
  ``WarningMessage`` for a ``WarningError`` such as a usage limit; on a cancel,
  :class:`TurnInterruptedEvent` (``Interrupted``);
- always last, :class:`TurnEndedEvent` (``End``) with the outcome.

Every one is a stored event, so a client that only reads the history sees a failed or
interrupted turn exactly as a live subscriber does. ``turn_id`` is the id of the message
the turn answers.
"""

from __future__ import annotations

from typing import Literal
from uuid import UUID

from akgentic.core.serialization import SerializableModel

__all__ = ["TurnEndedEvent", "TurnInterruptedEvent", "TurnOutcome", "TurnStartedEvent"]

TurnOutcome = Literal["completed", "failed", "interrupted"]


class TurnStartedEvent(SerializableModel):
    """``agent`` began a turn answering message ``turn_id``."""

    turn_id: UUID
    agent: str


class TurnInterruptedEvent(SerializableModel):
    """The turn was cancelled at a step boundary; ``by`` is who asked, when known."""

    turn_id: UUID
    agent: str
    by: str | None = None


class TurnEndedEvent(SerializableModel):
    """The turn is over: ``completed``, ``failed`` (``error`` says why) or ``interrupted``."""

    turn_id: UUID
    agent: str
    outcome: TurnOutcome = "completed"
    error: str | None = None
