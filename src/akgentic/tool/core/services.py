"""The services an actor system offers its cards by name: the catalog's instances.

The tool layer never imports the catalog (``akgentic.catalog`` builds on it), yet a card
may name a configured service — a vector cluster, an embeddings endpoint — that only the
catalog can build, with its credential bound. So the catalog registers itself here, per
actor system (``akgentic.catalog.bind_catalog`` does, and ``TeamManager`` calls that), as
a :class:`ServiceDirectory`; a card wired to an agent or a tool actor of that system asks
:func:`services_for` its observer.

The directory's contract is ``CatalogService.resolve``: the built instance, enabled for
``surface``, or an exception whose message says what to do (and never holds a secret).
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

__all__ = ["ServiceDirectory", "bind_services", "services_for", "unbind_services"]


class ServiceDirectory(Protocol):
    """What resolves a named instance: ``CatalogService`` is the one shipped."""

    def resolve(self, name: str, surface: str = "agents") -> Any:
        """The instance ``name`` built for ``surface``; raises saying why not."""
        ...


_directories: weakref.WeakKeyDictionary[Any, ServiceDirectory] = weakref.WeakKeyDictionary()


def bind_services(system: Any, directory: ServiceDirectory) -> None:
    """Make ``directory`` the one the cards of ``system`` (an ActorSystem) resolve named
    services from (the last binding wins; held while ``system`` lives)."""
    _directories[system] = directory


def unbind_services(system: Any) -> None:
    """Forget the directory bound to ``system`` (idempotent)."""
    _directories.pop(system, None)


def services_for(observer: Any) -> ServiceDirectory | None:
    """The directory bound to the actor system of ``observer`` (an agent or a tool actor:
    anything with a ``system``), or None."""
    system = getattr(observer, "system", None)
    if system is None:
        return None
    try:
        return _directories.get(system)
    except TypeError:  # not an object a binding could be keyed by
        return None
