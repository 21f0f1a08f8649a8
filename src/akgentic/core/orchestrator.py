"""The Orchestrator: one per team, its supervisor and its event stream.

It receives every actor's telemetry (see ``_telemetry``), keeps what queries need —
the roster, the latest state per member, profiles, metadata and a bounded window of
recent messages and events — and hands every record, as a telemetry message with
serializable address snapshots, to its subscribers. The full history belongs to a
subscriber (the event store), never to a Python list here: memory stays flat however
many messages the team exchanges.

Tool actors (names starting with ``#``) are bound with :meth:`getChildrenOrCreate`,
get-or-create in one step on the orchestrator's thread — never check-then-create.
The ``#`` prefix is a teardown invariant: :meth:`stop` stops regular members first
and tool actors only once no regular member remains. Among the regular members, the
user proxies (the person) stop last: an answer a member finishes during the stop
reaches the person.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import compress, islice
from operator import itemgetter
from typing import Any, NamedTuple, Protocol, runtime_checkable
from uuid import UUID

import pykka
from pydantic import BaseModel, Field

from akgentic.core._telemetry import (
    DRAIN,
    KIND_HANDLED,
    KIND_PROCESSED,
    KIND_RECEIVED,
    KIND_REPORT,
    KIND_SENT,
    LaterEvent,
    Record,
)
from akgentic.core.address import (
    ActorAddress,
    ActorAddressImpl,
    ActorAddressProxy,
    ActorNameTakenError,
    ActorStartError,
    AddressError,
    start_failure_text,
)
from akgentic.core.agent import LEFT_BEHIND, Akgent, GraceRanOut, SpawnSpec
from akgentic.core.agent_card import AgentCard
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import CancelMessage, Message
from akgentic.core.messages.orchestrator import (
    ErrorMessage,
    EventMessage,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamMetadataEvent,
    TeamStoppingEvent,
    TelemetryMessage,
)
from akgentic.core.serialization import SerializableModel

__all__ = [
    "DEFAULT_MAX_AGENT_HOPS",
    "TOOL_PREFIX",
    "EventSubscriber",
    "Orchestrator",
    "OrchestratorConfig",
    "TelemetryBatch",
    "TelemetryRecord",
    "is_tool_actor",
]

logger = logging.getLogger("akgentic.core")

TOOL_PREFIX = "#"

_SENT_MASK = bytes(1 if kind == KIND_SENT else 0 for kind in range(256))
"""``kinds.translate(_SENT_MASK)``: a byte per record, 1 for a send (for ``compress``)."""

FLUSH_EVERY = 1024
"""Records a drain hands to its subscribers before it tells them to flush. A drain
runs until the queue is empty, and under a flood the queue refills as it drains: without
this, an event store received one batch only when the flood ended, and could not start
writing while the team ran."""


def is_tool_actor(address: ActorAddress) -> bool:
    """Whether ``address`` names a tool actor (its name starts with ``#``)."""
    return address.name.startswith(TOOL_PREFIX)


@runtime_checkable
class EventSubscriber(Protocol):
    """Receives everything a team's orchestrator sees, in order, on its thread.

    ``on_message`` gets telemetry messages whose addresses are serializable snapshots.
    An optional ``on_record(record)`` is called instead for the live stream: a
    :class:`TelemetryRecord` builds its message only when asked, so a subscriber that
    can use a receipt's few fields (an event store encoding it directly) spares the
    orchestrator's thread the building of a message per send, receipt and completion.
    An optional ``on_batch(batch)`` is called instead of both, once per run of
    consecutive records (a :class:`TelemetryBatch`: the raw records, up to
    ``FLUSH_EVERY`` of them), so a store can encode a whole batch with C-level loops.
    An optional ``flush()`` is called after each batch the orchestrator hands on: a store
    buffers in ``on_message`` and commits the batch there (one transaction per batch).
    A subscriber whose ``batched`` attribute is true does not need records at once
    (a store: every query drains the queue first anyway): when every subscriber is
    batched, records reach them by the batch or at most ``DEFER_DELAY`` late, instead
    of waking the orchestrator for each.
    ``set_restoring`` brackets a replay of persisted history (``restore_message``):
    a store must not record those messages again. ``on_stop_request`` is called when
    a graceful stop begins, ``on_stop`` once the team has stopped (after the last
    message). A subscriber that raises is logged and kept.
    """

    def on_message(self, msg: Message) -> None: ...

    def set_restoring(self, team_id: UUID, restoring: bool) -> None: ...

    def on_stop_request(self, team_id: UUID) -> None: ...

    def on_stop(self, team_id: UUID) -> None: ...


class TelemetryRecord:
    """One record of the live stream, as the orchestrator hands it to ``on_record``.

    Built lazily: :meth:`message` builds the telemetry message (with address snapshots)
    on first use and returns that same one after. :attr:`receipt` reads a receipt (a
    member took a message out of its inbox, or finished it) and :attr:`sent` a send
    without building anything.
    Valid during the call only: a subscriber keeps what it needs, not the record.
    """

    __slots__ = ("_message", "_orchestrator", "_record")

    def __init__(self, orchestrator: Orchestrator, record: Record) -> None:
        self._orchestrator = orchestrator
        self._record = record
        self._message: Message | None = None

    @property
    def receipt(self) -> tuple[type[TelemetryMessage], UUID, ActorAddressProxy, float] | None:
        """``(ReceivedMessage or ProcessedMessage, message id, receiver's snapshot, epoch
        seconds)`` for a receipt; None for any other record."""
        kind, ts, sender, message_id, _ = self._record
        if kind != KIND_RECEIVED and kind != KIND_PROCESSED:
            return None
        snapshot = self._orchestrator._snapshot(sender)
        assert snapshot is not None  # receipts always name their actor
        cls = ReceivedMessage if kind == KIND_RECEIVED else ProcessedMessage
        return cls, message_id, snapshot, ts

    @property
    def sent(self) -> tuple[Message, ActorAddressProxy, ActorAddressProxy | None, float] | None:
        """``(the message sent — its own addresses may be live ones —, sender's snapshot,
        recipient's snapshot, epoch seconds)`` for a send; None for any other record."""
        kind, ts, sender, message, recipient = self._record
        if kind != KIND_SENT:
            return None
        snapshot = self._orchestrator._snapshot(sender)
        assert snapshot is not None  # sends always name their actor
        return message, snapshot, self._orchestrator._snapshot(recipient), ts

    def message(self) -> Message:
        """The telemetry message of this record (built once)."""
        if self._message is None:
            self._message = self._orchestrator._materialize(self._record)
        return self._message


class TelemetryBatch:
    """Consecutive records of the live stream, as the orchestrator hands them to
    ``on_batch``.

    :attr:`records` are the raw tuples ``(kind, epoch seconds, actor, a, b)``, oldest
    first, where ``kind`` is one of the class's constants:

    - :attr:`SENT`: ``actor`` sent message ``a`` to address ``b`` (the addresses may be
      live ones: :meth:`snapshot` gives their serializable copy);
    - :attr:`RECEIVED` / :attr:`PROCESSED`: ``actor`` took the message with id ``a`` out
      of its inbox / finished it (``b`` is None);
    - :attr:`REPORT`: a telemetry message ``a`` the actor reported (a start, a stop, a
      state, an event, an error): :meth:`message` gives it as subscribers store it;
    - :attr:`HANDLED`: ``actor`` took the message with id ``a`` out of its inbox at ``b``
      (epoch seconds) and finished it at the record's time — a receipt and a completion
      in one record (``akgentic.core._telemetry``): :meth:`messages` gives both.

    :attr:`kinds` holds each record's kind as one byte (``kinds[i] == records[i][0]``),
    for ``bytes.find`` and ``bytes.translate`` masks.

    Valid during the call only: a subscriber keeps what it needs, not the batch.
    """

    SENT = KIND_SENT
    RECEIVED = KIND_RECEIVED
    PROCESSED = KIND_PROCESSED
    REPORT = KIND_REPORT
    HANDLED = KIND_HANDLED

    __slots__ = ("_orchestrator", "kinds", "records")

    def __init__(
        self, orchestrator: Orchestrator, records: list[Record], kinds: bytes | None = None
    ) -> None:
        self._orchestrator = orchestrator
        self.records = records
        self.kinds = bytes(map(itemgetter(0), records)) if kinds is None else kinds

    def snapshot(self, address: ActorAddress | None) -> ActorAddressProxy | None:
        """The serializable copy of an address the records name."""
        return self._orchestrator._snapshot(address)

    def message(self, index: int) -> Message:
        """The telemetry message of record ``index`` (built on each call); of a
        ``HANDLED`` record, its completion (:meth:`messages` gives its receipt too)."""
        return self._orchestrator._materialize(self.records[index])

    def messages(self) -> list[Message]:
        """Every record's telemetry message, in order: two for a ``HANDLED`` record."""
        return [self._orchestrator._materialize(record) for record in _one_event_each(self.records)]


def _one_event_each(records: list[Record]) -> list[Record]:
    """``records`` with each ``HANDLED`` record as its receipt and its completion (for
    whoever reads them one event at a time)."""
    if not any(record[0] == KIND_HANDLED for record in records):
        return records
    events: list[Record] = []
    for record in records:
        kind, ts, actor, message_id, received = record
        if kind == KIND_HANDLED:
            events.append((KIND_RECEIVED, received, actor, message_id, None))
            events.append((KIND_PROCESSED, ts, actor, message_id, None))
        else:
            events.append(record)
    return events


DEFAULT_MAX_AGENT_HOPS = 30
"""The most messages agents send one another in a row, since a person (or a program: the
API, the CLI) last wrote, unless a team sets its own ``max_agent_hops``."""


class OrchestratorConfig(BaseConfig):
    """An orchestrator's configuration.

    ``history_window`` bounds the recent messages and events kept for queries;
    ``stop_grace_timeout`` is the default grace of :meth:`Orchestrator.stop`;
    ``entry_point`` names the member the person talks to (a team card's
    ``entry_point``), None when the team has none; ``max_agent_hops`` is the team's bound
    on messages between agents in a row (a team card's ``max_agent_hops``; None: none),
    which the agents read (:meth:`Orchestrator.get_max_agent_hops`) and hold themselves to.
    """

    name: str = "@Orchestrator"
    role: str = "Orchestrator"
    history_window: int = 1000
    stop_grace_timeout: float = 30.0
    entry_point: str | None = None
    max_agent_hops: int | None = Field(default=DEFAULT_MAX_AGENT_HOPS, ge=1)


_BACKSTOP = 1.0
"""Seconds a member asked to stop only when the grace ran out (or a tool actor) is given
before the stop goes on without it: an idle one stops in far less."""


class _TeardownDone(NamedTuple):
    forced: bool


class Orchestrator(Akgent[OrchestratorConfig, BaseState]):
    """The team's supervisor and event stream; see the module docstring."""

    upgrades_base_config = (
        True  # BaseConfig(name=..., role=...) as code for the published API writes it
    )

    def __init__(self, spec: SpawnSpec) -> None:
        window = spec.config.history_window if isinstance(spec.config, OrchestratorConfig) else 1000
        self._members: dict[UUID, ActorAddress] = {}
        self._by_name: dict[str, ActorAddress] = {}
        self._stopped_by_name: dict[str, ActorAddress] = {}  # ended by the graceful stop
        self._reserved: set[str] = set()
        self._snapshots: dict[int, ActorAddressProxy] = {}  # by agent_id.int
        self._states: dict[UUID, SerializableModel] = {}
        self._recent_messages: deque[Message] = deque(maxlen=window)
        self._recent_events: deque[EventMessage] = deque(maxlen=window)
        self._subscribers: list[EventSubscriber] = []
        self._sinks: list[tuple[EventSubscriber, Callable[[TelemetryRecord], None] | None]] = []
        self._batchers: list[tuple[EventSubscriber, Callable[[TelemetryBatch], None]]] = []
        self._tool_actors: dict[str, ActorAddress] = {}
        self._profiles: dict[str, AgentCard] = {}
        self._metadata: BaseModel | None = None
        self._restoring_history = False
        self._stopping = False
        super().__init__(spec)
        self._orchestrator = self._address
        spec.channel.bind(self.actor_ref)

    # -- telemetry ----------------------------------------------------------------------
    def on_receive(self, message: Any) -> Any:
        if message is DRAIN:
            self._drain()
            return None
        if type(message) is _TeardownDone:
            self._finish_stop(message.forced)
            return None
        return super().on_receive(message)

    def _drain(self) -> None:
        """Fold every queued record into the views, and hand them on in runs of at most
        ``FLUSH_EVERY`` (a long drain hands its records on as it goes), each run
        followed by the subscribers' ``flush``.

        Each run is taken and folded with C-level loops (``popleft`` called by
        ``islice``, the sends picked by a mask of the kinds): this runs for every record
        a team reports, on the thread every subscriber shares. Only this thread pops, so
        the queue holds at least the ``len`` it had."""
        queue = self._channel.take()
        popleft = queue.popleft
        recent = self._recent_messages
        subscribed = bool(self._subscribers)
        while queue:
            records: list[Record] = list(islice(iter(popleft, None), min(len(queue), FLUSH_EVERY)))
            kinds = bytes(map(itemgetter(0), records))
            recent.extend(compress(map(itemgetter(3), records), kinds.translate(_SENT_MASK)))
            at = kinds.find(KIND_REPORT)
            while at >= 0:  # rare: starts, stops, states, events, errors
                report = records[at][3]
                if type(report) is LaterEvent:
                    report = self._build_later(records[at])
                    records[at] = (KIND_REPORT, records[at][1], records[at][2], report, None)
                self._apply(report)
                at = kinds.find(KIND_REPORT, at + 1)
            if subscribed:  # else nobody to hand them on to: folded and forgotten
                self._hand_on(records, kinds)

    def _hand_on(self, records: list[Record], kinds: bytes) -> None:
        """Hand a run of records to every subscriber, in order. One view per record is
        shared by the per-record subscribers, so a message is built once for them all,
        and dropped before the next is built (a thousand built messages held at once
        made every garbage collection of the run walk them)."""
        sinks = [(subscriber, sink) for subscriber, sink in self._sinks if sink is not None]
        if sinks:
            one_each = records if kinds.find(KIND_HANDLED) < 0 else _one_event_each(records)
            for record in one_each:
                view = TelemetryRecord(self, record)
                for subscriber, sink in sinks:
                    try:
                        sink(view)
                    except Exception:
                        logger.exception("subscriber %r failed on a record", subscriber)
        if self._batchers:
            batch = TelemetryBatch(self, records, kinds)
            for subscriber, on_batch in self._batchers:
                try:
                    on_batch(batch)
                except Exception:
                    logger.exception("subscriber %r failed on a batch", subscriber)
        self._each_subscriber("flush")

    def _build_later(self, record: Record) -> TelemetryMessage:
        """The ``EventMessage`` of a :class:`LaterEvent` record, stamped as its actor's
        ``_report`` would have stamped it when it reported it (sender, team, parent, the
        record's time — an event that is itself a ``Message`` too). A build that raises
        becomes an ``ErrorMessage`` saying what is missing, with the traceback."""
        _, ts, sender, later, _ = record
        when = datetime.fromtimestamp(ts, UTC)
        msg: TelemetryMessage
        try:
            event = later.build()
            if isinstance(event, Message):
                event.init(sender, self._team_id, later.parent)
                event.__dict__["timestamp"] = when
            msg = EventMessage(event=event)
        except Exception as exc:
            who = sender.name if sender is not None else "an actor"
            logger.error("%s: an event could not be built", who, exc_info=exc)
            msg = ErrorMessage(
                content_type="error",
                content=f"{who}: an event could not be built ({type(exc).__name__}: {exc}); "
                f"it is missing from the team's stream",
                traceback="".join(traceback.format_exception(exc)),
            )
        msg.init(sender, self._team_id, later.parent)
        msg.__dict__["timestamp"] = when
        return msg

    def _apply(self, msg: TelemetryMessage) -> None:
        """Fold a reported telemetry message into the views queries read.

        A start or a stop moves the team's revision again here, before the record is
        handed to any subscriber: whoever has seen it, or an answer that folded it, reads
        a revision past any answer cached without it (the member moved it already, just
        after queueing its report: see ``TeamChannel.team_changed``)."""
        sender = msg.sender
        if isinstance(msg, StartMessage):
            self._channel.team_changed()
            if sender is not None and sender.agent_id != self._address.agent_id:
                self._members[sender.agent_id] = sender
                self._by_name[sender.name] = sender
                self._reserved.discard(sender.name)
        elif isinstance(msg, StopMessage):
            self._channel.team_changed()
            if sender is not None:
                self._members.pop(sender.agent_id, None)
                if self._by_name.get(sender.name) == sender:
                    del self._by_name[sender.name]
                    if self._stopping:
                        self._stopped_by_name[sender.name] = sender
                self._states.pop(sender.agent_id, None)
                self._snapshots.pop(sender.agent_id.int, None)
        elif isinstance(msg, StateChangedMessage):
            if sender is not None:
                self._states[sender.agent_id] = msg.state
        elif isinstance(msg, EventMessage):
            self._recent_events.append(msg)
            if isinstance(msg.event, TeamMetadataEvent) and isinstance(
                msg.event.metadata, BaseModel
            ):
                self._metadata = msg.event.metadata

    def _snapshot(self, address: ActorAddress | None) -> ActorAddressProxy | None:
        if address is None:
            return None
        snap = self._snapshots.get(address.agent_id.int)
        if snap is None:
            snap = address.snapshot()
            if address.agent_id in self._members:
                self._snapshots[address.agent_id.int] = snap
        return snap

    def _detach(self, msg: Message) -> Message:
        """``msg`` with its envelope addresses replaced by snapshots (a shallow copy)."""
        if isinstance(msg.sender, ActorAddressImpl) or isinstance(msg.recipient, ActorAddressImpl):
            return msg.model_copy(
                update={
                    "sender": self._snapshot(msg.sender),
                    "recipient": self._snapshot(msg.recipient),
                }
            )
        return msg

    def _materialize(self, record: Record) -> Message:
        kind, ts, sender, a, b = record
        when = datetime.fromtimestamp(ts, UTC)
        snap = self._snapshot(sender)
        team_id = self._team_id
        if kind == KIND_SENT:
            return SentMessage(
                message=self._detach(a),
                recipient=self._snapshot(b),
                sender=snap,
                team_id=team_id,
                timestamp=when,
            )
        if kind == KIND_RECEIVED:
            return ReceivedMessage(message_id=a, sender=snap, team_id=team_id, timestamp=when)
        if kind in (KIND_PROCESSED, KIND_HANDLED):
            return ProcessedMessage(message_id=a, sender=snap, team_id=team_id, timestamp=when)
        telemetry: TelemetryMessage = a
        detached = self._detach(telemetry)
        if isinstance(detached, EventMessage) and isinstance(detached.event, Message):
            detached = detached.model_copy(update={"event": self._detach(detached.event)})
        return detached

    def _publish(self, msg: Message) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber.on_message(msg)
            except Exception:
                logger.exception("subscriber %r failed on %s", subscriber, type(msg).__name__)

    def _each_subscriber(self, method: str, *args: Any) -> None:
        for subscriber in list(self._subscribers):
            hook = getattr(subscriber, method, None)
            if hook is None:  # optional hooks (flush)
                continue
            try:
                hook(*args)
            except Exception:
                logger.exception("subscriber %r failed in %s", subscriber, method)

    # -- subscribers --------------------------------------------------------------------
    def subscribe(self, subscriber: EventSubscriber) -> None:
        """Hand every later record to ``subscriber`` (idempotent)."""
        if not isinstance(subscriber, EventSubscriber):
            raise TypeError(
                f"{type(subscriber).__name__} is not an EventSubscriber: it needs "
                f"on_message, set_restoring, on_stop_request and on_stop"
            )
        self._drain()  # what happened before subscribing is not this subscriber's
        if subscriber not in self._subscribers:
            self._subscribers.append(subscriber)
            self._sinks.append((subscriber, _sink_of(subscriber)))
            on_batch = getattr(subscriber, "on_batch", None)
            if on_batch is not None:
                self._batchers.append((subscriber, on_batch))
        self._set_wakeups()

    def _set_wakeups(self) -> None:
        subscribers = self._subscribers
        eager = any(not getattr(s, "batched", False) for s in subscribers)
        self._channel.set_eager(eager, deferred=bool(subscribers))

    def unsubscribe(self, subscriber: EventSubscriber) -> None:
        """Stop handing records to ``subscriber`` (no error if it was not subscribed)."""
        self._drain()
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)
            self._sinks = [(s, sink) for s, sink in self._sinks if s is not subscriber]
            self._batchers = [(s, b) for s, b in self._batchers if s is not subscriber]
        self._set_wakeups()

    # -- roster and history -------------------------------------------------------------
    def get_team(self) -> list[ActorAddress]:
        """The running members, tool actors included (``is_tool_actor`` tells them apart)."""
        self._drain()
        return list(self._members.values())

    def get_entry_point(self) -> str | None:
        """The name of the member the person talks to (``OrchestratorConfig.entry_point``),
        or None when the team has none."""
        config = self.config
        return config.entry_point if isinstance(config, OrchestratorConfig) else None

    def get_max_agent_hops(self) -> int | None:
        """The team's bound on messages between agents in a row since a person last wrote
        (``OrchestratorConfig.max_agent_hops``), or None: no bound."""
        config = self.config
        if isinstance(config, OrchestratorConfig):
            return config.max_agent_hops
        return DEFAULT_MAX_AGENT_HOPS

    def get_team_member(self, name: str) -> ActorAddress | None:
        """The running member with this address name, or None.

        While the team stops gracefully, a member the stop has already ended (it had
        nothing left to do) is still found: a turn finishing meanwhile may address it,
        and its message must not fail that turn — ``send_or_record`` records it
        undelivered, and a restore of the team delivers it."""
        self._drain()
        return self._by_name.get(name) or self._stopped_by_name.get(name)

    def get_messages(self, limit: int | None = None) -> list[Message]:
        """The most recent messages sent in the team, oldest first (bounded window)."""
        self._drain()
        items = list(self._recent_messages)
        return items if limit is None else items[-limit:] if limit > 0 else []

    def get_events(self, limit: int | None = None) -> list[EventMessage]:
        """The most recent domain events, oldest first (bounded window)."""
        self._drain()
        items = list(self._recent_events)
        return items if limit is None else items[-limit:] if limit > 0 else []

    def get_states(self) -> dict[UUID, SerializableModel]:
        """The latest published state of each running member, by agent id."""
        self._drain()
        return dict(self._states)

    def get_metadata(self) -> BaseModel | None:
        """The team's business metadata, as set by :meth:`set_metadata`."""
        return self._metadata

    def set_metadata(self, metadata: BaseModel) -> None:
        """Record the team's business metadata (any pydantic model), on the team stream
        too (``TeamMetadataEvent``), so it is stored and restored with the team."""
        if not isinstance(metadata, BaseModel):
            raise TypeError(f"metadata must be a pydantic model, got {type(metadata).__name__}")
        self._metadata = metadata
        self.notify_event(TeamMetadataEvent(metadata=metadata))

    def reserve_name(self, base: str, max_members: int | None = None) -> str | None:
        """A member name nobody has or has reserved: ``base``, else ``base-2``, ``base-3``...

        One step on the orchestrator's thread, so two members hiring at once get two
        names — never check-then-create. The reservation ends when a member of that name
        starts.

        With ``max_members``, the reservation is also a place in a team of at most that
        many regular members (neither tool actors nor persons; the names reserved and not
        started yet count): None when the team has no place left. Counted and taken in the
        same step, so two members hiring at once never both take the last place.
        """
        self._drain()
        if max_members is not None and self._regular_count() >= max_members:
            return None
        taken = self._by_name.keys() | self._reserved
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        self._reserved.add(name)
        return name

    def _regular_count(self) -> int:
        """The regular members running or reserved: the places a hire's bound counts."""
        running = sum(
            1 for m in self._members.values() if not (is_tool_actor(m) or m.is_user_proxy)
        )
        return running + len(self._reserved)

    def release_name(self, name: str) -> None:
        """End the reservation of ``name`` (:meth:`reserve_name`) whose member never
        started: its creation failed. Kept, the name would be taken for the team's life
        (the next hire of that role named ``-2``)."""
        self._reserved.discard(name)

    # -- tool actors ----------------------------------------------------------------------
    def getChildrenOrCreate(
        self, actor_class: type[Akgent[Any, Any]], config: BaseConfig
    ) -> ActorAddress:
        """Return the live child named ``config.name``, creating it if there is none.

        One step on the orchestrator's thread, so concurrent callers get one actor.
        Asking for a name held by an actor of another class is an ``ActorNameTakenError`` (a
        ``TypeError`` and an ``ActorStartError``, so a card's wiring names the card). The name
        must start with ``#`` (``TOOL_PREFIX``): the teardown stops tool actors after
        the members that call them, and tells them apart by that prefix alone, so a
        name without it is a ``ValueError`` saying so.

        A new actor whose construction raises (its config or state does not validate)
        is an ``ActorStartError`` naming it and the cause. Its ``on_start`` runs on its
        own thread after this returns and is never waited for here (it may itself bind
        another tool actor through this orchestrator): the caller waits, with
        ``ActorAddressImpl.wait_started`` (``bind_team_actor`` does).
        """
        name = config.name
        if not name:
            raise ValueError("getChildrenOrCreate needs a config with a name (e.g. '#MyTool')")
        if not name.startswith(TOOL_PREFIX):
            raise ValueError(
                f"tool actor name {name!r} must start with {TOOL_PREFIX!r}: name it "
                f"{TOOL_PREFIX + name.lstrip('@')!r} (the teardown stops '#' actors after the "
                f"members that call them)"
            )
        existing = self._tool_actors.get(name)
        if existing is not None and existing.is_alive():
            if isinstance(existing, ActorAddressImpl) and not issubclass(
                existing.actor_ref.actor_class, actor_class
            ):
                held = existing.actor_ref.actor_class.__name__
                raise ActorNameTakenError(
                    name,
                    f"{name} is already a {held}, not a {actor_class.__name__}: one '#' name "
                    f"is one actor class; give one of the two actors another name",
                )
            return existing
        try:
            address = self.createActor(actor_class, config=config)
        except Exception as exc:
            raise ActorStartError(name, start_failure_text(exc)) from exc
        self._tool_actors[name] = address
        return address

    def restore_child(
        self,
        actor_class: type[Akgent[Any, Any]],
        config: BaseConfig,
        agent_id: UUID,
        state: BaseState | None = None,
    ) -> ActorAddress:
        """Re-create a tool actor from persisted history (same id, name and state), so
        that a later ``getChildrenOrCreate`` for its name binds to it."""
        address = self.createActor(
            actor_class, agent_id=agent_id, config=config, restoring=True, state=state
        )
        self._tool_actors[config.name] = address
        return address

    def restore_children(
        self,
        children: list[tuple[type[Akgent[Any, Any]], BaseConfig, UUID, BaseState | None]],
    ) -> list[ActorAddress]:
        """:meth:`restore_child` each ``(actor_class, config, agent_id, state)``, in one
        message: a restored tool actor whose ``on_start`` binds another (``#PlanningTool``
        binds ``#VectorStore``) asks ``getChildrenOrCreate`` of this mailbox, so its ask is
        answered only once every tool actor is back — never with a fresh, empty actor
        created before the restored one, which then ran beside it under the same name."""
        return [self.restore_child(*child) for child in children]

    # -- profiles -----------------------------------------------------------------------
    def register_agent_profile(self, profile: AgentCard) -> None:
        """Make ``profile`` hireable by role (a later one replaces the same role)."""
        self._profiles[profile.role] = profile
        self._channel.team_changed()

    def register_agent_profiles(self, profiles: list[AgentCard]) -> None:
        for profile in profiles:
            self.register_agent_profile(profile)

    def get_agent_catalog(self) -> list[AgentCard]:
        return list(self._profiles.values())

    def get_agent_profile(self, role: str) -> AgentCard | None:
        return self._profiles.get(role)

    def get_profiles_by_skill(self, skill: str) -> list[AgentCard]:
        return [p for p in self._profiles.values() if skill in p.skills]

    # -- restore --------------------------------------------------------------------------
    def restore_message(self, msg: Message) -> None:
        """Replay one persisted telemetry message into the views, without side effects.

        The first call tells subscribers ``set_restoring(team_id, True)``; subscribers
        still see each replayed message, flagged by that bracket.
        """
        if not self._restoring_history:
            self._restoring_history = True
            self._each_subscriber("set_restoring", self._team_id, True)
        if isinstance(msg, SentMessage):
            self._recent_messages.append(msg.message)
        elif isinstance(msg, StateChangedMessage | EventMessage):
            self._apply(msg)
        self._publish(msg)

    def end_restoration(self) -> None:
        """Close the replay bracket opened by :meth:`restore_message`."""
        if self._restoring_history:
            self._restoring_history = False
            self._each_subscriber("set_restoring", self._team_id, False)

    # -- stopping -------------------------------------------------------------------------
    def stop(self, grace_timeout: float | None = None) -> None:
        """Stop the team gracefully; returns at once (wait with ``ActorSystem.wait_stopped``).

        Announces ``TeamStoppingEvent``, stops the regular members from the leaves up — a
        member once none of its children runs, so that it takes what the turns its
        children finish send it and passes it on; the user proxies last, once no other
        regular member runs, so that the answers reach the person — then, once none
        remains, stops the ``#`` tool actors in parallel, each once the transient workers
        that report to it have finished, then itself. When ``grace_timeout`` runs out
        with members still running, the backstop stops the rest and the tool actors and
        the orchestrator anyway, and logs once who was still running (flagged
        :data:`LEFT_BEHIND`).
        """
        if self._stopping:
            return
        self._stopping = True
        grace = self.config.stop_grace_timeout if grace_timeout is None else grace_timeout
        self._channel.stop_deadline = time.monotonic() + grace  # the members' waits too
        self.notify_event(TeamStoppingEvent(team_id=self._team_id, grace_timeout=grace))
        self._drain()
        self._each_subscriber("on_stop_request", self._team_id)
        threading.Thread(
            target=self._teardown,
            args=(grace,),
            name=f"teardown-{self._address.name}",
            daemon=True,
        ).start()

    def _live_members(self) -> list[ActorAddressImpl]:
        members = list(self._system._addresses_in_team(self._team_id))
        return [m for m in members if m.is_alive() and m != self._address]

    def _teardown(self, grace: float) -> None:
        """Two-phase stop, off the orchestrator's thread so members may still ask it."""
        deadline = self._channel.stop_deadline or time.monotonic() + grace
        asked: set[UUID] = set()  # the members asked to stop so far
        forced = False
        while True:
            regular = [m for m in self._live_members() if not is_tool_actor(m)]
            if not regular:
                break
            if time.monotonic() >= deadline:
                # the grace is over: each turn still running is interrupted (a model
                # request in flight is cut at once, the turn kept for a resume), whoever
                # was not asked yet (a parent, a user proxy waiting for its turn; everyone,
                # with a grace of 0) is asked now, and all have the backstop to stop; who
                # still runs then is in a call that has not returned, and is named
                self._interrupt_turns(regular, grace)
                for member in regular:
                    member.request_stop()
                backstop = time.monotonic() + _BACKSTOP
                for member in regular:
                    member.wait_stopped(max(0.0, backstop - time.monotonic()))
                left = [m for m in regular if m.is_alive()]
                if left:
                    forced = True
                    names = tuple(m.name for m in left)
                    report = GraceRanOut(grace, names, tuple(self._busy_with(m) for m in left))
                    logger.warning(
                        "team %s: %s", self._team_id, report.says(), extra={LEFT_BEHIND: report}
                    )
                break
            due = self._due_to_stop(regular)
            for member in due:
                if member.agent_id not in asked:
                    asked.add(member.agent_id)
                    member.request_stop()
            for member in due:
                member.wait_stopped(max(0.0, deadline - time.monotonic()))
        # no turn runs any more (but in a member left behind): a second Ctrl-C cuts none
        self._channel.members_stopped = not forced
        self._stop_tool_actors(deadline)
        with contextlib.suppress(pykka.ActorDeadError):  # already stopped by someone else
            self.actor_ref.tell(_TeardownDone(forced))

    def _interrupt_turns(self, regular: list[ActorAddressImpl], grace: float) -> None:
        """The grace ran out: tell each member still running (not a user proxy) an
        interrupting ``CancelMessage``, as Ctrl-C does, so that its turn ends as
        interrupted — resumable — rather than left behind."""
        reason = f"the team's stop grace of {grace:g}s ran out"
        for member in regular:
            if member.is_user_proxy:
                continue
            with contextlib.suppress(AddressError):
                self._address.send(member, CancelMessage(reason=reason, interrupt=True))

    def _busy_with(self, member: ActorAddressImpl) -> str | None:
        """What ``member`` says it is inside (``Akgent.busy_with``), if it can be asked."""
        actor = self._system._actor_of(member.agent_id)
        return actor.busy_with() if actor is not None else None

    def _due_to_stop(self, regular: list[ActorAddressImpl]) -> list[ActorAddressImpl]:
        """The running regular members to stop now: those none of whose children runs
        (a parent takes what its children's last turns send it); the user proxies once
        no other member runs."""
        others = [m for m in regular if not m.is_user_proxy]
        if not others:
            return regular
        parents: set[UUID] = set()
        for member in others:
            actor = self._system._actor_of(member.agent_id)
            parent = actor.parent if actor is not None else None  # set once, at its start
            if parent is not None:
                parents.add(parent.agent_id)
        leaves = [m for m in others if m.agent_id not in parents]
        return leaves or others

    def _stop_tool_actors(self, deadline: float) -> None:
        """Phase two: the ``#`` tool actors, in parallel.

        Each tool actor stops once the transient workers that report to it
        (``Akgent.reports_to``) have finished — their results must find it — and only
        those: a tool actor no running worker reports to is stopped at once, never
        serialised behind a worker it has nothing to do with. (A worker's parent waits
        for it anyway: children stop first.)
        """
        tools = [m for m in self._live_members() if is_tool_actor(m)]
        workers = [t for t in tools if getattr(t.actor_ref.actor_class, "transient", False)]
        holders = [t for t in tools if t not in workers]
        awaited: dict[UUID, list[ActorAddressImpl]] = {h.agent_id: [] for h in holders}
        for worker in workers:
            actor = self._system._actor_of(worker.agent_id)
            for target in actor.reports_to() if actor is not None else []:
                if target.agent_id in awaited:
                    awaited[target.agent_id].append(worker)

        def stop_after_its_workers(holder: ActorAddressImpl) -> None:
            for worker in awaited[holder.agent_id]:
                worker.wait_stopped(max(deadline - time.monotonic(), _BACKSTOP))
            holder.request_stop()

        waiting = []
        for holder in holders:
            if awaited[holder.agent_id]:
                thread = threading.Thread(
                    target=stop_after_its_workers,
                    args=(holder,),
                    name=f"teardown-{holder.name}",
                    daemon=True,
                )
                thread.start()
                waiting.append(thread)
            else:
                holder.request_stop()
        for thread in waiting:
            thread.join()
        backstop = max(deadline - time.monotonic(), _BACKSTOP)
        for tool in holders:
            tool.wait_stopped(backstop)

    def _finish_stop(self, forced: bool) -> None:
        if forced:
            logger.info("team %s stopped by the backstop", self._team_id)
        super().stop()

    def _before_stopped(self) -> None:
        self._channel.release_held()  # a member still in its turn (the grace ran out)
        self._drain()
        self._each_subscriber("on_stop", self._team_id)
        self._subscribers.clear()
        self._sinks.clear()
        self._batchers.clear()
        self._channel.close()


def _sink_of(subscriber: EventSubscriber) -> Callable[[TelemetryRecord], None] | None:
    """What the live stream calls for each record: None for a subscriber that takes
    batches (``on_batch``), else ``on_record``, or ``on_message`` with
    the record's message built."""
    if getattr(subscriber, "on_batch", None) is not None:
        return None
    on_record: Callable[[TelemetryRecord], None] | None = getattr(subscriber, "on_record", None)
    if on_record is not None:
        return on_record
    on_message = subscriber.on_message
    return lambda record: on_message(record.message())
