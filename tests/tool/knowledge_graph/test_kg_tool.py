"""KnowledgeGraphTool through ToolFactory on real agents: sharing, concurrency, channels."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import COMMAND, LLM_CONTEXT, TOOL_CALL, RetriableError
from akgentic.tool.knowledge_graph import (
    GetEntities,
    GetKnowledgeGraph,
    GraphState,
    KnowledgeGraphSummaryState,
    KnowledgeGraphTool,
    SearchGraph,
    UpdateGraph,
    reduce_graph,
)
from akgentic.tool.knowledge_graph.kg_actor import NEIGHBOURS_MAX
from akgentic.tool.knowledge_graph.kg_tool import NAMES_MAX, VIEW_CHARS
from akgentic.tool.vector_store import VectorStoreParam

from ..conftest import Team
from .conftest import (
    ConceptEmbedder,
    add_member,
    deltas,
    eventually,
    factory_of,
    graph_actor,
    graph_address,
    tools_of,
    wait_events,
)


def test_two_agents_updating_at_once_are_serialised(team: Team) -> None:
    alice = add_member(team, "@Alice", KnowledgeGraphTool())
    bob = add_member(team, "@Bob", KnowledgeGraphTool())
    updates = [tools_of(team, m)["update_graph"] for m in (alice, bob)]  # both wired
    graph_address(team)  # exactly one #KnowledgeGraphTool for the two of them
    updates[0](entities_to_create=[{"name": "Hub", "entity_type": "topic", "is_root": True}])
    rounds = 40
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def work(update: Callable[..., str], who: str) -> None:
        start.wait()
        try:
            for k in range(rounds):
                name = f"{who}-{k}"
                update(
                    entities_to_create=[{"name": name, "entity_type": who}],
                    relations_to_create=[
                        {"from_entity": name, "to_entity": "Hub", "relation_type": "about"}
                    ],
                    # read-modify-write on the shared root: no update may be lost
                    entities_to_modify=[{"name": "Hub", "add_observations": [f"seen {name}"]}],
                )
        except BaseException as exc:
            failures.append(exc)

    threads = [
        threading.Thread(target=work, args=(u, w)) for u, w in zip(updates, "ab", strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not failures
    total = 1 + 2 * rounds
    events = wait_events(team, total)
    assert [e.seq for e in events] == list(range(1, total + 1))
    state = graph_actor(team).state
    assert len(state.entities) == total and len(state.relations) == 2 * rounds
    assert len(state.entities["Hub"].observations) == 2 * rounds
    rebuilt = GraphState()
    for delta in deltas(events):
        rebuilt = reduce_graph(rebuilt, delta)
    assert rebuilt == state


def test_partial_update_through_the_tool(team: Team) -> None:
    update = tools_of(team, add_member(team, "@A", KnowledgeGraphTool()))["update_graph"]
    with pytest.raises(RetriableError, match="no entity 'Ghost'"):
        update(
            entities_to_create=[{"name": "Real", "entity_type": "thing"}],
            relations_to_create=[
                {"from_entity": "Real", "to_entity": "Ghost", "relation_type": "r"}
            ],
        )
    (event,) = wait_events(team, 1)
    assert [e.name for e in deltas([event])[0].entities_added] == ["Real"]
    with pytest.raises(RetriableError, match=r"invalid argument entities_to_create\[0\]"):
        update(entities_to_create=[{"name": "NoType"}])


def names(fns: list[Callable[..., Any]]) -> list[str]:
    return [fn.__name__ for fn in fns]


def test_channel_routing_follows_param_and_expose(team: Team) -> None:
    default = factory_of(team, add_member(team, "@D", KnowledgeGraphTool()))
    assert names(default.get_tools()) == ["update_graph", "get_entities", "search_graph"]
    assert names(default.get_context_states()) == ["get_knowledge_graph"]
    assert default.get_command_registry().names() == [
        "knowledge_graph",
        "update_graph",
        "get_entities",
        "search_graph",
    ]
    narrow = KnowledgeGraphTool(
        get_knowledge_graph=GetKnowledgeGraph(expose={LLM_CONTEXT}),  # no /knowledge_graph
        update_graph=UpdateGraph(expose={COMMAND}),  # people only
        get_entities=False,
        search_graph=SearchGraph(expose={TOOL_CALL}),
    )
    wired = factory_of(team, add_member(team, "@N", narrow))
    assert names(wired.get_tools()) == ["search_graph"]
    assert names(wired.get_context_states()) == ["get_knowledge_graph"]
    assert wired.get_command_registry().names() == ["update_graph"]


def test_read_only_removes_every_mutation(team: Team) -> None:
    card = KnowledgeGraphTool(read_only=True, update_graph=UpdateGraph(expose={TOOL_CALL, COMMAND}))
    factory = factory_of(team, add_member(team, "@Reviewer", card))
    assert "update_graph" not in names(factory.get_tools())
    assert "update_graph" not in factory.get_command_registry()
    assert names(factory.get_tools()) == ["get_entities", "search_graph"]


def test_context_state_is_the_summary_and_arrives_as_deltas(team: Team) -> None:
    alice = add_member(
        team, "@Alice", KnowledgeGraphTool(get_knowledge_graph=GetKnowledgeGraph(max_roots=1))
    )
    updater = factory_of(team, alice).get_context_updater()
    assert updater.compose_update([]) is None  # empty graph: nothing to say
    update = tools_of(team, alice)["update_graph"]
    update(
        entities_to_create=[
            {"name": "Acme", "entity_type": "company", "is_root": True},
            {"name": "Zeta", "entity_type": "company", "is_root": True},
            {"name": "Alice", "entity_type": "person"},
        ]
    )
    first = updater.compose_update([])
    assert first == (
        "**Context update 1**\n\nKnowledge graph: 3 entities, 0 relations.\n"
        "Types: company 2, person 1.\nRoots:\n- Acme (company)\n"
        "- … and 1 more roots (search_graph finds them)"
    )
    update(entities_to_create=[{"name": "Bob", "entity_type": "person"}])
    assert updater.compose_update([first]) == (
        "**Context update 2**\n\nKnowledge graph changes:\nNow 4 entities, 0 relations.\n"
        "Types: person 1 -> 2."
    )
    (provider,) = factory_of(team, alice).get_context_states()
    assert isinstance(provider(), KnowledgeGraphSummaryState)


@pytest.mark.parametrize("limit", ["0", "101"])
def test_a_search_limit_out_of_bounds_is_the_commands_usage_error(team: Team, limit: str) -> None:
    """``/search_graph x limit=0`` answered ``search_graph: invalid arguments (...)``,
    without the usage line every other bad argument of a command ends with."""
    registry = factory_of(
        team, add_member(team, "@Lead", KnowledgeGraphTool())
    ).get_command_registry()

    with pytest.raises(RetriableError) as refused:
        registry.dispatch(f"/search_graph acme limit={limit}")

    assert str(refused.value).startswith(f"/search_graph: argument limit='{limit}' ")
    assert str(refused.value).endswith(
        "Usage: /search_graph query [mode='hybrid'] [limit=10] [entity_type] [expand=False]"
    )


def test_commands_dispatch_through_the_registry(team: Team) -> None:
    registry = factory_of(
        team, add_member(team, "@Lead", KnowledgeGraphTool())
    ).get_command_registry()
    assert registry.dispatch("/knowledge_graph") == "The knowledge graph is empty."
    reply = registry.dispatch(
        "/update_graph "
        'entities_to_create=\'[{"name": "Acme", "entity_type": "company", "is_root": true},'
        ' {"name": "Alice", "entity_type": "person"}]\' '
        'relations_to_create=\'[{"from_entity": "Alice", "to_entity": "Acme",'
        ' "relation_type": "works_at"}]\''
    )
    assert reply == "Done: 2 entities added, 1 relation added."
    assert registry.dispatch("/knowledge_graph").startswith("Knowledge graph: 2 entities")
    assert registry.dispatch("/get_entities '[\"Alice\"]' expand=true") == (
        "Entities:\n- Alice (person)\n- Acme (company) [root]\n"
        "Relations:\n- Alice -[works_at]-> Acme"
    )
    assert registry.dispatch("/search_graph acme mode=keyword").startswith(
        "Entities:\n- Acme (company) [root] 1.00"
    )
    assert registry.dispatch("/search_graph nothing-like-it mode=keyword") == (
        "Nothing matches 'nothing-like-it'."
    )
    with pytest.raises(RetriableError, match="/search_graph: argument limit='0' "):
        registry.dispatch("/search_graph acme limit=0")


def test_search_modes_with_embeddings(team: Team, fake_embedder: ConceptEmbedder) -> None:
    tools = tools_of(team, add_member(team, "@A", KnowledgeGraphTool()))
    tools["update_graph"](
        entities_to_create=[
            {"name": "Acme", "entity_type": "company", "description": "anvils and revenue"},
            {"name": "Alice", "entity_type": "person", "description": "the CTO"},
            {"name": "Paris office", "entity_type": "place", "description": "headquarters"},
        ],
        relations_to_create=[
            {"from_entity": "Alice", "to_entity": "Acme", "relation_type": "works_at"}
        ],
    )
    # "executive engineer" shares no word with Alice: only the embeddings connect them.
    eventually(
        lambda: tools["search_graph"]("executive engineer", mode="semantic").startswith(
            "Entities:\n- Alice"
        )
    )
    semantic = tools["search_graph"]("executive engineer", mode="semantic", limit=1)
    assert semantic == "Entities:\n- Alice (person) 1.00: the CTO"
    assert tools["search_graph"]("executive engineer", mode="keyword") == (
        "Nothing matches 'executive engineer'."
    )
    hybrid = tools["search_graph"]("executive anvils", limit=2)  # one word each way
    assert {line.split(" (")[0] for line in hybrid.splitlines()[1:3]} == {"- Alice", "- Acme"}
    expanded = tools["search_graph"]("executive engineer", mode="semantic", limit=1, expand=True)
    assert expanded == (
        "Entities:\n- Alice (person) 1.00: the CTO\n- Acme (company): anvils and revenue\n"
        "Relations:\n- Alice -[works_at]-> Acme"
    )
    places = tools["search_graph"]("city", mode="semantic", entity_type="place")
    assert places.splitlines()[1].startswith("- Paris office (place)")


def test_semantic_without_embeddings_degrades_to_keyword(team: Team) -> None:
    tools = tools_of(team, add_member(team, "@A", KnowledgeGraphTool()))
    tools["update_graph"](entities_to_create=[{"name": "Acme", "entity_type": "company"}])
    assert tools["search_graph"]("acme", mode="semantic") == (
        "(semantic search unavailable: keyword ranking)\nEntities:\n- Acme (company) 1.00"
    )


def test_card_round_trips(team: Team) -> None:
    card = KnowledgeGraphTool(
        read_only=True,
        get_entities=GetEntities(instructions="Prefer expand=false."),
        get_knowledge_graph=GetKnowledgeGraph(max_roots=5),
        vector_store=VectorStoreParam(hybrid_alpha=0.3),
    )
    back = deserialize(serialize(card))
    assert back == card and back.read_only and back.get_knowledge_graph.max_roots == 5
    stored = {
        "__model__": "akgentic.tool.knowledge_graph.kg_tool.GetKnowledgeGraph",
        "expose": ["system_prompt", "command"],
    }
    assert deserialize(stored).expose == {LLM_CONTEXT, COMMAND}


def test_a_negative_max_roots_is_refused_as_the_card_is_built() -> None:
    """``max_roots: -1`` used to be taken, and the summary then listed no root at all."""
    assert GetKnowledgeGraph(max_roots=0).max_roots == 0  # counts only: a choice
    with pytest.raises(ValidationError, match="max_roots\n  Input should be greater than or"):
        KnowledgeGraphTool.model_validate({"get_knowledge_graph": {"max_roots": -1}})


def test_an_answer_is_bounded_whatever_the_graph_or_the_names_asked(team: Team) -> None:
    """``get_entities`` on a hub answered every neighbour, on 3,000 names every entity, and
    echoed a name it could not find whole: answers of a megabyte, into the model's context."""
    tools = tools_of(team, add_member(team, "@A", KnowledgeGraphTool()))
    update, get_entities = tools["update_graph"], tools["get_entities"]
    hub_size = NEIGHBOURS_MAX + 7
    update(
        entities_to_create=[{"name": "Hub", "entity_type": "company"}]
        + [{"name": f"p{i:03}", "entity_type": "person"} for i in range(hub_size)],
        relations_to_create=[
            {"from_entity": f"p{i:03}", "to_entity": "Hub", "relation_type": "works_at"}
            for i in range(hub_size)
        ],
    )
    hub = get_entities(["Hub"], expand=True)
    assert hub.count(" (person)") == NEIGHBOURS_MAX
    assert hub.count(" -[works_at]-> Hub") == NEIGHBOURS_MAX
    assert hub.endswith(
        "… and 7 more neighbours and 7 more relations not shown: get_entities on fewer "
        "names, or search_graph with a query or an entity_type, narrows it."
    )
    with pytest.raises(RetriableError) as refused:
        get_entities([f"p{i}" for i in range(NAMES_MAX + 1)])
    assert str(refused.value) == (
        f"get_entities takes at most {NAMES_MAX} names at a time, not {NAMES_MAX + 1}: "
        f"ask for the first {NAMES_MAX}, then the rest."
    )
    answer = get_entities(["Hub", "Q" * 100_000])
    assert len(answer) < 1_000
    assert "(100002 characters)" in answer  # the name quoted, not echoed
    # an entity's text is the model's, up to ENTITY_TEXT_MAX: the answer is cut, saying so
    update(
        entities_to_modify=[
            {"name": "Hub", "add_observations": [f"{i} " + "o" * 7_900 for i in range(4)]}
        ]
    )
    full = get_entities(["Hub"])
    assert len(full) < VIEW_CHARS + 200
    assert "more characters; ask for fewer entities" in full.splitlines()[-1]
