"""The graph's data: entities, relations, the edits agents send, queries, and the state.

:class:`Entity` and :class:`Relation` are values: frozen, replaced whole on change, so a
row handed to another thread (a snapshot, an event payload) never changes under its
reader. An entity is identified by its ``name``; a relation by its
``(from_entity, relation_type, to_entity)`` triple.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import ConfigDict, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.arguments import SearchLimit
from akgentic.tool.core.journal import DeltaState

if TYPE_CHECKING:
    from akgentic.tool.knowledge_graph.event import KnowledgeGraphStateEvent

__all__ = [
    "Entity",
    "EntityTable",
    "EntityUpdate",
    "GraphQuery",
    "GraphState",
    "GraphUpdate",
    "GraphView",
    "Relation",
    "RelationTable",
    "SearchMode",
    "relation_key",
]


class Entity(SerializableModel):
    """A node: a person, a company, a decision, a document … anything worth naming.

    ``is_root`` marks an entry point of the graph — what the per-turn summary lists.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Unique name; how relations refer to it.")
    entity_type: str = Field(min_length=1, description="e.g. person, company, decision.")
    description: str = ""
    observations: tuple[str, ...] = Field(default=(), description="Atomic facts about it.")
    is_root: bool = Field(default=False, description="An entry point of the graph.")

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """A frozen value is its own copy: a state snapshot copies the rows, not their fields."""
        return self


class Relation(SerializableModel):
    """A directed, typed edge: ``from_entity -[relation_type]-> to_entity``."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    from_entity: str = Field(min_length=1)
    to_entity: str = Field(min_length=1)
    relation_type: str = Field(min_length=1, description="Active voice, e.g. works_at.")

    def render(self) -> str:
        return f"{self.from_entity} -[{self.relation_type}]-> {self.to_entity}"

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """A frozen value is its own copy: a state snapshot copies the rows, not their fields."""
        return self


def relation_key(relation: Relation) -> str:
    """The string a relation is stored under (unambiguous for any names)."""
    return json.dumps([relation.from_entity, relation.relation_type, relation.to_entity])


class EntityTable(dict[str, Entity]):
    """Entities by name: a plain dict to validation and serialization.

    Its rows are frozen values, so its deep copy is a shallow copy — the snapshot every
    mutation publishes costs one dict copy, not a copy of every entity.
    """

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> EntityTable:
        return EntityTable(self)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(cls, handler(dict[str, Entity]))


class RelationTable(dict[str, Relation]):
    """Relations by :func:`relation_key`; like :class:`EntityTable`, copied shallowly."""

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> RelationTable:
        return RelationTable(self)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(cls, handler(dict[str, Relation]))


class EntityUpdate(SerializableModel):
    """Change an entity. Fields left out (None / empty) are kept as they are."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="The entity to change.")
    entity_type: str | None = Field(default=None, min_length=1)
    description: str | None = None
    add_observations: list[str] = Field(default_factory=list)
    remove_observations: list[str] = Field(default_factory=list)
    is_root: bool | None = None


class GraphUpdate(SerializableModel):
    """One ``update_graph`` call: every list may be empty.

    Applied in this order: entities created, entities modified, relations deleted,
    entities deleted (with every relation touching them), relations created.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    entities_to_create: list[Entity] = Field(default_factory=list)
    entities_to_modify: list[EntityUpdate] = Field(default_factory=list)
    entities_to_delete: list[str] = Field(default_factory=list)
    relations_to_create: list[Relation] = Field(default_factory=list)
    relations_to_delete: list[Relation] = Field(default_factory=list)


class SearchMode(StrEnum):
    """How ``search_graph`` ranks: by words, by meaning, or both fused."""

    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


class GraphQuery(SerializableModel):
    """A search over the graph.

    ``expand`` adds the direct neighbours of every hit and the relations that reach
    them; without it only the relations among the hits come back.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    query: str
    mode: SearchMode = SearchMode.HYBRID
    limit: SearchLimit = 10
    entity_type: str | None = None
    expand: bool = False


class GraphView(SerializableModel):
    """A slice of the graph: entities (hits first), relations among them, hit scores.

    Bounded: ``more_neighbours`` and ``more_relations`` count what an expansion or a
    hub's relations would have added past the view's caps (``kg_actor.NEIGHBOURS_MAX``,
    ``kg_actor.RELATIONS_MAX``)."""

    entities: list[Entity] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    scores: dict[str, float] = Field(default_factory=dict)
    missing: list[str] = Field(default_factory=list)
    note: str = ""
    more_neighbours: int = 0
    more_relations: int = 0


class GraphState(DeltaState):
    """The ``#KnowledgeGraphTool`` actor's state, persisted as its deltas (``StateJournal``).

    ``relations`` is keyed by :func:`relation_key`. ``event_seq`` is the seq of the last
    ``ToolStateEvent`` emitted, so a restored actor continues the stream without a gap.
    Rebuilt exactly from the event log by :meth:`apply_delta` (``reduce_graph``).
    """

    entities: EntityTable = Field(default_factory=EntityTable)
    relations: RelationTable = Field(default_factory=RelationTable)
    event_seq: int = Field(default=0, ge=0)

    def apply_delta(self, delta: KnowledgeGraphStateEvent) -> None:
        """Apply one ``KnowledgeGraphStateEvent`` in place: removals, then additions.

        A delta that does not fit (adding what exists, changing or removing what does
        not, a relation to a missing entity) raises ValueError: the log and the state
        diverged.
        """
        entities, relations = self.entities, self.relations
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
                    raise ValueError(
                        f"delta leaves {relation.render()} pointing at a removed entity"
                    )
