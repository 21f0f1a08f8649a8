"""KnowledgeGraphTool: the card that gives an agent the team's knowledge graph.

============================  ===========================  ==================================
capability                    channels (default)           callable
============================  ===========================  ==================================
``get_knowledge_graph``       LLM_CONTEXT, COMMAND         provider ``get_knowledge_graph``;
                                                           command ``/knowledge_graph``
``update_graph``              TOOL_CALL, COMMAND           ``update_graph`` (both)
``get_entities``              TOOL_CALL, COMMAND           ``get_entities`` (both)
``search_graph``              TOOL_CALL, COMMAND           ``search_graph`` (both)
============================  ===========================  ==================================

``read_only=True`` removes ``update_graph`` from every channel, whatever its param says.

Wiring: :meth:`KnowledgeGraphTool.observer` binds the team's one ``#KnowledgeGraphTool``
through ``Orchestrator.getChildrenOrCreate`` — get-or-create in one step, never
check-then-create — and keeps only its address. Closures capture the card, never the
agent; the observer is read (weakly) on every call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Self, TypeVar, cast

from pydantic import Field, PrivateAttr, ValidationError, field_validator

from akgentic.core import ActorAddress
from akgentic.core.excerpt import cut, excerpt, validation_words
from akgentic.core.words import counted
from akgentic.tool.core import (
    COMMAND,
    LLM_CONTEXT,
    TOOL_CALL,
    ActorToolObserver,
    BaseToolParam,
    Channels,
    ContextState,
    ToolCard,
    ToolObserver,
    normalize_system_prompt_to_llm_context,
    offer_while,
    serve,
)
from akgentic.tool.core.arguments import SEARCH_LIMIT_MAX, SearchLimit
from akgentic.tool.core.team_actor import (
    ask_tool_actor,
    bind_team_actor,
    require_team_observer,
)
from akgentic.tool.errors import RetriableError, ToolNotWiredError
from akgentic.tool.knowledge_graph.kg_actor import (
    KG_COLLECTION,
    KnowledgeGraphActor,
    KnowledgeGraphConfig,
)
from akgentic.tool.knowledge_graph.models import (
    Entity,
    EntityUpdate,
    GraphQuery,
    GraphUpdate,
    GraphView,
    Relation,
    SearchMode,
)
from akgentic.tool.knowledge_graph.state import KnowledgeGraphSummaryState
from akgentic.tool.vector_store import SemanticIndex, VectorStoreParam

__all__ = [
    "ASK_TIMEOUT",
    "CONTEXT_TIMEOUT",
    "NAMES_MAX",
    "VIEW_CHARS",
    "GetEntities",
    "GetKnowledgeGraph",
    "KnowledgeGraphTool",
    "SearchGraph",
    "UpdateGraph",
    "render_view",
]

logger = logging.getLogger("akgentic.tool.knowledge_graph")

T = TypeVar("T")

ASK_TIMEOUT = 30.0
"""Seconds a tool call or command waits for ``#KnowledgeGraphTool`` (in-memory work)."""

CONTEXT_TIMEOUT = 5.0
"""Seconds the context provider waits; past it the provider returns None (never raises)."""

NAMES_MAX = SEARCH_LIMIT_MAX
"""Most names one ``get_entities`` call takes: as many as one search may return."""

VIEW_CHARS = 30_000
"""The longest answer ``get_entities`` and ``search_graph`` give; past it the text is cut
with a note (entities' descriptions and observations are the model's, of any number)."""


class GetKnowledgeGraph(BaseToolParam):
    """The graph summary as LLM_CONTEXT state (and the ``/knowledge_graph`` command).

    ``max_roots`` — how many root entities the summary lists (0: none, only counted);
    the rest are counted. A negative number is refused when the card is built: it would
    list no root and say nothing of the mistake.
    """

    expose: set[Channels] = {LLM_CONTEXT, COMMAND}
    max_roots: int = Field(default=30, ge=0)
    _moved = field_validator("expose", mode="before")(normalize_system_prompt_to_llm_context)


class UpdateGraph(BaseToolParam):
    """Create / modify / delete entities and relations in one call: ``update_graph``."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class GetEntities(BaseToolParam):
    """Entities by name, with their relations: ``get_entities``."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class SearchGraph(BaseToolParam):
    """Keyword, semantic or hybrid search with neighbour expansion: ``search_graph``."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class KnowledgeGraphTool(ToolCard):
    """Entities and relations shared by the team, backed by ``#KnowledgeGraphTool``."""

    get_knowledge_graph: GetKnowledgeGraph | bool = True
    update_graph: UpdateGraph | bool = True
    get_entities: GetEntities | bool = True
    search_graph: SearchGraph | bool = True
    read_only: bool = False
    """True: the agent reads and searches the graph but cannot change it."""
    vector_store: VectorStoreParam = Field(default_factory=VectorStoreParam)

    _graph: ActorAddress | None = PrivateAttr(default=None)
    _index: SemanticIndex | None = PrivateAttr(default=None)

    # -- wiring ----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent and bind the team's ``#KnowledgeGraphTool`` (get-or-create).

        Raises TypeError when the observer is not an ``ActorToolObserver`` and
        ValueError when it belongs to no team — at team creation, not at first use.
        """
        super().observer(observer)
        team = require_team_observer(observer, "KnowledgeGraphTool", "#KnowledgeGraphTool")
        # The query side first: it validates the store (a cluster backend without its
        # URL raises here, at team creation, before any actor exists), and it embeds on
        # the agent's thread, so the bounded wait of similar() never holds the shared actor.
        self._index = SemanticIndex.bind(self.vector_store, team, KG_COLLECTION)
        config = KnowledgeGraphConfig(vector_store=self.vector_store)
        self._graph = bind_team_actor(team, KnowledgeGraphActor, config, ASK_TIMEOUT)
        return self

    def _ask(self, what: str, call: Callable[[KnowledgeGraphActor], T]) -> T:
        """Run ``call`` on an ask proxy of the actor; every failure becomes RetriableError."""
        observer = cast(ActorToolObserver, self.get_observer())
        if self._graph is None:
            raise ToolNotWiredError("KnowledgeGraphTool is not wired: build it through ToolFactory")
        return ask_tool_actor(
            observer,
            self._graph,
            KnowledgeGraphActor,
            call,
            what=what,
            label="The knowledge graph (#KnowledgeGraphTool)",
            timeout=ASK_TIMEOUT,
        )

    def _mutable(self) -> UpdateGraph | bool:
        return False if self.read_only else self.update_graph

    # -- LLM_CONTEXT -----------------------------------------------------------------
    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        param = serve(self.get_knowledge_graph, GetKnowledgeGraph, LLM_CONTEXT)
        if param is None:
            return []
        card, max_roots, search = self, param.max_roots, self.called_as("search_graph")

        def get_knowledge_graph() -> KnowledgeGraphSummaryState | None:
            """The graph summary; None when unavailable. Never raises."""
            observer = card.observer_or_none()
            address = card._graph
            if observer is None or address is None:
                return None
            try:
                actor = cast(ActorToolObserver, observer)
                graph = actor.proxy_ask(address, KnowledgeGraphActor, CONTEXT_TIMEOUT)
                summary: KnowledgeGraphSummaryState = graph.summary(max_roots)
                return summary.model_copy(update={"search": search})
            except Exception as exc:
                logger.warning("knowledge graph context unavailable: %r", exc)
                return None

        return [get_knowledge_graph]

    # -- TOOL_CALL / COMMAND ---------------------------------------------------------
    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        if serve(self._mutable(), UpdateGraph, TOOL_CALL) is not None:
            tools.append(self._update_fn(TOOL_CALL))
        # Seed 001: knowledge search is absent while its base is empty; it returns by
        # itself once the graph holds an entity (the harness asks before each request).
        if serve(self.get_entities, GetEntities, TOOL_CALL) is not None:
            tools.append(offer_while(self._entities_fn(TOOL_CALL), self._has_entities))
        if serve(self.search_graph, SearchGraph, TOOL_CALL) is not None:
            tools.append(offer_while(self._search_fn(TOOL_CALL), self._has_entities))
        return tools

    def _has_entities(self) -> bool:
        """Whether the graph holds an entity (True when it cannot tell: never hide on doubt)."""
        observer = self.observer_or_none()
        address = self._graph
        if observer is None or address is None:
            return True
        try:
            graph = cast(ActorToolObserver, observer).proxy_ask(
                address, KnowledgeGraphActor, CONTEXT_TIMEOUT
            )
            return bool(graph.entity_count() > 0)
        except Exception as exc:
            logger.warning("knowledge graph size unknown (%r): search stays offered", exc)
            return True

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        if (view := serve(self.get_knowledge_graph, GetKnowledgeGraph, COMMAND)) is not None:
            commands[GetKnowledgeGraph] = self._summary_fn(view.max_roots)
        if serve(self._mutable(), UpdateGraph, COMMAND) is not None:
            commands[UpdateGraph] = self._update_fn(COMMAND)
        if serve(self.get_entities, GetEntities, COMMAND) is not None:
            commands[GetEntities] = self._entities_fn(COMMAND)
        if serve(self.search_graph, SearchGraph, COMMAND) is not None:
            commands[SearchGraph] = self._search_fn(COMMAND)
        return commands

    # -- the callables (one builder each: tool and command forms behave identically; the
    # channel a builder takes is its reader's, for the words naming a call: ``/x`` or x) -
    def _summary_fn(self, max_roots: int) -> Callable[..., str]:
        card, search = self, self.invocation("search_graph", COMMAND)

        def knowledge_graph() -> str:
            """Show the knowledge graph summary: totals, counts per type, the roots."""
            summary = card._ask("knowledge_graph", lambda graph: graph.summary(max_roots))
            summary = summary.model_copy(update={"search": search})
            return summary.render_full() or "The knowledge graph is empty."

        return knowledge_graph

    def _update_fn(self, channel: Channels) -> Callable[..., str]:
        card, called = self, self.invocation("update_graph", channel)
        entities = self.invocation("get_entities", channel)

        def update_graph(
            entities_to_create: list[Entity] | None = None,
            entities_to_modify: list[EntityUpdate] | None = None,
            entities_to_delete: list[str] | None = None,
            relations_to_create: list[Relation] | None = None,
            relations_to_delete: list[Relation] | None = None,
        ) -> str:
            """Change the team's knowledge graph: entities and relations, in one call.

            Order: entities created, entities modified (type, description, root flag,
            observations added / removed), relations deleted, entities deleted (with
            their relations), relations created — so a relation may link entities
            created in the same call. Parts that fail are reported; the rest stay
            applied.
            """
            try:
                update = GraphUpdate.model_validate(
                    {
                        "entities_to_create": entities_to_create or [],
                        "entities_to_modify": entities_to_modify or [],
                        "entities_to_delete": entities_to_delete or [],
                        "relations_to_create": relations_to_create or [],
                        "relations_to_delete": relations_to_delete or [],
                    }
                )
            except ValidationError as exc:
                raise RetriableError(f"{called}: invalid arguments ({_problems(exc)}).") from None
            return card._ask(called, lambda graph: graph.update_graph(update, called, entities))

        return update_graph

    def _entities_fn(self, channel: Channels) -> Callable[..., str]:
        card, called = self, self.invocation("get_entities", channel)

        def get_entities(names: list[str], expand: bool = False) -> str:
            """Show entities by name, in full, with the relations among them.

            expand=true adds their direct neighbours and every relation touching them.
            """
            if not names:
                raise RetriableError(f"{called} needs at least one entity name.")
            if len(names) > NAMES_MAX:
                raise RetriableError(
                    f"{called} takes at most {NAMES_MAX} names at a time, not "
                    f"{len(names):,}: ask for the first {NAMES_MAX}, then the rest."
                )
            view = card._ask(called, lambda graph: graph.get_entities(names, expand))
            return render_view(view)

        return get_entities

    def _search_fn(self, channel: Channels) -> Callable[..., str]:
        card, called = self, self.invocation("search_graph", channel)

        def search_graph(
            query: str,
            mode: SearchMode = SearchMode.HYBRID,
            limit: SearchLimit = 10,
            entity_type: str | None = None,
            expand: bool = False,
        ) -> str:
            """Search the knowledge graph: by words (keyword), meaning (semantic) or both.

            entity_type keeps one type only; expand=true adds each hit's direct
            neighbours and the relations reaching them.
            """
            try:
                parsed = GraphQuery(
                    query=query, mode=mode, limit=limit, entity_type=entity_type, expand=expand
                )
            except ValidationError as exc:
                raise RetriableError(f"{called}: invalid arguments ({_problems(exc)}).") from None
            if not parsed.query.strip():
                raise RetriableError(f"{called} needs a query: words the entity is about.")
            semantic: dict[str, float] | None = None
            index = card._index
            if parsed.mode is not SearchMode.KEYWORD and index is not None and index.available:
                k = max(3 * parsed.limit, 20) if parsed.entity_type else parsed.limit
                semantic = index.similar(parsed.query, k) or None  # {} is the degraded answer
            alpha = card.vector_store.hybrid_alpha
            view = card._ask(called, lambda graph: graph.search(parsed, semantic, alpha))
            return render_view(view) if view.entities else f"Nothing matches {excerpt(query)}."

        return search_graph


def _problems(exc: ValidationError) -> str:
    return validation_words(exc)


def render_view(view: GraphView) -> str:
    """A slice of the graph as the model and a person read it: at most :data:`VIEW_CHARS`
    characters, saying what the view's caps and the cut left out."""
    lines: list[str] = [f"({view.note})"] if view.note else []
    if view.entities:
        lines.append("Entities:")
    for entity in view.entities:
        line = f"- {entity.name} ({entity.entity_type})"
        if entity.is_root:
            line += " [root]"
        if entity.name in view.scores:
            line += f" {view.scores[entity.name]:.2f}"
        if entity.description:
            line += f": {entity.description}"
        lines.append(line)
        lines += [f"  · {observation}" for observation in entity.observations]
    if view.relations:
        lines.append("Relations:")
        lines += [f"- {relation.render()}" for relation in view.relations]
    left_out = [
        counted(count, noun)
        for count, noun in (
            (view.more_neighbours, "more neighbour"),
            (view.more_relations, "more relation"),
        )
        if count
    ]
    if left_out:
        lines.append(
            f"… and {' and '.join(left_out)} not shown: get_entities on fewer names, or "
            f"search_graph with a query or an entity_type, narrows it."
        )
    if view.missing:
        lines.append("Not found: " + ", ".join(excerpt(name) for name in view.missing))
    text = "\n".join(lines) or "Nothing found."
    return cut(text, VIEW_CHARS, "ask for fewer entities (fewer names, a smaller limit, no expand)")
