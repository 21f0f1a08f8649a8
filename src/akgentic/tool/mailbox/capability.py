"""MailboxCapability: the pydantic-ai half of MailboxTool — the doorbell and the delivery.

Before each model request (``before_model_request``, once per step) it:

1. **Absorbs.** For every ``read_mailbox(message_id)`` call in the model's latest response,
   it consumes that message (``observer.consume_mailbox([id])``) — only when it is a
   :class:`MailboxMessage` waiting in the mailbox — and injects ``rendering()`` into the run
   as a user prompt opened by ``absorbed_prefix``, right after the call's result. A named id
   that absorbs nothing (malformed, unknown, already gone, not a MailboxMessage) is told to
   the model in one system line rather than left silent.
2. **Announces.** Every ``MailboxMessage`` waiting in the mailbox that was not announced yet
   is listed in one system notice — ``ARRIVAL_HEADER``, one ``- <id>: <preview>`` line each
   (``rendering_preview()``), then ``arrival_closing``. A message is announced once; the
   memory of what was announced is pruned to what is still waiting.

Both go through ``RunContext.enqueue``, so they reach this request and stay in the history.
With no card, or a card whose ``read_mailbox`` is off, the capability is inert: a doorbell the
model cannot answer would only be noise. The observer is held weakly; once its agent is gone
the capability does nothing. A failing observer is logged and never breaks the run.
"""

from __future__ import annotations

import logging
import warnings
import weakref
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from akgentic.core.messages import Message
from akgentic.tool.mailbox.mailbox import READ_MAILBOX_TOOL, MailboxTool
from akgentic.tool.mailbox.message import MailboxMessage
from akgentic.tool.mailbox.observer import MailboxToolObserver
from akgentic.tool.mailbox.wording import ABSORBED_PREFIX, ARRIVAL_CLOSING, ARRIVAL_HEADER

__all__ = ["MailboxCapability"]

logger = logging.getLogger(__name__)


def _quiet_capability_part_advice() -> None:
    """Keep pydantic-ai's advice (2.78 on) to define a CapabilityPart kind off a user's
    terminal. The announcements here are hand-built operator-authority system text, which
    reaches the model unchanged; their bytes are what stored conversations and the prompt
    cache hold, so moving them to a CapabilityPart kind is a format change of its own, and
    the advice is not a user's to act on. Idempotent (``filterwarnings`` replaces an equal
    filter): called as each capability is made, so a program that reset its filters since
    the import (a test runner does) still has it."""
    warnings.filterwarnings(
        "ignore",
        message=r"Capability .* enqueued .*Define a `CapabilityPart` subclass",
        category=UserWarning,
        module=__name__,
    )


class MailboxCapability(AbstractCapability[Any]):
    """Announces mid-run arrivals and absorbs the messages the model names.

    ``MailboxCapability(observer, card, *, absorbed_prefix=ABSORBED_PREFIX,
    arrival_closing=ARRIVAL_CLOSING)``: ``observer`` owns the inbox; ``card`` is the agent's
    MailboxTool (or None), read to decide whether the doorbell rings. ``arrival_closing``
    must name ``read_mailbox`` (ValueError otherwise).
    """

    __eq__ = object.__eq__  # identity: two capabilities over two inboxes are never equal
    __hash__ = object.__hash__

    def __init__(
        self,
        observer: MailboxToolObserver,
        card: MailboxTool | None,
        *,
        absorbed_prefix: str = ABSORBED_PREFIX,
        arrival_closing: str = ARRIVAL_CLOSING,
    ) -> None:
        if not isinstance(observer, MailboxToolObserver):
            raise TypeError(
                f"MailboxCapability needs a MailboxToolObserver (notify_event, get_mailbox, "
                f"consume_mailbox); {type(observer).__name__} is not one"
            )
        if READ_MAILBOX_TOOL not in arrival_closing:
            raise ValueError(
                f"arrival_closing must tell the model to call {READ_MAILBOX_TOOL} with an id "
                f"— it is the only way to take a message into the run; got {arrival_closing!r}"
            )
        _quiet_capability_part_advice()
        self._observer_ref: weakref.ref[MailboxToolObserver] = weakref.ref(observer)
        self.enabled = card is not None and card.announces_arrivals()
        self.absorbed_prefix = absorbed_prefix
        self.arrival_closing = arrival_closing
        self._announced: set[UUID] = set()
        self._seen_calls: set[str] = set()

    def __repr__(self) -> str:
        return f"MailboxCapability(enabled={self.enabled})"

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        observer = self._observer_ref()
        if observer is None or not self.enabled:
            return request_context
        parts = self._absorb(observer, ctx.messages) + self._announce(observer)
        if parts:
            ctx.enqueue(*parts)
        return request_context

    # -- absorption -------------------------------------------------------------------
    def _named_ids(self, messages: Sequence[ModelMessage]) -> list[str]:
        """The ``message_id`` of each read_mailbox call in the latest response, once each."""
        response = next((m for m in reversed(messages) if isinstance(m, ModelResponse)), None)
        calls = [
            part
            for part in (response.parts if response is not None else [])
            if isinstance(part, ToolCallPart) and part.tool_name == READ_MAILBOX_TOOL
        ]
        named: list[str] = []
        for call in calls:
            if call.tool_call_id in self._seen_calls:
                continue
            try:
                value = call.args_as_dict().get("message_id")
            except Exception:  # unparseable arguments: the tool call itself failed
                continue
            if isinstance(value, str):
                named.append(value.strip())
        self._seen_calls = {call.tool_call_id for call in calls}
        return named

    def _absorb(
        self, observer: MailboxToolObserver, messages: Sequence[ModelMessage]
    ) -> list[ModelRequestPart]:
        named = self._named_ids(messages)
        if not named:
            return []
        try:
            waiting = {m.id for m in observer.get_mailbox() if isinstance(m, MailboxMessage)}
            ids = dict.fromkeys(uid for n in named if (uid := _as_uuid(n)) is not None)
            wanted = [uid for uid in ids if uid in waiting]
            consumed: list[Message] = observer.consume_mailbox(wanted) if wanted else []
        except Exception:
            logger.warning("mailbox: could not absorb %s", named, exc_info=True)
            return []
        parts: list[ModelRequestPart] = []
        absorbed: set[UUID] = set()
        for message in consumed:
            if isinstance(message, MailboxMessage):
                absorbed.add(message.id)
                self._announced.discard(message.id)
                parts.append(UserPromptPart(content=self._absorbed_text(message)))
        missing = [n for n in named if _as_uuid(n) not in absorbed]
        if missing:
            listing = ", ".join(repr(n) for n in missing)
            parts.append(
                SystemPromptPart(
                    content=f"Nothing was absorbed for {listing}: no such message is waiting "
                    f"in your mailbox. Use an id exactly as an arrival notice lists it."
                )
            )
        return parts

    def _absorbed_text(self, message: MailboxMessage) -> str:
        try:
            body = message.rendering()
        except Exception:
            logger.warning("mailbox: %s.rendering() failed", type(message).__name__, exc_info=True)
            body = f"({type(message).__name__} could not be rendered)"
        return f"{self.absorbed_prefix}\n\nMessage {message.id}:\n{body}"

    # -- announcement -----------------------------------------------------------------
    def _announce(self, observer: MailboxToolObserver) -> list[ModelRequestPart]:
        try:
            waiting = [m for m in observer.get_mailbox() if isinstance(m, MailboxMessage)]
        except Exception:
            logger.warning("mailbox: could not read the mailbox", exc_info=True)
            return []
        self._announced &= {m.id for m in waiting}
        fresh = [m for m in waiting if m.id not in self._announced]
        if not fresh:
            return []
        self._announced.update(m.id for m in fresh)
        lines = [ARRIVAL_HEADER]
        lines += [f"- {m.id}: {_preview(m)}" for m in fresh]
        lines.append(self.arrival_closing)
        return [SystemPromptPart(content="\n".join(lines))]


def _as_uuid(value: str) -> UUID | None:
    try:
        return UUID(value)
    except ValueError:
        return None


def _preview(message: MailboxMessage) -> str:
    try:
        text = message.rendering_preview()
    except Exception:
        logger.warning("mailbox: %s.rendering_preview() failed", type(message).__name__)
        return f"({type(message).__name__})"
    return " ".join(text.split())
