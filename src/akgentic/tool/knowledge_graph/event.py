"""The graph's delta, and the reducer that rebuilds the graph from a log of them.

Every ``update_graph`` that changes something emits one
``ToolStateEvent(tool_id="#KnowledgeGraphTool", seq, payload=KnowledgeGraphStateEvent)``.
A client that joins late replays the team's event history through
:func:`reduce_graph`, in ``seq`` order, and holds exactly the actor's state.
"""

from __future__ import annotations

from pydantic import Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.journal import reduce_delta
from akgentic.tool.knowledge_graph.models import Entity, GraphState, Relation

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
    The rule itself is :meth:`GraphState.apply_delta`, which restore folds with.
    """
    return reduce_delta(state, delta)
