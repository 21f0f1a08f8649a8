"""Knowledge-graph fixtures: member agents wiring real cards, the event log, a fake embedder.

Keyword-only unless a test asks for ``fake_embedder`` (a deterministic concept
embedder), so no test depends on whether the machine has an embedding model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from akgentic.core import ActorAddress
from akgentic.tool import ToolStateEvent
from akgentic.tool.knowledge_graph import (
    KG_ACTOR_NAME,
    KnowledgeGraphActor,
    KnowledgeGraphStateEvent,
)

from ..conftest import Team
from ..members import (  # noqa: F401  (re-exported to the tests, and the autouse fixture)
    ConceptEmbedder,
    Member,
    MemberConfig,
    add_member,
    eventually,
    factory_of,
    install_embedder,
    no_embedder,
    tool_address,
    tool_events,
    tools_of,
    wait_tool_events,
)


def graph_address(team: Team) -> ActorAddress:
    return tool_address(team, KG_ACTOR_NAME)


def graph_events(team: Team) -> list[ToolStateEvent]:
    """Every graph ToolStateEvent the team stream carried so far, in stream order."""
    return tool_events(team, KG_ACTOR_NAME)


def wait_events(team: Team, count: int) -> list[ToolStateEvent]:
    return wait_tool_events(team, KG_ACTOR_NAME, count)


def deltas(events: Sequence[ToolStateEvent]) -> list[KnowledgeGraphStateEvent]:
    out: list[KnowledgeGraphStateEvent] = []
    for event in events:
        assert isinstance(event.payload, KnowledgeGraphStateEvent)
        out.append(event.payload)
    return out


def graph_actor(team: Team) -> KnowledgeGraphActor:
    """The actor object (read only after every ask has returned)."""
    actor = team.system.get_actor(graph_address(team))
    assert isinstance(actor, KnowledgeGraphActor)
    return actor


CONCEPTS: dict[str, tuple[str, ...]] = {
    "money": ("budget", "spending", "financial", "forecast", "cost", "revenue"),
    "people": ("engineer", "cto", "executive", "founder", "officer", "manager"),
    "places": ("paris", "office", "headquarters", "city", "france"),
}


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConceptEmbedder]:
    yield install_embedder(monkeypatch, CONCEPTS)
