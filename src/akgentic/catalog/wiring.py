"""Naming catalog instances in a team card: ``CatalogTool(instance="web_search")``.

A team card lists ``CatalogTool(instance=...)`` among an agent's tools — in YAML,
``{type: CatalogTool, instance: web_search}`` — instead of an inline card. All that is
ever serialized is the instance's name: the team card, the agents' start events in the
log and their states carry no config and no credential. At wiring time (the agent's
``ToolFactory`` attaching its observer) the card asks the catalog bound to the agent's
actor system for the instance (``CatalogService.resolve_card``): the type's card, built
from the instance's config, its credential opened and handed to ``bind_credential`` —
held in the built card's private attributes only. Every hook then serves the built card.

Creating a team checks every named instance first (``TeamManager.create_team``): an
unknown, disabled or orphaned instance, a missing key or credential is an error then,
naming what to do. Later wiring (a restore, a hire) degrades instead, as removing an added
tool should: the agent starts without that tool, the reason is logged and published as a
:class:`CatalogToolUnavailable` event, never with a secret in it.

The catalog is bound per actor system (:func:`bind_catalog`), which ``TeamManager`` does
for its storage: it is the system's service directory (``akgentic.tool.core.services``),
which the vector store asks too, for a named cluster or embeddings endpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, Self

from pydantic import Field, PrivateAttr

from akgentic.catalog.errors import CatalogError, CatalogUnavailableError
from akgentic.catalog.service import CatalogService
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core import BaseToolParam, ContextState, ToolCard, ToolObserver
from akgentic.tool.core.params import attach_param, param_of
from akgentic.tool.core.services import bind_services, services_for, unbind_services
from akgentic.tool.vector_store import VectorStoreParam

__all__ = [
    "CatalogTool",
    "CatalogToolUnavailable",
    "bind_catalog",
    "catalog_for",
    "catalog_tools",
    "named_services",
    "unbind_catalog",
]

logger = logging.getLogger("akgentic.catalog")


def bind_catalog(system: Any, catalog: CatalogService) -> None:
    """Make ``catalog`` the one the cards of ``system`` (an ActorSystem) resolve
    ``CatalogTool`` instances and named services (a vector cluster, an embeddings endpoint)
    from: the tool layer's service directory of ``system`` (the last binding wins; held
    while ``system`` lives)."""
    bind_services(system, catalog)


def unbind_catalog(system: Any) -> None:
    """Forget the catalog bound to ``system`` (idempotent)."""
    unbind_services(system)


def catalog_for(observer: Any) -> CatalogService:
    """The catalog bound to the actor system of ``observer`` (an agent);
    :class:`CatalogUnavailableError` saying how to bind one."""
    found = services_for(observer)
    if not isinstance(found, CatalogService):
        raise CatalogUnavailableError(
            "no tool catalog is bound to this agent's actor system: create the team "
            "with TeamManager (which binds its storage's catalog), or call "
            "akgentic.catalog.bind_catalog(system, CatalogService(storage))"
        )
    return found


class CatalogToolUnavailable(SerializableModel):
    """Published when an agent starts without a catalog tool it names, and why."""

    instance: str
    agent: str
    reason: str


class CatalogTool(ToolCard):
    """A tool named by its catalog instance (`akgentic catalog list`): only the name is in
    the card; the agent gets the instance's card, built from the config and credential an
    admin stored, when it is enabled for agents. Creating a team refuses an instance that
    cannot serve; a resume or a hire starts the agent without it and says why (a
    `CatalogToolUnavailable` event).

    See the module docstring.
    """

    instance: str = Field(min_length=1)
    """The catalog instance (``akgentic catalog list``), enabled for agents."""

    _card: ToolCard | None = PrivateAttr(default=None)

    def observer(self, observer: ToolObserver) -> Self:
        """Resolve the instance and wire the built card; degrade (serve nothing) with a
        :class:`CatalogToolUnavailable` event when the catalog refuses."""
        super().observer(observer)
        self._card = None
        try:
            card = catalog_for(observer).resolve_card(self.instance)
        except CatalogError as exc:
            agent = str(getattr(getattr(observer, "config", None), "name", "") or "")
            logger.warning("%s starts without catalog tool %r: %s", agent, self.instance, exc)
            observer.notify_event(
                CatalogToolUnavailable(instance=self.instance, agent=agent, reason=str(exc))
            )
            return self
        card.join_toolset(self._toolset)  # a grouped instance names its tools as the set does
        card.observer(observer)
        self._card = card
        return self

    def join_toolset(self, toolset: str | None) -> None:
        """Its set is the built card's too: the texts that card writes name its tools."""
        super().join_toolset(toolset)
        if self._card is not None:
            self._card.join_toolset(toolset)

    @property
    def card(self) -> ToolCard | None:
        """The built card once wired (None before, or when unavailable)."""
        return self._card

    def get_tools(self) -> list[Callable[..., Any]]:
        card = self._card
        if card is None:
            return []
        tools = card.get_tools()
        for fn in tools:  # the factory pairs params by field name on *this* card: pair here
            value = getattr(card, getattr(fn, "__name__", ""), None)
            if param_of(fn) is None and isinstance(value, BaseToolParam):
                attach_param(fn, value)
        return tools

    def get_system_prompts(self) -> list[Callable[[], str]]:
        return [] if self._card is None else self._card.get_system_prompts()

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        return [] if self._card is None else self._card.get_context_states()

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        return {} if self._card is None else self._card.get_commands()

    def get_toolsets(self) -> list[Any]:
        return [] if self._card is None else self._card.get_toolsets()


def catalog_tools(tools: Iterable[Any]) -> list[CatalogTool]:
    """The :class:`CatalogTool` entries among ``tools`` (an agent config's cards)."""
    return [tool for tool in tools if isinstance(tool, CatalogTool)]


def named_services(tools: Iterable[Any]) -> list[tuple[str, str]]:
    """``(field, name)`` of each catalog service ``tools`` (an agent config's cards)
    name, in order, each name once: a consumer card's vector cluster
    (``PlanningTool's vector_store.cluster``) and embeddings endpoint
    (``… vector_store.embedding.instance``). The field is said with the name so that a
    refused instance names the line of the card to fix, not only the value."""
    found: dict[str, str] = {}
    for tool in tools:
        param = getattr(tool, "vector_store", None)
        if not isinstance(param, VectorStoreParam):
            continue
        card = f"{type(tool).__name__}'s vector_store"
        embedding = param.embedding.instance if param.embedding is not None else None
        for field, name in ((".cluster", param.cluster), (".embedding.instance", embedding)):
            if name:
                found.setdefault(name, card + field)
    return [(field, name) for name, field in found.items()]
