"""EventRecorder: persistence is a subscriber on the orchestrator that records everything.

Every telemetry record the orchestrator hands on is appended to the team's event log;
state changes also update the latest-state table; an agent's ``LlmMessageEvent``s and
``ContextReplacedEvent``s maintain its working memory (the model context). Records are
buffered in ``on_record`` and committed in one transaction per batch in ``flush``,
which the orchestrator calls after each batch — so throughput stays high and nothing the
orchestrator has handed on waits longer than its batch. Receipts (a member took a
message out of its inbox, or finished it: two of the three records of every message)
are encoded straight from the record's fields, never built as messages.

Durability for callers: :meth:`wait_committed` blocks until the message with a given id
has been committed, which is how ``TeamRuntime.send`` returns only once the message it
accepted is on disk.

All or nothing for a resume: between :meth:`hold` and :meth:`release` nothing is
written (the batches wait in memory); :meth:`discard` drops them and records nothing
more, ever — so a resume that fails half-way leaves the stored team exactly as it was.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from uuid import UUID

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
    StorageBundle,
    TeamStatus,
    encode_event,
    encode_receipt,
    encode_sent,
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


_Encoded = tuple[EncodedEvent, UUID | None]
"""A record encoded from its fields, and the id a caller may wait on (a send's message)."""


logger = logging.getLogger("akgentic.team")

_REMEMBERED = 10_000


class EventRecorder:
    """Records one team's stream into a storage bundle (an ``EventSubscriber``)."""

    def __init__(self, storage: StorageBundle, team_id: UUID) -> None:
        self._storage = storage
        self._team_id = team_id
        self._buffer: list[Message | _Encoded] = []
        self._senders: dict[UUID, tuple[ActorAddressProxy, str]] = {}  # snapshot -> JSON
        self._team_json = encode_value(team_id)
        self._restoring = False
        self._held = False
        self._discarded = False
        self._lock = threading.RLock()  # the orchestrator's thread, and release/discard
        self._stop_requested = False
        self._committed: OrderedDict[UUID, int] = OrderedDict()
        self._cond = threading.Condition()
        self.last_seq = storage.events.last_seq(team_id)

    # -- EventSubscriber -------------------------------------------------------------------
    def on_message(self, msg: Message) -> None:
        if not self._restoring and not self._discarded:
            with self._lock:
                self._buffer.append(msg)

    def on_record(self, record: TelemetryRecord) -> None:
        """The live stream: a receipt is encoded from its fields, anything else as its
        message."""
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
        cached = self._senders.get(snapshot.agent_id)
        if cached is None or cached[0] is not snapshot:
            cached = self._senders[snapshot.agent_id] = (snapshot, encode_value(snapshot))
        return cached[1]

    def flush(self) -> None:
        """Commit the buffered batch in one transaction.

        If the store fails, the batch stays buffered and is committed with the next one
        (the orchestrator logs the error): a storage hiccup delays records, never drops
        them.
        """
        with self._lock:
            self._flush()

    def _flush(self) -> None:
        batch = self._buffer
        if not batch or self._held or self._discarded:
            return
        storage, team = self._storage, self._team_id
        rows = [item[0] if isinstance(item, tuple) else _encoded(item) for item in batch]
        seqs = storage.events.append_encoded(team, rows)
        self._buffer = []
        with self._cond:  # committed: callers waiting on these may go on
            for item, seq in zip(batch, seqs, strict=True):
                if isinstance(item, tuple):
                    key = item[1]
                    if key is None:  # a receipt: nobody waits on its id
                        continue
                else:
                    key = item.message.id if isinstance(item, SentMessage) else item.id
                self._committed[key] = seq
            while len(self._committed) > _REMEMBERED:
                self._committed.popitem(last=False)
            self.last_seq = seqs[-1]
            self._cond.notify_all()
        # The tables beside the log are conveniences (restore reads the log): a failure
        # here is logged and loses nothing.
        for msg in batch:
            if isinstance(msg, tuple):
                continue
            sender = msg.sender
            try:
                if isinstance(msg, StateChangedMessage) and sender is not None:
                    storage.states.save_state(team, sender.agent_id, sender.name, msg.state)
                elif isinstance(msg, EventMessage) and sender is not None:
                    self._working_memory(sender.agent_id, msg.event)
            except Exception:
                logger.exception("team %s: could not update the state/memory tables", team)

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
        self._restoring = restoring

    def on_stop_request(self, team_id: UUID) -> None:
        self._stop_requested = True

    def on_stop(self, team_id: UUID) -> None:
        """A graceful stop marks the team STOPPED; a crash leaves it RUNNING."""
        self.flush()
        if self._stop_requested and not self._discarded:
            record = self._storage.teams.get(team_id)
            if record is not None and record.status == TeamStatus.RUNNING:
                self._storage.teams.set_status(team_id, TeamStatus.STOPPED)

    # -- all or nothing ---------------------------------------------------------------------
    def hold(self) -> None:
        """Keep what arrives in memory, writing nothing, until :meth:`release`."""
        self._held = True

    def held(self) -> list[Message]:
        """The messages that arrived since :meth:`hold` (not yet written; receipts left
        out)."""
        return [item for item in self._buffer if not isinstance(item, tuple)]

    def release(self) -> None:
        """Write what was held (one transaction), and go on recording."""
        with self._lock:
            self._held = False
            self._flush()

    def discard(self) -> None:
        """Drop what was held and record nothing more (the team's store stays as it was)."""
        with self._lock:
            self._discarded = True
            self._buffer = []

    # -- for callers ---------------------------------------------------------------------------
    def wait_committed(self, message_id: UUID, timeout: float = 10.0) -> int | None:
        """The sequence number of the message once committed; None after ``timeout``."""
        with self._cond:
            self._cond.wait_for(lambda: message_id in self._committed, timeout)
            return self._committed.get(message_id)

    def wait_seq(self, seq: int, timeout: float = 10.0) -> bool:
        """Block until the log reaches ``seq``; False after ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: self.last_seq >= seq, timeout)

    def subscribe_live(self) -> threading.Condition:
        """The condition notified after each commit (for followers of the stream)."""
        return self._cond
