"""Binding a card to its team's tool actor: get-or-create, in one step.

A stateful card reaches its ``#`` tool actor through the team's orchestrator, at wiring
time, so a card on an agent that is not in a team fails at team creation, not at first
use. Never check-then-create: two agents wiring at once would both create.

Wiring also waits until the actor has started: one whose construction or ``on_start``
raised (a directory it cannot open, a store it cannot reach, a restored state it
refuses) fails the wiring with an ``ActorStartError`` naming it and the cause, so the
agent does not start and neither does its team (or its resume) — no agent is left
wired to a stopped actor, failing only when a tool is called.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from akgentic.core import (
    ActorAddress,
    ActorAddressImpl,
    AddressError,
    Akgent,
    AskTimeoutError,
    BaseConfig,
    Orchestrator,
)
from akgentic.core.excerpt import clip
from akgentic.core.orchestrator import TOOL_PREFIX
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver
from akgentic.tool.errors import RetriableError

__all__ = [
    "START_TIMEOUT",
    "ask_tool_actor",
    "bind_team_actor",
    "require_team_observer",
    "require_tool_actor_name",
]

logger = logging.getLogger("akgentic.tool")

A = TypeVar("A")
T = TypeVar("T")


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


def require_tool_actor_name(name: str, what: str) -> None:
    """Refuse a tool actor ``name`` without the ``#`` prefix; ``what`` says which actor.

    The prefix is a teardown invariant, not a convention: the orchestrator stops ``#``
    actors only once no regular member remains, so an actor named without it would count
    as a regular member (torn down while agents still call it, or holding its siblings'
    stop behind it). ValueError, raised before anything is created.
    """
    if not name.startswith(TOOL_PREFIX):
        raise ValueError(
            f"{what} {name!r} must be named with a leading {TOOL_PREFIX!r}: the orchestrator "
            f"tells tool actors from regular members by that prefix and stops them last"
        )


START_TIMEOUT = 30.0
"""Seconds :func:`bind_team_actor` waits for a tool actor's ``on_start`` (less than the
team manager waits for a member's, ``MEMBER_START_TIMEOUT``: the slow tool actor is
the one named)."""


def bind_team_actor(
    observer: ActorToolObserver,
    actor_class: type[Akgent[Any, Any]],
    config: BaseConfig,
    timeout: float,
) -> ActorAddress:
    """The team's tool actor named ``config.name``, created if there is none (one step),
    once its ``on_start`` has run.

    ``timeout`` bounds the ask to the orchestrator. The wait for the start does not queue
    behind the actor's messages, and is bounded by :data:`START_TIMEOUT`: an actor that
    could not start is an ``ActorStartError`` naming it and the cause, raised here. A
    ``config.name`` without the ``#`` prefix is a ValueError (:func:`require_tool_actor_name`).
    """
    assert observer.orchestrator is not None
    require_tool_actor_name(config.name, "a tool actor")
    orchestrator: Orchestrator = observer.proxy_ask(observer.orchestrator, Orchestrator, timeout)
    address: ActorAddress = orchestrator.getChildrenOrCreate(actor_class, config)
    if isinstance(address, ActorAddressImpl):
        address.wait_started(START_TIMEOUT)
    return address


def ask_tool_actor(
    observer: ActorToolObserver,
    address: ActorAddress,
    actor_class: type[A],
    call: Callable[[A], T],
    *,
    what: str,
    label: str,
    timeout: float,
) -> T:
    """``call`` on an ask proxy of the tool actor at ``address``, for a tool callable.

    Every failure becomes a ``RetriableError`` that tells the model what to do — a slow
    actor (retry once), a stopped one (the team is shutting down, or the actor failed to
    start: do not retry), anything
    else (retry, report if it persists). ``what`` names the operation, ``label`` the actor
    as the model should read it (e.g. ``"The team plan (#PlanningTool)"``).
    """
    try:
        return call(observer.proxy_ask(address, actor_class, timeout))
    except RetriableError:
        raise
    except AskTimeoutError:
        raise RetriableError(
            f"{label} did not answer {what} within {timeout:.0f}s. Try once more; if it "
            f"fails again, report that it is unavailable."
        ) from None
    except AddressError:
        raise RetriableError(
            f"{label} has stopped (the team is shutting down, or it failed to start: its "
            f"error is on the team stream). Do not retry; finish your answer without it."
        ) from None
    except Exception as exc:
        logger.exception("%s failed", what)
        raise RetriableError(
            f"{what} failed ({type(exc).__name__}: {clip(str(exc))}). Try again; report it if "
            f"it persists."
        ) from exc
