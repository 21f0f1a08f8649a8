"""Storage backends for the team tests: SQLite always, Postgres when configured."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.agent import AgentMessage
from akgentic.core import ActorSystem, SentMessage
from akgentic.storage import sqlite_url
from akgentic.team import TeamRuntime

POSTGRES = os.environ.get("AKGENTIC_TEST_POSTGRES_URL")


def _postgres_url() -> str:
    assert POSTGRES is not None
    sep = "&" if "?" in POSTGRES else "?"
    return f"{POSTGRES}{sep}schema=team_{uuid.uuid4().hex[:12]}"


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(
            "postgres",
            marks=pytest.mark.skipif(
                POSTGRES is None,
                reason="set AKGENTIC_TEST_POSTGRES_URL to run the team tests on Postgres",
            ),
        ),
    ]
)
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "team.db")
    return _postgres_url()


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=10)


def answer(runtime: TeamRuntime, after: int) -> tuple[int, str]:
    """The next answer the person gets after ``seq`` ``after``: its seq and its text."""
    for record in runtime.follow(after + 1, idle_timeout=60):
        msg = record.message
        if (
            isinstance(msg, SentMessage)
            and isinstance(msg.message, AgentMessage)
            and msg.recipient is not None
            and msg.recipient.name == "@Human"
        ):
            return record.seq, msg.message.content
    raise AssertionError("no answer reached @Human")
