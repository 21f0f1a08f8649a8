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

import difflib
import sys
from typing import Any

from akgentic.core.serialization import MODEL_MARKER, deserialize
from akgentic.tool.core.card import ToolCard

__all__ = ["card_class", "card_classes", "card_from_data", "unknown_card"]


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
    """The ToolCard subclass named ``name``; otherwise a ValueError saying what to do.

    The error tells the likely mistake apart: a dotted path whose module was never
    imported (list it under the team card's ``imports``), a name that is not a card
    class, a typo (the closest card names), and otherwise lists the known cards.
    """
    classes = card_classes()
    found = classes.get(name)
    if found is None:
        raise ValueError(unknown_card(name, classes))
    return found


def unknown_card(name: str, classes: dict[str, type[ToolCard]]) -> str:
    """One line on why ``name`` names no card here, and what to write instead."""
    short = sorted(n for n in classes if "." not in n)
    module_name, _, attribute = name.rpartition(".")
    if module_name:
        module = sys.modules.get(module_name)
        if module is None:
            return (
                f"unknown tool card {name!r}: its module {module_name!r} is not imported — "
                f"list it under the team card's imports (in Python, import it first)"
            )
        value = getattr(module, attribute, None)
        if value is not None:
            what = f"the class {value.__name__}" if isinstance(value, type) else "not a class"
            return (
                f"{name!r} is not a tool card ({what}, not a subclass of "
                f"akgentic.tool.ToolCard): a tools entry names a card class"
            )
        near = [n for n in classes if "." in n and n.startswith(module_name + ".")]
        hint = _did_you_mean(name, near) or f"module {module_name!r} has no {attribute!r}"
        return f"unknown tool card {name!r}: {hint}"
    hint = _did_you_mean(name, short)
    known = ", ".join(short) or "none"
    lead = f"unknown tool card {name!r}: " + (f"{hint}; " if hint else "")
    return (
        f"{lead}known cards are {known} (a card of your own: its dotted path, with its "
        f"module under imports)"
    )


def _did_you_mean(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=2, cutoff=0.75)
    return "did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


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
