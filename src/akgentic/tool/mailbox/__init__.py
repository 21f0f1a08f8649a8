"""akgentic.tool.mailbox — MailboxTool: the agent's own mailbox, and /stop.

Public face: the card and its params, the observer protocol, the ``MailboxMessage`` base,
the shipped wording, and ``MailboxCapability`` — the pydantic-ai capability that delivers
what the card's signal names. ``MailboxCapability`` is loaded on first access, so importing
the card does not import pydantic-ai. See README.md beside this file.
"""

from typing import TYPE_CHECKING, Any

from akgentic.tool.mailbox.mailbox import NO_RUN_TO_CANCEL, READ_MAILBOX_TOOL, MailboxTool
from akgentic.tool.mailbox.message import MailboxMessage
from akgentic.tool.mailbox.observer import MailboxToolObserver
from akgentic.tool.mailbox.params import ReadMailbox, Stop
from akgentic.tool.mailbox.wording import ABSORBED_PREFIX, ARRIVAL_CLOSING, ARRIVAL_HEADER

if TYPE_CHECKING:
    from akgentic.tool.mailbox.capability import MailboxCapability

__all__ = [
    "ABSORBED_PREFIX",
    "ARRIVAL_CLOSING",
    "ARRIVAL_HEADER",
    "NO_RUN_TO_CANCEL",
    "READ_MAILBOX_TOOL",
    "MailboxCapability",
    "MailboxMessage",
    "MailboxTool",
    "MailboxToolObserver",
    "ReadMailbox",
    "Stop",
]


def __getattr__(name: str) -> Any:
    if name == "MailboxCapability":
        from akgentic.tool.mailbox.capability import MailboxCapability

        return MailboxCapability
    raise AttributeError(f"module 'akgentic.tool.mailbox' has no attribute {name!r}")
