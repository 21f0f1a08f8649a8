"""EventRecorder: persistence is a subscriber on the orchestrator that records everything.

Every telemetry record the orchestrator hands on is appended to the team's event log;
state changes also update the latest-state table, in the same transaction; an agent's
``LlmMessageEvent``s and ``ContextReplacedEvent``s maintain its working memory (the model
context). Records are buffered in ``on_record`` and handed over, encoded, in ``flush``,
which the orchestrator calls after each batch. Receipts and sends (a member took a
message out of its inbox or finished it, a member sent one: the three records of every
message) are encoded straight from the record's fields, never built as telemetry
messages.

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

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from pydantic import BaseModel

from akgentic.core import (
    ActorAddressProxy,
    ErrorMessage,
    EventMessage,
    Message,
    SentMessage,
    StateChangedMessage,
    TelemetryRecord,
)
from akgentic.core.serialization import SerializationError
from akgentic.llm import ContextReplacedEvent, LlmMessageEvent
from akgentic.storage import (
    EncodedEvent,
    StateRow,
    StorageBundle,
    TeamStatus,
    encode_event,
    encode_receipt,
    encode_sent,
    encode_state,
    encode_value,
)

__all__ = ["EventRecorder"]


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


_Encoded = tuple[EncodedEvent, UUID | None]
"""A record encoded from its fields, and the id a caller may wait on (a send's message)."""


logger = logging.getLogger("akgentic.team")

_REMEMBERED = 10_000

COMMIT_GAP = 0.005
"""Seconds that consecutive commits keep apart while records keep coming, so that a
group can gather: a commit has a fixed cost (a sync, WAL frames, the GIL taken back
several times), and a busy team that handed a few rows at a time paid it for every few
rows. A record after a quiet spell is committed at once, and nobody who waits for a
commit (:meth:`EventRecorder.wait_committed`, :meth:`EventRecorder.written`) is ever
kept waiting by this: they make the writer go now."""

GROUP_ROWS = 5_000
"""A group this large is committed without waiting out :data:`COMMIT_GAP`."""


class EventRecorder:
    """Records one team's stream into a storage bundle (an ``EventSubscriber``)."""

    def __init__(self, storage: StorageBundle, team_id: UUID) -> None:
        self._storage = storage
        self._team_id = team_id
        self._buffer: list[Message | _Encoded] = []
        self._senders: dict[int, tuple[ActorAddressProxy, str]] = {}  # snapshot -> JSON
        self._team_json = encode_value(team_id)
        self._restoring = False
        self._held = False
        self._discarded = False
        self._lock = threading.RLock()  # the orchestrator's thread, and release/discard
        self._stop_requested = False
        self._committed: OrderedDict[UUID, int] = OrderedDict()
        self._cond = threading.Condition()
        self.last_seq = storage.events.last_seq(team_id)
        # the writer's queue: rows handed on and not yet committed, in order
        self._io = threading.Condition()
        self._outbox: list[_Encoded] = []
        self._tables: list[Message] = []  # their messages, for the tables beside the log
        self._writer: threading.Thread | None = None
        self._idle = True
        self._closing = False
        self._urgent = 0  # callers waiting for a commit: the writer does not pace
        self._last_commit = 0.0

    # -- EventSubscriber -------------------------------------------------------------------
    def on_message(self, msg: Message) -> None:
        if not self._restoring and not self._discarded:
            with self._lock:
                self._buffer.append(msg)

    def on_record(self, record: TelemetryRecord) -> None:
        """The live stream: a receipt or a send is encoded from its fields, anything else
        as its message."""
        if self._restoring or self._discarded:
            return
        item: Message | _Encoded
        receipt = record.receipt
        if receipt is not None:
            cls, message_id, receiver, when = receipt
            row = encode_receipt(cls, message_id, self._json(receiver), self._team_json, when)
            item = (row, None)
        elif (sent := record.sent) is not None:
            message, sender, recipient, when = sent
            to = "null" if recipient is None else self._json(recipient)
            try:
                row = encode_sent(
                    SentMessage, message, self._json(sender), to, self._team_json, when
                )
                item = (row, message.id)
            except SerializationError:  # reported in its place when the batch is written
                item = record.message()
        else:
            item = record.message()
        with self._lock:
            self._buffer.append(item)

    def _json(self, snapshot: ActorAddressProxy) -> str:
        key = snapshot.agent_id.int  # an int hashes in C; a UUID in Python
        cached = self._senders.get(key)
        if cached is None or cached[0] is not snapshot:
            cached = self._senders[key] = (snapshot, encode_value(snapshot))
        return cached[1]

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
        rows = [item if isinstance(item, tuple) else self._row_of(item) for item in batch]
        messages = [item for item in batch if not isinstance(item, tuple)]
        with self._io:
            wake = not self._outbox  # else the writer is gathering or committing: it looks
            self._outbox.extend(rows)  # again before it waits, unless the group is full
            self._tables.extend(messages)
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_loop, name=f"recorder-{self._team_id}", daemon=True
                )
                self._writer.start()
            if wake or len(self._outbox) >= GROUP_ROWS:
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
                rows, self._outbox = self._outbox, []
                tables, self._tables = self._tables, []
                self._idle = False
            try:
                seqs = self._storage.events.append_encoded(
                    self._team_id, [r[0] for r in rows], _latest_states(tables)
                )
            except Exception:
                if self._retry(rows, tables):
                    continue
                return
            self._last_commit = time.monotonic()
            self._committed_rows(rows, seqs)
            self._write_tables(tables)
            # not kept while waiting for the next group: under load a group is a whole
            # backlog, and memory per message must stay flat
            del rows, tables, seqs
            with io:
                self._idle = not self._outbox
                io.notify_all()

    def _gather(self) -> None:
        """Let a group gather until :data:`COMMIT_GAP` after the last commit (``_io``
        held): unless closing, a caller waits for a commit, or the group is full."""
        delay = self._last_commit + COMMIT_GAP - time.monotonic()
        if delay > 0:
            self._io.wait_for(
                lambda: self._closing or self._urgent > 0 or len(self._outbox) >= GROUP_ROWS,
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

    def _retry(self, rows: list[_Encoded], tables: list[Message]) -> bool:
        """After a failed commit: put the rows back at the front, in order, and wait for
        more (or a second) before the next try. False when the recorder is closing: the
        rows cannot be written, and that is logged."""
        team, io = self._team_id, self._io
        with io:
            if self._closing:
                logger.error("team %s: %d records could not be written", team, len(rows))
                self._outbox, self._tables, self._idle = [], [], True
                io.notify_all()
                return False
            logger.exception("team %s: the event log refused a batch; it is kept", team)
            self._outbox[:0] = rows
            self._tables[:0] = tables
            self._idle = True
            io.notify_all()
            waiting = len(self._outbox)
            io.wait_for(lambda: self._closing or len(self._outbox) > waiting, 1.0)
            return True

    def _committed_rows(self, rows: list[_Encoded], seqs: list[int]) -> None:
        with self._cond:  # committed: callers waiting on these may go on
            for (_, key), seq in zip(rows, seqs, strict=True):
                if key is not None:  # a receipt has none: nobody waits on its id
                    self._committed[key] = seq
            while len(self._committed) > _REMEMBERED:
                self._committed.popitem(last=False)
            self.last_seq = seqs[-1]
            self._cond.notify_all()

    def _write_tables(self, batch: list[Message]) -> None:
        """The working memory beside the log is a convenience (restore reads the log): a
        failure here is logged and loses nothing."""
        for msg in batch:
            sender = msg.sender
            if isinstance(msg, EventMessage) and sender is not None:
                try:
                    self._working_memory(sender.agent_id, msg.event)
                except Exception:
                    logger.exception("team %s: could not update the working memory", self._team_id)

    def written(self, timeout: float = 60.0) -> bool:
        """Block until everything handed to the writer is committed (and its tables
        written); False after ``timeout``."""
        with self._waiting(), self._io:
            return self._io.wait_for(lambda: not self._outbox and self._idle, timeout)

    def _close_writer(self, timeout: float = 60.0) -> None:
        with self._io:
            self._closing = True
            self._io.notify_all()
        writer = self._writer
        if writer is not None:
            writer.join(timeout)

    def _working_memory(self, agent_id: UUID, event: object) -> None:
        """Keep the agent's working memory: its last replacement, then every later run."""
        memory = self._storage.working_memory
        if isinstance(event, LlmMessageEvent):
            memory.append(self._team_id, agent_id, json.loads(event.messages_json))
        elif isinstance(event, ContextReplacedEvent):
            memory.replace(self._team_id, agent_id, json.loads(event.messages_json))

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
        team STOPPED; a crash leaves it RUNNING."""
        self.flush()
        self._close_writer()
        if self._stop_requested and not self._discarded:
            record = self._storage.teams.get(team_id)
            if record is not None and record.status == TeamStatus.RUNNING:
                self._storage.teams.set_status(team_id, TeamStatus.STOPPED)

    # -- all or nothing ---------------------------------------------------------------------
    def hold(self) -> None:
        """Keep what arrives in memory, writing nothing, until :meth:`release` (what was
        handed on before is committed first)."""
        with self._lock:
            self._hand_over()
            self._held = True
        self.written()

    def held(self) -> list[Message]:
        """The messages that arrived since :meth:`hold` (not yet written; receipts left
        out)."""
        return [item for item in self._buffer if not isinstance(item, tuple)]

    def release(self) -> None:
        """Write what was held (one transaction), and go on recording."""
        with self._lock:
            self._held = False
            self._hand_over()
        self.written()

    def discard(self) -> None:
        """Drop what was held and record nothing more (the team's store stays as it was)."""
        with self._lock:
            self._discarded = True
            self._buffer = []
        with self._io:
            self._outbox, self._tables = [], []
        self._close_writer()

    # -- for callers ---------------------------------------------------------------------------
    def wait_committed(self, message_id: UUID, timeout: float = 10.0) -> int | None:
        """The sequence number of the message once committed; None after ``timeout``."""
        with self._cond:
            if message_id in self._committed:
                return self._committed[message_id]
        with self._waiting(), self._cond:
            self._cond.wait_for(lambda: message_id in self._committed, timeout)
            return self._committed.get(message_id)

    def wait_seq(self, seq: int, timeout: float = 10.0) -> bool:
        """Block until the log reaches ``seq``; False after ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: self.last_seq >= seq, timeout)

    def subscribe_live(self) -> threading.Condition:
        """The condition notified after each commit (for followers of the stream)."""
        return self._cond
