"""Members and embedders shared by the card tests (planning, knowledge graph).

``Member`` is a small agent that wires real cards through ``ToolFactory``;
``ConceptEmbedder`` is a deterministic embedder, swapped in by ``fake_embedder``, so that
no test depends on whether the machine has an embedding model (``no_embedder`` is the
keyword-only default a package's conftest turns on by importing it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic import Field

from akgentic.core import ActorAddress, Akgent, BaseConfig, EventMessage
from akgentic.tool import ToolCard, ToolFactory, ToolStateEvent
from akgentic.tool.vector_store import semantic as semantic_module

from ..core.conftest import collected, eventually  # noqa: F401  (re-exported to the card tests)
from .conftest import AgentStateWithTools, Team


class MemberConfig(BaseConfig):
    """A member's config: the cards it carries."""

    cards: list[ToolCard] = Field(default_factory=list)


class Member(Akgent[MemberConfig, AgentStateWithTools]):
    """An agent that wires its cards on its own thread, as the agent layer does."""

    def on_start(self) -> None:
        self._factory = ToolFactory(self.config.cards, observer=self)

    def factory(self) -> ToolFactory:
        return self._factory


def add_member(team: Team, name: str, *cards: ToolCard) -> ActorAddress:
    return team.system.createActor(
        Member,
        config=MemberConfig(name=name, cards=list(cards)),
        team_id=team.orchestrator.team_id,
    )


def factory_of(team: Team, member: ActorAddress) -> ToolFactory:
    """The member's factory, once its on_start has wired it."""
    factory: ToolFactory = team.system.proxy_ask(member, Member, timeout=30).factory()
    return factory


def tools_of(team: Team, member: ActorAddress) -> dict[str, Callable[..., Any]]:
    return {tool.__name__: tool for tool in factory_of(team, member).get_tools()}


def tool_address(team: Team, name: str) -> ActorAddress:
    """The team's one tool actor called ``name``."""
    found = [m for m in team.proxy.get_team() if m.name == name]
    assert len(found) == 1, found
    return found[0]


def tool_events(team: Team, tool_id: str, *, drain: bool = True) -> list[ToolStateEvent]:
    """Every ToolStateEvent of ``tool_id`` the team stream carried so far, in order.

    With ``drain`` (see :meth:`Team.drain`), every event emitted before the call is in the
    list — so an exact count or "nothing more" holds, not only "at least". Without it
    (inside a ``recorder.wait_for`` predicate, which holds the recorder's lock), only
    what the orchestrator has delivered so far."""
    if drain:
        team.drain()
    with team.recorder.cond:
        log = list(team.recorder.log)
    return [
        m.event
        for m in log
        if isinstance(m, EventMessage)
        and isinstance(m.event, ToolStateEvent)
        and m.event.tool_id == tool_id
    ]


def wait_tool_events(team: Team, tool_id: str, count: int) -> list[ToolStateEvent]:
    """At least ``count`` events of ``tool_id``, then every one emitted so far (drained)."""
    team.recorder.wait_for(
        lambda: len(tool_events(team, tool_id, drain=False)) >= count, timeout=60
    )
    return tool_events(team, tool_id)


# -- embeddings -------------------------------------------------------------------------


class ConceptEmbedder:
    """Deterministic: one dimension per concept (a word list), plus a constant so that no
    vector is zero."""

    name = "concept-test"

    def __init__(self, concepts: dict[str, tuple[str, ...]]) -> None:
        self.concepts = concepts
        self.dimension = len(concepts) + 1

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        out = []
        for text in texts:
            words = [w.strip(".,():") for w in text.lower().split()]
            out.append([0.05] + [float(sum(w in c for w in words)) for c in self.concepts.values()])
        return out


class LoadingEmbedder(ConceptEmbedder):
    """A :class:`ConceptEmbedder` with a model to load first, as the local MiniLM has: not
    ``ready`` until loaded; ``warm_up`` and the first ``embed`` load it, once, under one
    lock — a load held until ``gate`` is set. ``warm_ups`` counts the warm-up calls."""

    def __init__(self, concepts: dict[str, tuple[str, ...]]) -> None:
        super().__init__(concepts)
        self.gate = threading.Event()
        self.loading = threading.Event()  # a load has begun (and is held on the gate)
        self.warm_ups = 0
        self._count = threading.Lock()
        self._lock = threading.Lock()
        self._loaded = False

    @property
    def ready(self) -> bool:
        return self._loaded

    def warm_up(self) -> None:
        with self._count:
            self.warm_ups += 1
        with self._lock:
            self._load()

    def _load(self) -> None:
        if not self._loaded:
            self.loading.set()
            if not self.gate.wait(60):
                raise TimeoutError("the test never let the model load")
            self._loaded = True

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        with self._lock:
            self._load()
        return super().embed(texts, timeout)


@pytest.fixture(autouse=True)
def no_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword-only unless a test installs an embedder."""
    monkeypatch.setattr(semantic_module, "get_embedding_service", lambda config=None: None)


def install_embedder(
    monkeypatch: pytest.MonkeyPatch,
    concepts: dict[str, tuple[str, ...]],
    kind: type[ConceptEmbedder] = ConceptEmbedder,
) -> ConceptEmbedder:
    """Make the vector store embed with a ``kind`` of :class:`ConceptEmbedder` over
    ``concepts``."""
    embedder = kind(concepts)
    monkeypatch.setattr(semantic_module, "get_embedding_service", lambda config=None: embedder)
    return embedder
