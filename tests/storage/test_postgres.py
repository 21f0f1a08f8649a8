"""Postgres specifics: a schema holding tables of our names that akgentic did not make."""

from __future__ import annotations

from uuid import uuid4

import pytest

from akgentic.storage import StorageError
from tests.storage.conftest import POSTGRES_URL, SKIP_POSTGRES

pytestmark = SKIP_POSTGRES


def test_a_foreign_events_table_is_refused_naming_the_schema_and_table() -> None:
    import psycopg
    from psycopg import sql

    from akgentic.storage.postgres import PostgresStorage

    schema = f"akgentic_test_{uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(
            sql.SQL("CREATE TABLE {}.akgentic_events (id SERIAL, body TEXT)").format(
                sql.Identifier(schema)
            )
        )
    try:
        with pytest.raises(StorageError, match=rf"{schema}.*akgentic_events") as caught:
            PostgresStorage(POSTGRES_URL, schema=schema)
        assert "seq" in str(caught.value)
        assert not isinstance(caught.value, psycopg.Error)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
