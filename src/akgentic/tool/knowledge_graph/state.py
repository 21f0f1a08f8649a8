"""The graph as LLM_CONTEXT state: a summary that costs O(types + roots), not O(entities).

The model sees the totals, one count per entity type (the commonest :data:`TYPES_MAX`,
the rest counted) and the root entities (up to ``max_roots``) — never
the non-root entities themselves, which it reaches through ``search_graph`` and
``get_entities``. The actor keeps the counts and the root set up to date on every
mutation, so building a summary never walks the graph either.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from akgentic.core.serialization import SerializableModel
from akgentic.core.words import counted
from akgentic.tool.core import ContextState
from akgentic.tool.knowledge_graph.models import Entity

__all__ = ["DESCRIPTION_CHARS", "TYPES_MAX", "KnowledgeGraphSummaryState", "RootRow"]

DESCRIPTION_CHARS = 160
"""A root's description is cut to this many characters in the summary."""

TYPES_MAX = 30
"""Most entity types the summary lists (the commonest); the rest are counted. A type is
the model's own word, so a graph may hold as many types as entities."""


class RootRow(SerializableModel):
    """One root entity as the summary shows it."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str
    entity_type: str
    description: str = ""

    @classmethod
    def of(cls, entity: Entity) -> RootRow:
        # one line of the summary: a description's line breaks would start lines of their
        # own there (a fake root, a fake total), so its whitespace runs become one space
        text = " ".join(entity.description.split())
        if len(text) > DESCRIPTION_CHARS:
            text = text[: DESCRIPTION_CHARS - 1].rstrip() + "…"
        return cls(name=entity.name, entity_type=entity.entity_type, description=text)

    def render(self) -> str:
        line = f"{self.name} ({self.entity_type})"
        return f"{line}: {self.description}" if self.description else line


class KnowledgeGraphSummaryState(ContextState):
    """Totals, the counts of up to :data:`TYPES_MAX` types (``more_types`` beyond), and up
    to ``max_roots`` roots (``more_roots`` beyond)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    entity_count: int = 0
    relation_count: int = 0
    type_counts: dict[str, int] = Field(default_factory=dict)
    more_types: int = 0
    roots: tuple[RootRow, ...] = ()
    more_roots: int = 0
    search: str = "search_graph"
    """The call that finds the roots not listed, as the reader makes it (the card sets it:
    ``docs_search_graph`` in a toolset, ``/search_graph`` for a person)."""

    def _totals(self) -> str:
        return (
            f"{counted(self.entity_count, 'entity', 'entities')}, "
            f"{counted(self.relation_count, 'relation')}"
        )

    def _types(self) -> str:
        types = ", ".join(f"{name} {count}" for name, count in sorted(self.type_counts.items()))
        if self.more_types:
            more = counted(self.more_types, "more type")
            types += f", and {more} (search_graph with entity_type finds their entities)"
        return types

    def render_full(self) -> str:
        """The whole summary; ``""`` for an empty graph."""
        if not self.entity_count:
            return ""
        lines = [f"Knowledge graph: {self._totals()}.", f"Types: {self._types()}."]
        if self.roots:
            lines.append("Roots:")
            lines += [f"- {root.render()}" for root in self.roots]
        if self.more_roots:
            lines.append(f"- … and {self.more_roots} more roots ({self.search} finds them)")
        return "\n".join(lines)

    def render_delta(self, previous: KnowledgeGraphSummaryState) -> str | None:
        """Changed totals, type counts and roots; None when nothing changed."""
        lines: list[str] = []
        if (previous.entity_count, previous.relation_count) != (
            self.entity_count,
            self.relation_count,
        ):
            lines.append(f"Now {self._totals()}.")
        capped = previous.more_types or self.more_types
        if capped and previous.type_counts.keys() != self.type_counts.keys():
            # another type entered the list: one absent from it is not at 0, only unlisted
            lines.append(f"Types now: {self._types()}.")
        else:
            types = sorted(previous.type_counts.keys() | self.type_counts.keys())
            changed = [
                f"{name} {previous.type_counts.get(name, 0)} -> {self.type_counts.get(name, 0)}"
                for name in types
                if previous.type_counts.get(name, 0) != self.type_counts.get(name, 0)
            ]
            if previous.more_types != self.more_types:
                changed.append(f"{counted(self.more_types, 'more type')} not listed")
            if changed:
                lines.append("Types: " + ", ".join(changed) + ".")
        before = {root.name: root for root in previous.roots}
        now = {root.name: root for root in self.roots}
        lines += [
            f"- root: {root.render()}" for root in self.roots if before.get(root.name) != root
        ]
        lines += [f"- {name} is no longer listed as a root" for name in before if name not in now]
        if previous.more_roots != self.more_roots:
            lines.append(f"- {self.more_roots} more roots not listed")
        if not lines:
            return None
        return "\n".join(["Knowledge graph changes:", *lines])
