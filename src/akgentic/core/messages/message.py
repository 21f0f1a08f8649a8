"""The message base and the messages every team understands."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal
from uuid import UUID, uuid4

from pydantic import Field

from akgentic.core.address import ActorAddress
from akgentic.core.serialization import SerializableModel

__all__ = [
    "CancelMessage",
    "DisplayType",
    "Message",
    "ResultMessage",
    "StopRecursively",
    "UserMessage",
    "utc_now",
]

DisplayType = Literal["human", "ai", "other"]


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class Message(SerializableModel):
    """Anything one actor sends another.

    ``parent_id`` is the id of the message being handled when this one was sent, so
    a team's history is a causal tree. ``sender``, ``team_id`` and ``parent_id`` are
    stamped by :meth:`init` when the message is sent; ``recipient`` is stamped on
    delivery. A message belongs to its recipient once sent: build a new one for each
    recipient rather than sending one instance twice.
    """

    id: UUID = Field(default_factory=uuid4)
    parent_id: UUID | None = None
    team_id: UUID | None = None
    timestamp: datetime = Field(default_factory=utc_now)
    sender: ActorAddress | None = None
    recipient: ActorAddress | None = None
    display_type: DisplayType = "other"

    def init(
        self,
        sender: ActorAddress | None,
        team_id: UUID | None,
        current_message: Message | None = None,
    ) -> None:
        """Stamp sender, team and parent before a send.

        The team already on the message is kept when ``team_id`` is None; the parent is
        the message being handled, when there is one.
        """
        # Direct __dict__ writes: the values are already of the declared types, and
        # this runs on every send.
        fields = self.__dict__
        fields["sender"] = sender
        if team_id is not None:
            fields["team_id"] = team_id
        if current_message is not None:
            fields["parent_id"] = current_message.id
        self.__pydantic_fields_set__.update(("sender", "team_id", "parent_id"))


class UserMessage(Message):
    """Text written by a person."""

    content: str
    display_type: DisplayType = "human"


class ResultMessage(Message):
    """Text produced by an agent as the result of its work."""

    content: str
    display_type: DisplayType = "ai"


class CancelMessage(Message):
    """Abandon the current run. A no-op for actors that have no run in progress."""

    reason: str = ""


class StopRecursively(Message):
    """Stop the receiving actor and, first, its children."""
