"""Postgres specifics: a schema holding tables of our names that akgentic did not make."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any
from uuid import uuid4

import pytest

from akgentic.storage import (
    InstanceGoneError,
    InvalidTransitionError,
    SkillRecord,
    StorageError,
    TeamStatus,
)
from akgentic.storage.records import utc_now
from tests.core.conftest import eventually
from tests.storage.conftest import POSTGRES_URL, SKIP_POSTGRES

pytestmark = SKIP_POSTGRES


@pytest.mark.parametrize("table", ["akgentic_events", "akgentic_teams"])
def test_a_foreign_table_is_refused_naming_the_schema_and_table(table: str) -> None:
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(
            sql.SQL("CREATE TABLE {}.{} (id SERIAL, body TEXT)").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
        )
    try:
        with pytest.raises(
            StorageError, match=rf"{schema}.*the table {table} was not made"
        ) as caught:
            PostgresStorage(POSTGRES_URL, schema=schema)
        assert not isinstance(caught.value, psycopg.Error)
        assert "\n" not in str(caught.value)  # the driver's words, not its LINE 1: ... caret
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


def test_a_newer_schema_whose_tables_differ_is_refused_as_newer_and_left_alone() -> None:
    """A schema a newer akgentic made (version 4, a column renamed, a table it no longer
    has) is refused saying to upgrade — not as tables another program made, with advice
    to use another database — and this code adds none of its tables to it."""
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"
    PostgresStorage(POSTGRES_URL, schema=schema).close()
    name = sql.Identifier(schema)
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("UPDATE {}.akgentic_meta SET value = '4'").format(name))
        conn.execute(
            sql.SQL("ALTER TABLE {}.akgentic_teams RENAME COLUMN card TO card_v3").format(name)
        )
        conn.execute(sql.SQL("DROP TABLE {}.akgentic_skills").format(name))
    try:
        with pytest.raises(StorageError) as caught:
            PostgresStorage(POSTGRES_URL, schema=schema)
        assert str(caught.value) == (
            f"schema {schema!r} has akgentic schema version 4, newer than this akgentic "
            f"(3): upgrade akgentic to open it"
        )
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = %s "
                "AND tablename = 'akgentic_skills'",
                (schema,),
            ).fetchone()
        assert found == (0,)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(name))


def test_a_schema_made_before_catalog_row_ids_gains_them_on_open() -> None:
    """Version 2 had no ``akgentic_catalog.row_id``: opening adds it and gives each row
    its own, so a probe's outcome can be kept on the row it probed only."""
    import psycopg
    from psycopg import sql

    from akgentic.storage import CatalogAuditEntry
    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"
    made = CatalogAuditEntry(actor="a", action="enable")
    with PostgresStorage(POSTGRES_URL, schema=schema) as store:
        for name in ("a", "b"):
            store.catalog.set_enabled(name, "web_search", {"agents": True}, made)
    name = sql.Identifier(schema)
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER TABLE {}.akgentic_catalog DROP COLUMN row_id").format(name))
        conn.execute(sql.SQL("UPDATE {}.akgentic_meta SET value = '2'").format(name))
    try:
        with PostgresStorage(POSTGRES_URL, schema=schema) as store:
            ids = [r.row_id for r in store.catalog.list()]
            assert all(ids) and len(set(ids)) == 2, ids
            store.catalog.remove("a", CatalogAuditEntry(actor="a", action="remove"))
            with pytest.raises(InstanceGoneError):
                store.catalog.record_probe(
                    "a", "web_search", "active", "", utc_now(), row_id=ids[0]
                )
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            version = conn.execute(
                sql.SQL("SELECT value FROM {}.akgentic_meta").format(name)
            ).fetchone()
        assert version == ("3",)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(name))


def test_a_version_2_schema_gains_the_toolset_column_and_its_skills_read_with_no_link() -> None:
    """Upgraded in place on open: the skill table version 2 made (built here as it was,
    a row in it) gains ``toolset``; the old row reads with no link, a link stored then is
    kept, and the schema says version 3."""
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"
    name = sql.Identifier(schema)
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
        conn.execute(
            sql.SQL(
                "CREATE TABLE {}.akgentic_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            ).format(name)
        )
        conn.execute(
            sql.SQL("INSERT INTO {}.akgentic_meta VALUES ('schema_version', '2')").format(name)
        )
        conn.execute(
            sql.SQL(
                "CREATE TABLE {}.akgentic_skills (name TEXT PRIMARY KEY, "
                "description TEXT NOT NULL, content TEXT NOT NULL, source TEXT NOT NULL, "
                "updated_at TIMESTAMPTZ NOT NULL)"
            ).format(name)
        )
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.akgentic_skills VALUES "
                "('lint', 'Run the linter', 'ruff check', 'skills/lint', now())"
            ).format(name)
        )
    try:
        with PostgresStorage(POSTGRES_URL, schema=schema) as store:
            [old] = store.skills.list()
            assert (old.name, old.content, old.source, old.toolset) == (
                "lint",
                "ruff check",
                "skills/lint",
                None,
            )
            store.skills.upsert(SkillRecord(name="films", description="Films.", toolset="media"))
        with PostgresStorage(POSTGRES_URL, schema=schema) as store:
            assert [(s.name, s.toolset) for s in store.skills.list()] == [
                ("films", "media"),
                ("lint", None),
            ]
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            version = conn.execute(
                sql.SQL("SELECT value FROM {}.akgentic_meta WHERE key = 'schema_version'").format(
                    name
                )
            ).fetchone()
        assert version == ("3",)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(name))


def _blocks_another(watcher: Any, pid: int) -> bool:
    """Whether a session waits on a lock the session ``pid`` holds."""
    waiting = "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))"
    return bool(watcher.execute(waiting, (pid,)).fetchone()[0])


def test_a_change_waiting_on_another_process_s_delete_is_refused_once_it_commits() -> None:
    """Two servers on one database: a rename blocked on the row a DELETE (another
    connection's open transaction) holds is refused when that DELETE commits, never
    applied to the deleted team, nor a status change bringing it back to RUNNING."""
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"
    store = PostgresStorage(POSTGRES_URL, schema=schema)
    pool = ThreadPoolExecutor(1)
    table = sql.Identifier(schema, "akgentic_teams")
    try:
        for change in (
            lambda team_id: store.teams.update(team_id, name="after"),
            lambda team_id: store.teams.set_status(team_id, TeamStatus.RUNNING),
        ):
            team = store.teams.create("before")
            store.teams.set_status(team.team_id, TeamStatus.STOPPED)
            with (
                psycopg.connect(POSTGRES_URL) as other,
                psycopg.connect(POSTGRES_URL, autocommit=True) as watcher,
            ):
                other.execute(
                    sql.SQL("UPDATE {} SET status = 'DELETED' WHERE team_id = %s").format(table),
                    (team.team_id,),
                )  # the other server's delete, its transaction still open
                changed = pool.submit(change, team.team_id)
                eventually(partial(_blocks_another, watcher, other.info.backend_pid))
                other.commit()
                refused = changed.exception(timeout=30)
            assert isinstance(refused, InvalidTransitionError), refused
            record = store.teams.get(team.team_id)
            assert record is not None
            assert (record.name, record.status) == ("before", TeamStatus.DELETED)
    finally:
        pool.shutdown()
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def test_a_real_connection_carries_the_defaults() -> None:
    from akgentic.storage import PostgresStorage

    with PostgresStorage(POSTGRES_URL) as store:
        options = {o.keyword: o.val for o in store._driver._live().pgconn.info}
    assert (options[b"connect_timeout"], options[b"tcp_user_timeout"]) == (b"10", b"60000")
    assert options[b"keepalives"] == b"1"
