"""Pure parts: the reducer, the delta, the summary state and its cost."""

from __future__ import annotations

import copy

import pytest

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import ToolStateEvent
from akgentic.tool.knowledge_graph import (
    Entity,
    GraphState,
    KnowledgeGraphStateEvent,
    KnowledgeGraphSummaryState,
    Relation,
    RootRow,
    reduce_graph,
)
from akgentic.tool.knowledge_graph.models import relation_key

ACME = Entity(name="Acme", entity_type="company", is_root=True)
ALICE = Entity(name="Alice", entity_type="person")
WORKS = Relation(from_entity="Alice", to_entity="Acme", relation_type="works_at")


def graph(*entities: Entity, relations: tuple[Relation, ...] = ()) -> GraphState:
    return GraphState(
        entities={e.name: e for e in entities},
        relations={relation_key(r): r for r in relations},
    )


def test_reduce_adds_modifies_removes_and_is_pure() -> None:
    start = GraphState()
    one = reduce_graph(
        start, KnowledgeGraphStateEvent(entities_added=[ACME, ALICE], relations_added=[WORKS])
    )
    assert start == GraphState()
    assert set(one.entities) == {"Acme", "Alice"} and list(one.relations.values()) == [WORKS]
    assert one.event_seq == 1
    cto = ALICE.model_copy(update={"description": "CTO"})
    two = reduce_graph(
        one,
        KnowledgeGraphStateEvent(
            entities_modified=[cto], entities_removed=["Acme"], relations_removed=[WORKS]
        ),
    )
    assert two == GraphState(entities={"Alice": cto}, event_seq=2)
    assert set(one.entities) == {"Acme", "Alice"}  # still untouched


@pytest.mark.parametrize(
    "delta, problem",
    [
        (KnowledgeGraphStateEvent(entities_added=[ACME]), "already exists"),
        (KnowledgeGraphStateEvent(entities_modified=[ALICE]), "does not exist"),
        (KnowledgeGraphStateEvent(entities_removed=["Bob"]), "does not exist"),
        (KnowledgeGraphStateEvent(relations_removed=[WORKS]), "does not exist"),
        (
            KnowledgeGraphStateEvent(relations_added=[WORKS]),
            "to a missing entity",
        ),
        (
            KnowledgeGraphStateEvent(entities_added=[ALICE], relations_added=[WORKS, WORKS]),
            "already exists",
        ),
    ],
)
def test_reduce_refuses_a_delta_that_does_not_fit(
    delta: KnowledgeGraphStateEvent, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        reduce_graph(graph(ACME), delta)


def test_reduce_refuses_to_leave_a_dangling_relation() -> None:
    state = graph(ACME, ALICE, relations=(WORKS,))
    with pytest.raises(ValueError, match="pointing at a removed entity"):
        reduce_graph(state, KnowledgeGraphStateEvent(entities_removed=["Acme"]))


def test_event_and_state_round_trip() -> None:
    delta = KnowledgeGraphStateEvent(entities_added=[ACME], relations_removed=[WORKS])
    event = deserialize(
        serialize(ToolStateEvent(tool_id="#KnowledgeGraphTool", seq=3, payload=delta))
    )
    assert isinstance(event.payload, KnowledgeGraphStateEvent) and event.payload == delta
    state = graph(ACME, ALICE, relations=(WORKS,))
    assert deserialize(serialize(state)) == state


def summary(entities: int, roots: int = 1) -> KnowledgeGraphSummaryState:
    return KnowledgeGraphSummaryState(
        entity_count=entities,
        relation_count=entities - 1,
        type_counts={"company": roots, "person": entities - roots},
        roots=tuple(RootRow(name=f"Root{i}", entity_type="company") for i in range(roots)),
    )


def test_summary_renders_totals_types_and_roots() -> None:
    assert KnowledgeGraphSummaryState().render_full() == ""
    assert summary(3).render_full() == (
        "Knowledge graph: 3 entities, 2 relations.\n"
        "Types: company 1, person 2.\n"
        "Roots:\n"
        "- Root0 (company)"
    )


def test_summary_totals_say_one_entity_and_one_relation_in_the_singular() -> None:
    assert summary(2).render_full().splitlines()[0] == "Knowledge graph: 2 entities, 1 relation."
    one = KnowledgeGraphSummaryState(entity_count=1, type_counts={"company": 1})
    assert one.render_full().splitlines()[0] == "Knowledge graph: 1 entity, 0 relations."


def test_summary_delta_names_what_changed() -> None:
    before = summary(3)
    assert before.render_delta(before) is None
    after = KnowledgeGraphSummaryState(
        entity_count=4,
        relation_count=2,
        type_counts={"company": 1, "person": 2, "place": 1},
        roots=(RootRow(name="Paris", entity_type="place"),),
    )
    assert after.render_delta(before) == (
        "Knowledge graph changes:\n"
        "Now 4 entities, 2 relations.\n"
        "Types: place 0 -> 1.\n"
        "- root: Paris (place)\n"
        "- Root0 is no longer listed as a root"
    )


def test_root_descriptions_are_cut() -> None:
    row = RootRow.of(Entity(name="A", entity_type="t", description="x" * 500, is_root=True))
    assert len(row.description) == 160 and row.description.endswith("…")


def test_a_root_description_is_one_line_of_the_summary() -> None:
    """A description may run over lines; in the summary a root is one line, so a line
    break in it wrote what read as another root."""
    described = Entity(
        name="A", entity_type="t", description="Our client.\n- Fake (company)\t ok", is_root=True
    )
    state = KnowledgeGraphSummaryState(
        entity_count=1, type_counts={"t": 1}, roots=(RootRow.of(described),)
    )
    assert state.render_full().splitlines()[-2:] == [
        "Roots:",
        "- A (t): Our client. - Fake (company) ok",
    ]


def test_snapshots_share_frozen_rows_but_never_the_tables() -> None:
    state = graph(ACME, ALICE, relations=(WORKS,))
    snapshot = copy.deepcopy(state)  # what notify_state_change publishes
    assert snapshot == state and snapshot.entities is not state.entities
    assert snapshot.entities["Acme"] is ACME and next(iter(snapshot.relations.values())) is WORKS
    state.entities.pop("Acme")
    assert "Acme" in snapshot.entities


def test_a_capped_type_list_says_what_it_leaves_out_and_never_reads_an_unlisted_type_as_zero() -> (
    None
):
    before = KnowledgeGraphSummaryState(entity_count=10, type_counts={"a": 5, "b": 3}, more_types=2)
    assert before.render_full().splitlines()[1] == (
        "Types: a 5, b 3, and 2 more types (search_graph with entity_type finds their entities)."
    )
    grew = KnowledgeGraphSummaryState(entity_count=11, type_counts={"a": 6, "b": 3}, more_types=2)
    assert grew.render_delta(before) == (
        "Knowledge graph changes:\nNow 11 entities, 0 relations.\nTypes: a 5 -> 6."
    )
    # c overtook b: b is not gone, only no longer among the listed
    overtaken = KnowledgeGraphSummaryState(
        entity_count=14, type_counts={"a": 6, "c": 7}, more_types=3
    )
    assert overtaken.render_delta(grew) == (
        "Knowledge graph changes:\nNow 14 entities, 0 relations.\n"
        "Types now: a 6, c 7, and 3 more types (search_graph with entity_type finds their "
        "entities)."
    )
    another = KnowledgeGraphSummaryState(
        entity_count=15, type_counts={"a": 6, "c": 7}, more_types=4
    )
    assert another.render_delta(overtaken) == (
        "Knowledge graph changes:\nNow 15 entities, 0 relations.\nTypes: 4 more types not listed."
    )
