"""Waiting for a team's log to grow, from any process: Postgres ``LISTEN/NOTIFY``, or
polling by sequence number where notifications are unavailable.

A team may run in another process or on another machine; whoever follows it shares
only the store. :func:`open_watch` gives an :class:`EventWatch` over a bundle:

- **Postgres**: every append notifies ``akgentic_events`` with ``<team id>:<last seq>`` at
  commit (:mod:`akgentic.storage.postgres`); one listening connection per watch, read by
  one thread, wakes the waiters of that team.
- **Anything else** (SQLite, memory): the team's ``last_seq`` is read every
  ``poll_interval`` seconds.

The contract: ``wait_past(team_id, seq, timeout)`` is True as soon as the team's log holds
a record past ``seq`` (at once when it already does), False after ``timeout``. The store
is the truth and notifications only make the wait short: the log is read first, and again
every ``poll_interval`` while waiting, so a notification lost with a broken connection
(or a pooler that drops them) delays a follower, never misses a record.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from uuid import UUID

from akgentic.storage.protocols import EventLog, StorageBundle

if TYPE_CHECKING:
    from akgentic.storage.postgres import PostgresStorage

__all__ = ["EventWatch", "NotifyWatch", "PollingWatch", "open_watch"]

logger = logging.getLogger("akgentic.storage")

RECONNECT = 1.0
"""Seconds a notify watch waits before listening again after its connection broke."""


@runtime_checkable
class EventWatch(Protocol):
    """Wakes whoever waits for a team's log to go past a sequence number."""

    def wait_past(self, team_id: UUID, seq: int, timeout: float) -> bool:
        """True once the team's log holds a record past ``seq``; False after ``timeout``."""
        ...

    def close(self) -> None:
        """Stop watching (idempotent); waiters return at once."""
        ...


class PollingWatch:
    """Reads the team's ``last_seq`` every ``poll_interval`` seconds while someone waits."""

    def __init__(self, events: EventLog, poll_interval: float = 0.5) -> None:
        self._events = events
        self.poll_interval = poll_interval
        self._closed = threading.Event()

    def wait_past(self, team_id: UUID, seq: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            if self._events.last_seq(team_id) > seq:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._closed.is_set():
                return False
            self._closed.wait(min(self.poll_interval, remaining))

    def close(self) -> None:
        self._closed.set()


class NotifyWatch:
    """Listens to a Postgres store's append notifications (see the module docstring)."""

    def __init__(self, storage: PostgresStorage, poll_interval: float = 0.5) -> None:
        self._storage = storage
        self.poll_interval = poll_interval
        self._heads: dict[UUID, int] = {}
        self._cond = threading.Condition()
        self._closed = threading.Event()
        self._conn: Any = None
        self.listening = threading.Event()
        """Set while the listening connection is up (a test or a bench waits on it)."""
        self.connections = 0
        """How many times the watch has started listening (1, plus one per reconnection)."""
        self._thread = threading.Thread(
            target=self._listen, name="akgentic-event-watch", daemon=True
        )
        self._thread.start()

    # -- the listening thread -------------------------------------------------------------------
    def _listen(self) -> None:
        while not self._closed.is_set():
            try:
                self._conn = self._storage.listener()
                self.connections += 1
                self.listening.set()
                while not self._closed.is_set():
                    for note in self._conn.notifies(timeout=1.0):
                        self._heard(note.payload)
            except Exception as exc:
                if self._closed.is_set():
                    return
                logger.warning("event watch: listening failed (%s); polling meanwhile", exc)
            finally:
                self.listening.clear()
                self._drop_connection()
            self._closed.wait(RECONNECT)

    def _heard(self, payload: str) -> None:
        team, _, seq = payload.rpartition(":")
        try:
            team_id, last = UUID(team), int(seq)
        except ValueError:
            return  # not ours
        with self._cond:
            if last > self._heads.get(team_id, 0):
                self._heads[team_id] = last
                self._cond.notify_all()

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # already broken
                logger.debug("event watch: closing the listener failed", exc_info=True)

    # -- for waiters ------------------------------------------------------------------------------
    def heard(self, team_id: UUID) -> int:
        """The last sequence number a notification announced for the team (0: none)."""
        with self._cond:
            return self._heads.get(team_id, 0)

    def wait_past(self, team_id: UUID, seq: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            if self._storage.events.last_seq(team_id) > seq:
                return True
            with self._cond:
                while self._heads.get(team_id, 0) <= seq:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._closed.is_set():
                        return False
                    if not self._cond.wait(min(self.poll_interval, remaining)):
                        break  # a poll interval without news: read the store again
                else:
                    return True

    def close(self) -> None:
        """Waiters return at once; the listening thread closes its connection within a
        second (this call does not wait for it: an event loop may call it)."""
        self._closed.set()
        with self._cond:
            self._cond.notify_all()


def open_watch(storage: StorageBundle, poll_interval: float = 0.5) -> EventWatch:
    """The watch that suits ``storage``: notifications on Postgres, polling elsewhere."""
    postgres = sys.modules.get("akgentic.storage.postgres")
    if postgres is not None and isinstance(storage, postgres.PostgresStorage):
        return NotifyWatch(storage, poll_interval)
    return PollingWatch(storage.events, poll_interval)
