"""The wording a mid-run arrival reads with — MailboxCapability's defaults, kept importable
without loading pydantic-ai so an override can build on the shipped sentences.

They are not on the card: a card is persisted with its team, so wording stored there would
freeze at creation, while a constant improved here reaches every existing team on upgrade.

The clause an override of :data:`ARRIVAL_CLOSING` must keep: it has to name ``read_mailbox``
— the one way to take a message into the run — and say that an unnamed message stays queued.
``MailboxCapability`` refuses a closing that does not mention ``read_mailbox``.
"""

from __future__ import annotations

__all__ = ["ABSORBED_PREFIX", "ARRIVAL_CLOSING", "ARRIVAL_HEADER"]

ARRIVAL_HEADER = "Messages are waiting in your mailbox:"
"""First line of an arrival notice; one ``- <id>: <preview>`` line per message follows."""

ARRIVAL_CLOSING = (
    "To handle one of them now, as part of this run, call read_mailbox with its id. "
    "Any message you do not name stays queued and arrives later as its own turn."
)
"""Last line of an arrival notice: how to absorb, and what happens to the rest."""

ABSORBED_PREFIX = (
    "You took this message from your mailbox into the current run; it will not arrive "
    "again as its own turn, so answer it here."
)
"""Opens the injected content of an absorbed message, before its id and its rendering."""
