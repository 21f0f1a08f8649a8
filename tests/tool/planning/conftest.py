"""Planning fixtures: member agents wiring real cards, the event log, a fake embedder.

The vector store resolves its embedder automatically (a local model may be installed);
tests here are keyword-only unless they ask for ``fake_embedder``, which swaps in a
deterministic concept embedder — so no test depends on what the machine has.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from akgentic.core import ActorAddress
from akgentic.tool import ToolStateEvent
from akgentic.tool.planning import PLANNING_ACTOR_NAME, PlanActor, PlanningStateEvent

from ..conftest import Team
from ..members import (  # noqa: F401  (re-exported to the tests, and the autouse fixture)
    ConceptEmbedder,
    LoadingEmbedder,
    Member,
    MemberConfig,
    add_member,
    collected,
    eventually,
    factory_of,
    install_embedder,
    no_embedder,
    tool_address,
    tool_events,
    tools_of,
    wait_tool_events,
)


def plan_address(team: Team) -> ActorAddress:
    return tool_address(team, PLANNING_ACTOR_NAME)


def plan_events(team: Team) -> list[ToolStateEvent]:
    """Every plan ToolStateEvent the team stream carried so far, in stream order."""
    return tool_events(team, PLANNING_ACTOR_NAME)


def wait_events(team: Team, count: int) -> list[ToolStateEvent]:
    return wait_tool_events(team, PLANNING_ACTOR_NAME, count)


def deltas(events: Sequence[ToolStateEvent]) -> list[PlanningStateEvent]:
    out: list[PlanningStateEvent] = []
    for event in events:
        assert isinstance(event.payload, PlanningStateEvent)
        out.append(event.payload)
    return out


def plan_actor(team: Team) -> PlanActor:
    """The actor object (read only after every ask has returned)."""
    actor = team.system.get_actor(plan_address(team))
    assert isinstance(actor, PlanActor)
    return actor


CONCEPTS: dict[str, tuple[str, ...]] = {
    "money": ("budget", "spending", "financial", "forecast", "cost", "invoice", "money"),
    "writing": ("write", "draft", "essay", "prose", "chapter", "intro", "introduction"),
    "people": ("hire", "recruit", "interview", "candidate", "staff", "team"),
}


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConceptEmbedder]:
    yield install_embedder(monkeypatch, CONCEPTS)


@pytest.fixture
def loading_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoadingEmbedder]:
    """A concept embedder whose model load is held until the test sets its ``gate``."""
    embedder = install_embedder(monkeypatch, CONCEPTS, LoadingEmbedder)
    assert isinstance(embedder, LoadingEmbedder)
    yield embedder
    embedder.gate.set()  # a load the test left held ends
