"""Cards named by data: ``{type: PlanningTool, ...}`` in YAML, a stored ``__model__`` dict.

One rule, used wherever a list of cards is read from data (an agent's ``tools``, a
toolset's ``cards``):

- a dict with ``__model__`` is stored data: it is decoded (never importing anything);
- a dict with ``type`` names a card class — its class name or dotted path — and the other
  keys are the card's fields;
- a bare string names a card class built with its defaults;
- anything else (a card already) is left as is, for the field's own validation.

A card class is found among the subclasses of :class:`ToolCard` already defined in this
process: lookup never imports. The agent layer imports the shipped card packages first.
"""

from __future__ import annotations

from typing import Any

from akgentic.core.serialization import MODEL_MARKER, deserialize
from akgentic.tool.core.card import ToolCard

__all__ = ["card_class", "card_classes", "card_from_data"]


def card_classes() -> dict[str, type[ToolCard]]:
    """Every defined ToolCard subclass, by class name and by dotted path."""
    found: dict[str, type[ToolCard]] = {}
    stack: list[type[ToolCard]] = [ToolCard]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            found.setdefault(sub.__name__, sub)
            found[f"{sub.__module__}.{sub.__qualname__}"] = sub
            stack.append(sub)
    return found


def card_class(name: str) -> type[ToolCard]:
    """The ToolCard subclass named ``name``; ValueError listing the known cards otherwise."""
    classes = card_classes()
    found = classes.get(name)
    if found is None:
        known = ", ".join(sorted(n for n in classes if "." not in n)) or "none"
        raise ValueError(f"unknown tool card {name!r}: known cards are {known}")
    return found


def card_from_data(item: Any) -> Any:
    """One item of a card list, as a card when the data names one (see module docstring)."""
    if isinstance(item, dict) and MODEL_MARKER in item:
        return deserialize(item)
    if isinstance(item, dict) and "type" in item:
        fields = {k: v for k, v in item.items() if k != "type"}
        return card_class(str(item["type"])).model_validate(fields)
    if isinstance(item, str):
        return card_class(item)()
    return item
