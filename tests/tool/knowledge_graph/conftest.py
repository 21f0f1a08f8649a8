"""Knowledge-graph fixtures: member agents wiring real cards, the event log, a fake embedder.

Keyword-only unless a test asks for ``fake_embedder`` (a deterministic concept
embedder), so no test depends on whether the machine has an embedding model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from pydantic import Field

from akgentic.core import ActorAddress, Akgent, BaseConfig, EventMessage
from akgentic.tool import ToolCard, ToolFactory, ToolStateEvent
from akgentic.tool.knowledge_graph import (
    KG_ACTOR_NAME,
    KnowledgeGraphActor,
    KnowledgeGraphStateEvent,
)
from akgentic.tool.vector_store import semantic as semantic_module

from ..conftest import AgentStateWithTools, Team


class MemberConfig(BaseConfig):
    cards: list[ToolCard] = Field(default_factory=list)


class Member(Akgent[MemberConfig, AgentStateWithTools]):
    """An agent that wires its cards on its own thread, as the agent layer does."""

    def on_start(self) -> None:
        self._factory = ToolFactory(self.config.cards, observer=self)

    def factory(self) -> ToolFactory:
        return self._factory


def add_member(team: Team, name: str, *cards: ToolCard) -> ActorAddress:
    return team.system.createActor(
        Member, config=MemberConfig(name=name, cards=list(cards)), team_id=team.orchestrator.team_id
    )


def factory_of(team: Team, member: ActorAddress) -> ToolFactory:
    factory: ToolFactory = team.system.proxy_ask(member, Member, timeout=10).factory()
    return factory


def tools_of(team: Team, member: ActorAddress) -> dict[str, Callable[..., Any]]:
    return {tool.__name__: tool for tool in factory_of(team, member).get_tools()}


def graph_address(team: Team) -> ActorAddress:
    found = [m for m in team.proxy.get_team() if m.name == KG_ACTOR_NAME]
    assert len(found) == 1, found
    return found[0]


def graph_actor(team: Team) -> KnowledgeGraphActor:
    """The actor object (read only after every ask has returned)."""
    actor = team.system.get_actor(graph_address(team))
    assert isinstance(actor, KnowledgeGraphActor)
    return actor


def graph_events(team: Team) -> list[ToolStateEvent]:
    with team.recorder.cond:
        log = list(team.recorder.log)
    return [
        m.event
        for m in log
        if isinstance(m, EventMessage)
        and isinstance(m.event, ToolStateEvent)
        and m.event.tool_id == KG_ACTOR_NAME
    ]


def wait_events(team: Team, count: int) -> list[ToolStateEvent]:
    team.recorder.wait_for(lambda: len(graph_events(team)) >= count, timeout=10)
    return graph_events(team)


def deltas(events: Sequence[ToolStateEvent]) -> list[KnowledgeGraphStateEvent]:
    out: list[KnowledgeGraphStateEvent] = []
    for event in events:
        assert isinstance(event.payload, KnowledgeGraphStateEvent)
        out.append(event.payload)
    return out


def eventually(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until ``predicate`` holds (re-checked every 20 ms), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        pause.wait(0.02)


CONCEPTS: dict[str, tuple[str, ...]] = {
    "money": ("budget", "spending", "financial", "forecast", "cost", "revenue"),
    "people": ("engineer", "cto", "executive", "founder", "officer", "manager"),
    "places": ("paris", "office", "headquarters", "city", "france"),
}


class ConceptEmbedder:
    """Deterministic: one dimension per concept, plus a constant so no vector is zero."""

    name = "concept-test"
    dimension = len(CONCEPTS) + 1

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        out = []
        for text in texts:
            words = [w.strip(".,():") for w in text.lower().split()]
            out.append([0.05] + [float(sum(w in c for w in words)) for c in CONCEPTS.values()])
        return out


@pytest.fixture(autouse=True)
def no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic_module, "get_embedding_service", lambda config=None: None)


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConceptEmbedder]:
    embedder = ConceptEmbedder()
    monkeypatch.setattr(semantic_module, "get_embedding_service", lambda config=None: embedder)
    yield embedder
