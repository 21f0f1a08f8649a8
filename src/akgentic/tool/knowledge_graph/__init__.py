"""akgentic.tool.knowledge_graph — the team's shared knowledge graph.

``KnowledgeGraphTool`` is the card; ``#KnowledgeGraphTool`` (:class:`KnowledgeGraphActor`)
is the one actor per team that holds the graph. Every mutation emits a
:class:`KnowledgeGraphStateEvent` delta, and :func:`reduce_graph` rebuilds the graph
from the event log. See README.md.
"""

from akgentic.tool.knowledge_graph.event import KnowledgeGraphStateEvent, reduce_graph
from akgentic.tool.knowledge_graph.kg_actor import (
    KG_ACTOR_NAME,
    KnowledgeGraphActor,
    KnowledgeGraphConfig,
)
from akgentic.tool.knowledge_graph.kg_tool import (
    GetEntities,
    GetKnowledgeGraph,
    KnowledgeGraphTool,
    SearchGraph,
    UpdateGraph,
)
from akgentic.tool.knowledge_graph.models import (
    Entity,
    EntityUpdate,
    GraphQuery,
    GraphState,
    GraphUpdate,
    GraphView,
    Relation,
    SearchMode,
)
from akgentic.tool.knowledge_graph.state import KnowledgeGraphSummaryState, RootRow

__all__ = [
    "KG_ACTOR_NAME",
    "Entity",
    "EntityUpdate",
    "GetEntities",
    "GetKnowledgeGraph",
    "GraphQuery",
    "GraphState",
    "GraphUpdate",
    "GraphView",
    "KnowledgeGraphActor",
    "KnowledgeGraphConfig",
    "KnowledgeGraphStateEvent",
    "KnowledgeGraphSummaryState",
    "KnowledgeGraphTool",
    "Relation",
    "RootRow",
    "SearchGraph",
    "SearchMode",
    "UpdateGraph",
    "reduce_graph",
]
