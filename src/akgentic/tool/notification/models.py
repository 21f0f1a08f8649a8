"""NotificationTool's data: entries, the actor's config and state, deltas, message classes.

- :class:`PendingNotification` — one scheduled note, with an **absolute** UTC due time,
  so an entry that fell due while the team was stopped fires on resume.
- :class:`NotificationConfig` — the singleton's configuration (tick and grace budgets).
- :class:`NotificationState` — what the singleton persists as its deltas (a
  ``StateJournal``, with a snapshot now and then): the pending entries and the number
  of the last ``ToolStateEvent`` it emitted.
- :class:`NotificationDelta` and :func:`apply_notification_event` /
  :func:`replay_notification_state` — the delta the singleton emits for every change,
  and the pure reducer that rebuilds the state from those deltas.
- :func:`resolve_message_class` — the ``message_class`` contract, checked when the card
  is built (a YAML card: when it is read).
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from datetime import UTC, datetime
from typing import ClassVar
from uuid import UUID, uuid4

from pydantic import ConfigDict, Field, field_validator

from akgentic.core.address import ActorAddress
from akgentic.core.agent_config import BaseConfig
from akgentic.core.messages import Message, UserMessage
from akgentic.core.serialization import (
    SerializableModel,
    SerializationError,
    model_path,
    registered_class,
)
from akgentic.tool.core.event import ToolStateEvent
from akgentic.tool.core.journal import DeltaState

__all__ = [
    "AGENT_MESSAGE_CLASS",
    "FALLBACK_MESSAGE_CLASS",
    "NOTIFICATION_TOOL_NAME",
    "NotificationConfig",
    "NotificationDelta",
    "NotificationState",
    "PendingNotification",
    "apply_delta",
    "apply_notification_event",
    "default_message_class",
    "replay_notification_state",
    "resolve_message_class",
]

NOTIFICATION_TOOL_NAME = "#NotificationTool"
"""The singleton's address name, and the ``tool_id`` of its ``ToolStateEvent`` stream."""

AGENT_MESSAGE_CLASS = "akgentic.agent.messages.AgentMessage"
"""The agent layer's message class: the default when it is registered at wiring time."""

FALLBACK_MESSAGE_CLASS = model_path(UserMessage)
"""The default when the agent layer's message class is not registered (a plain Akgent)."""

_PROBE = "notification probe"


def _aware_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("a notification time must be timezone-aware (UTC)")
    return value.astimezone(UTC)


class PendingNotification(SerializableModel):
    """One scheduled notification; immutable once created.

    ``owner`` is a metadata snapshot of the agent that scheduled it (never a live
    address: an entry must not keep its owner in memory, and a restored entry holds a
    snapshot anyway) — delivery resolves the live address by ``owner.agent_id``.
    ``due_at`` and ``created_at`` are absolute, timezone-aware UTC times.
    ``message_class`` is the registered path of the class the note is delivered as.
    ``message_id`` is the id it is delivered under, fixed when it is scheduled, so a
    restore can tell a note that was sent just before a crash, whose "delivered" delta
    the crash cut, from one still to send (:meth:`NotificationState.sent_in_log`).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    owner: ActorAddress
    due_at: datetime
    content: str
    message_class: str = Field(min_length=1)
    created_at: datetime
    message_id: UUID = Field(default_factory=uuid4)

    _utc = field_validator("due_at", "created_at")(_aware_utc)

    @property
    def owner_id(self) -> str:
        """The owning agent's id, as text."""
        return str(self.owner.agent_id)

    @property
    def owner_name(self) -> str:
        """The owning agent's address name (``@Writer``)."""
        return self.owner.name


class NotificationConfig(BaseConfig):
    """The ``#NotificationTool`` singleton's configuration.

    - ``tick_interval_seconds`` — how often the tick thread asks the actor to deliver
      what is due (the delivery resolution).
    - ``tick_timeout_seconds`` — how long one wait for a tick's answer lasts before the
      thread re-checks that the actor is still running. A tick still unanswered is
      waited on again, never doubled: at most one tick is ever queued.
    - ``delivery_grace_seconds`` — how long a due entry whose owner is not running is
      kept and retried (measured from the first failed attempt in this actor's life,
      so a resumed team gives its agents a fresh grace to come back) before it is
      dropped.

    The name must start with ``#``: the prefix is the orchestrator's teardown invariant.
    """

    name: str = NOTIFICATION_TOOL_NAME
    role: str = "NotificationTool"
    tick_interval_seconds: float = Field(default=1.0, gt=0)
    tick_timeout_seconds: float = Field(default=5.0, gt=0)
    delivery_grace_seconds: float = Field(default=60.0, ge=0)

    @field_validator("name")
    @classmethod
    def _tool_prefix(cls, value: str) -> str:
        if not value.startswith("#"):
            raise ValueError(
                f"a tool actor's name must start with '#' (got {value!r}): the "
                f"orchestrator stops '#' actors only after every regular member"
            )
        return value


class NotificationState(DeltaState):
    """The singleton's persisted state.

    ``pending`` is in creation order; ``event_seq`` is the ``seq`` of the last
    ``ToolStateEvent`` emitted, so a restored actor continues the stream without a
    gap or a repeat.
    """

    pending: list[PendingNotification] = Field(default_factory=list)
    event_seq: int = Field(default=0, ge=0)

    def apply_delta(self, delta: NotificationDelta) -> None:
        """Apply one ``NotificationDelta`` in place (:func:`apply_delta`)."""
        if not isinstance(delta, NotificationDelta):
            raise ValueError(f"not a NotificationDelta: {type(delta).__name__}")
        self.pending = apply_delta(self.pending, delta)

    def sent_in_log(self, sent: Set[UUID]) -> NotificationDelta | None:
        """The entries the log shows as sent, as delivered: their send landed on the log
        and the crash cut the delta after it (the resume delivers that message again if
        it was never received). Without this, the entry would fire a second time."""
        delivered = [e.id for e in self.pending if e.message_id in sent]
        return NotificationDelta(delivered=delivered) if delivered else None


class NotificationDelta(SerializableModel):
    """What one change did: entries added, and ids removed — by reason.

    ``delivered`` reached their owner; ``cancelled`` were cancelled by their owner;
    ``dropped`` were due but their owner stayed unreachable past the delivery grace.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    added: list[PendingNotification] = Field(default_factory=list)
    delivered: list[str] = Field(default_factory=list)
    cancelled: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)

    def removed(self) -> set[str]:
        """Every id this delta removes, whatever the reason."""
        return {*self.delivered, *self.cancelled, *self.dropped}


def apply_delta(
    pending: list[PendingNotification], delta: NotificationDelta
) -> list[PendingNotification]:
    """The pending list after ``delta``: removals first, then additions appended.

    The one rule the actor and the reducer share, so replaying is exact by construction.
    """
    removed = delta.removed()
    return [entry for entry in pending if entry.id not in removed] + list(delta.added)


def apply_notification_event(state: NotificationState, event: ToolStateEvent) -> NotificationState:
    """The state after ``event``; pure — ``state`` is not modified.

    An event already reflected in ``state`` (``seq <= state.event_seq``) returns
    ``state`` unchanged, so replaying a history over a restored state is idempotent.
    Raises ValueError for a gap in the numbering (a missed event) and for an event
    that is not a ``NotificationDelta``.
    """
    if not isinstance(event.payload, NotificationDelta):
        raise ValueError(
            f"{event.tool_id} event #{event.seq} carries a {type(event.payload).__name__}, "
            f"not a NotificationDelta"
        )
    if event.seq <= state.event_seq:
        return state
    if event.seq != state.event_seq + 1:
        raise ValueError(
            f"missed {event.tool_id} events: expected seq {state.event_seq + 1}, got "
            f"{event.seq}; replay the history from the start"
        )
    return NotificationState(pending=apply_delta(state.pending, event.payload), event_seq=event.seq)


def replay_notification_state(
    events: Iterable[ToolStateEvent],
    initial: NotificationState | None = None,
    tool_id: str = NOTIFICATION_TOOL_NAME,
) -> NotificationState:
    """Fold the events of ``tool_id`` (others are skipped) into a state; pure."""
    state = initial if initial is not None else NotificationState()
    for event in events:
        if event.tool_id == tool_id:
            state = apply_notification_event(state, event)
    return state


def resolve_message_class(path: str) -> type[Message]:
    """The class registered for serialization under ``path``, checked for delivery.

    Never imports: the class' module must have been imported (which registers a
    ``SerializableModel``) or the class registered explicitly. The path is the defining
    module's (``module.QualName``), not a re-export. The class must be a ``Message``
    subclass that builds from ``content=<text>`` alone and keeps that text readable as
    its ``content`` attribute — a declared ``content: str`` field, or an equivalent
    constructor. Raises ValueError saying which of these failed.
    """
    try:
        cls = registered_class(path)
    except SerializationError:
        raise ValueError(
            f"NotificationTool message_class {path!r} names no class defined in this "
            f"process: import the module that defines it first (a YAML card lists it under "
            f"imports) and name that module (module.QualName, not a re-export), or leave "
            f"message_class out for the default"
        ) from None
    if not (isinstance(cls, type) and issubclass(cls, Message)):
        raise ValueError(
            f"NotificationTool message_class {path!r} is a {cls!r}, not a subclass of "
            f"akgentic.core.Message"
        )
    try:
        probe = cls(content=_PROBE)
    except Exception as exc:
        raise ValueError(
            f"NotificationTool message_class {path!r} cannot be built from content=<text> "
            f"alone ({type(exc).__name__}: {exc}); give it a `content: str` field and "
            f"defaults for everything else"
        ) from None
    if getattr(probe, "content", None) != _PROBE:
        raise ValueError(
            f"NotificationTool message_class {path!r} does not keep the text it is built "
            f"with as `content`; declare a `content: str` field"
        )
    return cls


def default_message_class() -> type[Message]:
    """What ``message_class=None`` means: the agent layer's class, else UserMessage.

    ``akgentic.agent.messages.AgentMessage`` when it is registered (the agent layer
    imports it, so any ``BaseAgent`` team has it), checked like any configured class;
    ``akgentic.core.messages.UserMessage`` otherwise. Resolved through the registry,
    so this package never imports the agent layer.
    """
    try:
        registered_class(AGENT_MESSAGE_CLASS)
    except SerializationError:
        return UserMessage
    return resolve_message_class(AGENT_MESSAGE_CLASS)
