"""The message base and the messages every team understands."""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime
from typing import Literal
from uuid import UUID, SafeUUID

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
    "new_id",
    "new_id_text",
    "utc_now",
]

DisplayType = Literal["human", "ai", "other"]


_ids = random.Random()  # seeded from os.urandom
os.register_at_fork(after_in_child=_ids.seed)  # a forked child must not repeat its parent's ids

_CLEAR = ~((0xF << 76) | (0x3 << 62))
_SET = (0x4 << 76) | (0x2 << 62)  # version 4, RFC 4122 variant
_UNKNOWN = SafeUUID.unknown  # read once: an enum member's lookup is a Python property call


def new_id() -> UUID:
    """A random (version 4) UUID for a message.

    Every message gets one, so it is made without a system call: 122 random bits from a
    per-process generator seeded from ``os.urandom`` (and re-seeded in a forked child).
    Unique, not secret — message ids are not credentials.
    """
    value = (_ids.getrandbits(128) & _CLEAR) | _SET
    uid = UUID.__new__(UUID)
    object.__setattr__(uid, "int", value)
    object.__setattr__(uid, "is_safe", _UNKNOWN)
    return uid


def new_id_text() -> str:
    """A fresh :func:`new_id` as its text, without building the UUID (for a writer that
    only needs the text: every record an event store writes has an id)."""
    digits = "%032x" % ((_ids.getrandbits(128) & _CLEAR) | _SET)
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class Message(SerializableModel):
    """Anything one actor sends another.

    ``parent_id`` is the id of the message being handled when this one was sent, so
    a team's history is a causal tree. ``sender``, ``team_id`` and ``parent_id`` are
    stamped by :meth:`init` when the message is sent; ``recipient`` is stamped on
    delivery. A message belongs to its recipient once sent: build a new one for each
    recipient rather than sending one instance twice, and do not change one received —
    the team's log records a message as it is when the orchestrator hands it on, which
    may be after its recipient has handled it.
    """

    id: UUID = Field(default_factory=new_id)
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
    """Abandon the current run. A no-op for actors that have no run in progress.

    ``interrupt``: the team is stopping (Ctrl-C). Besides the run in progress, the
    receiver starts no new turn until it stops, and reports each turn it cancelled or
    declined as interrupted, so that a resume offers it again.

    ``fired`` (with ``interrupt``): the receiver was fired and stops for good — no resume
    will offer its turns — so the turn it cut and each message it then declines are
    answered instead, a line to their sender naming ``reason`` ("fired by @Lead").
    """

    reason: str = ""
    interrupt: bool = False
    fired: bool = False


class StopRecursively(Message):
    """Stop the receiving actor and, first, its children."""
