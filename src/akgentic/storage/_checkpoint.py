"""Checkpointing a SQLite file's WAL on a thread of its own.

Why: SQLite's automatic checkpoint runs inside the commit that crosses its threshold
(1,000 pages). That commit then also copies the whole WAL into the database file and
syncs it: a busy team's recorder saw one group commit in a few take 20 ms of CPU instead
of 5, and a caller waiting for that commit waited for the copy too. The store tells this
checkpointer what it commits; past :data:`CHECKPOINT_BYTES` the checkpointer runs a
``PASSIVE`` checkpoint on its own connection, which waits for no reader and no writer, with
the GIL released while SQLite copies. SQLite's own checkpoint stays on as the backstop
that rewinds the WAL (a checkpoint running beside a writer rarely ends with every page
copied, and without that rewind the WAL grew by what was written); when it fires, this
thread has copied most of the pages already.

What it does not change: a commit is durable when it returns (the WAL is synced at each
commit under ``synchronous=FULL``), whether or not a checkpoint has run since. A
checkpoint that fails is logged and tried again at the next threshold; SQLite also
checkpoints when the last connection to the file closes.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import weakref
from pathlib import Path

__all__ = ["CHECKPOINT_BYTES", "Checkpointer"]

logger = logging.getLogger("akgentic.storage")

CHECKPOINT_BYTES = 1024 * 1024
"""Bytes committed since the last checkpoint after which the next one is run: well under
SQLite's own threshold (1,000 pages: 8 MiB with this store's 8 KiB pages), so that little
is left to copy when that one fires."""

_LIVE: weakref.WeakSet[Checkpointer] = weakref.WeakSet()


def _forked() -> None:
    """A forked child has none of the parent's threads: each checkpointer starts afresh
    (a new lock, no thread; the next threshold starts one)."""
    for checkpointer in list(_LIVE):
        checkpointer._cond = threading.Condition()
        checkpointer._thread = None
        checkpointer._due = False
        checkpointer._pending = 0


os.register_at_fork(after_in_child=_forked)


class Checkpointer:
    """Runs ``PRAGMA wal_checkpoint(PASSIVE)`` on its own thread and connection once
    :data:`CHECKPOINT_BYTES` have been committed (:meth:`committed`). The thread starts
    on the first checkpoint a store needs: a small store never starts it."""

    def __init__(self, path: Path, busy_timeout: float) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._cond = threading.Condition()
        self._pending = 0
        self._due = False
        self._closed = False
        self._thread: threading.Thread | None = None
        self.runs = 0
        """Checkpoints tried so far, failed ones included (see :meth:`wait_runs`)."""
        self.last_error: str | None = None
        """Why the last checkpoint failed (None: it did not)."""
        _LIVE.add(self)

    def committed(self, size: int) -> None:
        """A write transaction of about ``size`` bytes has committed."""
        with self._cond:
            if self._closed:
                return
            self._pending += size
            if self._pending < CHECKPOINT_BYTES:
                return
            self._pending = 0
            self._due = True
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name=f"akgentic-checkpoint-{self._path.name}", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._due or self._closed)
                    if self._closed:
                        return
                    self._due = False
                error: str | None = None
                try:
                    if conn is None:
                        conn = sqlite3.connect(
                            self._path,
                            timeout=self._busy_timeout,
                            isolation_level=None,
                            check_same_thread=False,
                        )
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # the next threshold tries again
                    error = str(exc)
                    logger.warning("%s: the WAL checkpoint failed: %s", self._path, exc)
                with self._cond:
                    self.runs += 1
                    self.last_error = error
                    self._cond.notify_all()
        finally:
            if conn is not None:
                conn.close()

    def wait_runs(self, count: int, timeout: float) -> bool:
        """Block until :attr:`runs` reaches ``count``; False after ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: self.runs >= count, timeout)

    def close(self, timeout: float = 30.0) -> None:
        """Stop the thread, after the checkpoint it may be running (idempotent;
        ``timeout=0``: ask it to stop, do not wait)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
