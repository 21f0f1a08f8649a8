"""EventRecorder: persistence is a subscriber on the orchestrator that records everything.

Every telemetry record the orchestrator hands on is appended to the team's event log;
state changes also update the latest-state table, and an agent's ``LlmMessageEvent``s and
``ContextReplacedEvent``s its working memory (the model context), in the same
transaction (``MemoryRow``: the items are the messages' JSON as the event encoded them).
The log comes first: memory the store refuses is written apart afterwards, or logged,
and never holds the log back (restore reads the log; the memory is a convenience).

A team run under a lease is recorded under a *fence* (``Fence``: the team's lease and
this process's owner id): the store appends a group only if the lease is still this
process's, checked inside the transaction that appends it (and so is a working-memory
change written apart from its group). A process paused anywhere (SIGSTOP, a suspended
machine) and taken over meanwhile has its next write refused whole; from then on it
writes nothing, and ``on_lost`` is told (the manager stops the team).

Records arrive a batch at a time (``on_batch``) and are encoded there, on the
orchestrator's thread, as one *event pack* (``akgentic.storage``): the sends and
receipts of a batch — the three records of every message a team passes — become arrays
of numbers and each message's body once, built by C-level loops over the batch, never
as telemetry messages; a store keeps the pack as one row, and its readers see the
events inside it. The recorder is a *batched* subscriber: a busy team's orchestrator
is not woken for every record on its account (see ``EventSubscriber``).

Committing happens on the recorder's own writer thread (group commit): the orchestrator
hands each batch over, encoded, and goes on while the disk syncs; the writer commits
everything handed over since its last commit in one transaction. Durability for callers:
:meth:`wait_committed` blocks until the message with a given id has been committed,
which is how ``TeamRuntime.send`` returns only once the message it accepted is on disk;
the team's stop returns only once everything is.

All or nothing for a resume: between :meth:`hold` and :meth:`release` nothing is
written (the batches wait in memory); :meth:`discard` drops them and records nothing
more, ever — so a resume that fails half-way leaves the stored team exactly as it was.
"""

from __future__ import annotations

import inspect
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from operator import attrgetter
from typing import Any, NamedTuple
from uuid import UUID

from pydantic import BaseModel

from akgentic.core import (
    ErrorMessage,
    EventMessage,
    Message,
    SentMessage,
    StateChangedMessage,
    TelemetryBatch,
)
from akgentic.core.excerpt import exception_line
from akgentic.core.serialization import SerializationError
from akgentic.core.words import counted
from akgentic.llm import ContextReplacedEvent, LlmMessageEvent
from akgentic.storage import (
    LEASE_LOST,
    RECOVERED,
    WRITE_FAILED,
    AddressIndex,
    EncodedEvent,
    Fence,
    LeaseLostError,
    MemoryRow,
    StateRow,
    StorageBundle,
    TeamStatus,
    dump_objects,
    encode_event,
    encode_state,
    encode_value,
    pack_encoded,
    pack_records,
    send_position,
)

__all__ = ["LOSS_ADVICE", "EventRecorder"]


def _encoded(msg: Message) -> EncodedEvent:
    """``msg`` as stored, or — when it cannot be serialized — an ErrorMessage saying so.

    One event a store cannot encode (a plain object in an ``Any`` field) must not hold
    back every record after it: it is replaced in the log by a report naming it.
    """
    try:
        return encode_event(msg)
    except SerializationError as exc:
        logger.error("team %s: %s cannot be stored: %s", msg.team_id, type(msg).__name__, exc)
        return encode_event(
            ErrorMessage(
                content_type="error",
                content=f"a {type(msg).__name__} could not be stored: {exc}",
                sender=msg.sender,
                team_id=msg.team_id,
                timestamp=msg.timestamp,
            )
        )


def _latest_states(batch: list[Message]) -> list[StateRow]:
    """Each agent's last state in ``batch`` (latest wins), encoded for the latest-state
    table. A state that cannot be encoded is logged and left out (its event is already
    reported in the log): the table is a convenience and must not hold the log back."""
    latest: dict[UUID, tuple[str, BaseModel]] = {}
    for msg in batch:
        sender = msg.sender
        if isinstance(msg, StateChangedMessage) and sender is not None:
            latest[sender.agent_id] = (sender.name, msg.state)
    rows: list[StateRow] = []
    for agent_id, (name, state) in latest.items():
        try:
            rows.append((agent_id, name, encode_state(state)))
        except Exception as exc:  # a custom serializer may raise anything
            logger.error("%s's state cannot be stored in the latest-state table: %s", name, exc)
    return rows


def _memory_rows(batch: list[Message]) -> list[MemoryRow]:
    """The working-memory changes of ``batch``, in order: each ``LlmMessageEvent`` adds
    its run's messages to its agent's memory, each ``ContextReplacedEvent`` replaces it.

    The items are the messages' JSON as the event encoded them when it was built
    (``message_items``): nothing is decoded to be encoded again. An event decoded from
    storage has none, and its ``messages_json`` is split. A change that cannot be encoded
    is logged and left out: the memory is a convenience, and the log is complete."""
    rows: list[MemoryRow] = []
    for msg in batch:
        sender = msg.sender
        if not isinstance(msg, EventMessage) or sender is None:
            continue
        event = msg.event
        if isinstance(event, LlmMessageEvent | ContextReplacedEvent):
            try:
                items = event.message_items()
                if items is None:
                    items = dump_objects(json.loads(event.messages_json), "messages")
            except Exception:
                logger.exception("%s's working memory cannot be updated", sender.name)
                continue
            replace = isinstance(event, ContextReplacedEvent)
            rows.append(MemoryRow(sender.agent_id, items, replace))
    return rows


_Encoded = tuple[EncodedEvent, UUID | None]
"""A record encoded from its fields, and the id a caller may wait on (a send's message)."""


class _Pack(NamedTuple):
    """A batch encoded as one event pack, with what the writer and callers need of it."""

    data: bytes
    size: int  # how many events it holds
    kinds: bytes  # its records' kinds: where its sends are (``send_position``)
    sent: list[int]  # the ids (``UUID.int``) of the messages sent there: callers wait on
    # these. Kept as ints, which the garbage collector does not track: ten thousand
    # remembered UUID objects made every full collection of a busy process longer
    messages: list[Message]  # its reports, built: for the tables beside the log


_Item = _Encoded | _Pack

_ID_INT = attrgetter("id.int")
_ONE_SEND = bytes((TelemetryBatch.SENT,))
"""The kinds of a row that is one send (for ``send_position``)."""


def _events_in(items: Iterable[Message | _Item]) -> int:
    return sum(item.size if isinstance(item, _Pack) else 1 for item in items)


logger = logging.getLogger("akgentic.team")

_REMEMBERED = 10_000

COMMIT_GAP = 0.005
"""Seconds that consecutive commits keep apart while records keep coming, so that a
group can gather: a commit has a fixed cost (a sync, WAL frames, the GIL taken back
several times), and a busy team that handed a few rows at a time paid it for every few
rows. A record that reaches the recorder after a quiet spell is committed at once
(records reach it by the batch, or at most ``DEFER_DELAY`` late), and nobody who waits
for a commit (:meth:`EventRecorder.wait_committed`, :meth:`EventRecorder.written`) is ever
kept waiting by this: they make the writer go now."""

GROUP_EVENTS = 5_000
"""A group of this many events is committed without waiting out :data:`COMMIT_GAP`."""

LOSS_ADVICE = (
    "the stored log ends before them, and the team is left as after a crash (not marked "
    "STOPPED): a resume says it did not stop cleanly and restores it from its log, without "
    "them (the last exchange may be missing); free the store (disk space, permissions, a "
    "process holding it) before resuming"
)
"""What a loss of records the store refused means and what to do, said wherever the
loss is (the stop giving up on them, a process ended at once while they were kept)."""

CLOSING_TRIES_FOR = 30.0
"""Seconds a stopping recorder keeps trying to commit its last records when the store
fails them (a dropped connection, a disk full for a moment), a second apart: the stop's
records — often the answer of the last turn — are delayed like any other, and dropped
(logged) only when the store stays down past this. Below the writer's join timeout."""


_FENCED = (
    ("events", "append_encoded", "EventLog"),
    ("events", "append_packs", "EventLog"),
    ("working_memory", "replace", "WorkingMemoryStore"),
    ("working_memory", "append", "WorkingMemoryStore"),
    ("teams", "set_status", "TeamStore"),
)
"""The store methods a leased team's recorder calls with ``fence=``: (bundle attribute,
method, protocol)."""


def _check_takes_fence(storage: StorageBundle) -> None:
    """Raise ``TypeError`` now, in words, when a store the recorder writes to cannot check
    a lease in its transaction: a leased team's commits would all be refused by it, and
    retried forever (the log), or dropped (a memory change written apart), or fail the
    stop (the STOPPED mark)."""
    for part, name, protocol in _FENCED:
        store = getattr(storage, part, None)
        try:
            parameters = inspect.signature(getattr(store, name)).parameters.values()
        except (AttributeError, TypeError, ValueError):  # not there, or not inspectable
            continue
        if not any(p.name == "fence" or p.kind is p.VAR_KEYWORD for p in parameters):
            raise TypeError(
                f"{type(store).__name__}.{name} takes no fence=: the stores of a team "
                f"run under a lease must check it in the same transaction "
                f"(akgentic.storage.{protocol}.{name})"
            )


class EventRecorder:
    """Records one team's stream into a storage bundle (an ``EventSubscriber``)."""

    batched = True
    """Records may reach it by the batch: nobody reads them before a query or a stop,
    which drain the orchestrator's queue first, or a commit a caller waits for."""

    def __init__(
        self,
        storage: StorageBundle,
        team_id: UUID,
        fence: Fence | None = None,
        on_lost: Callable[[LeaseLostError], None] | None = None,
    ) -> None:
        if fence is not None:
            _check_takes_fence(storage)
        self._storage = storage
        # the condition of every commit, checked by the store inside its transaction:
        # this process still holds the team's lease. A commit it refuses stores nothing,
        # and neither that group nor any that follows is written; ``on_lost`` is told.
        # Passed as ``fence=`` only when there is one: a store that predates it works
        self._fenced: dict[str, Any] = {} if fence is None else {"fence": fence}
        self._on_lost = on_lost
        self._team_id = team_id
        self._buffer: list[Message | _Item] = []
        self._batch: TelemetryBatch | None = None
        self._addresses = AddressIndex(self._address_json)
        self._team_json = encode_value(team_id)
        self._restoring = False
        self._held = False
        self._discarded = False
        self.lost: LeaseLostError | None = None
        """Why nothing more is recorded when the lease was lost (another process took the
        team over); None while it is held."""
        self.unsaved = 0
        """How many records the store still refused when the stop gave up on them (after
        :data:`CLOSING_TRIES_FOR`): lost, and logged as such."""
        self.end_saved: bool | None = None
        """Whether the team's stop wrote everything it was handed (what :meth:`discard`
        dropped was never to be written): None until its outcome is known — its
        :meth:`on_stop` has not returned, and records may still be lost — False when
        some were lost (:attr:`unsaved`) or may still be (its writer outlasted its wait).
        Only True lets the team be marked STOPPED: whoever marks it after a stop reads
        this once the orchestrator is seen stopped (after :meth:`on_stop` returned)."""
        self.on_retrying: Callable[[float], None] | None = None
        """Told, at each try of the stop's last records the store refused, how long the
        stop still tries (seconds): the team's manager keeps its stop marker fresh for
        that long, so that a resume meanwhile waits for the stop, not past it."""
        self._lock = threading.RLock()  # the orchestrator's thread, and release/discard
        self._stop_requested = False
        # what was committed lately, for wait_committed: (sent ids, positions, first seq)
        self._recent: deque[tuple[list[int], bytes, int]] = deque()
        self._remembered = 0
        self._cond = threading.Condition()
        self.last_seq = storage.events.last_seq(team_id)
        self.first_seq = self.last_seq + 1
        """The seq of the first record this recorder writes: the log's end when it was
        made, the team's lease taken (a resume has waited for the stop before it), before
        the team it records wrote anything."""
        # the writer's queue: rows handed on and not yet committed, in order
        self._io = threading.Condition()
        self._outbox: list[_Item] = []
        self._outbox_events = 0  # how many events the outbox holds (a pack holds many)
        self._taken = 0  # how many events the writer took from it and is committing
        self._tables: list[Message] = []  # their messages, for the tables beside the log
        self._writer: threading.Thread | None = None
        self._idle = True
        self._closing = False
        self._closing_at = 0.0  # when the stop began: it tries for CLOSING_TRIES_FOR
        self._urgent = 0  # callers waiting for a commit: the writer does not pace
        self._last_commit = 0.0
        self._failed = 0  # commits that failed in a row (the writer's own count)

    # -- EventSubscriber -------------------------------------------------------------------
    def on_message(self, msg: Message) -> None:
        if not self._restoring and not self._discarded:
            with self._lock:
                self._buffer.append(msg)

    def on_batch(self, batch: TelemetryBatch) -> None:
        """A run of records, encoded as one event pack (see the module docstring)."""
        if self._restoring or self._discarded:
            return
        records = batch.records
        self._batch = batch
        items: list[Message | _Item]
        try:
            items = [self._pack(batch, records)]
        except Exception as exc:  # each record as its message (a bad one is reported)
            if not isinstance(exc, SerializationError):  # a message the pack cannot hold
                logger.exception("team %s: a batch could not be packed", self._team_id)
            items = list(batch.messages())
        finally:
            self._batch = None
        with self._lock:
            self._buffer.extend(items)

    def _pack(self, batch: TelemetryBatch, records: list[Any]) -> _Pack:
        kinds = batch.kinds
        reports: dict[int, EncodedEvent] = {}
        messages: list[Message] = []
        position = kinds.find(TelemetryBatch.REPORT)
        while position >= 0:
            message = batch.message(position)
            reports[position] = _encoded(message)
            messages.append(message)
            position = kinds.find(TelemetryBatch.REPORT, position + 1)
        packed = pack_records(records, self._addresses, reports, self._team_json, kinds)
        ids = list(map(_ID_INT, packed.sent))
        return _Pack(packed.data, packed.size, packed.kinds, ids, messages)

    def _address_json(self, address: Any) -> str:
        """An address's stored JSON, the first time a pack needs it (then kept by the
        address index)."""
        batch = self._batch
        snapshot = batch.snapshot(address) if batch is not None else None
        return "null" if snapshot is None else encode_value(snapshot)

    def flush(self) -> None:
        """Hand the buffered batch to the writer (encoded here, on the caller's thread).

        The writer thread commits everything handed to it since its last commit in one
        transaction (group commit): the orchestrator goes on draining while the disk
        syncs, and under load one sync covers many batches. If the store fails, the
        rows stay queued and are committed with the next ones: a storage hiccup delays
        records, never drops them. Callers that need a record on disk wait for it
        (:meth:`wait_committed`, :meth:`wait_seq`).
        """
        with self._lock:
            self._hand_over()

    def _hand_over(self) -> None:
        batch = self._buffer
        if not batch or self._held or self._discarded:
            return
        self._buffer = []
        rows: list[_Item] = []
        messages: list[Message] = []
        for item in batch:
            if isinstance(item, _Pack):
                rows.append(item)
                messages.extend(item.messages)
            elif isinstance(item, tuple):
                rows.append(item)
            else:
                rows.append(self._row_of(item))
                messages.append(item)
        with self._io:
            wake = not self._outbox  # else the writer is gathering or committing: it looks
            self._outbox.extend(rows)  # again before it waits, unless the group is full
            self._outbox_events += _events_in(rows)
            self._tables.extend(messages)
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_loop, name=f"recorder-{self._team_id}", daemon=True
                )
                self._writer.start()
            if wake or self._outbox_events >= GROUP_EVENTS:
                self._io.notify_all()

    @staticmethod
    def _row_of(msg: Message) -> _Encoded:
        key = msg.message.id if isinstance(msg, SentMessage) else msg.id
        return _encoded(msg), key

    def _write_loop(self) -> None:
        """The writer: commit whatever is queued, in order, one transaction at a time."""
        io = self._io
        while True:
            with io:
                io.wait_for(lambda: self._outbox or self._closing)
                self._gather()
                if not self._outbox:
                    self._idle = True
                    io.notify_all()
                    return
                rows, self._outbox, self._outbox_events = self._outbox, [], 0
                self._taken = _events_in(rows)
                tables, self._tables = self._tables, []
                self._idle = False
            # once discarded, never written again: a group handed over meanwhile included
            if self._discarded:
                self._not_written(rows)
                continue
            try:
                firsts, lost = self._commit(rows, tables)
            except LeaseLostError as refused:  # the store refused it: nothing was written
                self._lost(refused, rows)
                continue
            except Exception as exc:
                if self._retry(rows, tables, exc):
                    continue
                return
            if self._failed:
                logger.info(
                    "team %s: the event log took the kept records after %d failed tries; "
                    "nothing was lost",
                    self._team_id,
                    self._failed,
                    extra={RECOVERED: f"team {self._team_id}"},
                )
                self._failed = 0
            self._last_commit = time.monotonic()
            self._committed_rows(rows, firsts)
            if lost is not None:  # the log was written; a memory change after it was refused
                self._lost(lost, [])
                continue
            # not kept while waiting for the next group: under load a group is a whole
            # backlog, and memory per message must stay flat
            del rows, tables, firsts
            with io:
                self._taken = 0
                self._idle = not self._outbox
                io.notify_all()

    def _not_written(self, rows: list[_Item]) -> None:
        """The team is another process's now (its lease was taken over): drop ``rows``
        and everything queued, and write nothing more, ever."""
        self._discarded = True
        with self._io:
            dropped = _events_in(rows) + self._outbox_events
            self._outbox, self._tables, self._outbox_events = [], [], 0
            self._taken = 0
            self._idle = True
            self._io.notify_all()
        with self._cond:  # whoever waits for a commit: none comes
            self._cond.notify_all()
        logger.error(
            "team %s: another process runs it now (its lease was taken over): "
            "%d records not written",
            self._team_id,
            dropped,
            extra={LEASE_LOST: True},
        )

    def _lost(self, lost: LeaseLostError, rows: list[_Item]) -> None:
        """A write the store refused under the fence: the lease is lost. Nothing more is
        written (``rows`` neither), and ``on_lost`` is told (the manager stops the team)
        before the writer is seen idle: whoever waits for it finds the loss reported."""
        self._discarded = True
        self.lost = self.lost or lost
        if self._on_lost is not None:
            self._on_lost(lost)
        self._not_written(rows)

    def _commit(
        self, items: list[_Item], tables: list[Message]
    ) -> tuple[list[int], LeaseLostError | None]:
        """Store a group with the tables beside the log — the latest states and the
        working memory — in one transaction; the first number of each item, and the
        lease's loss when it was found only after the log was committed.

        The log comes first. Should the group fail with its working memory changes, it
        is committed again without them (states kept), and the changes are then written
        one by one as before they rode with the log, each failure logged: memory the
        store will not take never holds the log back (restore reads the log, the memory
        is a convenience). Those writes are fenced as the log's: one the store refuses
        for a lost lease stops them, and that loss is returned with the log's numbers.
        Should the group fail without them as well, the log is at fault (the store is
        down, not the memory: nothing is said of the memory): the exception goes to the
        caller, which says the group is kept for the next try. (An event log that
        predates ``memory`` refuses the argument with a ``TypeError`` and takes this way
        too.)"""
        states, memory = _latest_states(tables), _memory_rows(tables)
        if not memory:
            return self._append(items, states), None
        try:
            return self._append(items, states, memory), None
        except LeaseLostError:  # refused whole, memory or not
            raise
        except Exception as exc:  # the traceback comes with the next failure, if any
            refused = exc
        firsts = self._append(items, states)  # failing too: the store is down, not the memory
        self._failed += 1  # a failed try: its success is said (see _write_loop)
        logger.warning(
            "team %s: a group could not be committed with its working memory (%r); "
            "the log was committed without it",
            self._team_id,
            refused,
        )
        return firsts, self._memory_apart(memory)

    def _memory_apart(self, rows: list[MemoryRow]) -> LeaseLostError | None:
        """Each working-memory change in a transaction of its own, after its events
        are committed (the way taken when the group would not take them), under the
        log's fence: a change the store refuses is logged and the others are still
        tried, unless it was refused for a lost lease — then none is, and the loss is
        returned."""
        memory, team, fenced = self._storage.working_memory, self._team_id, self._fenced
        for row in rows:
            try:
                items = [json.loads(item) for item in row.items]
                if row.replace:
                    memory.replace(team, row.agent_id, items, **fenced)
                else:
                    memory.append(team, row.agent_id, items, **fenced)
            except LeaseLostError as lost:
                logger.error("team %s: its working memory was not updated: %s", team, lost)
                self._failed = 0  # something was lost: the next commit does not say otherwise
                return lost
            except Exception:
                logger.exception("team %s: could not update the working memory", team)
                self._failed = 0  # something was lost: the next commit does not say otherwise
        return None

    def _append(
        self, items: list[_Item], states: list[StateRow], memory: list[MemoryRow] | None = None
    ) -> list[int]:
        """Store a group, in order, in one transaction; the first number of each item.

        All rows (a store fed built messages): one ``append_encoded``. Otherwise one
        ``append_packs``, each run of rows among the packs packed on its own — so a
        failed commit leaves nothing half-written for the retry to write again. The
        latest ``states`` and the ``memory`` changes ride in the same transaction
        (``memory`` is passed only when there is some)."""
        events = self._storage.events
        team = self._team_id
        fenced = self._fenced  # checked at the start: the log takes it
        if not any(isinstance(item, _Pack) for item in items):
            rows = [item[0] for item in items if not isinstance(item, _Pack)]
            if memory:
                return events.append_encoded(team, rows, states, memory, **fenced)
            return events.append_encoded(team, rows, states, **fenced)
        datas: list[bytes] = []
        run: list[EncodedEvent] = []
        for item in items:
            if isinstance(item, _Pack):
                if run:
                    datas.append(pack_encoded(run, self._team_json))
                    run = []
                datas.append(item.data)
            else:
                run.append(item[0])
        if run:
            datas.append(pack_encoded(run, self._team_json))
        if memory:
            first = events.append_packs(team, datas, states, memory, **fenced)[0]
        else:  # not passed when there is none: a log wrapped by one that predates it works
            first = events.append_packs(team, datas, states, **fenced)[0]
        firsts: list[int] = []
        for item in items:
            firsts.append(first)
            first += item.size if isinstance(item, _Pack) else 1
        return firsts

    def _gather(self) -> None:
        """Let a group gather until :data:`COMMIT_GAP` after the last commit (``_io``
        held): unless closing, a caller waits for a commit, or the group is full."""
        delay = self._last_commit + COMMIT_GAP - time.monotonic()
        if delay > 0:
            self._io.wait_for(
                lambda: self._closing or self._urgent > 0 or self._outbox_events >= GROUP_EVENTS,
                delay,
            )

    @contextmanager
    def _waiting(self) -> Iterator[None]:
        """A caller waits for a commit: the writer commits what it has now. The count is
        given back however the wait ends (a Ctrl-C lands as a KeyboardInterrupt anywhere
        in the main thread), so a writer is never left believing someone waits."""
        counted = False
        try:
            with self._io:
                self._urgent += 1
                counted = True
                self._io.notify_all()
            yield
        finally:
            if counted:
                with self._io:
                    self._urgent -= 1

    def _retry(self, rows: list[_Item], tables: list[Message], failure: Exception) -> bool:
        """After a failed commit (``failure``): put the rows back at the front, in order,
        and wait for more (or a second) before the next try. A closing recorder tries
        again too, a second apart; False once it has tried for :data:`CLOSING_TRIES_FOR`:
        the rows cannot be written, and that is logged — what was lost, why, and what a
        resume then finds. A closing recorder that still tries tells :attr:`on_retrying`
        first."""
        team, io = self._team_id, self._io
        left, told = self.tries_left(), self.on_retrying
        if left and told is not None:  # outside the lock: a store's write
            told(left)
        with io:
            if self._closing and time.monotonic() - self._closing_at >= CLOSING_TRIES_FOR:
                self.unsaved += _events_in(rows) + self._outbox_events
                logger.error(
                    "team %s: %s not saved: the store still refused them (%s) after %gs of "
                    "tries as the team stopped, and they are lost; %s",
                    team,
                    counted(self.unsaved, "record"),
                    exception_line(failure),
                    CLOSING_TRIES_FOR,
                    LOSS_ADVICE,
                )
                self._outbox, self._tables, self._idle = [], [], True
                self._outbox_events = self._taken = 0
                io.notify_all()
                return False
            # counted before it is said (refused() counts what is kept from then on) and
            # before the pause: a stop beginning in it sees it
            self._failed += 1
            logger.exception(
                "team %s: the event log refused a batch; it is kept",
                team,
                extra={WRITE_FAILED: f"team {team}"},
            )
            self._outbox[:0] = rows
            self._outbox_events += _events_in(rows)
            self._taken = 0
            self._tables[:0] = tables
            self._idle = True
            io.notify_all()
            waiting, closing = len(self._outbox), self._closing
            # a stop beginning ends the pause (it tries at once); during one, a second
            io.wait_for(lambda: self._closing != closing or len(self._outbox) > waiting, 1.0)
            return True

    def _committed_rows(self, items: list[_Item], firsts: list[int]) -> None:
        """Remember what was committed, for callers that wait on a message id: one entry
        per pack (its sent ids, their positions, its first number), not one per message
        — the writer must not spend per message what a rare caller needs."""
        recent = self._recent
        last = 0
        with self._cond:  # committed: callers waiting on these may go on
            for item, first in zip(items, firsts, strict=True):
                if isinstance(item, _Pack):
                    if item.sent:
                        recent.append((item.sent, item.kinds, first))
                        self._remembered += len(item.sent)
                    last = first + item.size - 1
                else:
                    key = item[1]
                    if key is not None:  # a receipt has none: nobody waits on its id
                        recent.append(([key.int], _ONE_SEND, first))
                        self._remembered += 1
                    last = first
            while self._remembered > _REMEMBERED and len(recent) > 1:
                self._remembered -= len(recent.popleft()[0])
            self.last_seq = last
            self._cond.notify_all()

    def _seq_of(self, message_id: UUID) -> int | None:
        """The number of a committed send of ``message_id`` (``_cond`` held), newest
        first: a caller waits for what it sent a moment ago."""
        for ids, kinds, first in reversed(self._recent):
            try:
                return first + send_position(kinds, ids.index(message_id.int))
            except ValueError:
                continue
        return None

    @property
    def closing(self) -> bool:
        """Whether the team's stop is writing its last records (its members have all
        stopped; the orchestrator answers nothing until they are written, which takes up
        to :data:`CLOSING_TRIES_FOR` while the store refuses them)."""
        return self._closing

    def tries_left(self) -> float | None:
        """Seconds the team's stop still tries to write its last records to a store that
        refuses them (:data:`CLOSING_TRIES_FOR` from when it began; it gives up at its
        next refused try after that); None while the team is not stopping."""
        if not self._closing:
            return None
        return max(0.0, self._closing_at + CLOSING_TRIES_FOR - time.monotonic())

    def refused(self) -> int:
        """How many records are kept in memory because the store refuses them (0 while it
        takes them): what the process would lose if it ended now. Read without a lock —
        a signal handler asks it, maybe on the thread that holds one — so a count taken
        as the writer moves rows may be off by that group."""
        return self.unwritten() if self._failed else 0

    def unwritten(self) -> int:
        """How many records are handed on or buffered and not yet committed, whether or
        not the store refuses them (read without a lock, as :meth:`refused`)."""
        return self._outbox_events + self._taken + _events_in(list(self._buffer))

    def written(self, timeout: float = 60.0) -> bool:
        """Block until everything handed to the writer is committed (and its tables
        written); False after ``timeout``."""
        with self._waiting(), self._io:
            return self._io.wait_for(lambda: not self._outbox and self._idle, timeout)

    def _close_writer(self, timeout: float = 60.0) -> None:
        """Commit what is handed over, then end the writer. When the store is refusing
        writes as this begins, that is said first: the stop waits for it for up to
        :data:`CLOSING_TRIES_FOR`, and what it still refuses then is lost."""
        with self._io:
            if not self._closing:  # closing once said: a Ctrl-C then finds it so
                self._closing_at, self._closing = time.monotonic(), True
                pending = self._outbox_events
                if self._failed and pending and not self._discarded:
                    logger.warning(
                        "team %s: stopping with %s not yet saved (the store refuses them): "
                        "trying for up to %gs more",
                        self._team_id,
                        counted(pending, "record"),
                        CLOSING_TRIES_FOR,
                    )
            self._io.notify_all()
        writer = self._writer
        if writer is not None:
            writer.join(timeout)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        """Replayed history is already in the log: it is not recorded again."""
        self.flush()
        self.written()
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        self._stop_requested = True

    def on_stop(self, team_id: UUID) -> None:
        """Everything handed on is committed before this returns (the orchestrator is
        not seen stopped before its last record is on disk). A graceful stop marks the
        team STOPPED, under the fence (a team taken over meanwhile is its new holder's
        to mark: the loss is then handled as a refused commit's); a crash leaves it
        RUNNING, and so does a stop that lost records (:attr:`unsaved`) or whose writer
        was still at them when the wait for it ran out (a commit that does not return):
        the log may not hold the team's end, and a resume must not take it for a clean
        stop. The outcome is :attr:`end_saved`."""
        self.flush()
        self._close_writer()
        writer = self._writer
        ended = writer is None or not writer.is_alive()
        if not ended:
            logger.error(
                "team %s: not marked STOPPED: its last records were still being written "
                "when the stop stopped waiting for them; it stays RUNNING in storage, and a "
                "resume restores it from its log as after a crash",
                team_id,
            )
        self.end_saved = ended and not self.unsaved
        if self._stop_requested and not self._discarded and self.end_saved:
            try:
                self._mark_stopped(team_id)
            except LeaseLostError as lost:
                logger.error("team %s: not marked STOPPED: %s", team_id, lost)
                self._lost(lost, [])
            except Exception as exc:  # the store is down: the team reads as crashed
                logger.error(
                    "team %s: not marked STOPPED (%s); it stays RUNNING in storage, and "
                    "a resume restores it from its log as after a crash",
                    team_id,
                    exception_line(exc),
                )

    def _mark_stopped(self, team_id: UUID) -> None:
        """STOPPED, under the fence, if the store still has the team RUNNING."""
        teams = self._storage.teams
        record = teams.get(team_id)
        if record is not None and record.status == TeamStatus.RUNNING:
            teams.set_status(team_id, TeamStatus.STOPPED, **self._fenced)

    # -- all or nothing ---------------------------------------------------------------------
    def hold(self) -> None:
        """Keep what arrives in memory, writing nothing, until :meth:`release` (what was
        handed on before is committed first)."""
        with self._lock:
            self._hand_over()
            self._held = True
        self.written()

    def held(self) -> list[Message]:
        """The reported messages that arrived since :meth:`hold` (not yet written; sends
        and receipts left out)."""
        held: list[Message] = []
        for item in self._buffer:
            if isinstance(item, _Pack):
                held.extend(item.messages)
            elif not isinstance(item, tuple):
                held.append(item)
        return held

    def release(self) -> None:
        """Write what was held (one transaction), and go on recording."""
        with self._lock:
            self._held = False
            self._hand_over()
        self.written()

    def discard(self, lost: LeaseLostError | None = None) -> None:
        """Drop what was held and record nothing more (the team's store stays as it was);
        ``lost``: because the lease was lost (kept in :attr:`lost`)."""
        with self._lock:
            self._discarded = True
            self.lost = self.lost or lost
            self._buffer = []
        with self._io:
            self._outbox, self._tables = [], []
            self._outbox_events = 0
        with self._cond:  # whoever waits for a commit: none comes
            self._cond.notify_all()
        self._close_writer()

    # -- for callers ---------------------------------------------------------------------------
    def wait_committed(self, message_id: UUID, timeout: float = 10.0) -> int | None:
        """The sequence number of the message once committed; None after ``timeout``, or
        at once when nothing more is written (the lease was lost: it never will be)."""
        with self._cond:
            seq = self._seq_of(message_id)
            if seq is not None:
                return seq
        with self._waiting(), self._cond:
            found: list[int] = []

            def committed() -> bool:
                seq = self._seq_of(message_id)
                if seq is not None:
                    found.append(seq)
                return seq is not None or self._discarded

            self._cond.wait_for(committed, timeout)
            return found[0] if found else None

    def wait_seq(self, seq: int, timeout: float = 10.0) -> bool:
        """Block until the log reaches ``seq``; False after ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: self.last_seq >= seq, timeout)

    def subscribe_live(self) -> threading.Condition:
        """The condition notified after each commit (for followers of the stream)."""
        return self._cond
