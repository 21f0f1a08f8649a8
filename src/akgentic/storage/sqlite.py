"""The SQLite backend: the embedded default, one file, no server.

- **WAL mode**, so readers never block the writer, and other processes on the same
  machine may open the same file.
- **Durability.** Every write is one transaction that has committed before the call
  returns: ``BEGIN IMMEDIATE ... COMMIT``, or a lone ``INSERT`` of event packs (its own
  transaction: fewer statements, fewer waits for the GIL). ``synchronous=FULL`` (the
  default) also syncs the WAL to disk at each commit, so an accepted append survives a
  power cut, not only a crash of the process. ``synchronous=NORMAL`` skips that sync (it
  survives a process crash; the last commits may be lost if the machine loses power) for
  more single-append throughput; ``append_many`` pays one sync per batch either way.
- **Threads.** Two connections, each guarded by a lock of its own: one writes, one
  reads, and any thread may call any method. A read does not wait behind this store's
  write transaction (a group commit): in WAL mode it reads the last commit meanwhile.
  Each read is one statement, so one snapshot (the ``Driver`` contract). Rows are
  decoded after the lock is released.
- **Checkpoints** of the WAL into the file run on a thread and connection of their own
  (``akgentic.storage._checkpoint``), every MiB committed, so the one SQLite runs
  inside the commit that crosses its threshold (kept: it rewinds the WAL) finds little
  left to copy.
- **Sequence numbers.** ``BEGIN IMMEDIATE`` (or the lone ``INSERT``, which takes it when
  it starts) takes the database's write lock before the next number is read (one past
  the highest of the rows and the event packs), so
  numbering is race-free across threads, connections and processes, and a rolled-back
  batch leaves no gap. A writer waits up to ``busy_timeout`` seconds for another
  process' transaction.
- **Fenced appends** check the lease in the insert statement itself, under that write
  lock: no take-over commits between the check and the rows. A fenced working-memory
  change checks it first in its transaction, under the same lock.

The schema is created on open (idempotent; ``PRAGMA user_version`` records it). A file
that is not a SQLite database, a damaged one, or one whose tables of our names another
program made, raises :class:`StorageError` naming the file — at open, or on the first
call that reaches the damage; SQLite's own errors never escape. Text that is not UTF-8
in a column is handed to the decoders as bytes, so only its row is reported.

**Read-only** (``read_only=True``: a backup, a read-only mount; ``open_storage`` chooses it
for callers that only read when this process may not write the file or its folder): the
connection is SQLite's ``mode=ro``, nothing is written on open, and a write raises
:class:`StorageError` before SQLite is asked (nothing written). In WAL mode SQLite reads
through the ``-shm`` file beside the database; in a read-only folder where none exists
it cannot make one, so the file is opened ``immutable`` (no locks, no WAL: no process is
writing it, or it would have made the ``-shm``), unless a ``-wal`` holding commits is
there — those SQLite cannot read without the ``-shm``, and that is refused, saying so.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast
from urllib.parse import quote
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from akgentic.storage._checkpoint import Checkpointer
from akgentic.storage._codec import iso_time, load_iso_time, text_or_bytes
from akgentic.storage._sql import (
    Cursor,
    SqlStorage,
    check_tables,
    create_schema,
    identify_catalog_rows,
    team_head,
)
from akgentic.storage._sql_lease import fence_refused
from akgentic.storage.errors import StorageClosedError, StorageError
from akgentic.storage.lease import Fence

__all__ = ["SqliteOptions", "SqliteStorage"]

SCHEMA_VERSION = 3
"""2: event packs (``akgentic_event_packs``), which an older akgentic would not see, and
would number over. 3: a catalog row's identity (``akgentic_catalog.row_id``), which an
older akgentic would not give the rows it creates, and a skill's ``toolset``
(``akgentic_skills.toolset``), which an older akgentic's upsert would leave stale; a file
of version 2 gains both columns on open."""

PAGE_SIZE = 8192
"""Bytes per page of a new file (SQLite's default is 4096)."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS akgentic_teams (
        team_id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        card TEXT NOT NULL, metadata TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS akgentic_teams_status ON akgentic_teams (status, created_at)",
    """CREATE TABLE IF NOT EXISTS akgentic_events (
        team_id TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (team_id, seq))""",
    # event packs: many consecutive events of a team in one row (akgentic.storage._pack)
    """CREATE TABLE IF NOT EXISTS akgentic_event_packs (
        team_id TEXT NOT NULL, first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL,
        data BLOB NOT NULL, PRIMARY KEY (team_id, first_seq))""",
    """CREATE TABLE IF NOT EXISTS akgentic_states (
        team_id TEXT NOT NULL, agent_id TEXT NOT NULL, agent_name TEXT NOT NULL,
        updated_at TEXT NOT NULL, payload TEXT NOT NULL,
        PRIMARY KEY (team_id, agent_id))""",
    """CREATE TABLE IF NOT EXISTS akgentic_working_memory (
        team_id TEXT NOT NULL, agent_id TEXT NOT NULL, pos INTEGER NOT NULL,
        item TEXT NOT NULL, PRIMARY KEY (team_id, agent_id, pos))""",
    """CREATE TABLE IF NOT EXISTS akgentic_skills (
        name TEXT PRIMARY KEY, description TEXT NOT NULL, content TEXT NOT NULL,
        source TEXT NOT NULL, updated_at TEXT NOT NULL, toolset TEXT)""",
    # the tool catalog (akgentic.catalog): one row per configured tool, and its audit trail
    """CREATE TABLE IF NOT EXISTS akgentic_catalog (
        name TEXT PRIMARY KEY, type_name TEXT NOT NULL,
        enabled_agents INTEGER NOT NULL DEFAULT 0, enabled_api INTEGER NOT NULL DEFAULT 0,
        enabled_cli INTEGER NOT NULL DEFAULT 0, config TEXT NOT NULL DEFAULT '{}',
        credential_enc BLOB, status TEXT NOT NULL DEFAULT 'unchecked',
        status_detail TEXT NOT NULL DEFAULT '', last_check_at TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        row_id TEXT NOT NULL DEFAULT '')""",
    """CREATE TABLE IF NOT EXISTS akgentic_catalog_audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, instance TEXT NOT NULL,
        type_name TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
        detail TEXT NOT NULL)""",
    # issue 9: leases (times in seconds since the epoch, on SQLite's clock)
    """CREATE TABLE IF NOT EXISTS akgentic_leases (
        resource TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL,
        pid INTEGER NOT NULL, since REAL NOT NULL, renewed_at REAL NOT NULL,
        expires_at REAL NOT NULL)""",
)
_SCHEMA_NAMES = frozenset(re.findall(r"IF NOT EXISTS (\w+)", " ".join(_SCHEMA)))
"""The tables and indexes :data:`_SCHEMA` makes: a file holding them all (at
:data:`SCHEMA_VERSION`) is opened without writing."""


_FENCE = "EXISTS (SELECT 1 FROM akgentic_leases WHERE resource = ?{} AND owner = ?{})"
"""The condition of a fenced insert: the owner holds the lease (expired or not). It is
read by the insert itself, under the database's write lock that the insert takes before
it reads anything, so no take-over commits between the check and the rows; SQLite runs
an uncorrelated subquery once per statement, not once per row."""

_INSERT_PACKED = """
INSERT INTO akgentic_events (team_id, seq, ts, payload)
SELECT ?1, ?2 + key,
       rtrim(CAST(substr(?3, ?4 * key + 1, ?4) AS TEXT)),
       CAST(substr(?5, (value >> 32) + 1, value & 4294967295) AS TEXT)
FROM json_each(?6){fence}
"""
"""A batch of events in one statement. ``?3``: the rows' times, each padded to ``?4``
bytes; ``?5``: their UTF-8 payloads end to end; ``?6``: a JSON array with one integer per
row, its payload's start offset shifted left 32 bits or'ed with its length. Row ``key``
(0, 1, ...) is numbered ``?2 + key``: JSON arrays are walked in order. Fenced (the
second form), ``?7`` and ``?8`` are the fence's resource and owner, and no row is
inserted unless the fence holds."""

_INSERT_PACKED_OPEN = _INSERT_PACKED.format(fence="")
_INSERT_PACKED_FENCED = _INSERT_PACKED.format(fence=" WHERE " + _FENCE.format(7, 8))

_INSERT_PACKS = """
WITH head(next) AS (SELECT max(
    COALESCE((SELECT MAX(seq) FROM akgentic_events WHERE team_id = ?1), 0),
    COALESCE((SELECT last_seq FROM akgentic_event_packs WHERE team_id = ?1
              ORDER BY first_seq DESC LIMIT 1), 0)) + 1{fence})
INSERT INTO akgentic_event_packs (team_id, first_seq, last_seq, data)
SELECT ?1, next + json_extract(value, '$[2]'), next + json_extract(value, '$[3]'),
       substr(?2, json_extract(value, '$[0]') + 1, json_extract(value, '$[1]'))
FROM json_each(?3), head{at} ORDER BY key
"""
"""Packs in one statement, numbered after the team's highest number (rows and packs, as
``team_head`` reads it). ``?2``: the packs end to end (a blob: ``substr`` counts bytes);
``?3``: a JSON array with one ``[start, length, first, last]`` per pack, its bytes' place
in ``?2`` and its first and last numbers as offsets from the next number. An ``INSERT``
takes the write lock before it reads anything, so on its own (autocommit) it numbers as
race-free as ``BEGIN IMMEDIATE`` does. Fenced (the second form), ``head`` has no row
unless the fence (``?4``, ``?5``) holds, and nothing is inserted."""

_INSERT_PACKS_OPEN = _INSERT_PACKS.format(fence="", at="")
_INSERT_PACKS_FENCED = _INSERT_PACKS.format(fence=" WHERE " + _FENCE.format(4, 5), at="")
_INSERT_PACKS_AT = _INSERT_PACKS.format(fence="", at=" WHERE next = ?4")
_INSERT_PACKS_AT_FENCED = _INSERT_PACKS.format(
    fence=" WHERE " + _FENCE.format(4, 5), at=" WHERE next = ?6"
)
"""The same, inserting only when the team's next number is the one the writer expects
(the number after its own last insert, the last parameter): see ``insert_packs``."""

_FIRST_OF_ROW = "SELECT first_seq FROM akgentic_event_packs WHERE rowid = ?"

_HINTS = {
    "not a database": (
        ": it is not a SQLite database. Give akgentic another file, or move this one away"
    ),
    "malformed": (
        ": the file is damaged (truncated or overwritten). Restore it from a backup, or "
        "salvage its rows with the sqlite3 shell's .recover into a new file"
    ),
    "locked": (
        ": another process holds the file (this one waited its busy_timeout, {timeout:g} s); "
        "retry, or wait longer: add ?busy_timeout=SECONDS to the storage URL, as in "
        "--storage '{url}?busy_timeout=120'"
    ),
    "unable to open": ": check that the folder exists and is writable",
}
"""Advice appended to SQLite's message, by a phrase of it (``{timeout}``: the store's
busy_timeout; ``{url}``: its sqlite URL)."""


def readonly_hint(path: Path, file_writable: bool, folder_writable: bool) -> str:
    """What to do about SQLite's "attempt to write a readonly database" for the file at
    ``path``, by which of it and its folder this process may write: a read-only file; or a
    writable file in a read-only folder, where SQLite cannot create the ``-wal`` and
    ``-shm`` files it keeps beside the database; or both (a read-only mount). Commands
    that only read open such a file read-only (``open_storage(read_only=True)``)."""
    if not file_writable and not folder_writable:
        return (
            f": the file and its folder {path.parent} are read-only: copy the file to a "
            "writable folder and give that file as --storage (commands that only read, "
            "such as akgentic teams list, read it where it is)"
        )
    if not file_writable:
        return (
            f": the file is read-only: make it writable (chmod u+w {path}), or choose "
            "another --storage"
        )
    if not folder_writable:
        return (
            f": its folder {path.parent} is read-only, and SQLite must create its "
            f"{path.name}-wal and {path.name}-shm files beside it: make the folder writable, "
            "or copy the file to a writable folder and give that file as --storage"
        )
    return ": make the file and its folder writable, or choose another --storage"


def may_write(path: Path) -> bool:
    """Whether this process may write the file at ``path`` and its folder (SQLite makes
    its ``-wal`` and ``-shm`` files there): a read-only mount refuses even root."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _read_only_uri(path: Path) -> str:
    """The URI SQLite opens ``path`` read-only by (see the module notes): ``mode=ro``,
    and ``immutable`` in a read-only folder without a ``-shm`` file; :class:`StorageError`
    when such a folder holds a ``-wal`` with commits, which SQLite could not read."""
    uri = f"file:{quote(path.absolute().as_posix(), safe='/')}?mode=ro"
    shm, wal = (path.with_name(path.name + suffix) for suffix in ("-shm", "-wal"))
    if os.access(path.parent, os.W_OK) or shm.exists():
        return uri
    if wal.exists() and wal.stat().st_size > 0:
        raise StorageError(
            f"{path}: its folder {path.parent} is read-only and holds {wal.name}, commits "
            f"SQLite cannot read without a {shm.name} file beside it: copy {path.name} and "
            f"{wal.name} to a writable folder and give that file as --storage"
        )
    return uri + "&immutable=1"


class SqliteOptions(BaseModel):
    """Options of a SQLite store (also read from a URL's query: ``?synchronous=NORMAL``)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    synchronous: Literal["FULL", "NORMAL"] = "FULL"
    busy_timeout: float = Field(default=30.0, ge=0)


class _Driver:
    team_tables: tuple[str, ...] = (
        "akgentic_teams",
        "akgentic_events",
        "akgentic_event_packs",
        "akgentic_states",
        "akgentic_working_memory",
    )
    epoch_now = "((julianday('now') - 2440587.5) * 86400.0)"  # one value per statement

    def __init__(self, path: Path, options: SqliteOptions, read_only: bool = False) -> None:
        self._path = path
        self._read_only = read_only
        self._busy_timeout = options.busy_timeout
        self._lock = threading.Lock()  # the writing connection's
        self._conn: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._reader: sqlite3.Connection | None = None
        self._checkpointer = Checkpointer(path, options.busy_timeout)
        # a store dropped without close() must not leave the thread behind it running
        weakref.finalize(self, self._checkpointer.close, 0)
        self._txn_bytes = 0  # about what the open write transaction writes
        self._next: dict[str, int] = {}
        """Each team's next number as this driver's last pack insert left it (see
        ``_insert_at``): an expectation, checked by the insert that relies on it."""
        try:
            target = _read_only_uri(path) if read_only else str(path)
            self._conn = conn = self._connect(target, options.busy_timeout, read_only)
            if not read_only:  # the file as it is: these would write it
                # a new file only (an existing one keeps its own): the event log is rows of
                # ~1 KB appended in batches, and 8 KiB pages cost SQLite ~1 µs less per row
                # than the default 4 KiB (bench/storage.py)
                conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
                (mode,) = conn.execute("PRAGMA journal_mode=WAL").fetchone()
                if str(mode).lower() != "wal":
                    raise StorageError(f"{path}: SQLite refused WAL mode (journal_mode={mode})")
                conn.execute(f"PRAGMA synchronous={options.synchronous}")
                conn.execute("PRAGMA wal_autocheckpoint=1000")  # a backstop: see _checkpoint
            try:  # the event insert unpacks its batch with json_each (_INSERT_PACKED)
                conn.execute("SELECT count(*) FROM json_each('[]')").fetchone()
            except sqlite3.OperationalError as exc:
                raise StorageError(
                    f"{path}: this Python's SQLite {sqlite3.sqlite_version} lacks the JSON "
                    "functions akgentic needs; use a Python built with SQLite 3.38 or "
                    "newer (or with JSON1 enabled)"
                ) from exc
            self._reader = self._connect(target, options.busy_timeout, read_only)
            if self._schema_current():  # a store in use: opened without the write lock
                with self.read() as cur:
                    check_tables(cur, str(path))
            elif read_only:
                raise StorageError(
                    f"{path}: opened read-only, and its tables are not this akgentic's (an "
                    "older akgentic made them, or none did): copy the file to a writable "
                    "folder and give that file as --storage (opening it there brings its "
                    "tables up to date)"
                )
            else:
                with self.write() as cur:
                    create_schema(cur, _SCHEMA, str(path))
                    catalog = cur.execute("PRAGMA table_info(akgentic_catalog)").fetchall()
                    identify_catalog_rows(cur, any(c[1] == "row_id" for c in catalog))
                    if self._check_version(cur) != SCHEMA_VERSION:  # unchanged: no write
                        cur.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.Error as exc:
            self.close()
            raise self._failed(exc) from exc
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _connect(target: str, busy_timeout: float, uri: bool) -> sqlite3.Connection:
        """A connection to the file (``target``: its path, or with ``uri`` a ``file:`` URI),
        in autocommit, for any thread (the lock beside it serializes its use)."""
        conn = sqlite3.connect(
            target,
            timeout=busy_timeout,
            isolation_level=None,  # autocommit: transactions are explicit
            check_same_thread=False,
            uri=uri,
        )
        conn.text_factory = text_or_bytes
        return conn

    def _schema_current(self) -> bool:
        """Whether the file holds every table and index of :data:`_SCHEMA` at this
        version, read without a transaction: then opening writes nothing, and a reader
        (``teams list``) does not wait behind another process's write transaction, as
        the ``BEGIN IMMEDIATE`` of the schema's creation would. Raises for a newer file."""
        with self.read() as cur:
            version = self._check_version(cur)
            names = {row[0] for row in cur.execute("SELECT name FROM sqlite_master").fetchall()}
        return version == SCHEMA_VERSION and names >= _SCHEMA_NAMES

    def _check_version(self, cur: Cursor) -> int:
        """The file's schema version; :class:`StorageError` when newer than this code's."""
        (version,) = cur.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise StorageError(
                f"{self._path} has schema version {version}, newer than this akgentic "
                f"({SCHEMA_VERSION}): upgrade akgentic to open it"
            )
        return int(version)

    def _failed(self, exc: sqlite3.Error) -> StorageError:
        """SQLite's error as ours, naming the file and, when we know it, what to do."""
        from akgentic.storage._url import sqlite_url  # _url imports this module

        text = str(exc)
        hint = next((h for key, h in _HINTS.items() if key in text), "")
        if "readonly" in text:
            hint = self._readonly_hint()
        elif "unable to open" in text and self._path.is_dir():
            hint = ": it is a folder, not a file: give a file's path (in that folder, say)"
        elif "unable to open" in text and self._path.is_file() and not may_write(self._path):
            hint = self._readonly_hint()  # a read-only folder: no -wal or -shm can be made
        hint = hint.format(timeout=self._busy_timeout, url=sqlite_url(self._path))
        return StorageError(f"{self._path}: {text}{hint}")

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StorageClosedError("this SqliteStorage is closed")
        return self._conn

    def _writable(self) -> sqlite3.Connection:
        """The connection, for a write; a store opened read-only refuses it here, before
        SQLite is asked: nothing is written, and the line says what to do."""
        conn = self._live()
        if self._read_only:
            raise StorageError(
                f"{self._path}: opened read-only, nothing was written{self._readonly_hint()}"
            )
        return conn

    def _readonly_hint(self) -> str:
        """:func:`readonly_hint` for this file, by what this process may write now."""
        path = self._path
        return readonly_hint(path, os.access(path, os.W_OK), os.access(path.parent, os.W_OK))

    @contextmanager
    def write(self) -> Iterator[Cursor]:
        with self._lock:
            conn = self._writable()
            cur = conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")  # waits up to busy_timeout for other writers
                self._txn_bytes = PAGE_SIZE
                yield cur
                cur.execute("COMMIT")
                self._checkpointer.committed(self._txn_bytes)
            except BaseException as exc:
                if conn.in_transaction:
                    with suppress(sqlite3.Error):  # a damaged file may refuse even this
                        cur.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._failed(exc) from exc
                raise
            finally:
                cur.close()

    @contextmanager
    def read(self) -> Iterator[Cursor]:
        """A cursor of the reading connection: not behind a write transaction of this
        store (see the module notes)."""
        with self._read_lock:
            if self._reader is None:
                raise StorageClosedError("this SqliteStorage is closed")
            cur = self._reader.cursor()
            try:
                yield cur
            except sqlite3.Error as exc:
                raise self._failed(exc) from exc
            finally:
                cur.close()

    def uid(self, value: UUID) -> Any:
        return str(value)

    def load_uid(self, value: Any) -> UUID:
        return UUID(value)

    def time(self, value: datetime) -> Any:
        return iso_time(value)

    def load_time(self, value: Any) -> datetime:
        return load_iso_time(value)

    def insert_events(
        self,
        team_id: UUID,
        rows: list[tuple[datetime, str]],
        also: Callable[[Cursor], None] | None = None,
        fence: Fence | None = None,
    ) -> int:
        """Append ``rows`` under the next numbers, in one transaction, with one INSERT.

        Why one statement and not ``executemany``: ``sqlite3`` releases the GIL around
        each step, and a thread that wants it back waits for whoever holds it — up to
        the interpreter's switch interval (5 ms) while a busy thread computes. Row by
        row, the recorder's writer thread paid that wait per row, so while the team was
        busy the writer stood still and the log fell behind. Here the whole batch is two
        parameters — the texts packed in a blob, and a JSON array of where each one
        lies — that SQLite unpacks itself with the GIL released, so a batch costs a
        handful of waits, whatever its size, and its work overlaps the team's.
        """
        tid = str(team_id)
        stamps = [self.time(ts) for ts, _ in rows]
        width = max((len(stamp) for stamp in stamps), default=0)
        texts = "".join(stamp.ljust(width) for stamp in stamps).encode()
        payloads = [raw.encode() for _, raw in rows]
        spans: list[int] = []
        start = 0
        for payload in payloads:
            spans.append(start << 32 | len(payload))
            start += len(payload)
        blob = b"".join(payloads)
        statement = _INSERT_PACKED_OPEN if fence is None else _INSERT_PACKED_FENCED
        fenced = () if fence is None else (fence.resource, fence.owner)
        with self.write() as cur:
            first = team_head(cur, tid) + 1
            params = (tid, first, texts, width, blob, json.dumps(spans), *fenced)
            self._insert(cur, statement, params, fence)
            self._txn_bytes += len(texts) + len(blob)
            if also is not None:
                also(cur)
        return first

    def insert_packs(
        self,
        team_id: UUID,
        packs: list[bytes],
        counts: list[int],
        also: Callable[[Cursor], None] | None = None,
        fence: Fence | None = None,
    ) -> int:
        """One row per pack, numbered as :meth:`insert_events` numbers, in one statement.

        Why one statement, and without ``also`` no ``BEGIN``/``COMMIT`` around it:
        ``sqlite3`` releases the GIL around each step of each statement, and the writer
        thread beside a busy team waits up to the switch interval (5 ms) to take it back,
        every time (see :meth:`insert_events`). ``executemany`` paid that per pack, and a
        transaction of four statements paid it a dozen times: a group commit took 50 to
        150 ms under load. Alone, the ``INSERT`` is its own transaction (synced like any
        commit). The first number is the one this driver expects (:meth:`_insert_at`), or,
        for its first append and after an expectation the insert refused, read back by
        the last row's ``rowid``."""
        tid = str(team_id)
        spans: list[list[int]] = []
        start = offset = 0
        for pack, count in zip(packs, counts, strict=True):
            spans.append([start, len(pack), offset, offset + count - 1])
            start += len(pack)
            offset += count
        blob = b"".join(packs)
        statement = _INSERT_PACKS_OPEN if fence is None else _INSERT_PACKS_FENCED
        fenced = () if fence is None else (fence.resource, fence.owner)
        params = (tid, blob, json.dumps(spans), *fenced)
        if also is None:
            with self._lock:
                conn = self._writable()
                if not conn.in_transaction:  # (always, unless a failed write left one)
                    try:
                        first = self._insert_at(conn, tid, params, fence)
                        if first is None:
                            last = self._insert(conn.cursor(), statement, params, fence).lastrowid
                            (first_of_last,) = conn.execute(_FIRST_OF_ROW, (last,)).fetchone()
                            first = int(first_of_last) - spans[-1][2]
                    except sqlite3.Error as exc:
                        raise self._failed(exc) from exc
                    self._next[tid] = first + offset
                    self._checkpointer.committed(PAGE_SIZE + len(blob))
                    return first
        with self.write() as cur:
            last = self._insert(cur, statement, params, fence).lastrowid
            (first_of_last,) = cur.execute(_FIRST_OF_ROW, (last,)).fetchone()
            self._txn_bytes += len(blob)
            if also is not None:
                also(cur)
        first = int(first_of_last) - spans[-1][2]
        self._next[tid] = first + offset  # committed: the transaction ended with the block
        return first

    def _insert_at(
        self,
        conn: sqlite3.Connection,
        tid: str,
        params: tuple[Any, ...],
        fence: Fence | None,
    ) -> int | None:
        """Insert packs numbered from the number this driver expects next for the team
        (the one after its own last insert), and return it; None, with nothing inserted,
        when there is no such number or it is not the team's next any more (another
        writer appended, the lease was lost): the caller inserts the usual way then.

        Why: reading the first number back after the insert is one more statement, and
        each statement gives up the GIL, which a writer beside a busy team waits up to the
        switch interval to take back — a few of these waits were most of a group commit
        under load, and the last commit of a flood is what a caller waiting for it waits
        out (bench/README.md). The check is the insert's own (``_INSERT_PACKS_AT``), under
        its write lock: an expectation gone stale numbers nothing wrong, it only costs
        the usual way."""
        first = self._next.get(tid)
        if first is None:
            return None
        statement = _INSERT_PACKS_AT if fence is None else _INSERT_PACKS_AT_FENCED
        before = conn.total_changes  # one statement: all of its rows, or none
        conn.execute(statement, (*params, first))
        return first if conn.total_changes != before else None

    def _insert(
        self, cur: Cursor, statement: str, params: tuple[Any, ...], fence: Fence | None
    ) -> sqlite3.Cursor:
        """Run an insert of events (never none); ``fence_refused`` when it was fenced and
        inserted nothing. Counted by the connection's ``total_changes`` (this thread
        holds it): ``rowcount`` stays -1 for a statement that starts with ``WITH``."""
        conn = self._live()
        before = conn.total_changes
        inserted = cast(sqlite3.Cursor, cur.execute(statement, params))
        if fence is not None and conn.total_changes == before:
            raise fence_refused(cur, self, fence)
        return inserted

    def lock_working_memory(self, cur: Cursor, team_id: UUID, agent_id: UUID) -> None:
        """Nothing to do: BEGIN IMMEDIATE already holds the database's write lock."""

    def check_fence(self, cur: Cursor, fence: Fence) -> None:
        """The fenced inserts' condition (:data:`_FENCE`), on its own: BEGIN IMMEDIATE
        already holds the database's write lock, so the lease stays as read here until
        the transaction commits."""
        (held,) = cur.execute(
            "SELECT " + _FENCE.format("", ""), (fence.resource, fence.owner)
        ).fetchone()
        if not held:
            raise fence_refused(cur, self, fence)

    def close(self) -> None:
        self._checkpointer.close()
        with self._read_lock:  # first: the writer, last to close, folds the WAL in
            if self._reader is not None:
                self._reader.close()
                self._reader = None
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class SqliteStorage(SqlStorage):
    """A :class:`~akgentic.storage.StorageBundle` in one SQLite file (see module notes).

    ``SqliteStorage("teams.db")`` or ``open_storage("sqlite:///abs/path/teams.db")``.
    The file and its parent directories are created when missing. ``read_only=True``
    opens an existing file read-only, writing nothing, and refuses writes (see the
    module notes).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        synchronous: Literal["FULL", "NORMAL"] = "FULL",
        busy_timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        self.options = SqliteOptions(synchronous=synchronous, busy_timeout=busy_timeout)
        self.path = Path(path)
        self.read_only = read_only
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._driver = _Driver(self.path, self.options, read_only)
        super().__init__(self._driver)

    def close(self) -> None:
        """Close the connection (idempotent); later calls raise StorageClosedError."""
        self._driver.close()

    def __enter__(self) -> SqliteStorage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        ro = ", read_only=True" if self.read_only else ""
        return f"SqliteStorage({str(self.path)!r}, synchronous={self.options.synchronous!r}{ro})"


if TYPE_CHECKING:  # the type checker proves the bundle honours the protocols
    from akgentic.storage.protocols import StorageBundle

    _check: StorageBundle = SqliteStorage("")
