"""The graph's delta, and the reducer that rebuilds the graph from a log of them.

Every ``update_graph`` that changes something emits one
``ToolStateEvent(tool_id="#KnowledgeGraphTool", seq, payload=KnowledgeGraphStateEvent)``.
A client that joins late replays the team's event history through
:func:`reduce_graph`, in ``seq`` order, and holds exactly the actor's state.
"""

from __future__ import annotations

from pydantic import Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.knowledge_graph.models import Entity, GraphState, Relation, relation_key

__all__ = ["KnowledgeGraphStateEvent", "reduce_graph"]


class KnowledgeGraphStateEvent(SerializableModel):
    """The net effect of one ``update_graph`` call, as final values.

    ``entities_added`` / ``entities_modified`` carry whole entities as they stand after
    the call; ``entities_removed`` names entities that existed before and do not after.
    ``relations_removed`` merges the relations deleted explicitly and those removed
    with their entities. Applied removals first, then additions.
    """

    entities_added: list[Entity] = Field(default_factory=list)
    entities_modified: list[Entity] = Field(default_factory=list)
    entities_removed: list[str] = Field(default_factory=list)
    relations_added: list[Relation] = Field(default_factory=list)
    relations_removed: list[Relation] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """True when the call changed nothing: such a delta is never emitted."""
        return not (
            self.entities_added
            or self.entities_modified
            or self.entities_removed
            or self.relations_added
            or self.relations_removed
        )


def reduce_graph(state: GraphState, delta: KnowledgeGraphStateEvent) -> GraphState:
    """The graph after ``delta``: a pure function, ``state`` is not modified.

    Each delta is one emitted event, so ``event_seq`` advances by one. A delta that
    does not fit ``state`` (adding what exists, changing or removing what does not, a
    relation to a missing entity) raises ValueError: the log and the state diverged.
    """
    entities = dict(state.entities)
    relations = dict(state.relations)
    for relation in delta.relations_removed:
        if relations.pop(relation_key(relation), None) is None:
            raise ValueError(f"delta removes {relation.render()}, which does not exist")
    for name in delta.entities_removed:
        if entities.pop(name, None) is None:
            raise ValueError(f"delta removes entity {name!r}, which does not exist")
    for entity in delta.entities_added:
        if entity.name in entities:
            raise ValueError(f"delta adds entity {entity.name!r}, which already exists")
        entities[entity.name] = entity
    for entity in delta.entities_modified:
        if entity.name not in entities:
            raise ValueError(f"delta modifies entity {entity.name!r}, which does not exist")
        entities[entity.name] = entity
    for relation in delta.relations_added:
        key = relation_key(relation)
        if key in relations:
            raise ValueError(f"delta adds {relation.render()}, which already exists")
        if relation.from_entity not in entities or relation.to_entity not in entities:
            raise ValueError(f"delta adds {relation.render()} to a missing entity")
        relations[key] = relation
    if delta.entities_removed:
        gone = set(delta.entities_removed)
        for relation in relations.values():
            if relation.from_entity in gone or relation.to_entity in gone:
                raise ValueError(f"delta leaves {relation.render()} pointing at a removed entity")
    return GraphState(entities=entities, relations=relations, event_seq=state.event_seq + 1)
