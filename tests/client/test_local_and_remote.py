"""A team read locally (``TeamRuntime``) and through the server (``RemoteTeam``) gives the
same answers: a script runs unchanged against either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from akgentic.client import ServerError
from akgentic.client.models import NO_TOOL_ACTOR, TOOL_STATE_UNREADABLE
from akgentic.core import ActorAddress, EventMessage
from akgentic.core.serialization import SerializableModel
from akgentic.server import ServerSettings
from akgentic.team import UnknownToolError, UnreadableToolStateError
from akgentic.tool.core import ToolStateEvent
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


def _outcome(read: Any) -> tuple[str, Any]:
    """What a call gave: its result, or its error's type and words."""
    try:
        return "result", read()
    except Exception as exc:  # the point: whatever either side raises is compared
        return type(exc).__name__, str(exc)


class Shelved(SerializableModel):
    """A delta of ``#Shelf``, a tool actor of a card this process does not have: no reducer
    is registered for it and no snapshot of its state is logged."""

    items: list[str]


SHELF = "#Shelf"
UNREADABLE = (
    f"{SHELF} publishes state, but this process cannot rebuild it: no reducer is registered "
    f"for it and the log holds no snapshot of its state that decodes here; import the module "
    f"that defines that state in the process that reads it (a server: `akgentic serve "
    f"--import MODULE`, or a team card's imports)"
)


TOOLS = "its tool actors are #KnowledgeGraphTool, #NotificationTool, #PlanningTool, #VectorStore"


@pytest.mark.parametrize(
    ("card", "tool", "stopped", "expected"),
    [
        (
            "analyst",
            "#NoSuchTool",
            False,
            f"no tool actor #NoSuchTool: ask for one it has ({TOOLS})",
        ),
        (
            "analyst",
            "#NoSuchTool",
            True,
            f"no tool actor #NoSuchTool: ask for one it has ({TOOLS})",
        ),
        (
            "analyst",
            "#planningtool",
            False,
            f"no tool actor #planningtool (did you mean '#PlanningTool'?): ask for one it has "
            f"({TOOLS})",
        ),
        (
            "turns",
            "#PlanningTool",
            False,
            "no tool actor #PlanningTool: ask for one it has (it has none)",
        ),
        (
            "turns",
            "#PlanningTool",
            True,
            "no tool actor #PlanningTool: ask for one it has (it has none)",
        ),
        ("analyst", "#PlanningTool", True, Plan()),
        ("analyst", "#KnowledgeGraphTool", True, GraphState()),
        ("analyst", SHELF, True, UNREADABLE),
    ],
)
def test_tool_state_reads_the_same_locally_and_remotely(
    served: Served, card: str, tool: str, stopped: bool, expected: Any
) -> None:
    """The same calls on the same team, here and through the server, running or stopped:
    a tool the team lacks is one ``UnknownToolError`` in the same words, naming the tool
    actors it has (the server's 404 ``no_tool_actor``); a stopped team's unpublished tool
    is the state it starts from, read from its log's last run, on both sides; a tool whose
    logged deltas neither side can fold (``#Shelf``: no reducer, no snapshot) is one
    ``UnreadableToolStateError`` in the same words (the server's 422
    ``tool_state_unreadable``), never an empty state on one side only."""
    remote = served.client.create_team(card)
    local = served.manager.get_team(remote.team_id)
    assert local is not None
    if stopped:
        assert local.stop()
    if tool == SHELF:  # the stopped team's log holds a delta of a tool this process lacks
        event = ToolStateEvent(tool_id=SHELF, seq=1, payload=Shelved(items=["a"]))
        owner = ActorAddress(agent_id=uuid4(), name=SHELF)
        served.storage.events.append(remote.team_id, EventMessage(event=event, sender=owner))
    here, there = (
        _outcome(lambda: local.tool_state(tool)),
        _outcome(lambda: remote.tool_state(tool)),
    )
    assert here == there
    if isinstance(expected, str):
        error: type[UnknownToolError | UnreadableToolStateError] = UnknownToolError
        status, code, words = 404, NO_TOOL_ACTOR, f"team {remote.team_id} has {expected}"
        if expected == UNREADABLE:
            error = UnreadableToolStateError
            status, code, words = 422, TOOL_STATE_UNREADABLE, f"team {remote.team_id}'s {expected}"
        assert here == (error.__name__, words)
        with pytest.raises(error) as err:
            remote.tool_state(tool)
        cause = err.value.__cause__
        assert isinstance(cause, ServerError) and (cause.status, cause.code) == (status, code)
        assert err.value.tool_id == tool
    else:
        kind, result = here
        assert kind == "result"
        assert result.states == {tool: expected} and result.last_seq == {tool: 0}
