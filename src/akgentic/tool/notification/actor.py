"""NotificationActor: the team's ``#NotificationTool`` singleton, and its tick loop.

The actor holds every pending notification of the team and delivers each to its
owner once due. Bind it with ``Orchestrator.getChildrenOrCreate`` (one step on the
orchestrator's thread, never check-then-create); :class:`NotificationTool` does.

Delivery. On every tick the entries whose absolute ``due_at`` is not after
:meth:`NotificationActor.now` are delivered, oldest due first: the owner's live address
is looked up by ``agent_id`` and sent ``message_class(content=...)`` with
``Akgent.send`` (stamped, recorded in the team's history, sender ``#NotificationTool``).
Delivered entries are removed, the state is persisted (``notify_state_change``) and
one ``ToolStateEvent`` carrying a :class:`NotificationDelta` is emitted. A due entry
whose owner is not running is kept and retried each tick for the config's
``delivery_grace_seconds`` (counted from the first failed attempt in this actor's
life), then dropped — with a log line and a ``dropped`` delta. A message class that no
longer resolves at delivery (a resumed process that never imported it) degrades to
``UserMessage`` with a log line rather than losing the note.

The tick loop. A daemon thread asks the actor for a :class:`NotificationTick` every
``tick_interval_seconds``:

- it holds the address's pykka reference — the part of an ``ActorAddress`` that
  delivers, which references the actor only weakly — never a proxy and never the
  actor, so the thread cannot keep a stopped actor in memory;
- it *asks*, bounded by ``tick_timeout_seconds``: an unanswered tick is waited on
  again, never doubled, so a slow actor has at most one tick queued rather than a
  backlog of them;
- it exits when the actor stops (the reference's stopped flag is its loop condition).

The tick is a plain marker, not a ``Message``: a team message twice a second for the
life of the team would fill its history with noise. The actor's mutations — register,
cancel, deliver — are the events worth recording, and they are.
"""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import pykka

from akgentic.core.address import ActorAddress, AddressError
from akgentic.core.agent import Akgent
from akgentic.core.excerpt import excerpt
from akgentic.core.messages import Message, UserMessage
from akgentic.core.serialization import SerializationError, model_path, registered_class
from akgentic.tool.core.journal import StateJournal
from akgentic.tool.errors import RetriableError
from akgentic.tool.notification.models import (
    NotificationConfig,
    NotificationDelta,
    NotificationState,
    PendingNotification,
)

__all__ = ["NotificationActor", "NotificationTick"]

logger = logging.getLogger("akgentic.tool.notification")


class NotificationTick:
    """The tick thread's marker: "deliver what is due now". Not a team ``Message``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NotificationTick()"


_TICK = NotificationTick()


def _run_ticks(ref: pykka.ActorRef[Any], interval: float, timeout: float) -> None:
    """The tick loop (see the module docstring). Holds ``ref`` only; never raises."""
    stopped = ref.actor_stopped
    while not stopped.wait(interval):
        try:
            future = ref.ask(_TICK, block=False)
        except pykka.ActorDeadError:
            return
        while True:
            try:
                future.get(timeout=timeout)
                break
            except pykka.Timeout:
                if stopped.is_set():
                    return
                # Slow actor: keep waiting for this tick; never queue a second one.
            except pykka.ActorDeadError:
                return
            except Exception:  # the actor reported it; the loop goes on
                logger.exception("%s: a notification tick failed", ref)
                break


class NotificationActor(Akgent[NotificationConfig, NotificationState]):
    """The ``#NotificationTool`` singleton; see the module docstring for the contract.

    Its public methods are called through ``proxy_ask``. Caller mistakes (an unknown id,
    another agent's id, too many pending entries) raise ``RetriableError``, re-raised in
    the caller. Every mutation persists the state and emits its delta before returning.
    """

    def on_start(self) -> None:
        """Continue the event numbering from the state, and start the tick thread."""
        self._journal = StateJournal(self, tool_id=self.config.name)
        self._unreachable_since: dict[str, datetime] = {}
        thread = threading.Thread(
            target=_run_ticks,
            args=(
                self.actor_ref,
                self.config.tick_interval_seconds,
                self.config.tick_timeout_seconds,
            ),
            name=f"notification-tick-{self.agent_id}",
            daemon=True,
        )
        thread.start()
        self._tick_thread = thread

    # -- the clock (override in tests) ---------------------------------------------------
    def now(self) -> datetime:
        """The current time, timezone-aware UTC. The one clock every due time is read on."""
        return datetime.now(UTC)

    # -- messages ---------------------------------------------------------------------------
    def on_receive(self, message: Any) -> Any:
        if isinstance(message, NotificationTick):
            try:
                self.deliver_due()
            except Exception as exc:  # reported on the team stream; the next tick retries
                self._report_failure(exc, None, "delivering due notifications failed")
            return None
        return super().on_receive(message)

    # -- the API (through proxy_ask) ------------------------------------------------------
    def register(
        self,
        owner: ActorAddress,
        delay_seconds: float,
        content: str,
        message_class: str,
        max_pending: int | None = None,
        cancelling: str = "cancel_notification",
    ) -> PendingNotification:
        """Schedule ``content`` for ``owner``, due ``delay_seconds`` from :meth:`now`.

        ``max_pending`` caps the owner's pending entries (None: no cap); reaching it
        raises RetriableError, which names ``cancelling``: how the caller cancels one (a
        person types ``/cancel_notification``). A negative delay is a ValueError (callers
        validate).
        """
        if delay_seconds < 0:
            raise ValueError(f"delay_seconds must be >= 0, got {delay_seconds}")
        if max_pending is not None:
            mine = sum(1 for e in self.state.pending if e.owner.agent_id == owner.agent_id)
            if mine >= max_pending:
                raise RetriableError(
                    f"you already have {mine} pending notifications, the most this tool "
                    f"allows: cancel one with {cancelling}, or wait for one to be "
                    f"delivered, before scheduling another"
                )
        now = self.now()
        entry = PendingNotification(
            id=self._new_id(),
            owner=owner.snapshot(),
            due_at=now + timedelta(seconds=delay_seconds),
            content=content,
            message_class=message_class,
            created_at=now,
        )
        self._apply(NotificationDelta(added=[entry]))
        return entry

    def pending(self, owner: ActorAddress | None = None) -> list[PendingNotification]:
        """The pending entries of ``owner`` (None: the whole team), soonest due first."""
        entries = [
            e for e in self.state.pending if owner is None or e.owner.agent_id == owner.agent_id
        ]
        return sorted(entries, key=lambda e: e.due_at)

    def cancel(
        self,
        owner: ActorAddress,
        notification_id: str,
        listing: str = "pending_notification",
    ) -> PendingNotification:
        """Cancel ``owner``'s entry ``notification_id`` and return it.

        Only the owner may cancel: another agent's id, like an unknown one, raises
        RetriableError — listing widens to the team, cancel authority never does. An
        unknown id's error names ``listing``: how the caller lists its ids (a person
        types ``/pending_notification``).
        """
        entry = next((e for e in self.state.pending if e.id == notification_id), None)
        if entry is None:
            raise RetriableError(
                f"there is no pending notification {excerpt(notification_id)}: it was delivered, "
                f"cancelled, or never scheduled. {listing} lists your ids."
            )
        if entry.owner.agent_id != owner.agent_id:
            raise RetriableError(
                f"notification {excerpt(notification_id)} belongs to {entry.owner_name}, not to "
                f"you: only the agent that scheduled a notification may cancel it"
            )
        self._apply(NotificationDelta(cancelled=[entry.id]))
        return entry

    def deliver_due(self) -> list[str]:
        """Deliver every entry due at :meth:`now`; return the delivered ids.

        What the tick does; callable directly to drive delivery deterministically.
        """
        now = self.now()
        grace = timedelta(seconds=self.config.delivery_grace_seconds)
        delivered: list[str] = []
        dropped: list[str] = []
        due = sorted((e for e in self.state.pending if e.due_at <= now), key=lambda e: e.due_at)
        for entry in due:
            if self._deliver(entry):
                delivered.append(entry.id)
                self._unreachable_since.pop(entry.id, None)
                continue
            since = self._unreachable_since.setdefault(entry.id, now)
            if now - since >= grace:
                logger.warning(
                    "%s: dropping notification %s: its owner %s (%s) has not been running "
                    "for the delivery grace of %ss",
                    self.config.name,
                    entry.id,
                    entry.owner_name,
                    entry.owner.agent_id,
                    self.config.delivery_grace_seconds,
                )
                dropped.append(entry.id)
                self._unreachable_since.pop(entry.id, None)
        self._apply(NotificationDelta(delivered=delivered, dropped=dropped))
        return delivered

    # -- internals ------------------------------------------------------------------------
    def _deliver(self, entry: PendingNotification) -> bool:
        target = self.system.get_address(entry.owner.agent_id)
        if target is None or not target.is_alive():
            return False
        try:
            self.send(target, self._message_for(entry))
        except AddressError:  # stopped between the look-up and the send
            return False
        return True

    def _message_for(self, entry: PendingNotification) -> Message:
        try:
            cls = registered_class(entry.message_class)
            if isinstance(cls, type) and issubclass(cls, Message):
                message: Message = cls(content=entry.content, id=entry.message_id)
                return message
            problem = "is not a Message subclass"
        except (SerializationError, ValueError, TypeError) as exc:
            problem = f"cannot be used ({exc})"
        logger.warning(
            "%s: message class %s %s; delivering notification %s as %s",
            self.config.name,
            entry.message_class,
            problem,
            entry.id,
            model_path(UserMessage),
        )
        return UserMessage(content=entry.content, id=entry.message_id)

    def _new_id(self) -> str:
        taken = {e.id for e in self.state.pending}
        while True:
            candidate = uuid4().hex[:8]
            if candidate not in taken:
                return candidate

    def _apply(self, delta: NotificationDelta) -> None:
        """Mutate, then record — the one path every change takes. Empty: nothing."""
        if not (delta.added or delta.removed()):
            return
        self.state.apply_delta(delta)
        self._journal.record(delta, empty=False)

    def on_stop(self) -> None:
        self._journal.close()
