"""Cards named by data: ``{type: PlanningTool, ...}`` in YAML, a stored ``__model__`` dict.

One rule, used wherever a list of cards is read from data (an agent's ``tools``, a
toolset's ``cards``):

- a dict with ``__model__`` is stored data: it is decoded (never importing anything);
- a dict with ``type`` names a card class — its class name or dotted path — and the other
  keys are the card's fields;
- a bare string names a card class built with its defaults;
- anything else (a card already) is left as is, for the field's own validation.

Where a card class is found, in order:

1. among the subclasses of :class:`ToolCard` already defined in this process (the agent
   layer imports the shipped card packages first; a YAML team card's ``imports`` are
   imported before it is read). A class name two of them share (a card of your own
   named like a shipped one) names neither: the error lists their dotted paths, which
   always work — the first one defined is not silently picked;
2. among the cards installed distributions declare in the entry-point group
   ``akgentic.tools`` (``jira = "acme_tools.jira:JiraTool"``): a name matches an entry
   point by the entry point's name (``jira``), by the class it names (``JiraTool``, or
   its dotted path), or by a class its module declares (``acme = "acme_tools.cards"``;
   a module's classes are known only once it is loaded, so a class name that matched
   nothing else loads the module entry points to look among their declared classes).
   Only a matching entry point is loaded.

The security principle: data picks among the entry points installed distributions
declare, never imports a module it names. Loading an entry point runs code an installed
distribution declared (what the catalog's discovery does at start); a dotted path whose
module is not imported, and which no entry point declares, stays an error. Data from
further away than the operator's own files — a card posted to a server — finds only the
cards already defined (:func:`defined_cards_only`): a client may not make the server load
a distribution, whose card's fields the server's posted-card policy does not know.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.metadata import EntryPoint
from types import ModuleType
from typing import Any, cast

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from akgentic.core.excerpt import exception_line
from akgentic.core.serialization import MODEL_MARKER, deserialize
from akgentic.core.words import did_you_mean
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.installed import (
    ENTRY_POINT_GROUP,
    describe,
    installed_entry_points,
    load_entry_point,
)

__all__ = [
    "card_class",
    "card_classes",
    "card_from_data",
    "cards_from_data",
    "defined_cards_only",
    "installed_card",
    "unknown_card",
]

logger = logging.getLogger(__name__)

_installed_allowed: ContextVar[bool] = ContextVar("akgentic_installed_cards", default=True)
_among: ContextVar[frozenset[type[ToolCard]] | None] = ContextVar(
    "akgentic_cards_among", default=None
)


@contextmanager
def defined_cards_only(among: Collection[type[ToolCard]] | None = None) -> Iterator[None]:
    """Within it, a card name finds only the card classes this process has defined, never
    an installed entry point: how a server reads a card a client posts. With ``among``,
    only those classes (a server's: the cards it started with), so that a class loaded
    later — say one of the same class name — neither answers to a name nor makes a
    name ambiguous."""
    token = _installed_allowed.set(False)
    among_token = _among.set(None if among is None else frozenset(among))
    try:
        yield
    finally:
        _among.reset(among_token)
        _installed_allowed.reset(token)


def card_classes() -> dict[str, type[ToolCard]]:
    """Every defined ToolCard subclass by dotted path, and by class name when no other
    defined card has that class name (an ambiguous class name is left out: see
    :func:`card_class`)."""
    return _names()[0]


def _names() -> tuple[dict[str, type[ToolCard]], dict[str, list[str]]]:
    """:func:`card_classes`, and the dotted paths of each class name two or more defined
    cards share."""
    by_path = _defined_cards()
    paths: dict[str, list[str]] = {}
    for path in sorted(by_path):
        paths.setdefault(by_path[path].__name__, []).append(path)
    found = {n: by_path[same[0]] for n, same in paths.items() if len(same) == 1}
    found.update(by_path)
    return found, {n: same for n, same in paths.items() if len(same) > 1}


def _defined_cards() -> dict[str, type[ToolCard]]:
    """Every defined ToolCard subclass by its dotted path (only those of
    :func:`defined_cards_only`'s ``among``, when given). A class defined again under the
    same path (a module reloaded, a test's class made twice) replaces the earlier one, as
    it does in the serialization registry: the two do not compete for a name."""
    among = _among.get()
    found: dict[str, type[ToolCard]] = {}
    stack: list[type[ToolCard]] = [ToolCard]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            if among is None or sub in among:
                found[f"{sub.__module__}.{sub.__qualname__}"] = sub
            stack.append(sub)
    return found


def _exported(name: str, classes: dict[str, type[ToolCard]]) -> type[ToolCard] | None:
    """The card a dotted path names through a module that re-exports it
    (``akgentic.tool.planning.PlanningTool`` for the class defined in a submodule), when
    it is one of ``classes``."""
    module_name, _, attribute = name.rpartition(".")
    module = sys.modules.get(module_name) if module_name else None
    value = _attribute(module, attribute)
    return value if isinstance(value, type) and value in classes.values() else None


def card_class(name: str) -> type[ToolCard]:
    """The ToolCard subclass named ``name`` (see the module docstring for where it is
    looked for); otherwise a ValueError saying what to do.

    A class name two defined cards share names neither: the error lists their dotted
    paths, one of which the author writes instead. The error tells the likely mistake
    apart: an entry point that fails to load (naming it, its distribution and the cause),
    a dotted path whose module was never imported (list it under the team card's
    ``imports``), a name that is not a card class, a typo (the closest card names), and
    otherwise lists the cards that may be named.
    """
    classes, ambiguous = _names()
    same = ambiguous.get(name)
    if same:
        raise ValueError(
            f"tool card {name!r} is ambiguous: {len(same)} loaded cards have that class "
            f"name ({', '.join(same)}); write the dotted path of the one you mean"
        )
    found = classes.get(name) or _exported(name, classes)
    if found is None and _installed_allowed.get():
        found = installed_card(name)
    if found is None:
        raise ValueError(unknown_card(name, classes))
    return found


def installed_card(name: str) -> type[ToolCard] | None:
    """The card an ``akgentic.tools`` entry point declares under ``name``, loading only a
    matching entry point (see the module docstring); None when none matches. A matching
    entry point that fails to load, or that names no card, is a one-line ValueError
    naming it and its distribution."""
    eps = installed_entry_points()
    for ep in eps:
        if ep.name == name:
            return _card_of(ep, name)
    module_name, _, attribute = name.rpartition(".")
    for ep in eps:
        if ep.attr and name in (_class_name(ep), f"{ep.module}.{ep.attr}"):
            return _card_of(ep, name)
        if not ep.attr and module_name and ep.module == module_name:
            _load(ep, name)  # the module is imported now: unknown_card explains a miss
            value = _attribute(sys.modules.get(ep.module), attribute)
            return value if isinstance(value, type) and issubclass(value, ToolCard) else None
    if module_name:
        return None
    for ep in eps:  # a bare class name: the classes the module entry points declare
        if not ep.attr:
            try:
                loaded = load_entry_point(ep)
            except Exception as exc:  # not this name's entry point: its failure is not this error
                logger.warning("tool card %r: skipped %s: %s", name, describe(ep), _cause(exc))
                continue
            for cls in loaded:
                if cls.__name__ == name and issubclass(cls, ToolCard):
                    return cast("type[ToolCard]", cls)
    return None


def _class_name(ep: EntryPoint) -> str:
    return ep.attr.rpartition(".")[2]


def _card_of(ep: EntryPoint, name: str) -> type[ToolCard]:
    """The one card ``ep`` declares (``name`` matched it)."""
    loaded = _load(ep, name)
    cards = [c for c in loaded if isinstance(c, type) and issubclass(c, ToolCard)]
    if len(cards) == 1:
        return cards[0]
    if not cards:
        raise ValueError(_not_a_card(ep, name, loaded))
    names = ", ".join(c.__name__ for c in cards)
    raise ValueError(
        f"tool card {name!r}: {describe(ep)} declares several cards ({names}): name one of "
        f"them by its class name"
    )


def _not_a_card(ep: EntryPoint, name: str, loaded: list[Any]) -> str:
    what = ", ".join(c.__name__ if isinstance(c, type) else type(c).__name__ for c in loaded)
    return (
        f"{name!r} is not a tool card: {describe(ep)} declares {what}, not a subclass of "
        f"akgentic.tool.ToolCard (a tools entry names a card class)"
    )


def _load(ep: EntryPoint, name: str) -> list[Any]:
    try:
        return load_entry_point(ep)
    except Exception as exc:
        raise ValueError(
            f"tool card {name!r}: {describe(ep)} failed to load: {_cause(exc)} "
            f"(fix or reinstall that distribution)"
        ) from None


def _cause(exc: Exception) -> str:
    return exception_line(exc, 200)


def unknown_card(name: str, classes: dict[str, type[ToolCard]]) -> str:
    """One line on why ``name`` names no card here, and what to write instead.

    Under :func:`defined_cards_only` it offers only what a posted card may name (the
    cards the server started with), and how the operator makes a card nameable: never an
    entry point or an ``imports`` line, which a posted card cannot use.
    """
    if _installed_allowed.get():
        return _unknown(name, classes, posted=False)
    return (
        _unknown(name, classes, posted=True) + "; a posted card names only the cards the "
        "server started with (the operator adds one by starting the server with its module: "
        "akgentic serve --import MODULE, or with a card that uses it: --cards; or lets posted "
        "cards use every loaded one: --allow-posted cards)"
    )


def _attribute(module: Any, attribute: str) -> Any:
    """``module``'s own ``attribute``, or None: read from its namespace, so that a name
    from data never runs a module's ``__getattr__`` (which may import, or raise)."""
    return vars(module).get(attribute) if isinstance(module, ModuleType) else None


def _unknown(name: str, classes: dict[str, type[ToolCard]], *, posted: bool) -> str:
    module_name, _, attribute = name.rpartition(".")
    if module_name:
        module = sys.modules.get(module_name)
        if module is None and posted:
            return f"unknown tool card {name!r}: its module {module_name!r} is not loaded"
        if module is None:
            return (
                f"unknown tool card {name!r}: its module {module_name!r} is not imported — "
                f"list it under the team card's imports (in Python, import it first)"
            )
        value = _attribute(module, attribute)
        if posted and isinstance(value, type) and issubclass(value, ToolCard):  # not among
            return f"unknown tool card {name!r}: the server did not start with it"
        if value is not None:
            what = f"the class {value.__name__}" if isinstance(value, type) else "not a class"
            return (
                f"{name!r} is not a tool card ({what}, not a subclass of "
                f"akgentic.tool.ToolCard): a tools entry names a card class"
            )
        near = [n for n in classes if "." in n and n.startswith(module_name + ".")]
        hint = did_you_mean(name, near) or f"module {module_name!r} has no {attribute!r}"
        return f"unknown tool card {name!r}: {hint}"
    names = sorted(  # each card by its class name, or by its dotted path if that is ambiguous
        {c.__name__ if classes.get(c.__name__) is c else p for p, c in classes.items() if "." in p}
    )
    known = ", ".join(names) or "none"
    eps = [] if posted else installed_entry_points()
    offered = [ep.name for ep in eps] + [_class_name(ep) for ep in eps if ep.attr]
    hint = did_you_mean(name, names + offered)
    lead = f"unknown tool card {name!r}: " + (f"{hint}; " if hint else "")
    if posted:
        return f"{lead}known cards are {known}"
    installed = [f"{ep.name} ({_class_name(ep)})" if ep.attr else ep.name for ep in eps]
    from_entry_points = (
        f"; installed ({ENTRY_POINT_GROUP} entry points): {', '.join(installed)}"
        if installed
        else ""
    )
    return (
        f"{lead}known cards are {known}{from_entry_points} (a card of your own: its dotted "
        f"path, with its module under imports, or an {ENTRY_POINT_GROUP} entry point of "
        f"an installed distribution)"
    )


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


def cards_from_data(items: list[Any]) -> list[Any]:
    """A card list, each item through :func:`card_from_data`. A card that does not
    validate keeps its position in the error: ``tools[1].max_amount``, not
    ``tools.max_amount`` (which of two cards of one type is wrong); every card that does
    not is in the one error raised, so a list with two mistakes is fixed in one go."""
    cards: list[Any] = []
    details: list[InitErrorDetails] = []
    title = "ToolCard"
    for index, item in enumerate(items):
        try:
            cards.append(card_from_data(item))
        except ValidationError as exc:
            title = exc.title if not details else title
            details += [
                {
                    "type": PydanticCustomError(e["type"], e["msg"]),
                    "loc": (index, *e["loc"]),
                    "input": e["input"],
                }
                for e in exc.errors(include_url=False)
            ]
        except ValueError as exc:  # its type names no card: said beside the others
            details.append(
                {
                    "type": PydanticCustomError("value_error", "{reason}", {"reason": str(exc)}),
                    "loc": (index, "type"),
                    "input": item.get("type") if isinstance(item, dict) else item,
                }
            )
    if details:
        raise ValidationError.from_exception_data(title, details)
    return cards
