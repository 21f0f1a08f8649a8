"""Topological ordering of cards by ``depends_on``.

The factory wires cards in this order, so a card whose ``observer()`` looks up an
actor another card creates finds it there. Independent cards keep the order they were
given in. A cycle, an unknown dependency or a card depending on itself is an error
naming the cards — never a silently arbitrary order.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence

from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.params import BaseToolParam

__all__ = ["card_label", "matches_dependency", "order_cards", "repeated_capabilities"]


def card_label(cards: Sequence[ToolCard], index: int) -> str:
    """How errors name a card: its class, and its position when the class repeats."""
    name = type(cards[index]).__name__
    if sum(type(card).__name__ == name for card in cards) > 1:
        return f"{name} (tool_cards[{index}])"
    return name


def _capabilities(card: ToolCard) -> dict[type[BaseToolParam], str]:
    """The capabilities ``card`` turns on (each a ``name: Param | bool`` field that is not
    False), by param class, each with its field name."""
    found: dict[type[BaseToolParam], str] = {}
    for name, field in type(card).model_fields.items():
        annotation = field.annotation
        union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
        for option in typing.get_args(annotation) if union else (annotation,):
            if isinstance(option, type) and issubclass(option, BaseToolParam):
                if getattr(card, name) is not False:
                    found[option] = name
                break
    return found


def repeated_capabilities(cards: Sequence[ToolCard], field: str = "tools") -> str | None:
    """Why ``cards`` (the list ``field`` of a card) cannot be one member's tools, or None
    when they can.

    A member has each capability once: two cards turning the same one on would serve
    two tools, commands or context providers of one name, which the factory refuses at
    wiring, i.e. only once the team starts. This says it from the card alone, so a card
    file is refused as it is read. A toolset's members count as the member's own (their
    commands and context are served as if listed on it, and a tool already named
    ``<set>_...`` keeps its name), and two toolsets of one name would name their tools
    alike: both are refused here too, naming both places. An MCP server's tools are known
    only once it runs: the agent says so then (``MCPServerToolset``).
    """
    from akgentic.tool.toolsets.card import ToolsetCard  # it builds on this module

    places: list[tuple[str, ToolCard]] = []
    named: dict[str, str] = {}
    for index, card in enumerate(cards):
        place = f"{field}[{index}] ({type(card).__name__})"
        if not isinstance(card, ToolsetCard):
            places.append((place, card))
            continue
        if card.name in named:
            return (
                f"{place} is named {card.name!r} again, as {named[card.name]} is: its tools "
                f"would be named alike ({card.name}_<verb>). Rename one toolset, or merge "
                f"their cards into one"
            )
        named[card.name] = place
        places += [
            (f"{field}[{index}].cards[{at}] ({type(m).__name__}, in toolset {card.name!r})", m)
            for at, m in enumerate(card.cards)
        ]
    seen: dict[type[BaseToolParam], int] = {}
    for index, (place, card) in enumerate(places):
        capabilities = _capabilities(card)
        first = next((seen[p] for p in capabilities if p in seen), None)
        if first is not None:
            shared = [name for param, name in capabilities.items() if seen.get(param) == first]
            return (
                f"{place} turns on {', '.join(shared)} again, as {places[first][0]} does: a "
                f"member has each capability once. Remove the duplicate card, or turn those "
                f"off on one of them ({shared[0]}: false)"
            )
        for param in capabilities:
            seen.setdefault(param, index)
    return None


def matches_dependency(card: ToolCard, dependency: str | type[ToolCard]) -> bool:
    """Whether ``card`` satisfies ``dependency`` (a class, or a class name in its MRO)."""
    if isinstance(dependency, str):
        return any(klass.__name__ == dependency for klass in type(card).__mro__)
    return isinstance(card, dependency)


def _dependency_name(dependency: str | type[ToolCard]) -> str:
    return dependency if isinstance(dependency, str) else dependency.__name__


def order_cards(cards: Sequence[ToolCard]) -> list[ToolCard]:
    """``cards`` with every card after the cards it depends on; stable otherwise."""
    edges: list[set[int]] = []  # edges[i]: indices card i must come after
    for i, card in enumerate(cards):
        needs: set[int] = set()
        for dependency in card.depends_on():
            found = {j for j, other in enumerate(cards) if matches_dependency(other, dependency)}
            if found == {i}:
                raise ValueError(
                    f"{card_label(cards, i)} depends on itself ({_dependency_name(dependency)!r})"
                )
            found.discard(i)
            if not found:
                present = ", ".join(card_label(cards, j) for j in range(len(cards)))
                raise ValueError(
                    f"{card_label(cards, i)} depends on {_dependency_name(dependency)!r}, "
                    f"which is not among the cards: [{present}]"
                )
            needs |= found
        edges.append(needs)

    placed: list[int] = []
    done: set[int] = set()
    while len(placed) < len(cards):
        ready = next((i for i in range(len(cards)) if i not in done and edges[i] <= done), None)
        if ready is None:
            cycle = _find_cycle(edges, done)
            names = " -> ".join(card_label(cards, i) for i in cycle)
            raise ValueError(f"dependency cycle between cards: {names}")
        placed.append(ready)
        done.add(ready)
    return [cards[i] for i in placed]


def _find_cycle(edges: list[set[int]], done: set[int]) -> list[int]:
    """A cycle among the cards not yet placed (each of them waits on another)."""
    start = next(i for i in range(len(edges)) if i not in done)
    path: list[int] = []
    seen: dict[int, int] = {}
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = min(edges[node] - done)
    cycle = path[seen[node] :]
    return [*cycle, node]
