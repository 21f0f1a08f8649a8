"""Fixtures of the team tests: an actor system, and the answer the person gets (their
storage backends are ``storage_url``, in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from akgentic.agent import AgentMessage
from akgentic.core import ActorSystem, SentMessage
from akgentic.team import TeamRuntime


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
