"""A team read locally (``TeamRuntime``) and through the server (``RemoteTeam``) gives the
same answers: a script runs unchanged against either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.server import ServerSettings
from akgentic.team import ReplayResult
from akgentic.tool.knowledge_graph import GraphState
from akgentic.tool.planning import Plan
from tests.server.conftest import Served, serve_cards


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5))


def test_a_tool_that_has_published_nothing_reads_the_same_locally_and_remotely(
    served: Served,
) -> None:
    """A fresh team's tool actors have published no delta: both sides answer the state
    each starts from, with ``last_seq`` 0 (not an empty result locally)."""
    remote = served.client.create_team("analyst")
    local = served.manager.get_team(remote.team_id)
    assert local is not None
    for tool, empty in (("#PlanningTool", Plan()), ("#KnowledgeGraphTool", GraphState())):
        here, there = local.tool_state(tool), remote.tool_state(tool)
        assert here == there
        assert here.states == {tool: empty} and here.last_seq == {tool: 0} and here.gaps == []


def test_locally_a_tool_the_team_lacks_or_a_stopped_team_reads_empty(served: Served) -> None:
    """Locally, a tool the team does not have is an empty result (remotely a 404), and so
    is an unpublished tool once the team has stopped (no roster to ask): no error."""
    remote = served.client.create_team("analyst")
    local = served.manager.get_team(remote.team_id)
    assert local is not None
    assert local.tool_state("#NoSuchTool") == ReplayResult()
    assert local.stop()
    assert local.tool_state("#PlanningTool") == ReplayResult()
