"""Binding a card to its team's tool actor: get-or-create, in one step.

A stateful card reaches its ``#`` tool actor through the team's orchestrator, at wiring
time, so a card on an agent that is not in a team fails at team creation, not at first
use. Never check-then-create: two agents wiring at once would both create.
"""

from __future__ import annotations

from typing import Any

from akgentic.core import ActorAddress, Akgent, BaseConfig, Orchestrator
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver

__all__ = ["bind_team_actor", "require_team_observer"]


def require_team_observer(observer: ToolObserver, card: str, actor: str) -> ActorToolObserver:
    """``observer`` as an ``ActorToolObserver`` in a team, or a clear error naming ``card``.

    TypeError when it cannot reach actors; ValueError when it belongs to no team.
    """
    if not isinstance(observer, ActorToolObserver):
        raise TypeError(
            f"{card} needs an ActorToolObserver (an agent in a team); "
            f"{type(observer).__name__} is not one"
        )
    if observer.orchestrator is None:
        raise ValueError(
            f"{card} needs an agent in a team, and this one belongs to no team: {actor} "
            f"is a child of the team's orchestrator"
        )
    return observer


def bind_team_actor(
    observer: ActorToolObserver,
    actor_class: type[Akgent[Any, Any]],
    config: BaseConfig,
    timeout: float,
) -> ActorAddress:
    """The team's tool actor named ``config.name``, created if there is none (one step)."""
    assert observer.orchestrator is not None
    orchestrator: Orchestrator = observer.proxy_ask(observer.orchestrator, Orchestrator, timeout)
    address: ActorAddress = orchestrator.getChildrenOrCreate(actor_class, config)
    return address
