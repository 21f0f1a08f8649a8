"""What installed distributions declare: the entry-point group ``akgentic.tools``.

A distribution makes its types available without touching the platform::

    [project.entry-points."akgentic.tools"]
    jira = "acme_tools.jira:JiraTool"    # a class
    acme = "acme_tools.cards"            # a module: every class it declares

A class is *declared* when ``akgentic.catalog.register_tool`` marks it. Two readers share
these helpers, which is why they live in the tool layer (the catalog builds on it, never
the reverse): the catalog's discovery loads every entry point at start, and card lookup
(``akgentic.tool.core.lookup``) loads only the entry point a card's name matches.
Loading an entry point imports code that an installed distribution declares: nothing here
imports a module that data names.
"""

from __future__ import annotations

import inspect
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

__all__ = [
    "ENTRY_POINT_GROUP",
    "declared_in",
    "describe",
    "installed_entry_points",
    "is_declared",
    "load_entry_point",
    "mark_declared",
]

ENTRY_POINT_GROUP = "akgentic.tools"
"""The entry-point group under which distributions declare their cards and services."""

_MARK = "__akgentic_tool__"


def mark_declared(cls: type[Any]) -> None:
    """Mark ``cls`` as declared (what ``register_tool`` does once the contract holds)."""
    setattr(cls, _MARK, True)


def is_declared(value: Any) -> bool:
    """Whether ``value`` is a class marked declared itself (a subclass of a declared
    class is not, until it is declared too)."""
    return isinstance(value, type) and value.__dict__.get(_MARK, False) is True


def declared_in(module: ModuleType) -> list[type[Any]]:
    """The classes ``module`` itself defines and declares."""
    return [
        value
        for _, value in inspect.getmembers(module, is_declared)
        if value.__module__ == module.__name__
    ]


def installed_entry_points(group: str = ENTRY_POINT_GROUP) -> list[EntryPoint]:
    """The group's entry points in the installed distributions, by name; reading them
    imports nothing (it reads the distributions' metadata)."""
    return sorted(entry_points(group=group), key=lambda ep: ep.name)


def describe(ep: EntryPoint) -> str:
    """``entry point jira = acme_tools.jira:JiraTool (acme-tools 1.0)``: where a type comes
    from, for an error or a catalog listing."""
    dist = ep.dist
    where = f" ({dist.name} {dist.version})" if dist is not None else ""
    return f"entry point {ep.name} = {ep.value}{where}"


def load_entry_point(ep: EntryPoint) -> list[Any]:
    """What ``ep`` declares: the object it names, or every class its module declares.

    Imports ``ep``'s module (installed code the distribution declares); whatever that
    raises is raised, and a module that declares nothing is a TypeError.
    """
    loaded = ep.load()
    if not isinstance(loaded, ModuleType):
        return [loaded]
    classes = declared_in(loaded)
    if not classes:
        raise TypeError(f"module {loaded.__name__} declares no type (@register_tool)")
    return list(classes)
