"""The telemetry path from a team's actors to its orchestrator.

Every send, receipt and completion is reported, so the path must cost next to nothing
on the sender's thread and must never lose a record. Records are small tuples appended
to one thread-safe deque per team (an atomic operation); the orchestrator is woken
with a single ``DRAIN`` token only when no wake-up is pending, and drains everything
queued when it handles it. Under load many records share one wake-up; when idle, and a
subscriber wants every record at once, each is delivered at once. Global order is the
order of the appends.

Why no record is lost: the orchestrator clears the pending flag *before* it drains.
A record appended before the clear is drained by that pass; one appended after it
sees the flag clear and queues a new wake-up. With no subscriber every record wakes it
only by the batch (``LAZY_BATCH``): nobody needs them at once — every query,
subscription and stop drains first — and an agent's turn, which reports half a dozen
events, does not wake another thread for each.

When every subscriber takes records in batches (an event store: see
``EventSubscriber.batched``), the channel is *deferred*: a full batch wakes the
orchestrator, and so does the :class:`DeferClock`, at most :data:`DEFER_DELAY` after
the first record that waits. A busy team then hands its store a thousand records per
wake-up instead of waking another thread for every message, and a quiet team's records
still reach the store within milliseconds.

Receipts are *held* while the channel is deferred (:meth:`TeamChannel.receive`):
the member keeps the receipt of the message it is handling aside, and a turn that ends
before anything releases it is reported as one ``KIND_HANDLED`` record — the receipt and
the completion, both times kept — instead of two. A held receipt is released as a
``KIND_RECEIVED`` record, in its place and with its own time, as soon as its member
reports anything else (so a log never shows a turn's sends before its receipt), when the
clock comes by (a turn still running after at most :data:`DEFER_DELAY` is seen as
received, as it would have been, by a deferred channel, without holding) and when a
subscriber wants records at once. A turn is never reported processed before received,
nor its member's records before its receipt: a member that finds its receipt taken by a
release waits for that release to queue it. (A record another thread reports for the
member at the very moment its turn ends, between the turn's end and its ``HANDLED``
record, may come before that record: not one of the turn's own.)
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from typing import Any

import pykka

from akgentic.core.address import AddressError

__all__ = [
    "DEFER_DELAY",
    "DRAIN",
    "KIND_HANDLED",
    "KIND_PROCESSED",
    "KIND_RECEIVED",
    "KIND_REPORT",
    "KIND_SENT",
    "LaterEvent",
    "TeamChannel",
]

KIND_SENT = 0
"""(KIND_SENT, ts, sender_address, message, recipient_address)"""
KIND_RECEIVED = 1
"""(KIND_RECEIVED, ts, receiver_address, message_id, None)"""
KIND_PROCESSED = 2
"""(KIND_PROCESSED, ts, receiver_address, message_id, None)"""
KIND_REPORT = 3
"""(KIND_REPORT, ts, sender_address, telemetry_message, None): rare, already built — or
a :class:`LaterEvent`, which the orchestrator builds when it drains the record."""
KIND_HANDLED = 4
"""(KIND_HANDLED, ts_processed, receiver_address, message_id, ts_received): a receipt
and a completion in one record — a turn during which its member reported nothing else,
and no release came by (see the module docstring)."""

Record = tuple[int, float, Any, Any, Any]

logger = logging.getLogger("akgentic.core")

LAZY_BATCH = 1024
"""With no subscriber, records wake the orchestrator only once this many wait (its
queries and its stop drain the queue first anyway), so the memory they take stays
bounded and the orchestrator's thread stays out of the way."""


DEFER_DELAY = 0.01
"""Seconds a record may wait in a deferred channel before the orchestrator is woken for
it (the store then commits it: see the recorder's ``COMMIT_GAP``)."""


class LaterEvent:
    """A domain event reported now and built later, on the orchestrator's thread
    (``Akgent.notify_event_later``): ``build`` makes the payload, ``parent`` is the
    message the actor was handling when it reported it."""

    __slots__ = ("build", "parent")

    def __init__(self, build: Any, parent: Any) -> None:
        self.build = build
        self.parent = parent


class DeferClock:
    """Wakes deferred channels' orchestrators :data:`DEFER_DELAY` after they asked.

    One daemon thread per process, started on first use, idle (blocked on a condition)
    while no channel waits. A channel asks once per batch (:meth:`TeamChannel.emit`);
    the clock's wake-up is then one ``DRAIN`` at most, however many records the batch
    holds.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: list[TeamChannel] = []
        self._thread: threading.Thread | None = None
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child has no clock thread (only the forking thread survives a
        fork): start afresh, so its first deferred channel starts one."""
        self._cond = threading.Condition()
        self._due = []
        self._thread = None

    def schedule(self, channel: TeamChannel) -> None:
        with self._cond:
            self._due.append(channel)
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(
                    target=self._run, name="akgentic-defer-clock", daemon=True
                )
                thread.start()  # if this raises, the next schedule tries again
                self._thread = thread
            self._cond.notify()

    def _run(self) -> None:
        cond = self._cond
        while True:
            with cond:
                cond.wait_for(lambda: self._due)
            time.sleep(DEFER_DELAY)  # the clock itself: what it waits for is time
            with cond:
                due, self._due = self._due, []
            for channel in due:
                try:
                    channel.deadline()
                except Exception:  # one channel must not stop the clock of every team
                    logger.exception("the telemetry clock could not wake a team")


CLOCK = DeferClock()


class _Drain:
    __slots__ = ()

    def __repr__(self) -> str:
        return "DRAIN"


DRAIN = _Drain()
"""The token that wakes an orchestrator to drain its team's telemetry."""


class TeamChannel:
    """One team's telemetry queue. Cheap to emit into from any thread."""

    __slots__ = (
        "_closed",
        "_deferred",
        "_eager",
        "_held",
        "_held_lock",
        "_pending",
        "_queue",
        "_ref",
        "_releasing",
        "_revision",
        "_revision_lock",
        "_scheduled",
        "members_stopped",
        "stop_deadline",
    )

    def __init__(self) -> None:
        self._queue: deque[Record] = deque()
        self._pending = False
        self._closed = False
        self._eager = False
        self._deferred = False
        self._scheduled = False
        self._held: dict[int, tuple[float, Any, Any]] = {}
        """Receipts held, by their member's address ``object_key``: (time received, the
        member's address, the message's id)."""
        self._held_lock = threading.Lock()
        self._releasing = False
        self._ref: pykka.ActorRef[Any] | None = None
        self._revision = 0
        self._revision_lock = threading.Lock()
        self.stop_deadline: float | None = None
        """When the team's graceful stop gives up (``time.monotonic()``), once it has
        begun (``Orchestrator.stop``): how long a member that stops waits for its
        children. None while the team runs."""
        self.members_stopped = False
        """Whether the team's graceful stop is past its regular members: all have stopped
        (no turn runs any more), and the stop is at its tool actors and last records. Set
        once, by the stop; read without a lock (``ActorSystem.members_stopped``)."""

    @property
    def revision(self) -> int:
        """A number that moves whenever what a member sees of its team may have changed:
        a member started or stopped, the role catalog changed. Read it *before* asking the
        orchestrator: an answer asked for after reading a revision is still the answer
        while the revision stays the same."""
        return self._revision

    def team_changed(self) -> None:
        """Move :attr:`revision`. Called *after* the change is visible to a query (a
        Start or Stop report queued: every query drains the queue first; the catalog
        updated on the orchestrator's thread), so a reader that saw the new revision
        cannot get an answer without the change; and again when the orchestrator folds
        the report, before any subscriber sees it. Locked: rare, and never lost."""
        with self._revision_lock:
            self._revision += 1

    def set_eager(self, eager: bool, deferred: bool = False) -> None:
        """Wake the orchestrator for every record (a subscriber wants each at once), for
        full batches or after :data:`DEFER_DELAY` (``deferred``: every subscriber takes
        batches), or only for full batches (nobody is listening: its queries drain the
        queue first)."""
        deferred = deferred and not eager
        # in the order that leaves no moment with neither flag set when one is wanted:
        # a record emitted in between would otherwise ask for no wake-up at all
        if eager:
            self._eager = True
            self._deferred = False
            if self._held:  # a subscriber that wants each record: no receipt waits
                self.release_held()
        else:
            self._deferred = deferred
            self._eager = False
        if (self._queue or self._held) and not self._pending:  # waiting under the old flags
            if eager:
                self._wake()
            elif deferred and not self._scheduled:
                self._scheduled = True
                CLOCK.schedule(self)

    def bind(self, orchestrator_ref: pykka.ActorRef[Any]) -> None:
        """Deliver wake-ups to this orchestrator (one at once if records are waiting)."""
        self._ref = orchestrator_ref
        if self._pending:
            orchestrator_ref.tell(DRAIN)

    def report_and_deliver(self, sender: Any, msg: Any, recipient: Any) -> None:
        """Report ``sender``'s send of ``msg``, then deliver it to ``recipient`` (an
        ``ActorAddress``): the recipient's thread reports the receipt, which must never come
        before the send in the team's log (reported after the delivery, a send lost that
        race now and then). A recipient that cannot take it raises ``AddressError`` first
        and nothing is reported. One that stops between the check and the delivery is taken
        as one that stopped with the message in its inbox: the send stays reported (sent,
        never received) and no error is raised, so the log and the caller agree."""
        if recipient.is_alive():
            self.emit(KIND_SENT, sender, msg, recipient)
            # Not contextlib.suppress: on every send, its object and its two calls cost
            # more than the delivery's own work (bench/README.md).
            try:  # noqa: SIM105
                recipient.deliver(msg)
            except AddressError:  # stopped since: sent, never received
                pass
        else:
            recipient.deliver(msg)  # raises AddressError, which says why
            self.emit(KIND_SENT, sender, msg, recipient)

    def emit(self, kind: int, sender: Any, a: Any, b: Any = None) -> None:
        """Queue one record (after ``sender``'s held receipt, if it has one); wake the
        orchestrator if no wake-up is pending."""
        if self._closed:
            return
        held = self._held
        if (held or self._releasing) and sender is not None:
            if sender.object_key in held:
                self.release_held(sender.object_key)
            elif self._releasing:  # its receipt may be taken by a release not queued yet
                with self._held_lock:
                    pass
        self._put((kind, time.time(), sender, a, b))

    def receive(self, receiver: Any, message_id: Any) -> None:
        """``receiver`` took message ``message_id`` out of its inbox to handle it: its
        receipt, held (see the module docstring) until :meth:`processed` or a release
        while the channel is deferred, else queued at once — for a subscriber that wants
        every record, or for nobody (no record is packed then: holding would save
        nothing)."""
        if self._closed:
            return
        if not self._deferred:
            self._put((KIND_RECEIVED, time.time(), receiver, message_id, None))
            return
        key = receiver.object_key
        held = self._held
        if key in held:  # a turn inside a turn: the outer one's receipt goes first
            self.release_held(key)
        elif self._releasing:  # the outer one's receipt may be taken, not queued yet
            with self._held_lock:
                pass
        held[key] = (time.time(), receiver, message_id)
        if self._eager:  # made eager meanwhile: its release may have run before the hold
            self.release_held(key)
        elif self._deferred and not self._scheduled:
            self._scheduled = True
            CLOCK.schedule(self)

    def processed(self, receiver: Any, message_id: Any) -> None:
        """``receiver`` is done with message ``message_id``: one ``KIND_HANDLED`` record
        when its receipt is still held, else the completion (after the receipt a
        release may be queueing at this moment)."""
        if self._closed:
            return
        record = self._held.pop(receiver.object_key, None)
        if record is None or record[2] is not message_id:
            if record is not None:  # not this turn's: cannot happen (receive releases it)
                self._put((KIND_RECEIVED, record[0], record[1], record[2], None))
            elif self._releasing:  # taken by a release that may not have queued it yet
                with self._held_lock:
                    pass
            self._put((KIND_PROCESSED, time.time(), receiver, message_id, None))
            return
        self._put((KIND_HANDLED, time.time(), receiver, message_id, record[0]))

    def release_held(self, key: int | None = None) -> None:
        """Queue the held receipt of the member whose ``object_key`` is ``key`` (every
        held receipt: None) as a ``KIND_RECEIVED`` record with its own time. Any thread;
        one release at a time, and ``_releasing`` says one is under way to a member that
        finds its receipt gone (:meth:`processed`)."""
        with self._held_lock:
            self._releasing = True
            try:
                held = self._held
                for each in list(held) if key is None else [key]:
                    record = held.pop(each, None)
                    if record is not None:
                        self._put((KIND_RECEIVED, record[0], record[1], record[2], None))
            finally:
                self._releasing = False

    def _put(self, record: Record) -> None:
        queue = self._queue
        queue.append(record)
        if not self._pending:
            if self._eager or len(queue) >= LAZY_BATCH:
                self._wake()
            elif self._deferred and not self._scheduled:
                self._scheduled = True
                CLOCK.schedule(self)

    def _wake(self) -> None:
        self._pending = True
        ref = self._ref
        if ref is not None:
            try:
                ref.tell(DRAIN)
            except pykka.ActorDeadError:
                self._closed = True

    def deadline(self) -> None:
        """The clock's call: wake the orchestrator if records still wait undrained.

        Why nothing is stranded: ``_scheduled`` is cleared *before* the queue is looked
        at. A record appended before that look is seen here; one appended after it finds
        the flag clear and asks the clock again."""
        self._scheduled = False
        if self._held:  # a turn still running after the delay: seen as received
            self.release_held()
        if self._queue and not self._pending and not self._closed:
            self._wake()

    def take(self) -> deque[Record]:
        """Clear the pending flag and return the queue to pop from, oldest first.

        Orchestrator thread only: pop until empty, in the same pass.
        """
        self._pending = False
        return self._queue

    def close(self) -> None:
        """Stop accepting records: the team is gone and nobody will drain them."""
        self._closed = True
        self._queue.clear()
        self._held.clear()

    @property
    def closed(self) -> bool:
        return self._closed


class NullChannel(TeamChannel):
    """The channel of an actor that belongs to no team: records go nowhere."""

    __slots__ = ()

    def emit(self, kind: int, sender: Any, a: Any, b: Any = None) -> None:
        return None

    def receive(self, receiver: Any, message_id: Any) -> None:
        return None

    def processed(self, receiver: Any, message_id: Any) -> None:
        return None

    def team_changed(self) -> None:
        return None


NULL_CHANNEL = NullChannel()
