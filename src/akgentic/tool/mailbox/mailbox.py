"""MailboxTool: the agent's own mailbox as a capability, one channel per capability.

- ``read_mailbox`` (TOOL_CALL) — a signal naming, by id, one message announced by a mid-run
  arrival notice. The card returns an acknowledgement and does nothing else: it reads,
  consumes and renders nothing. Consuming the named message and injecting its content is
  ``MailboxCapability``'s job (beside this card), so the signal and its delivery ship
  together. The id is not validated here — checking it would take a look at the inbox, which
  the card never does; an id naming nothing simply absorbs nothing.
- ``stop`` (COMMAND) — registers ``/stop``. A dispatched ``/stop`` can only ever meet an
  idle agent (the agent recognises the string and cancels a live run itself, before any
  dispatch), so the handler answers :data:`NO_RUN_TO_CANCEL`. Nothing here raises, tracks or
  interrupts: enforcement is akgentic-agent's, and works without this card.

The card creates no actor, performs no proxy round trip and needs no observer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from akgentic.core.excerpt import clip
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, TOOL_CALL
from akgentic.tool.core.params import BaseToolParam, serve
from akgentic.tool.mailbox.params import ReadMailbox, Stop

__all__ = ["NO_RUN_TO_CANCEL", "READ_MAILBOX_TOOL", "MailboxTool"]

NO_RUN_TO_CANCEL = "There is no run to cancel."
"""What ``/stop`` answers: dispatched, it can only meet an idle agent."""

READ_MAILBOX_TOOL = "read_mailbox"
"""The tool name ``MailboxCapability`` watches for in the model's responses."""


class MailboxTool(ToolCard):
    """``read_mailbox`` on TOOL_CALL and ``/stop`` on COMMAND; both on by default.

    ``MailboxTool(read_mailbox=False)`` keeps only ``/stop`` (and silences arrival notices:
    ``MailboxCapability`` reads ``read_mailbox`` off this card to decide whether the
    doorbell rings). ``MailboxTool(stop=False)`` removes the cancellation surface.
    """

    read_mailbox: ReadMailbox | bool = True
    stop: Stop | bool = True

    def get_tools(self) -> list[Callable[..., Any]]:
        if serve(self.read_mailbox, ReadMailbox, TOOL_CALL) is None:
            return []

        def read_mailbox(message_id: str) -> str:
            """Take one waiting message into the run you are in now.

            Call this with the id of a message listed in a "Messages are waiting in your
            mailbox" notice when you want to handle it now, as part of your current work. Naming
            it absorbs it: its full content is added right after this call's result, and it
            will NOT arrive again later as a turn of its own — so answer it in this run.
            Messages you do not name stay queued and each arrives later as its own turn;
            leave a message alone if it is not related to what you are doing.
            """
            return (
                f"Message {clip(message_id)} is taken into this run: if it is waiting in your "
                f"mailbox, its content follows this result and it will not arrive again as "
                f"its own turn."
            )

        return [read_mailbox]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        if serve(self.stop, Stop, COMMAND) is None:
            return {}

        def stop() -> str:
            """Cancel the agent's current run."""
            return NO_RUN_TO_CANCEL

        return {Stop: stop}

    def announces_arrivals(self) -> bool:
        """Whether the model can absorb a message: ``read_mailbox`` is served on TOOL_CALL."""
        return serve(self.read_mailbox, ReadMailbox, TOOL_CALL) is not None
