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
import logging
from collections.abc import Iterable, Iterator
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType
from typing import Any

from akgentic.core.excerpt import exception_line
from akgentic.core.serialization import (
    MODEL_MARKER,
    SerializationError,
    deserialize,
    registered_class,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "declared_in",
    "describe",
    "deserialize_installed",
    "installed_entry_points",
    "is_declared",
    "load_declaring",
    "load_entry_point",
    "load_named_by",
    "mark_declared",
]

logger = logging.getLogger("akgentic.tool")

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


def load_declaring(paths: Iterable[str]) -> list[EntryPoint]:
    """Load the installed entry points whose module holds one of ``paths`` (stored
    ``__model__`` markers): the classes a stored team's card names, in a process that has
    not imported the distribution that declares them. A path only picks among declared
    entry points, as a card's name does in a team card; one that fails to load is logged
    and skipped (the decoding's own error then names what is missing). Returns the entry
    points loaded."""
    modules = {path.rpartition(".")[0] for path in paths}
    loaded: list[EntryPoint] = []
    for ep in installed_entry_points():
        if not any(m == ep.module or m.startswith(f"{ep.module}.") for m in modules):
            continue
        try:
            load_entry_point(ep)
        except Exception as exc:
            logger.warning("%s failed to load: %s", describe(ep), exception_line(exc))
            continue
        loaded.append(ep)
    return loaded


def load_named_by(data: Any) -> list[EntryPoint]:
    """Load the installed entry points that declare the classes stored ``data`` names
    (its ``__model__`` markers) and this process has not registered (:func:`load_declaring`):
    what reading a stored team — its card, its log — needs in a process that has not
    imported its cards' distributions. Returns the entry points loaded."""
    missing = [path for path in _markers(data) if not _registered(path)]
    return load_declaring(missing) if missing else []


def deserialize_installed(data: Any) -> Any:
    """``deserialize(data)`` of stored data (a team card) that may name classes an
    installed distribution declares: when some are not registered in this process, the
    entry points that declare them are loaded (:func:`load_named_by`) and the data is
    decoded again. Raises what ``deserialize`` raises when that does not help."""
    try:
        return deserialize(data)
    except SerializationError:
        if not load_named_by(data):
            raise
    return deserialize(data)


def _markers(data: Any) -> Iterator[str]:
    """Every ``__model__`` marker in JSON-like ``data`` (iteratively: no recursion)."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            marker = value.get(MODEL_MARKER)
            if isinstance(marker, str):
                yield marker
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _registered(path: str) -> bool:
    try:
        registered_class(path)
    except SerializationError:
        return False
    return True
