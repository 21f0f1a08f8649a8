"""A team's shared state — plan, graph, index, pending notifications — survives a stop and
resume, and replaying the event log rebuilds each tool's state exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from akgentic.core import ActorSystem, EventMessage, StateChangedMessage
from akgentic.storage import open_storage
from akgentic.team import TeamCard, TeamManager, TeamRuntime, replay_tool_states
from akgentic.tool.core import ToolStateEvent, fold_deltas
from akgentic.tool.knowledge_graph.kg_actor import KG_COLLECTION
from akgentic.tool.planning.planning_actor import PLANNING_COLLECTION
from akgentic.tool.vector_store.backends.inmemory import VectorStoreState
from akgentic.tool.vector_store.vector import local_model_available

from .conftest import answer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "teams" / "analyst.yaml"
TOOLS = ("#PlanningTool", "#KnowledgeGraphTool", "#NotificationTool", "#VectorStore")


def wait_for_index(runtime: TeamRuntime, expected: dict[str, set[str]]) -> None:
    """Follow the log until ``#VectorStore``'s persisted state (its last snapshot with the
    deltas after it) holds ``expected`` (collection -> ref ids). Its rows are written by
    embedding workers after the tools answered — fire-and-forget, as fast as the
    embedder loads — so the test waits for the state it asserts, by its events, however
    long MiniLM takes to load."""
    state: VectorStoreState | None = None
    for record in runtime.follow(1, idle_timeout=90):
        msg = record.message
        if msg is None or msg.sender is None or msg.sender.name != "#VectorStore":
            continue
        if isinstance(msg, StateChangedMessage) and isinstance(msg.state, VectorStoreState):
            state = msg.state
        elif isinstance(msg, EventMessage) and isinstance(msg.event, ToolStateEvent):
            state = fold_deltas(state or VectorStoreState(), [msg.event])
        else:
            continue
        held = {
            name: {row.ref_id for row in rows.values()} for name, rows in state.collections.items()
        }
        if all(expected[name] <= held.get(name, set()) for name in expected):
            return
    raise AssertionError(f"#VectorStore never held {expected}")


def tool_states(system: ActorSystem, runtime: TeamRuntime) -> dict[str, Any]:
    states = {}
    for address in runtime.members():
        if address.name in TOOLS:
            states[address.name] = system.get_actor(address).state.model_dump(mode="json")
    return states


def test_plan_graph_index_and_notifications_survive_stop_and_resume(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    runtime.send("study concurrency")
    seq, text = answer(runtime, 0)
    assert text.startswith("[scripted] Planned two tasks, recorded concurrency")
    runtime.send("search isolated actors")
    seq, text = answer(runtime, seq)
    assert "actor model" in text
    if local_model_available():  # the index holds the embedded plan and graph rows
        plan = tool_states(system, runtime)
        wait_for_index(
            runtime,
            {
                PLANNING_COLLECTION: set(plan["#PlanningTool"]["tasks"]),
                KG_COLLECTION: set(plan["#KnowledgeGraphTool"]["entities"]),
            },
        )
    before = tool_states(system, runtime)
    assert set(before) == set(TOOLS)
    assert len(before["#PlanningTool"]["tasks"]) == 2
    assert set(before["#KnowledgeGraphTool"]["entities"]) == {
        "concurrency",
        "actor model for concurrency",
    }
    assert [p["content"] for p in before["#NotificationTool"]["pending"]] == [
        "check progress on concurrency"
    ]
    if local_model_available():
        assert set(before["#VectorStore"]["collections"]) == {PLANNING_COLLECTION, KG_COLLECTION}

    replayed = replay_tool_states(storage.events.read(runtime.team_id))
    assert replayed.gaps == []
    for tool in ("#PlanningTool", "#KnowledgeGraphTool", "#NotificationTool"):
        assert replayed.states[tool].model_dump(mode="json") == before[tool]

    manager.stop_team(runtime.team_id)
    resumed = manager.resume_team(runtime.team_id)
    after = tool_states(system, resumed)
    assert after == before
    resumed.send("search isolated actors")
    _, text = answer(resumed, seq)
    assert "actor model" in text
    # one actor per tool, still: the resume bound the restored actors, made no new ones
    names = [a.name for a in resumed.members() if a.name.startswith("#")]
    assert sorted(names) == sorted(TOOLS)
