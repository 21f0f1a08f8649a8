"""Telemetry: what every actor reports to its team's orchestrator.

Actors never build these on their hot path; the orchestrator materialises them from
compact records (see ``akgentic.core._telemetry``) for subscribers and queries. Every
address inside a telemetry message handed to a subscriber is a serializable snapshot.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from akgentic.core.address import ActorAddress
from akgentic.core.messages.message import Message
from akgentic.core.serialization import SerializableModel

__all__ = [
    "ClosedNotification",
    "ErrorMessage",
    "EventMessage",
    "NotificationMessage",
    "ProcessedMessage",
    "ReceivedMessage",
    "SentMessage",
    "StartMessage",
    "StateChangedMessage",
    "StopMessage",
    "TeamMetadataEvent",
    "TeamStoppingEvent",
    "TelemetryMessage",
    "WarningMessage",
]


class TelemetryMessage(Message):
    """Base of the messages an actor reports about itself; ``sender`` is that actor."""


class SentMessage(TelemetryMessage):
    """The sender sent ``message`` to ``recipient``."""

    message: Message
    recipient: ActorAddress | None = None


class ReceivedMessage(TelemetryMessage):
    """The sender took ``message_id`` out of its inbox and started handling it."""

    message_id: UUID


class ProcessedMessage(TelemetryMessage):
    """The sender finished handling ``message_id`` (successfully or not)."""

    message_id: UUID


class StartMessage(TelemetryMessage):
    """The sender started, with this configuration, as a child of ``parent``."""

    config: SerializableModel
    parent: ActorAddress | None = None


class StopMessage(TelemetryMessage):
    """The sender stopped."""


class NotificationMessage(TelemetryMessage):
    """Something the sender wants people to know about while it works."""

    content_type: str = "text"
    content: Any = None
    current_message: Message | None = None


class ErrorMessage(NotificationMessage):
    """A handler of the sender raised; the actor went on with its next message."""

    traceback: str = ""


class WarningMessage(NotificationMessage):
    """A recoverable problem: a ``WarningError``, or a message nobody handles."""


class StateChangedMessage(TelemetryMessage):
    """The sender's state is now ``state`` (a snapshot taken when it was notified)."""

    state: SerializableModel


class EventMessage(TelemetryMessage):
    """A domain event published on the team stream (``Akgent.notify_event``, or
    ``notify_event_later``: built on the orchestrator's thread)."""

    event: Any


class ClosedNotification(SerializableModel):
    """Event payload: the conversation started by ``message_id`` is closed."""

    message_id: UUID


class TeamMetadataEvent(SerializableModel):
    """Event payload: the team's business metadata is now ``metadata`` (a pydantic model).

    Published by ``Orchestrator.set_metadata`` so the event store keeps it and a restored
    team gets it back.
    """

    metadata: Any


class TeamStoppingEvent(SerializableModel):
    """Event payload: the team's orchestrator has begun a graceful stop."""

    team_id: UUID | None = None
    grace_timeout: float = 0.0
