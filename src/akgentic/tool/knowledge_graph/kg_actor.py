"""``#KnowledgeGraphTool``: the team's one knowledge graph, held by one actor.

Bound with ``Orchestrator.getChildrenOrCreate`` — never check-then-create — so every
agent carrying ``KnowledgeGraphTool`` talks to the same graph. The mailbox serialises
every call: two agents updating the graph at once are applied one after the other,
and the read-modify-write below needs no lock.

The emit-before-return contract: :meth:`KnowledgeGraphActor.update_graph` applies what
it can, records the net delta as ``ToolStateEvent(tool_id="#KnowledgeGraphTool", seq,
payload=delta)`` through its ``StateJournal`` (which publishes a snapshot of the graph
when one is due) — and only then returns, or raises ``RetriableError`` listing what
failed. An empty delta emits nothing and does not advance ``seq``.

Derived indexes (neighbours, counts per type, the root set) are rebuilt in
``on_start`` from the state, so a seeded or restored actor resumes with them, and are
kept up to date per mutation: a summary costs O(types + roots), never O(entities).
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import Field

from akgentic.core import Akgent, BaseConfig
from akgentic.core.excerpt import excerpt
from akgentic.core.words import counted
from akgentic.tool.core.journal import StateJournal
from akgentic.tool.core.one_line import TEXT_MAX, one_line_problem
from akgentic.tool.errors import RetriableError
from akgentic.tool.knowledge_graph.event import KnowledgeGraphStateEvent
from akgentic.tool.knowledge_graph.models import (
    Entity,
    EntityUpdate,
    GraphQuery,
    GraphState,
    GraphUpdate,
    GraphView,
    Relation,
    SearchMode,
    relation_key,
)
from akgentic.tool.knowledge_graph.state import TYPES_MAX, KnowledgeGraphSummaryState, RootRow
from akgentic.tool.vector_store import SemanticIndex, VectorStoreParam, hybrid_rank, keyword_scores

__all__ = [
    "ENTITY_TEXT_MAX",
    "KG_ACTOR_NAME",
    "KG_COLLECTION",
    "NEIGHBOURS_MAX",
    "RELATIONS_MAX",
    "KnowledgeGraphActor",
    "KnowledgeGraphConfig",
    "entity_text",
]

logger = logging.getLogger("akgentic.tool.knowledge_graph")

KG_ACTOR_NAME = "#KnowledgeGraphTool"
"""The actor's name: ``#``-prefixed (a tool actor, stopped after the regular members)."""

KG_COLLECTION = "knowledge_graph"
"""The vector-store collection entities are embedded in (``vector_store.collection`` overrides)."""

NEIGHBOURS_MAX = 50
"""Most neighbours one expansion adds to a view. A hub's thousands would flood the model's
context: the view counts the rest, reached by name or by ``search_graph``."""

RELATIONS_MAX = 100
"""Most relations one view lists; the rest are counted."""

ENTITY_TEXT_MAX = 4 * TEXT_MAX
"""Most characters an entity's description and observations hold together. Each field is
capped (``TEXT_MAX``), and so is their sum: every change logs the entity whole, embeds it
whole and shows it whole, so an entity grown an observation at a time without end made
each change cost more than the last."""


class KnowledgeGraphConfig(BaseConfig):
    """The ``#KnowledgeGraphTool`` actor's configuration (the first card to bind decides).

    ``vector_store`` — where entities are embedded; the card passes its own.
    """

    name: str = KG_ACTOR_NAME
    role: str = "KnowledgeGraphTool"
    vector_store: VectorStoreParam = Field(default_factory=VectorStoreParam)


def entity_text(entity: Entity) -> str:
    """The text an entity is searched by (keyword and semantic alike)."""
    parts = [f"{entity.name} ({entity.entity_type})", entity.description, *entity.observations]
    return "\n".join(part for part in parts if part)


def _indexed(entity: Entity) -> tuple[str, dict[str, Any]]:
    """An entity's row in the semantic index: its text and metadata."""
    return entity_text(entity), {"type": entity.entity_type}


class KnowledgeGraphActor(Akgent[KnowledgeGraphConfig, GraphState]):
    """Holds the graph. Every public method runs on the actor's thread, one at a time."""

    def on_start(self) -> None:
        self._journal = StateJournal(self)
        # Indexing side only (fire-and-forget upserts; queries embed on the caller's
        # thread). Rows persist with the store: a restored graph embeds only the entities
        # the store lacks (a write whose embedding a stop or a crash dropped) and drops
        # the rows of entities gone meanwhile.
        self._index: SemanticIndex | None = None
        try:
            self._index = SemanticIndex.bind(self.config.vector_store, self, KG_COLLECTION)
        except Exception:  # the shared actor degrades to keyword-only, it never dies of it
            logger.exception("%s: no semantic index; keyword search only", self.myAddress.name)
        entities = self.state.entities
        if self._index is not None and (self.restoring or entities):
            self._index.reconcile({name: _indexed(e) for name, e in entities.items()})
        self._adjacent: dict[str, set[str]] = {}
        self._type_counts: Counter[str] = Counter()
        self._roots: set[str] = set()
        for entity in self.state.entities.values():
            self._index_entity(None, entity)
        for key, relation in self.state.relations.items():
            self._adjacent.setdefault(relation.from_entity, set()).add(key)
            self._adjacent.setdefault(relation.to_entity, set()).add(key)

    # -- queries ---------------------------------------------------------------------
    def entity_count(self) -> int:
        """How many entities the graph holds: O(1), asked before each model request."""
        return len(self.state.entities)

    def summary(self, max_roots: int = 30) -> KnowledgeGraphSummaryState:
        """Totals, the :data:`TYPES_MAX` commonest types' counts and the first ``max_roots``
        roots by name: O(types + roots), and bounded whatever the graph holds."""
        entities = self.state.entities
        names = sorted(self._roots)
        shown = names[: max(0, max_roots)]
        # the model names types freely: the commonest TYPES_MAX are listed, the rest counted
        types = heapq.nsmallest(TYPES_MAX, self._type_counts.items(), key=lambda t: (-t[1], t[0]))
        return KnowledgeGraphSummaryState(
            entity_count=len(entities),
            relation_count=len(self.state.relations),
            type_counts=dict(sorted(types)),
            more_types=len(self._type_counts) - len(types),
            roots=tuple(RootRow.of(entities[name]) for name in shown),
            more_roots=len(names) - len(shown),
        )

    def get_entities(self, names: list[str], expand: bool = False) -> GraphView:
        """The named entities (case-insensitive fallback), and the relations among them.

        ``expand`` adds their direct neighbours and every relation touching them.
        """
        found: list[str] = []
        missing: list[str] = []
        for name in names:
            resolved = self._resolve(name)
            if resolved is None:
                missing.append(name)
            elif resolved not in found:
                found.append(resolved)
        view = self._view(found, expand)
        view.missing = missing
        return view

    def search(
        self, query: GraphQuery, semantic: dict[str, float] | None = None, alpha: float = 0.7
    ) -> GraphView:
        """Rank entities for ``query``; ``semantic`` is name -> cosine (None: unavailable).

        keyword: BM25 over each entity's text. semantic: the given cosines. hybrid: the
        two fused by ``hybrid_rank`` with ``alpha``. Without cosines, semantic and
        hybrid degrade to keyword ranking and say so in ``note``.
        """
        entities = self.state.entities
        wanted = query.entity_type.casefold() if query.entity_type else None
        candidates = {
            name: entity_text(entity)
            for name, entity in entities.items()
            if wanted is None or entity.entity_type.casefold() == wanted
        }
        mode, note = query.mode, ""
        if mode is not SearchMode.KEYWORD and semantic is None:
            mode, note = SearchMode.KEYWORD, "semantic search unavailable: keyword ranking"
        sem = {k: v for k, v in (semantic or {}).items() if k in candidates}
        if mode is SearchMode.KEYWORD:
            keyword = keyword_scores(query.query, candidates)
            top = max(keyword.values(), default=1.0) or 1.0
            ranked = sorted(keyword.items(), key=lambda kv: (-kv[1], kv[0]))[: query.limit]
            scores = {name: score / top for name, score in ranked}
        elif mode is SearchMode.SEMANTIC:
            scores = dict(sorted(sem.items(), key=lambda kv: (-kv[1], kv[0]))[: query.limit])
        else:
            keyword = keyword_scores(query.query, candidates)
            fused = hybrid_rank(keyword, sem, alpha, len(candidates))
            # a fused 0 with no keyword match is the bottom of the cosine set: no signal
            scores = dict([(n, v) for n, v in fused if v > 0 or n in keyword][: query.limit])
        view = self._view(list(scores), query.expand)
        view.scores = scores
        view.note = note
        return view

    def _resolve(self, name: str) -> str | None:
        if name in self.state.entities:
            return name
        folded = name.strip().casefold()
        for candidate in self.state.entities:
            if candidate.casefold() == folded:
                return candidate
        return None

    def _view(self, names: list[str], expand: bool) -> GraphView:
        """``names`` (hits first), with ``expand`` their first :data:`NEIGHBOURS_MAX`
        neighbours, and the first :data:`RELATIONS_MAX` relations among the entities shown
        (by key: deterministic). What is left out is counted, never silently dropped."""
        entities, relations = self.state.entities, self.state.relations
        keys: set[str] = set()
        for name in names:
            keys |= self._adjacent.get(name, set())
        ordered = sorted(keys)
        chosen = set(names)
        shown = list(names)
        more_neighbours = 0
        if expand:
            neighbours = list(
                dict.fromkeys(
                    end
                    for key in ordered
                    for end in (relations[key].from_entity, relations[key].to_entity)
                    if end not in chosen
                )
            )
            kept = neighbours[:NEIGHBOURS_MAX]
            more_neighbours = len(neighbours) - len(kept)
            shown += kept
            chosen.update(kept)
        among = [
            relations[key]
            for key in ordered
            if relations[key].from_entity in chosen and relations[key].to_entity in chosen
        ]
        # expanded, every relation touching a hit is part of the answer; else those among
        # the hits alone
        relevant = len(ordered) if expand else len(among)
        picked = among[:RELATIONS_MAX]
        return GraphView(
            entities=[entities[name] for name in shown],
            relations=picked,
            more_neighbours=more_neighbours,
            more_relations=relevant - len(picked),
        )

    # -- the mutation ----------------------------------------------------------------
    def update_graph(
        self, update: GraphUpdate, called: str = "update_graph", entities: str = "get_entities"
    ) -> str:
        """Apply ``update`` (order: see ``GraphUpdate``); return what was done.

        Applies every part it can. Before returning — or raising ``RetriableError``
        listing each refused part — it publishes the state and emits the net delta.
        ``called`` and ``entities`` name this call and the one showing entities as the
        caller makes them (``docs_update_graph`` in a toolset), for the refusals' words.
        """
        tracker = _Tracker(self.state)
        errors: list[str] = []
        present: list[str] = []
        for entity in update.entities_to_create:
            refused = (
                _not_one_line(name=entity.name, entity_type=entity.entity_type)
                or _too_long(entity.description, entity.observations)
                or _too_much(entity, None)
            )
            if refused:
                errors.append(f"entity {excerpt(entity.name)} not created: {refused}")
            elif entity.name in self.state.entities:
                errors.append(
                    f"entity {excerpt(entity.name)} already exists: change it with "
                    f"entities_to_modify"
                )
            else:
                tracker.entity(entity.name)
                self._put_entity(entity)
        for change in update.entities_to_modify:
            error = self._modify(change, tracker, entities)
            if error:
                errors.append(error)
        # a name (or relation) listed twice is deleted once: the second listing is the
        # same request, not a second problem
        doomed: dict[str, Relation] = {}
        for relation in update.relations_to_delete:
            doomed.setdefault(relation_key(relation), relation)
        for key, relation in doomed.items():
            if key not in self.state.relations:
                errors.append(f"there is no relation {relation.render()} to delete")
            else:
                tracker.relation(key)
                self._drop_relation(key)
        for name in dict.fromkeys(update.entities_to_delete):
            if name not in self.state.entities:
                errors.append(f"there is no entity {excerpt(name)} to delete{self._hint(name)}")
                continue
            for key in sorted(self._adjacent.get(name, set())):
                tracker.relation(key)
                self._drop_relation(key)
            tracker.entity(name)
            self._drop_entity(name)
        for relation in update.relations_to_create:
            key = relation_key(relation)
            ends = dict.fromkeys((relation.from_entity, relation.to_entity))
            absent = [n for n in ends if n not in self.state.entities]
            refused = _not_one_line(relation_type=relation.relation_type)
            if refused:
                errors.append(f"cannot relate {relation.render()}: {refused}")
            elif absent:
                errors.append(
                    f"cannot relate {relation.render()}: no entity "
                    + ", ".join(f"{excerpt(n)}{self._hint(n)}" for n in absent)
                    + " (create it in entities_to_create)"
                )
            elif key in self.state.relations:
                present.append(relation.render())
            else:
                tracker.relation(key)
                self._put_relation(key, relation)
        delta = tracker.delta(self.state)
        self._publish(delta)
        self._reindex(delta)
        summary = _summary(delta, present)
        if errors:
            raise RetriableError(
                f"{called} applied what it could ({summary}). Failed: "
                + "; ".join(dict.fromkeys(errors))  # each problem once
                + ". Fix those parts and send only them again."
            )
        return f"Done: {summary}."

    def _reindex(self, delta: KnowledgeGraphStateEvent) -> None:
        """Keep the semantic index in step with the delta (never blocks, never raises)."""
        if self._index is None:
            return
        for entity in [*delta.entities_added, *delta.entities_modified]:
            self._index.upsert(entity.name, *_indexed(entity))
        for name in delta.entities_removed:
            self._index.delete(name)

    def _modify(self, change: EntityUpdate, tracker: _Tracker, entities: str) -> str | None:
        """Apply one entity change as a whole; the error text when it is refused
        (``entities``: the call showing entities, as the caller makes it)."""
        current = self.state.entities.get(change.name)
        if current is None:
            return f"there is no entity {excerpt(change.name)} to modify{self._hint(change.name)}"
        refused = _too_long(change.description or "", change.add_observations)
        if change.entity_type is not None:
            refused = _not_one_line(entity_type=change.entity_type) or refused
        if refused:
            return f"entity {excerpt(change.name)} not modified: {refused}"
        observations = list(current.observations)
        absent = [o for o in change.remove_observations if o not in observations]
        if absent:
            return (
                f"entity {excerpt(change.name)} has no observation {excerpt(absent[0])} to "
                f"remove (quote it exactly, as {entities} shows it)"
            )
        observations = [o for o in observations if o not in change.remove_observations]
        observations += [o for o in dict.fromkeys(change.add_observations) if o not in observations]
        updates = change.model_dump(
            include={"entity_type", "description", "is_root"}, exclude_none=True
        )
        new = current.model_copy(update={**updates, "observations": tuple(observations)})
        refused = _too_much(new, current)
        if refused:
            return f"entity {excerpt(change.name)} not modified: {refused}"
        if new != current:
            tracker.entity(current.name)
            self._put_entity(new)
        return None

    def _hint(self, name: str) -> str:
        resolved = self._resolve(name)
        return f" (did you mean {excerpt(resolved)}?)" if resolved and resolved != name else ""

    def _publish(self, delta: KnowledgeGraphStateEvent) -> None:
        """Record the delta (and a snapshot when due) before the caller hears back.
        Nothing for an empty delta."""
        self._journal.record(delta, empty=delta.is_empty())

    def on_stop(self) -> None:
        self._journal.close()

    # -- the state and its derived indexes, changed together ---------------------------
    def _index_entity(self, old: Entity | None, new: Entity | None) -> None:
        if old is not None:
            self._type_counts[old.entity_type] -= 1
            if not self._type_counts[old.entity_type]:
                del self._type_counts[old.entity_type]
            self._roots.discard(old.name)
        if new is not None:
            self._type_counts[new.entity_type] += 1
            if new.is_root:
                self._roots.add(new.name)

    def _put_entity(self, entity: Entity) -> None:
        self._index_entity(self.state.entities.get(entity.name), entity)
        self.state.entities[entity.name] = entity

    def _drop_entity(self, name: str) -> None:
        self._index_entity(self.state.entities.pop(name), None)
        self._adjacent.pop(name, None)

    def _put_relation(self, key: str, relation: Relation) -> None:
        self.state.relations[key] = relation
        self._adjacent.setdefault(relation.from_entity, set()).add(key)
        self._adjacent.setdefault(relation.to_entity, set()).add(key)

    def _drop_relation(self, key: str) -> None:
        relation = self.state.relations.pop(key)
        for end in (relation.from_entity, relation.to_entity):
            keys = self._adjacent.get(end)
            if keys is not None:
                keys.discard(key)


class _Tracker:
    """What one call touched, as first seen: the net delta is the difference at the end."""

    def __init__(self, state: GraphState) -> None:
        self._state = state
        self._entities: dict[str, Entity | None] = {}
        self._relations: dict[str, Relation | None] = {}

    def entity(self, name: str) -> None:
        if name not in self._entities:
            self._entities[name] = self._state.entities.get(name)

    def relation(self, key: str) -> None:
        if key not in self._relations:
            self._relations[key] = self._state.relations.get(key)

    def delta(self, state: GraphState) -> KnowledgeGraphStateEvent:
        entities, relations = state.entities, state.relations
        return KnowledgeGraphStateEvent(
            entities_added=[
                entities[n] for n, was in self._entities.items() if was is None and n in entities
            ],
            entities_modified=[
                entities[n]
                for n, was in self._entities.items()
                if was is not None and n in entities and entities[n] != was
            ],
            entities_removed=[
                n for n, was in self._entities.items() if was is not None and n not in entities
            ],
            relations_added=[
                relations[k] for k, was in self._relations.items() if was is None and k in relations
            ],
            relations_removed=[
                was for k, was in self._relations.items() if was is not None and k not in relations
            ],
        )


def _not_one_line(**fields: str) -> str | None:
    """Why a name or type is not one line of the graph's summary (the first field that
    is not), or None. Checked on what comes in only: a stored graph is never refused."""
    for field, value in fields.items():
        problem = one_line_problem(value)
        if problem:
            return f"its {field} {problem}"
    return None


def _too_long(description: str, observations: Iterable[str]) -> str | None:
    """Why a description or an observation is too long to keep, or None. Checked on what
    comes in only, like :func:`_not_one_line`."""
    for field, value in (("description", description), *(("observation", o) for o in observations)):
        if len(value) > TEXT_MAX:
            return (
                f"its {field} {excerpt(value)} is longer than {TEXT_MAX:,} characters: keep "
                f"the gist, and put the whole text in a file (the workspace), saying where"
            )
    return None


def _text_size(entity: Entity) -> int:
    return len(entity.description) + sum(len(o) for o in entity.observations)


def _too_much(entity: Entity, before: Entity | None) -> str | None:
    """Why ``entity`` would hold more text than :data:`ENTITY_TEXT_MAX`, or None. Only
    growth is refused: an entity stored past the bound may still shrink or change."""
    size = _text_size(entity)
    if size <= ENTITY_TEXT_MAX or (before is not None and size <= _text_size(before)):
        return None
    return (
        f"its description and observations would hold {size:,} characters, more than the "
        f"{ENTITY_TEXT_MAX:,} one entity keeps: remove observations that no longer hold, or "
        f"put the details in a file (the workspace), saying where"
    )


def _summary(delta: KnowledgeGraphStateEvent, present: list[str]) -> str:
    parts = [
        f"{counted(len(items), noun, plural)} {verb}"
        for noun, plural, verb, items in (
            ("entity", "entities", "added", delta.entities_added),
            ("entity", "entities", "modified", delta.entities_modified),
            ("entity", "entities", "removed", delta.entities_removed),
            ("relation", None, "added", delta.relations_added),
            ("relation", None, "removed", delta.relations_removed),
        )
        if items
    ]
    if present:
        parts.append(f"{counted(len(present), 'relation')} already present")
    return ", ".join(parts) if parts else "nothing changed"
