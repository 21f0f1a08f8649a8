"""MailboxToolObserver: the mailbox card's contract with the agent that owns the inbox.

It extends ``ToolObserver`` directly — peeking at and consuming from one's own inbox needs
no actor reach, so it asks for the narrowest level. Its two methods are called by
:class:`~akgentic.tool.mailbox.capability.MailboxCapability` (built by the agent for every
run), never by ``MailboxTool``, which reads and consumes nothing. The protocol still lives
here because it belongs to this card and to nothing else.

Both methods are called from the thread running the model, while the actor may still be
receiving: an implementation must be safe to call concurrently with delivery.

``@runtime_checkable`` is kept although it is inherited (and so inert here); the
conformance guard is proven by removing a member, never the decorator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable
from uuid import UUID

from akgentic.core.messages import Message
from akgentic.tool.core.observer import ToolObserver

__all__ = ["MailboxToolObserver"]


@runtime_checkable
class MailboxToolObserver(ToolObserver, Protocol):
    """A ToolObserver that can show and give up the messages waiting in its own inbox."""

    def get_mailbox(self) -> Sequence[Message]:
        """The messages waiting in the inbox, oldest first, without removing them.

        Excludes the message being handled. May include messages of any class: only
        ``MailboxMessage`` instances are ever announced or absorbed mid-run.
        """
        ...

    def consume_mailbox(self, ids: Sequence[UUID]) -> list[Message]:
        """Remove the waiting messages with these ids and return them, oldest first.

        Ids that are not waiting (never arrived, already consumed or handled) are ignored,
        so the result may be shorter than ``ids``. A consumed message never arrives as its
        own turn.
        """
        ...
