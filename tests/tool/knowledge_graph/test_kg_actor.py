"""#KnowledgeGraphTool itself: update order, partial updates, replay, restore, summary cost."""

from __future__ import annotations

import contextlib

import pytest

from akgentic.core import ActorAddress
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import RetriableError
from akgentic.tool.core import fold_deltas
from akgentic.tool.knowledge_graph import (
    Entity,
    EntityUpdate,
    GraphQuery,
    GraphState,
    GraphUpdate,
    KnowledgeGraphActor,
    KnowledgeGraphConfig,
    Relation,
    SearchMode,
    reduce_graph,
)
from akgentic.tool.knowledge_graph.kg_actor import ENTITY_TEXT_MAX, NEIGHBOURS_MAX, RELATIONS_MAX
from akgentic.tool.knowledge_graph.models import relation_key
from akgentic.tool.knowledge_graph.state import TYPES_MAX

from ..conftest import Team
from .conftest import deltas, graph_events, wait_events


def bind(team: Team) -> tuple[ActorAddress, KnowledgeGraphActor]:
    address = team.proxy.getChildrenOrCreate(KnowledgeGraphActor, KnowledgeGraphConfig())
    return address, team.system.proxy_ask(address, KnowledgeGraphActor, timeout=30)


def entity(name: str, entity_type: str = "person", **fields: object) -> Entity:
    return Entity(name=name, entity_type=entity_type, **fields)  # type: ignore[arg-type]


def rel(a: str, kind: str, b: str) -> Relation:
    return Relation(from_entity=a, to_entity=b, relation_type=kind)


def test_one_call_creates_entities_and_the_relations_between_them(team: Team) -> None:
    _, graph = bind(team)
    reply = graph.update_graph(
        GraphUpdate(
            entities_to_create=[entity("Acme", "company", is_root=True), entity("Alice")],
            relations_to_create=[rel("Alice", "works_at", "Acme")],
        )
    )
    assert reply == "Done: 2 entities added, 1 relation added."
    view = graph.get_entities(["alice"])  # case-insensitive fallback
    assert [e.name for e in view.entities] == ["Alice"] and view.relations == []
    expanded = graph.get_entities(["Alice"], expand=True)
    assert [e.name for e in expanded.entities] == ["Alice", "Acme"]
    assert expanded.relations == [rel("Alice", "works_at", "Acme")]
    assert graph.get_entities(["Zed"]).missing == ["Zed"]


def test_modify_changes_fields_and_observations(team: Team) -> None:
    _, graph = bind(team)
    graph.update_graph(GraphUpdate(entities_to_create=[entity("Alice", observations=("a", "b"))]))
    graph.update_graph(
        GraphUpdate(
            entities_to_modify=[
                EntityUpdate(
                    name="Alice",
                    description="CTO",
                    add_observations=["c", "a"],
                    remove_observations=["b"],
                    is_root=True,
                )
            ]
        )
    )
    (alice,) = graph.get_entities(["Alice"]).entities
    assert (alice.description, alice.observations, alice.is_root) == ("CTO", ("a", "c"), True)
    assert graph.summary().roots[0].name == "Alice"


def test_deleting_an_entity_removes_its_relations_in_the_same_delta(team: Team) -> None:
    _, graph = bind(team)
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[entity("A"), entity("B"), entity("C")],
            relations_to_create=[
                rel("A", "knows", "B"),
                rel("C", "knows", "B"),
                rel("A", "x", "C"),
            ],
        )
    )
    graph.update_graph(
        GraphUpdate(relations_to_delete=[rel("A", "x", "C")], entities_to_delete=["B"])
    )
    *_, last = deltas(wait_events(team, 2))
    assert last.entities_removed == ["B"]
    assert sorted(r.render() for r in last.relations_removed) == [
        "A -[knows]-> B",
        "A -[x]-> C",
        "C -[knows]-> B",
    ]
    assert graph.summary().relation_count == 0


def test_a_name_or_type_that_is_not_one_line_is_refused_and_the_rest_applies(
    team: Team,
) -> None:
    """'Alice ' was a second entity next to 'Alice'; a line break in a root's name wrote a
    line of its own into every member's summary."""
    _, graph = bind(team)
    graph.update_graph(GraphUpdate(entities_to_create=[entity("Alice")]))
    with pytest.raises(RetriableError) as caught:
        graph.update_graph(
            GraphUpdate(
                entities_to_create=[
                    entity("Alice "),
                    entity(" "),
                    entity("Root\n- Fake (company)", is_root=True),
                    entity("Bob", "per\x1bson"),
                    entity("Carol"),
                ],
                entities_to_modify=[EntityUpdate(name="Alice", entity_type="per\u2028son")],
                relations_to_create=[rel("Alice", "knows\n", "Carol")],
            )
        )
    message = str(caught.value)
    assert message.startswith("update_graph applied what it could (1 entity added). Failed: ")
    assert "entity 'Alice ' not created: its name 'Alice ' has spaces around it: send 'Alice'" in (
        message
    )
    assert "entity ' ' not created: its name is blank" in message
    assert "its name 'Root\\n- Fake (company)' holds a line break or a control character" in (
        message
    )
    assert "entity 'Bob' not created: its entity_type 'per\\x1bson' holds" in message
    assert "entity 'Alice' not modified: its entity_type 'per\\u2028son' holds" in message
    assert "its relation_type 'knows\\n' holds a line break" in message
    assert graph.summary().entity_count == 2
    found = graph.get_entities(["Alice", "Carol"]).entities
    assert [(e.name, e.entity_type) for e in found] == [("Alice", "person"), ("Carol", "person")]
    assert graph.summary().relation_count == 0
    *_, last = deltas(wait_events(team, 2))
    assert [e.name for e in last.entities_added] == ["Carol"]
    assert last.entities_modified == [] and last.relations_added == []


def test_a_name_type_or_text_too_long_for_every_members_context_is_refused_saying_the_limit(
    team: Team,
) -> None:
    """A one-megabyte root name went into every member's per-turn summary."""
    _, graph = bind(team)
    graph.update_graph(GraphUpdate(entities_to_create=[entity("Alice")]))
    huge = "n" * 1_000_000
    long_text = "t" * 8_001
    with pytest.raises(RetriableError) as caught:
        graph.update_graph(
            GraphUpdate(
                entities_to_create=[
                    entity(huge, is_root=True),
                    entity("Bob", "t" * 201),
                    Entity(name="Dora", entity_type="person", description=long_text),
                    Entity(name="Eve", entity_type="person", observations=("ok", long_text)),
                    entity("n" * 200, is_root=True),  # at the limit: taken
                ],
                entities_to_modify=[
                    EntityUpdate(name="Alice", description=long_text),
                    EntityUpdate(name="Alice", add_observations=[long_text]),
                ],
                relations_to_create=[rel("Alice", "r" * 201, "Alice")],
            )
        )
    message = str(caught.value)
    assert message.startswith("update_graph applied what it could (1 entity added). Failed: ")
    limit = "is longer than the 200 characters one line of the team's context takes"
    assert message.count(limit) == 3  # the name, the type, the relation type
    assert "… (1000002 characters)" in message  # an excerpt of its repr, not echoed whole
    assert message.count("is longer than 8,000 characters: keep the gist") == 4
    assert "entity 'Alice' not modified: its description" in message
    assert "entity 'Alice' not modified: its observation" in message
    assert "entity 'Eve' not created: its observation" in message
    assert len(message) < 5_000
    assert [r.name for r in graph.summary().roots] == ["n" * 200]
    assert graph.get_entities(["Alice"]).entities[0].description == ""


def test_partial_update_emits_the_delta_for_what_succeeded_then_raises(team: Team) -> None:
    _, graph = bind(team)
    graph.update_graph(GraphUpdate(entities_to_create=[entity("Alice")]))
    with pytest.raises(RetriableError) as caught:
        graph.update_graph(
            GraphUpdate(
                entities_to_create=[entity("Alice"), entity("Bob")],  # Alice exists
                entities_to_modify=[EntityUpdate(name="alice", description="x")],  # wrong case
                entities_to_delete=["Nobody"],
                relations_to_create=[
                    rel("Bob", "knows", "Alice"),
                    rel("Bob", "knows", "Carol"),  # Carol does not exist
                ],
            )
        )
    message = str(caught.value)
    assert "1 entity added, 1 relation added" in message
    assert "entity 'Alice' already exists" in message
    assert "no entity 'alice' to modify (did you mean 'Alice'?)" in message
    assert "no entity 'Nobody' to delete" in message
    assert "cannot relate Bob -[knows]-> Carol: no entity 'Carol'" in message
    # Emitted before the raise: on the stream by the time the caller has the exception.
    events = [
        e.event
        for e in team.proxy.get_events()
        if getattr(e.event, "tool_id", "") == "#KnowledgeGraphTool"
    ]
    assert [e.seq for e in events] == [1, 2]
    (delta,) = deltas(events[1:])
    assert [e.name for e in delta.entities_added] == ["Bob"]
    assert delta.relations_added == [rel("Bob", "knows", "Alice")]
    assert not (delta.entities_modified or delta.entities_removed or delta.relations_removed)


def test_a_name_listed_twice_is_one_request_and_one_problem(team: Team) -> None:
    """Deleting a missing name twice said the same error twice; deleting a present one
    twice deleted it, then called the second listing an error."""
    _, graph = bind(team)
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[entity("A"), entity("B"), entity("C")],
            relations_to_create=[rel("A", "knows", "B")],
        )
    )
    with pytest.raises(RetriableError) as caught:
        graph.update_graph(
            GraphUpdate(
                entities_to_delete=["Nobody", "C", "Nobody", "C"],
                relations_to_delete=[rel("A", "knows", "B"), rel("A", "knows", "B")],
                relations_to_create=[rel("A", "likes", "Zed"), rel("A", "likes", "Zed")],
            )
        )
    assert str(caught.value) == (
        "update_graph applied what it could (1 entity removed, 1 relation removed). Failed: "
        "there is no entity 'Nobody' to delete; cannot relate A -[likes]-> Zed: no entity "
        "'Zed' (create it in entities_to_create). Fix those parts and send only them again."
    )
    assert graph.update_graph(
        GraphUpdate(entities_to_delete=["B", "B"], relations_to_delete=[])
    ) == ("Done: 1 entity removed.")


def test_nothing_changed_emits_nothing(team: Team) -> None:
    _, graph = bind(team)
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[entity("A"), entity("B")],
            relations_to_create=[rel("A", "knows", "B")],
        )
    )
    again = graph.update_graph(GraphUpdate(relations_to_create=[rel("A", "knows", "B")]))
    assert again == "Done: 1 relation already present."
    assert graph.update_graph(GraphUpdate(entities_to_modify=[EntityUpdate(name="A")])) == (
        "Done: nothing changed."
    )
    with pytest.raises(RetriableError):
        graph.update_graph(GraphUpdate(entities_to_delete=["Z"]))
    graph.update_graph(GraphUpdate(entities_to_delete=["B"]))
    events = wait_events(team, 2)
    assert [e.seq for e in events] == [1, 2] and graph_events(team) == events


def test_replaying_the_event_log_rebuilds_the_state_exactly(team: Team) -> None:
    address, graph = bind(team)
    script = [
        GraphUpdate(
            entities_to_create=[entity("Acme", "company", is_root=True), entity("Alice")],
            relations_to_create=[rel("Alice", "works_at", "Acme")],
        ),
        GraphUpdate(
            entities_to_create=[entity("Tmp")],
            entities_to_modify=[EntityUpdate(name="Alice", add_observations=["likes tea"])],
            entities_to_delete=["Tmp"],  # created and deleted at once: no net change
        ),
        GraphUpdate(
            entities_to_create=[entity("Bob")],
            relations_to_create=[rel("Bob", "knows", "Alice"), rel("Bob", "x", "Ghost")],
        ),
        GraphUpdate(
            relations_to_delete=[rel("Alice", "works_at", "Acme")],
            relations_to_create=[rel("Alice", "works_at", "Acme")],  # deleted and re-added
            entities_to_modify=[EntityUpdate(name="Acme", is_root=False, description="anvils")],
        ),
        GraphUpdate(entities_to_delete=["Alice"]),
    ]
    for update in script:
        with contextlib.suppress(RetriableError):
            graph.update_graph(update)
    events = wait_events(team, 5)
    assert [e.seq for e in events] == [1, 2, 3, 4, 5]  # one per call that changed something
    stored = [deserialize(serialize(e)) for e in events]
    rebuilt = GraphState()
    for delta in deltas(stored):
        rebuilt = reduce_graph(rebuilt, delta)
    actual = team.system.get_actor(address).state
    assert rebuilt == actual
    assert set(actual.entities) == {"Acme", "Bob"} and actual.relations == {}
    # persisted: a snapshot at the first change, and the deltas after it
    snapshot = team.proxy.get_states()[address.agent_id]
    assert isinstance(snapshot, GraphState) and snapshot.event_seq == 1
    assert fold_deltas(snapshot, stored) == actual


def test_a_seeded_actor_resumes_with_its_state_indexes_and_seq(team: Team) -> None:
    relation = rel("Alice", "works_at", "Acme")
    seed = GraphState(
        entities={
            "Acme": entity("Acme", "company", is_root=True),
            "Alice": entity("Alice"),
        },
        relations={relation_key(relation): relation},
        event_seq=5,
    )
    address = team.system.createActor(
        KnowledgeGraphActor,
        config=KnowledgeGraphConfig(),
        team_id=team.orchestrator.team_id,
        restoring=True,
        state=deserialize(serialize(seed)),
    )
    graph = team.system.proxy_ask(address, KnowledgeGraphActor, timeout=30)
    summary = graph.summary()
    assert (summary.entity_count, summary.relation_count) == (2, 1)
    assert summary.type_counts == {"company": 1, "person": 1}
    assert [r.name for r in summary.roots] == ["Acme"]
    assert graph.get_entities(["Acme"], expand=True).relations == [relation]  # adjacency rebuilt
    graph.update_graph(GraphUpdate(entities_to_delete=["Acme"]))
    (event,) = wait_events(team, 1)
    assert event.seq == 6
    assert event.payload.relations_removed == [relation]  # type: ignore[attr-defined]


def test_summary_costs_types_plus_roots_not_entities(team: Team) -> None:
    _, graph = bind(team)
    roots = [entity(f"Root{i}", "company", is_root=True, description="d" * 50) for i in range(3)]
    graph.update_graph(
        GraphUpdate(entities_to_create=[*roots, entity("p0"), entity("t0", "topic")])
    )
    small = graph.summary().render_full()
    many = [entity(f"p{i}") for i in range(1, 1500)] + [
        entity(f"t{i}", "topic") for i in range(1, 1500)
    ]
    graph.update_graph(GraphUpdate(entities_to_create=many))
    large = graph.summary().render_full()
    assert graph.summary().entity_count == 3003
    # 600x the non-root entities: only the digits of three counts grew (and the total's
    # thousands separator: 3,003)
    assert len(large) - len(small) <= 10
    graph.update_graph(GraphUpdate(entities_to_create=[entity("Root9", "company", is_root=True)]))
    assert len(graph.summary().render_full()) > len(large) + 10  # a root does cost a line


def test_summary_caps_the_roots_it_lists(team: Team) -> None:
    _, graph = bind(team)
    graph.update_graph(
        GraphUpdate(entities_to_create=[entity(f"R{i:02}", "c", is_root=True) for i in range(12)])
    )
    summary = graph.summary(max_roots=5)
    assert [r.name for r in summary.roots] == ["R00", "R01", "R02", "R03", "R04"]
    assert summary.more_roots == 7
    assert "… and 7 more roots" in summary.render_full()


def test_keyword_search_filters_by_type_and_expands_to_neighbours(team: Team) -> None:
    _, graph = bind(team)
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[
                entity("Acme", "company", description="makes anvils"),
                entity("Wile", description="buys anvils"),
                entity("Road Runner", description="fast bird"),
            ],
            relations_to_create=[
                rel("Wile", "buys_from", "Acme"),
                rel("Wile", "chases", "Road Runner"),
            ],
        )
    )
    plain = graph.search(GraphQuery(query="anvils", mode=SearchMode.KEYWORD))
    assert {e.name for e in plain.entities} == {"Acme", "Wile"}
    assert plain.relations == [rel("Wile", "buys_from", "Acme")]  # only among the hits
    assert max(plain.scores.values()) == 1.0
    companies = graph.search(
        GraphQuery(query="anvils", mode=SearchMode.KEYWORD, entity_type="Company")
    )
    assert [e.name for e in companies.entities] == ["Acme"]
    expanded = graph.search(
        GraphQuery(query="anvils", mode=SearchMode.KEYWORD, entity_type="company", expand=True)
    )
    assert [e.name for e in expanded.entities] == ["Acme", "Wile"]
    assert expanded.scores == {"Acme": 1.0}  # the neighbour is context, not a hit
    # asked for meaning with none available: keyword ranking, and it says so
    degraded = graph.search(GraphQuery(query="anvils", mode=SearchMode.HYBRID), None)
    assert degraded.note.startswith("semantic search unavailable")
    assert set(degraded.scores) == {"Acme", "Wile"}


def test_the_summary_lists_the_commonest_types_and_counts_the_rest(team: Team) -> None:
    """Types are the model's words, one per entity if it likes: listing every one put
    340 KB into each member's context each turn for 2,000 entities of distinct types."""
    _, graph = bind(team)
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[entity(f"p{i}") for i in range(3)]
            + [entity(f"e{i}", f"kind {i:04} " + "x" * 150) for i in range(2000)]
        )
    )
    summary = graph.summary()
    assert len(summary.type_counts) == TYPES_MAX and summary.more_types == 2001 - TYPES_MAX
    assert summary.type_counts["person"] == 3  # the commonest first, then by name
    assert "kind 0000 " + "x" * 150 in summary.type_counts
    text = summary.render_full()
    assert len(text) < 10_000
    assert f"and {2001 - TYPES_MAX:,} more types (search_graph with entity_type" in text


def test_an_expansion_lists_a_bounded_slice_of_a_hub_and_counts_the_rest(team: Team) -> None:
    """``get_entities([hub], expand=True)`` answered every neighbour and relation of a hub:
    a megabyte for 3,000 of them."""
    _, graph = bind(team)
    many = 3 * NEIGHBOURS_MAX
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[entity("Hub", "company"), entity("Solo")]
            + [entity(f"p{i:03}") for i in range(many)],
            relations_to_create=[rel(f"p{i:03}", "works_at", "Hub") for i in range(many)]
            + [rel("Hub", "owns", "Hub"), rel("Solo", "knows", "p000")],
        )
    )
    view = graph.get_entities(["Hub"], expand=True)
    shown = [e.name for e in view.entities]
    assert shown == ["Hub", *(f"p{i:03}" for i in range(NEIGHBOURS_MAX))]
    assert (view.more_neighbours, view.more_relations) == (
        many - NEIGHBOURS_MAX,
        many - NEIGHBOURS_MAX,
    )
    assert all(r.from_entity in shown and r.to_entity in shown for r in view.relations)
    assert rel("Hub", "owns", "Hub") in view.relations  # the self-loop is among the shown
    # within the bounds nothing is counted as left out
    small = graph.get_entities(["Solo"], expand=True)
    assert [e.name for e in small.entities] == ["Solo", "p000"]
    assert (small.more_neighbours, small.more_relations) == (0, 0)
    # relations among the hits themselves are bounded too
    hits = graph.get_entities(["Hub", *(f"p{i:03}" for i in range(many))])
    assert len(hits.relations) == RELATIONS_MAX and hits.more_relations == many + 1 - RELATIONS_MAX


def test_an_entity_keeps_a_bounded_text_and_each_change_logs_a_bounded_entity(
    team: Team,
) -> None:
    """Each field was capped, not their number: an entity grew an observation at a time
    without end, and every change logged the whole of it again (a 500-observation entity
    cost 500 KB of log per observation added) and sent it whole to the embedder."""
    _, graph = bind(team)
    page = "p" * 7_999  # an observation of 8,000 characters: the most one field takes
    graph.update_graph(
        GraphUpdate(entities_to_create=[entity("Doc", observations=(f"1{page}", f"2{page}"))])
    )
    with pytest.raises(RetriableError) as caught:
        graph.update_graph(
            GraphUpdate(
                entities_to_create=[
                    entity(
                        "Big",
                        description=f"d{page}",
                        observations=tuple(f"{i}{page}" for i in range(4)),
                    )
                ],
                entities_to_modify=[
                    EntityUpdate(name="Doc", add_observations=[f"{i}{page}" for i in range(3, 6)])
                ],
            )
        )
    message = str(caught.value)
    assert message.startswith("update_graph applied what it could (nothing changed). Failed: ")
    limit = f"characters, more than the {ENTITY_TEXT_MAX:,} one entity keeps: remove"
    held = "its description and observations would hold 40,000 characters"
    assert f"entity 'Big' not created: {held}" in message
    assert f"entity 'Doc' not modified: {held}" in message
    assert message.count(limit) == 2
    # a change that keeps it within the bound is taken: one out, one in
    graph.update_graph(
        GraphUpdate(
            entities_to_modify=[
                EntityUpdate(
                    name="Doc", remove_observations=[f"1{page}"], add_observations=[f"3{page}"]
                )
            ]
        )
    )
    (doc,) = graph.get_entities(["Doc"]).entities
    assert doc.observations == (f"2{page}", f"3{page}")
    *_, last = deltas(wait_events(team, 2))
    assert sum(len(o) for e in last.entities_modified for o in e.observations) <= ENTITY_TEXT_MAX


def test_an_entity_stored_past_the_bound_may_still_shrink(team: Team) -> None:
    """What a graph holds is never refused: only growth past the bound is."""
    big = entity("Old", observations=tuple(f"{i}" + "o" * 7_999 for i in range(6)))
    seed = GraphState(entities={"Old": big})
    address = team.system.createActor(
        KnowledgeGraphActor,
        config=KnowledgeGraphConfig(),
        team_id=team.orchestrator.team_id,
        restoring=True,
        state=seed,
    )
    graph = team.system.proxy_ask(address, KnowledgeGraphActor, timeout=30)
    first = big.observations[0]
    assert (
        graph.update_graph(
            GraphUpdate(entities_to_modify=[EntityUpdate(name="Old", remove_observations=[first])])
        )
        == "Done: 1 entity modified."
    )
    with pytest.raises(RetriableError, match="would hold 40,001 characters"):
        graph.update_graph(
            GraphUpdate(entities_to_modify=[EntityUpdate(name="Old", add_observations=["x"])])
        )
