"""MailboxMessage: a message class declaring it can travel through a mailbox mid-run.

Whether a waiting message may be announced to a running model and absorbed into its run is
decided by the message's type, not by a setting: a class extends :class:`MailboxMessage`,
which obliges it to answer both renderers. A class that renders for the model but must never
be absorbed simply does not extend it.

- :meth:`MailboxMessage.rendering_preview` — one short line, shown in an arrival notice next
  to the message id. Keep it short: every waiting message costs one such line.
- :meth:`MailboxMessage.rendering` — the full content, injected into the run when the model
  names the message with ``read_mailbox``.

Both are required because the two moments need different sizes: a preview built by
truncating the full rendering would cut mid-thought, and a full rendering used as a preview
would flood every arrival notice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from akgentic.core.messages import Message

__all__ = ["MailboxMessage"]


class MailboxMessage(Message, ABC):
    """A message that may be announced mid-run and absorbed into the current run."""

    @abstractmethod
    def rendering(self) -> str:
        """The full content, as the model should read it once absorbed."""

    @abstractmethod
    def rendering_preview(self) -> str:
        """One short line for the arrival notice (no newline)."""
