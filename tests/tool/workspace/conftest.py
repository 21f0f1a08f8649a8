"""Workspace fixtures: a private workspaces root per test, members wiring real cards.

Every test gets its own ``AKGENTIC_WORKSPACES_ROOT`` (under ``tmp_path``) and principal,
and no sharing permission unless it sets one. The vector store is keyword-only unless a
test installs the concept embedder (``fake_embedder``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from akgentic.core import ActorAddress, EventMessage
from akgentic.tool import ToolCard
from akgentic.tool.workspace import WorkspaceTool

from ..conftest import Team
from ..members import (  # noqa: F401  (re-exported to the tests, and the autouse fixture)
    ConceptEmbedder,
    add_member,
    eventually,
    factory_of,
    install_embedder,
    no_embedder,
    tool_address,
    tools_of,
)
from ..sandbox.conftest import bwrap  # noqa: F401  (the real-sandbox fixture)

Tools = dict[str, Callable[..., Any]]


@pytest.fixture(autouse=True)
def workspaces_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(root))
    monkeypatch.setenv("AKGENTIC_PRINCIPAL", "alice")
    monkeypatch.delenv("AKGENTIC_WORKSPACE_SHARED_KINDS", raising=False)
    return root


def member_tools(team: Team, name: str, card: ToolCard | None = None) -> Tools:
    """The tools of a new member ``name`` carrying ``card`` (a default WorkspaceTool)."""
    member = add_member(team, name, card if card is not None else WorkspaceTool())
    return tools_of(team, member)


def card_of(team: Team, member: ActorAddress) -> WorkspaceTool:
    card = factory_of(team, member).tool_cards[0]
    assert isinstance(card, WorkspaceTool)
    return card


def events_of(team: Team, kind: type[Any], *, drain: bool = True) -> list[Any]:
    """Every event of class ``kind`` the team stream carried so far, in order.

    With ``drain``, the orchestrator is asked first: a query hands its subscribers
    everything queued before it, so every event emitted before this call is in the list
    (emit before return: a tool's events are queued before its answer). Never drain
    while holding the recorder's lock (``wait_events``): the drain delivers under it."""
    if drain:
        team.drain()
    with team.recorder.cond:
        log = list(team.recorder.log)
    return [m.event for m in log if isinstance(m, EventMessage) and isinstance(m.event, kind)]


def wait_events(team: Team, kind: type[Any], count: int, timeout: float = 60.0) -> list[Any]:
    team.recorder.wait_for(
        lambda: len(events_of(team, kind, drain=False)) >= count, timeout=timeout
    )
    return events_of(team, kind)


CONCEPTS: dict[str, tuple[str, ...]] = {
    "money": ("budget", "spending", "financial", "forecast", "cost", "invoice", "money"),
    "animals": ("cat", "cats", "dog", "kitten", "feline", "pet", "pets"),
    "weather": ("rain", "storm", "forecast", "sunny", "cloud", "weather"),
}


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[ConceptEmbedder]:
    yield install_embedder(monkeypatch, CONCEPTS)
