"""``open_storage``: the URL picks the backend; bad URLs fail with what is accepted."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import uuid4

import pytest

from akgentic.core import UserMessage
from akgentic.storage import (
    MemoryStorage,
    SqliteStorage,
    StorageBundle,
    StorageNotFoundError,
    open_storage,
    sqlite_path,
    sqlite_url,
)
from tests.storage.conftest import POSTGRES_URL, SKIP_POSTGRES


def test_memory_url_gives_a_fresh_store() -> None:
    a, b = open_storage("memory://"), open_storage("memory://")
    assert isinstance(a, MemoryStorage) and isinstance(a, StorageBundle)
    a.events.append(team := uuid4(), UserMessage(content="x"))
    assert b.events.last_seq(team) == 0
    with pytest.raises(ValueError, match="no path"):
        open_storage("memory://somewhere")


def test_sqlite_url_with_an_absolute_path_has_four_slashes(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "teams.db"
    url = sqlite_url(path)
    assert url == f"sqlite:///{path}" and url.startswith("sqlite:////")
    store = open_storage(url)
    assert isinstance(store, SqliteStorage) and store.path == path
    store.events.append(uuid4(), UserMessage(content="x"))
    store.close()
    assert path.exists()
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "akgentic_events" in tables


def test_sqlite_url_with_three_slashes_is_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_storage("sqlite:///data/teams.db?synchronous=normal&busy_timeout=2.5")
    assert isinstance(store, SqliteStorage)
    assert store.path == Path("data/teams.db")
    assert store.options.synchronous == "NORMAL" and store.options.busy_timeout == 2.5
    store.close()
    assert (tmp_path / "data" / "teams.db").exists()
    assert sqlite_url(Path("data/teams.db")) == "sqlite:///data/teams.db"


def test_a_path_with_spaces_and_percent_signs_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "my teams" / "100%.db"
    url = sqlite_url(path)
    assert " " not in url
    assert sqlite_path(url) == path
    store = open_storage(url)
    store.close()
    assert path.is_file()


def test_two_slashes_name_a_host_and_are_refused_with_both_spellings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old relative form: SQLAlchemy reads ``data`` as a host; nothing is created."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as info:
        open_storage("sqlite://data/teams.db")
    text = str(info.value)
    assert "sqlite:///data/teams.db" in text and "sqlite:////data/teams.db" in text
    assert list(tmp_path.iterdir()) == []


def test_the_old_absolute_form_is_refused_when_it_would_write_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite:///<tmp>/teams.db`` meant the absolute path; read by the new convention it
    would create ``<cwd>/<tmp>/teams.db``. It is refused, naming both spellings."""
    target = tmp_path / "old" / "teams.db"
    SqliteStorage(target).close()  # an existing store, as an earlier version made it
    here = tmp_path / "project"
    here.mkdir()
    monkeypatch.chdir(here)
    old_form = "sqlite://" + str(target)  # three slashes, then the absolute path's rest
    assert old_form.startswith("sqlite:///") and not old_form.startswith("sqlite:////")
    with pytest.raises(ValueError) as info:
        open_storage(old_form)
    text = str(info.value)
    assert f"sqlite:///{target}" in text  # four slashes: the absolute path
    assert f"sqlite:///.{target}" in text  # ./...: a new file here
    assert list(here.iterdir()) == []
    # the explicit relative spelling is honoured
    store = open_storage(f"sqlite:///.{target}")
    assert store.path.resolve() == (here / str(target).lstrip("/")).resolve()
    store.close()


def test_the_old_absolute_form_of_a_new_file_is_refused_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file yet, but its first folder exists at the root (``/tmp``...) and not here."""
    here = tmp_path / "project"
    here.mkdir()
    monkeypatch.chdir(here)
    with pytest.raises(ValueError, match="for the absolute path write sqlite:////"):
        open_storage("sqlite://" + str(tmp_path / "new" / "teams.db"))
    assert list(here.iterdir()) == []


def test_a_relative_store_that_exists_is_opened_whatever_the_root_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = tmp_path.parts[1]  # "tmp" (or whatever holds the test folders)
    monkeypatch.chdir(tmp_path)
    (tmp_path / first).mkdir()
    SqliteStorage(tmp_path / first / "teams.db").close()
    store = open_storage(f"sqlite:///{first}/teams.db")
    assert store.path == Path(first) / "teams.db"
    store.close()


def test_a_reader_never_creates_a_store(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet" / "teams.db"
    with pytest.raises(StorageNotFoundError, match="does not exist"):
        open_storage(sqlite_url(path), create=False)
    assert not (tmp_path / "not").exists()
    SqliteStorage(path).close()
    store = open_storage(sqlite_url(path), create=False)
    assert isinstance(store, SqliteStorage)
    store.close()


@pytest.mark.parametrize(
    ("url", "match"),
    [
        ("sqlite://", "names no file"),
        ("sqlite:///", "names no file"),
        ("sqlite:////", "names no file"),
        ("sqlite:///x.db?synchronus=FULL", r": synchronus: unknown option; accepted: "),
        ("sqlite:///x.db?synchronous=OFF", r": synchronous: Input should be 'FULL' or 'NORMAL'; "),
        (
            "sqlite:///x.db?busy_timeout=-1",
            r": busy_timeout: Input should be greater than or equal",
        ),
        ("sqlite:///x.db?synchronous=FULL&synchronous=NORMAL", "twice"),
    ],
)
def test_bad_sqlite_urls_say_what_is_wrong(
    url: str, match: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=match) as refused:
        open_storage(url)
    assert "{" not in str(refused.value)  # what is wrong in words, not pydantic's dicts
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize(
    "url", ["mysql://u@h/db", "redis://h", "teams.db", "/tmp/teams.db", "", "file:///x.db"]
)
def test_an_unknown_scheme_lists_what_is_accepted(url: str) -> None:
    with pytest.raises(ValueError) as info:
        open_storage(url)
    text = str(info.value)
    for accepted in ("memory://", "sqlite:///", "postgresql://"):
        assert accepted in text


def test_an_unknown_scheme_does_not_echo_credentials() -> None:
    with pytest.raises(ValueError) as info:
        open_storage("mysql://user:s3cret@host/db")
    assert "s3cret" not in str(info.value)


def test_a_url_must_be_a_string() -> None:
    with pytest.raises(TypeError, match="string"):
        open_storage(Path("teams.db"))  # type: ignore[arg-type]


@SKIP_POSTGRES
def test_postgres_url_with_a_schema() -> None:
    import psycopg
    from psycopg import sql

    from akgentic.storage import PostgresStorage

    schema = f"akgentic_url_{uuid4().hex[:10]}"
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        store = open_storage(f"{POSTGRES_URL}{sep}schema={schema}")
        assert isinstance(store, PostgresStorage) and store.options.schema_name == schema
        team = uuid4()
        assert store.events.append(team, UserMessage(content="x")) == 1
        store.close()
        with psycopg.connect(POSTGRES_URL) as conn:
            row = conn.execute(
                sql.SQL("SELECT count(*) FROM {}.akgentic_events").format(sql.Identifier(schema))
            ).fetchone()
        assert row == (1,)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@SKIP_POSTGRES
def test_postgres_refuses_a_bad_schema_name() -> None:
    """In one line saying what a schema name may hold (it was pydantic's four lines)."""
    with pytest.raises(ValueError) as refused:
        open_storage(f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}schema=bad;name")
    assert str(refused.value) == (
        "bad schema in postgresql URL: 'bad;name' is not a schema name akgentic can use; "
        "give letters, digits and _ (not a digit first), at most 63 of them, for instance "
        "?schema=akgentic"
    )


def test_a_connection_gives_up_on_a_silent_server_unless_the_url_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without them a worker cut off from Postgres sat blocked in an append for the
    kernel's TCP retries (about a quarter of an hour), holding the store's lock."""
    from psycopg.conninfo import conninfo_to_dict

    from akgentic.storage.postgres import CONNECTION_DEFAULTS, with_connection_defaults

    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    given = "postgresql://app:pw@db.example:5433/teams?keepalives_idle=5&sslmode=disable"
    params = conninfo_to_dict(with_connection_defaults(given))
    assert params == {
        **CONNECTION_DEFAULTS,
        "user": "app",
        "password": "pw",
        "host": "db.example",
        "port": "5433",
        "dbname": "teams",
        "keepalives_idle": "5",  # the URL's own value wins
        "sslmode": "disable",
    }
    assert (params["connect_timeout"], params["tcp_user_timeout"]) == ("10", "60000")
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "3")
    assert "connect_timeout" not in conninfo_to_dict(with_connection_defaults(given))
