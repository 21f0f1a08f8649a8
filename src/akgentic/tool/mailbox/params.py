"""MailboxTool's two capability params, one channel each.

- :class:`ReadMailbox` — TOOL_CALL: ``read_mailbox(message_id)``, the model's signal naming
  one message announced by a mid-run arrival notice.
- :class:`Stop` — COMMAND: ``/stop``, the cancellation surface.

Neither declares a field of its own: there is nothing about either act a configuration could
change (the wording of arrival notices belongs to ``MailboxCapability``, not to the card).
"""

from __future__ import annotations

from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam

__all__ = ["ReadMailbox", "Stop"]


class ReadMailbox(BaseToolParam):
    """The on-demand signal: ``read_mailbox(message_id)`` for the model."""

    expose: set[Channels] = {TOOL_CALL}


class Stop(BaseToolParam):
    """The cancellation surface: ``/stop`` for humans and programs."""

    expose: set[Channels] = {COMMAND}
