"""A long, seeded, random run of ``update_graph``: the logged deltas rebuild the live graph.

Each call mixes creations, modifications, deletions and relations — valid and refused parts
alike, self-loops, odd Unicode names, an entity deleted while relations point at it — so
the net-delta bookkeeping meets orders no hand-written script covers. After the run:

- folding the logged deltas (serialized and read back, as a restore reads them) over
  ``GraphState()`` gives exactly the live state, with the same ``event_seq``;
- the actor's derived indexes (type counts, roots, neighbours) equal those recomputed
  from the state — and a restored actor, started from the folded state, agrees.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import RetriableError
from akgentic.tool.knowledge_graph import (
    Entity,
    EntityUpdate,
    GraphState,
    GraphUpdate,
    KnowledgeGraphActor,
    KnowledgeGraphConfig,
    Relation,
    reduce_graph,
)
from akgentic.tool.knowledge_graph.models import relation_key

from ..conftest import Team
from .conftest import deltas, graph_events

NAMES = ["Alice", "alice", "Bob", "Ærø", "東京", "Café", "Z" * 200, "a b", "R&D", "x"] + [
    f"n{i}" for i in range(40)
]
TYPES = ["person", "place", "company", "topic"]
KINDS = ["knows", "works_at", "is_in", "refers_to"]
CALLS = 300


def _random_update(rng: random.Random, live: GraphState) -> GraphUpdate:
    """One call's worth of edits: mostly sensible, sometimes refused, never all valid."""
    existing = sorted(live.entities)
    pool = NAMES + existing
    strict = rng.random() < 0.5  # half the calls send nothing meant to be refused
    update = GraphUpdate()
    for _ in range(rng.randint(0, 3)):
        name = rng.choice(pool) if strict or rng.random() < 0.8 else " padded "  # refused
        update.entities_to_create.append(
            Entity(
                name=name,
                entity_type=rng.choice(TYPES),
                description=rng.choice(["", "a line", "two\nlines"]),
                observations=tuple(rng.sample(["o1", "o2", "o3"], rng.randint(0, 2))),
                is_root=rng.random() < 0.3,
            )
        )
    for _ in range(rng.randint(0, 2)):
        current = live.entities.get(rng.choice(pool)) if pool else None
        name = current.name if current is not None else rng.choice(NAMES)
        removable = list(current.observations) if current is not None else []
        update.entities_to_modify.append(
            EntityUpdate(
                name=name,
                entity_type=rng.choice([None, *TYPES]),
                description=rng.choice([None, "changed", ""]),
                add_observations=rng.sample(["o1", "o4", "o5"], rng.randint(0, 2)),
                remove_observations=rng.sample(removable, min(len(removable), rng.randint(0, 1)))
                if strict or rng.random() < 0.8
                else ["never said"],
                is_root=rng.choice([None, True, False]),
            )
        )
    relations = list(live.relations.values())
    for _ in range(rng.randint(0, 2)):
        if relations and (strict or rng.random() < 0.7):
            update.relations_to_delete.append(rng.choice(relations))
        else:
            update.relations_to_delete.append(
                Relation(from_entity=rng.choice(NAMES), to_entity="x", relation_type="nope")
            )
    if existing and rng.random() < 0.25:
        update.entities_to_delete.append(rng.choice(existing))
    if not strict and rng.random() < 0.2:
        update.entities_to_delete.append("Ghost")
    for _ in range(rng.randint(0, 4)):
        a = rng.choice(pool)
        b = a if rng.random() < 0.15 else rng.choice(pool)  # a self-loop now and then
        update.relations_to_create.append(
            Relation(from_entity=a, to_entity=b, relation_type=rng.choice(KINDS))
        )
    return update


def _derived(graph: KnowledgeGraphActor) -> tuple[dict[str, int], list[str], dict[str, set[str]]]:
    """The summary's type counts and roots, and the relations ``get_entities(expand=True)``
    gives for each entity — what the actor's own indexes answer."""
    summary = graph.summary(max_roots=len(graph.state.entities))
    neighbours = {
        name: {relation_key(r) for r in graph.get_entities([name], expand=True).relations}
        for name in graph.state.entities
    }
    return summary.type_counts, [r.name for r in summary.roots], neighbours


def _recomputed(state: GraphState) -> tuple[dict[str, int], list[str], dict[str, set[str]]]:
    """The same three, computed from the state alone."""
    counts = Counter(e.entity_type for e in state.entities.values())
    roots = sorted(name for name, e in state.entities.items() if e.is_root)
    neighbours: dict[str, set[str]] = {name: set() for name in state.entities}
    for key, relation in state.relations.items():
        neighbours[relation.from_entity].add(key)
        neighbours[relation.to_entity].add(key)
    return dict(sorted(counts.items())), roots, neighbours


def test_a_long_random_run_replays_from_its_deltas_to_the_same_graph(team: Team) -> None:
    rng = random.Random(20240604)
    address = team.proxy.getChildrenOrCreate(KnowledgeGraphActor, KnowledgeGraphConfig())
    proxy = team.system.proxy_ask(address, KnowledgeGraphActor, timeout=30)
    actor = team.system.get_actor(address)
    assert isinstance(actor, KnowledgeGraphActor)
    refused = 0
    for _ in range(CALLS):
        update = _random_update(rng, actor.state)  # read between asks: the actor is idle
        try:
            proxy.update_graph(update)
        except RetriableError:
            refused += 1
    live = actor.state
    assert 0 < refused < CALLS  # the run mixed refusals with clean calls
    assert len(live.entities) > 3 and live.relations  # and left a graph worth comparing
    assert any(r.from_entity == r.to_entity for r in live.relations.values())  # self-loops

    events = [deserialize(serialize(e)) for e in graph_events(team)]
    assert [e.seq for e in events] == list(range(1, live.event_seq + 1))
    rebuilt = GraphState()
    for delta in deltas(events):
        rebuilt = reduce_graph(rebuilt, delta)
    assert rebuilt == live
    assert _derived(actor) == _recomputed(live)

    restored_address = team.system.createActor(
        KnowledgeGraphActor,
        config=KnowledgeGraphConfig(name="#KnowledgeGraphRestored"),
        team_id=team.orchestrator.team_id,
        restoring=True,
        state=rebuilt,
    )
    restored = team.system.proxy_ask(restored_address, KnowledgeGraphActor, timeout=30)
    assert restored.summary(1000) == proxy.summary(1000)
    with contextlib.suppress(Exception):
        team.system.proxy_tell(restored_address, KnowledgeGraphActor).stop()
