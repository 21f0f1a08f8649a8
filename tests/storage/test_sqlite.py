"""SQLite specifics: WAL mode, the chosen sync level, schema versioning."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.core import UserMessage
from akgentic.storage import (
    CatalogAuditEntry,
    InstanceGoneError,
    LeaseHolder,
    SkillRecord,
    SqliteStorage,
    StorageError,
    StorageNotFoundError,
    open_storage,
    sqlite_url,
)
from akgentic.storage.records import utc_now
from akgentic.storage.sqlite import readonly_hint
from tests.read_only import read_only_run
from tests.storage.test_packs import busy

_SYNC = {1: "NORMAL", 2: "FULL"}


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SqliteStorage(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # 3: catalog row ids and skill toolsets
    assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    conn.close()


@pytest.mark.parametrize("level", ["FULL", "NORMAL"])
def test_the_sync_level_is_applied(tmp_path: Path, level: str) -> None:
    store = SqliteStorage(tmp_path / "t.db", synchronous=level)  # type: ignore[arg-type]
    conn = store._driver._conn
    assert conn is not None
    (value,) = conn.execute("PRAGMA synchronous").fetchone()
    assert _SYNC[value] == level
    store.close()


def test_full_sync_is_the_default(tmp_path: Path) -> None:
    store = SqliteStorage(tmp_path / "t.db")
    assert store.options.synchronous == "FULL"
    store.close()


def test_a_file_made_before_catalog_row_ids_gains_them_on_open(tmp_path: Path) -> None:
    """Version 2 had no ``akgentic_catalog.row_id``: opening adds it and gives each row
    its own, so a probe's outcome can be kept on the row it probed only."""
    path = tmp_path / "t.db"
    made = CatalogAuditEntry(actor="a", action="enable")
    with SqliteStorage(path) as store:
        for name in ("a", "b"):
            store.catalog.set_enabled(name, "web_search", {"agents": True}, made)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("ALTER TABLE akgentic_catalog DROP COLUMN row_id")  # as version 2 made it
        conn.execute("PRAGMA user_version=2")
        conn.commit()
    with SqliteStorage(path) as store:
        ids = [r.row_id for r in store.catalog.list()]
        assert all(ids) and len(set(ids)) == 2, ids
        store.catalog.remove("a", CatalogAuditEntry(actor="a", action="remove"))
        with pytest.raises(InstanceGoneError):
            store.catalog.record_probe("a", "web_search", "active", "", utc_now(), row_id=ids[0])
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (3,)


def test_a_file_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SqliteStorage(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(StorageError, match="upgrade akgentic"):
        SqliteStorage(path)


def test_opening_twice_is_idempotent_and_shares_the_data(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SqliteStorage(path) as first, SqliteStorage(path) as second:
        team = uuid4()
        assert first.events.append(team, UserMessage(content="a")) == 1
        assert second.events.append(team, UserMessage(content="b")) == 2
        assert [r.seq for r in first.events.read(team)] == [1, 2]


def test_a_failed_write_rolls_back(tmp_path: Path) -> None:
    store = SqliteStorage(tmp_path / "t.db")
    team = uuid4()
    store.events.append(team, UserMessage(content="kept"))
    with pytest.raises(RuntimeError, match="boom"), store._driver.write() as cur:
        cur.execute(
            "INSERT INTO akgentic_events (team_id, seq, ts, payload) VALUES (?, 2, 'x', 'y')",
            (str(team),),
        )
        raise RuntimeError("boom")
    assert store.events.last_seq(team) == 1
    assert store.events.append(team, UserMessage(content="next")) == 2
    store.close()


# -- a file that is not an akgentic store: StorageError naming the file --------------------


def test_a_file_of_random_bytes_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "noise.db"
    path.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(StorageError, match=rf"{path}.*not a database") as caught:
        SqliteStorage(path)
    assert not isinstance(caught.value, sqlite3.Error)
    assert path.read_bytes() == bytes(range(256)) * 64  # left as it was


def test_a_folder_given_as_the_file_says_so(tmp_path: Path) -> None:
    """Not "check that the folder exists and is writable": it does, and is."""
    folder = tmp_path / "store.db"
    folder.mkdir()
    with pytest.raises(StorageError) as caught:
        SqliteStorage(folder)
    assert str(caught.value) == (
        f"{folder}: unable to open database file: it is a folder, not a file: give a file's "
        f"path (in that folder, say)"
    )


def test_a_truncated_database_raises_storage_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    team = uuid4()
    with SqliteStorage(path) as store:
        store.events.append_many(team, [UserMessage(content="x" * 2000) for _ in range(200)])
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(StorageError, match=rf"{path}.*malformed"):
        store = SqliteStorage(path)
        try:
            store.events.read(team)
        finally:
            store.close()


def test_a_damaged_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """Opening a store writes nothing to a file already at this schema, so a damaged one
    (a page of its tables overwritten) is refused naming it, byte for byte unchanged."""
    path = tmp_path / "t.db"
    team = uuid4()
    with SqliteStorage(path) as store:
        store.events.append_many(team, [UserMessage(content="x" * 2000) for _ in range(200)])
    conn = sqlite3.connect(path)
    roots = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE tbl_name LIKE 'akgentic_event%'"
    ).fetchall()
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with path.open("r+b") as f:  # the event tables' and indexes' root pages overwritten
        for (root,) in roots:
            f.seek((root - 1) * page_size)
            f.write(b"\xde\xad" * (page_size // 2))
    damaged = path.read_bytes()
    with pytest.raises(StorageError, match=rf"{path}.*malformed"):
        store = SqliteStorage(path)
        try:
            store.events.read(team)
        finally:
            store.close()
    assert path.read_bytes() == damaged


def test_opening_an_existing_store_writes_nothing_to_it(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SqliteStorage(path) as store:
        store.events.append(uuid4(), UserMessage(content="kept"))
    before = path.read_bytes()
    SqliteStorage(path).close()
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("table", "column"),
    [("akgentic_events", "seq"), ("akgentic_teams", "status")],  # teams: an index's column
)
def test_a_foreign_table_is_refused_naming_the_file_and_table(
    tmp_path: Path, table: str, column: str
) -> None:
    """Said as another program's table (and what to do), not as an index on a column it
    lacks (``no such column: status``); nothing of it is changed."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute(f"INSERT INTO {table} (body) VALUES ('theirs')")
    conn.commit()
    conn.close()
    with pytest.raises(
        StorageError, match=rf"{path}: the table {table} was not made by akgentic"
    ) as caught:
        SqliteStorage(path)
    assert column in str(caught.value)  # the columns it needs
    conn = sqlite3.connect(path)
    assert conn.execute(f"SELECT body FROM {table}").fetchall() == [("theirs",)]
    conn.close()


def test_errors_of_the_file_during_use_name_it(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    store = SqliteStorage(path)
    team = uuid4()
    store.events.append(team, UserMessage(content="x"))
    other = sqlite3.connect(path)
    other.execute("DROP TABLE akgentic_events")  # the file changes under the store
    other.close()
    with pytest.raises(StorageError, match=rf"{path}.*akgentic_events"):
        store.events.read(team)
    with pytest.raises(StorageError, match=str(path)):
        store.events.append(team, UserMessage(content="y"))
    store.close()


def test_a_sqlite_without_json_functions_is_refused_at_open_saying_what_to_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch insert unpacks its rows with json_each: a SQLite built without the JSON
    functions (older than 3.38, or built with them left out) fails at open, not at the
    first batch; the same file opens once the SQLite has them."""

    class WithoutJson(sqlite3.Connection):
        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:  # type: ignore[override]
            if "json_each" in sql:
                raise sqlite3.OperationalError("no such table: json_each")
            return super().execute(sql, *args)  # type: ignore[arg-type]

    real_connect = sqlite3.connect
    monkeypatch.setattr(
        sqlite3, "connect", lambda *a, **k: real_connect(*a, **k, factory=WithoutJson)
    )
    with pytest.raises(StorageError, match=r"lacks the JSON functions.*SQLite 3\.38 or newer"):
        SqliteStorage(tmp_path / "t.db")
    monkeypatch.undo()
    store = SqliteStorage(tmp_path / "t.db")  # a SQLite with them opens the same file
    assert store.events.append(uuid4(), UserMessage(content="x")) == 1
    store.close()


def test_a_new_file_has_8k_pages_and_an_existing_file_keeps_its_own(tmp_path: Path) -> None:
    SqliteStorage(tmp_path / "new.db").close()
    conn = sqlite3.connect(tmp_path / "new.db")
    assert conn.execute("PRAGMA page_size").fetchone() == (8192,)
    conn.close()
    old = sqlite3.connect(tmp_path / "old.db")  # made elsewhere, with the default pages
    old.execute("CREATE TABLE t (x)")
    old.close()
    store = SqliteStorage(tmp_path / "old.db")
    assert store.events.append(uuid4(), UserMessage(content="x")) == 1
    store.close()
    conn = sqlite3.connect(tmp_path / "old.db")
    assert conn.execute("PRAGMA page_size").fetchone() == (4096,)
    conn.close()


def test_a_store_in_use_opens_and_reads_beside_another_process_write_transaction(
    tmp_path: Path,
) -> None:
    """Opening a file whose schema is current writes nothing, so it takes no write lock:
    with another connection inside ``BEGIN IMMEDIATE`` (another process appending), a
    reader opens and lists at once, even with no busy_timeout to wait in."""
    path = tmp_path / "s.db"
    store = SqliteStorage(path)
    team = store.teams.create("busy")
    store.close()
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        reader = SqliteStorage(path, busy_timeout=0)
        try:
            assert [t.team_id for t in reader.teams.list()] == [team.team_id]
            assert reader.events.last_seq(team.team_id) == 0
        finally:
            reader.close()
    finally:
        other.execute("ROLLBACK")
        other.close()


_SKILLS_V2 = """CREATE TABLE akgentic_skills (
    name TEXT PRIMARY KEY, description TEXT NOT NULL, content TEXT NOT NULL,
    source TEXT NOT NULL, updated_at TEXT NOT NULL)"""
"""The skill table as schema version 2 made it: no toolset column."""


def test_a_version_2_file_gains_the_toolset_column_and_its_skills_read_with_no_link(
    tmp_path: Path,
) -> None:
    """Upgraded in place on open: the old rows are kept and read with no link, and a link
    stored then is kept (the file is version 3 from then on)."""
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(_SKILLS_V2)
        conn.execute(
            "INSERT INTO akgentic_skills VALUES "
            "('lint', 'Run the linter', 'ruff check', 'skills/lint', '2026-01-01T00:00:00Z')"
        )
        conn.execute("PRAGMA user_version=2")
        conn.commit()
    with SqliteStorage(path) as store:
        [old] = store.skills.list()
        assert (old.name, old.description, old.content, old.source, old.toolset) == (
            "lint",
            "Run the linter",
            "ruff check",
            "skills/lint",
            None,
        )
        store.skills.upsert(SkillRecord(name="films", description="Films.", toolset="media"))
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (3,)
    with SqliteStorage(path) as store:
        assert [(s.name, s.toolset) for s in store.skills.list()] == [
            ("films", "media"),
            ("lint", None),
        ]


def test_a_foreign_skill_table_is_refused_and_left_without_the_new_column(
    tmp_path: Path,
) -> None:
    """The column is added in the transaction that checks the tables: a table another
    program made is refused, and the refusal rolls the addition back."""
    path = tmp_path / "foreign.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE akgentic_skills (id INTEGER PRIMARY KEY, body TEXT)")
        conn.commit()
    with pytest.raises(StorageError, match="the table akgentic_skills was not made by akgentic"):
        SqliteStorage(path)
    with closing(sqlite3.connect(path)) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(akgentic_skills)")]
        assert columns == ["id", "body"]
        assert conn.execute("PRAGMA user_version").fetchone() == (0,)


def test_a_file_without_our_tables_still_gets_them_on_open(tmp_path: Path) -> None:
    """The schema is created when a table of it is missing (at the current version too)."""
    path = tmp_path / "s.db"
    SqliteStorage(path).close()
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE akgentic_skills")
    store = SqliteStorage(path, busy_timeout=0)
    try:
        assert store.skills.list() == []
    finally:
        store.close()


def test_a_readonly_database_says_which_of_file_and_folder_to_make_writable(
    tmp_path: Path,
) -> None:
    """The wording by permissions (tested as any user: root writes everywhere)."""
    path = tmp_path / "s.db"
    assert readonly_hint(path, False, True) == (
        f": the file is read-only: make it writable (chmod u+w {path}), or choose another --storage"
    )
    assert readonly_hint(path, False, False) == (
        f": the file and its folder {tmp_path} are read-only: copy the file to a writable "
        "folder and give that file as --storage (commands that only read, such as akgentic "
        "teams list, read it where it is)"
    )
    assert readonly_hint(path, True, False) == (
        f": its folder {tmp_path} is read-only, and SQLite must create its s.db-wal and "
        "s.db-shm files beside it: make the folder writable, or copy the file to a writable "
        "folder and give that file as --storage"
    )
    store = SqliteStorage(path)
    try:
        error = store._driver._failed(  # type: ignore[attr-defined]
            sqlite3.OperationalError("attempt to write a readonly database")
        )
    finally:
        store.close()
    assert str(error) == (
        f"{path}: attempt to write a readonly database: make the file and its folder "
        "writable, or choose another --storage"
    )


@pytest.mark.skipif(
    os.geteuid() == 0, reason="running as root: file permissions are not enforced for root"
)
@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_readonly_store_is_one_error_naming_what_to_make_writable(
    tmp_path: Path, what: str
) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.db"
    SqliteStorage(path).close()
    for extra in folder.glob("s.db-*"):
        extra.unlink()
    target = folder if what == "folder" else path
    target.chmod(0o555 if what == "folder" else 0o444)
    try:
        with pytest.raises(StorageError) as caught:
            store = SqliteStorage(path)
            try:
                store.teams.create("x")
            finally:
                store.close()
    finally:
        target.chmod(0o755 if what == "folder" else 0o644)
    expected = "its folder" if what == "folder" else "the file is read-only"
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


# -- read-only stores (a backup, a read-only mount) --------------------------------------


KEPT = UserMessage(content="kept")


def _store_with_a_team(path: Path) -> UUID:
    """A store at ``path`` holding one team with one event (:data:`KEPT`); its id. Closed:
    SQLite folds the WAL in and removes the ``-wal`` and ``-shm`` files, as a copied
    backup has none."""
    with SqliteStorage(path) as store:
        team = store.teams.create("backup", card={"k": 1}).team_id
        store.events.append(team, KEPT)
    return team


def test_a_store_opened_read_only_reads_and_refuses_every_write_writing_nothing(
    tmp_path: Path,
) -> None:
    """Through SQLite's ``mode=ro`` connection, as a read-only file is opened; the refusal
    comes before SQLite is asked, for the transactions and the lone pack insert alike."""
    path = tmp_path / "s.db"
    team = _store_with_a_team(path)
    before = path.read_bytes()
    pack = busy(team).pack()
    writes: list[Callable[[SqliteStorage], object]] = [
        lambda s: s.teams.create("new"),
        lambda s: s.events.append(team, UserMessage(content="lost?")),
        lambda s: s.events.append_packs(team, [pack]),
        lambda s: s.leases.acquire("team/a", LeaseHolder(owner="o", host="h", pid=1), 30),
        lambda s: s.skills.remove("any"),
    ]
    with SqliteStorage(path, read_only=True) as store:
        assert store.read_only and "read_only=True" in repr(store)
        assert [t.name for t in store.teams.list()] == ["backup"]
        assert [r.require().id for r in store.events.read(team)] == [KEPT.id]
        for write in writes:
            with pytest.raises(StorageError) as caught:
                write(store)
            assert str(caught.value).startswith(f"{path}: opened read-only, nothing was written")
            assert "\n" not in str(caught.value)
        assert store.events.last_seq(team) == 1
    assert path.read_bytes() == before


def test_a_read_only_store_whose_tables_are_not_this_versions_is_refused_saying_what_to_do(
    tmp_path: Path,
) -> None:
    """Its tables cannot be brought up to date where it may not be written."""
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE akgentic_teams (team_id TEXT PRIMARY KEY)")
        conn.execute("PRAGMA user_version=1")
        conn.commit()
    with pytest.raises(StorageError) as caught:
        SqliteStorage(path, read_only=True)
    assert str(caught.value) == (
        f"{path}: opened read-only, and its tables are not this akgentic's (an older "
        "akgentic made them, or none did): copy the file to a writable folder and give that "
        "file as --storage (opening it there brings its tables up to date)"
    )
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (1,)


def test_readers_open_a_writable_store_as_before_and_never_create_one(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _store_with_a_team(path)
    store = open_storage(sqlite_url(path), read_only=True)
    try:
        assert isinstance(store, SqliteStorage) and not store.read_only
    finally:
        store.close()
    with pytest.raises(StorageNotFoundError):
        open_storage(sqlite_url(tmp_path / "none" / "s.db"), read_only=True)
    assert not (tmp_path / "none").exists()


_READ_THEN_WRITE = """
import sys
import threading
from akgentic.storage import StorageError, open_storage
store = open_storage(sys.argv[1], read_only=True)
print(type(store).__name__, store.read_only, [t.name for t in store.teams.list()])
try:
    store.teams.create("new")
except StorageError as exc:
    print(exc)
store.close()
"""


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_store_this_process_may_not_write_is_read_and_a_write_refused(
    tmp_path: Path, what: str, journal: str
) -> None:
    """A read-only mount (even root may not write it): in a read-only folder SQLite can
    make no ``-shm`` file to read a WAL-mode file by, and a read-only file in rollback
    mode (a ``VACUUM INTO`` backup) refused the switch to WAL mode on open."""
    folder = tmp_path / "backups"
    folder.mkdir()
    path = folder / "s.db"
    _store_with_a_team(path)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
    before = sorted(p.name for p in folder.iterdir()), path.read_bytes()
    done = read_only_run(
        [folder if what == "folder" else path],
        [sys.executable, "-c", _READ_THEN_WRITE, sqlite_url(path)],
    )
    assert done.returncode == 0, done.stderr
    listed, refused = done.stdout.splitlines()
    assert listed == "SqliteStorage True ['backup']"
    hint = readonly_hint(path, False, what == "file")  # a folder's mount holds the file too
    assert refused == f"{path}: opened read-only, nothing was written{hint}"
    if what == "folder":
        assert (sorted(p.name for p in folder.iterdir()), path.read_bytes()) == before
    else:  # SQLite may make its -wal and -shm files beside the file
        assert path.read_bytes() == before[1]


def test_a_read_only_folder_holding_commits_in_a_wal_without_its_shm_is_refused_saying_so(
    tmp_path: Path,
) -> None:
    """SQLite cannot read a ``-wal`` without a ``-shm`` it may make, and opening the file
    without its WAL (``immutable``) would hide those commits: refused, naming the files."""
    folder = tmp_path / "backups"
    folder.mkdir()
    path = folder / "s.db"
    _store_with_a_team(path)
    writer = SqliteStorage(path)  # open: its commits stay in the WAL
    try:
        writer.teams.create("only in the wal")
        wal = path.with_name("s.db-wal")
        copied = tmp_path / "copy"
        copied.mkdir()
        shutil.copy(path, copied / "s.db")
        shutil.copy(wal, copied / "s.db-wal")
    finally:
        writer.close()
    done = read_only_run(
        [copied], [sys.executable, "-c", _READ_THEN_WRITE, sqlite_url(copied / "s.db")]
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        f"akgentic.storage.errors.StorageError: {copied / 's.db'}: its folder {copied} is "
        "read-only and holds s.db-wal, commits SQLite cannot read without a s.db-shm file "
        "beside it: copy s.db and s.db-wal to a writable folder and give that file as --storage"
    )


def test_a_read_does_not_wait_behind_a_write_transaction_of_the_same_store(
    tmp_path: Path,
) -> None:
    """A long group commit held every reader of the store; now a read runs beside it and
    sees the last commit, not the transaction still open. (Bounded waits: without this,
    the read would wait until the writer let go.)"""
    store = SqliteStorage(tmp_path / "s.db")
    inside, release = threading.Event(), threading.Event()

    def hold_a_transaction_open() -> None:
        with store._driver.write() as cur:
            cur.execute(
                "INSERT INTO akgentic_skills (name, description, content, source, updated_at) "
                "VALUES ('held', '', '', 'test', '2026-01-01')"
            )
            inside.set()
            release.wait(60)

    writer = threading.Thread(target=hold_a_transaction_open)
    listed: list[list[str]] = []
    reader = threading.Thread(target=lambda: listed.append([s.name for s in store.skills.list()]))
    try:
        writer.start()
        assert inside.wait(60)
        reader.start()
        reader.join(30)
        assert listed == [[]]
    finally:
        release.set()
        writer.join(60)
        reader.join(60)
    assert [s.name for s in store.skills.list()] == ["held"]
    store.close()
