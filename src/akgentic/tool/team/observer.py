"""TeamManagementToolObserver: TeamTool's own contract with the agent that hosts it.

It extends ``ActorToolObserver`` (TeamTool asks the orchestrator through ``proxy_ask``) and
adds what changing the team's membership takes: creating an actor, and being told of a hire
and a fire. It is Internal-tier — TeamTool's contract, moving with TeamTool — and is
implemented by the agent layer (akgentic-agent); ``Akgent`` already provides
``createActor`` and ``team_revision``.

``@runtime_checkable`` is kept although it is inherited (and so inert here); the
conformance guard is proven by removing a member, never the decorator.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from akgentic.core.address import ActorAddress
from akgentic.core.agent import Akgent
from akgentic.core.agent_config import BaseConfig
from akgentic.tool.core.observer import ActorToolObserver

__all__ = ["TeamManagementToolObserver"]


@runtime_checkable
class TeamManagementToolObserver(ActorToolObserver, Protocol):
    """An actor observer that can create team members and is told of hires and fires."""

    def createActor(
        self,
        actor_class: type[Akgent[Any, Any]],
        agent_id: UUID | None = None,
        config: BaseConfig | None = None,
    ) -> ActorAddress:
        """Create ``actor_class`` as a child of the observing agent, in its team.

        ``Akgent.createActor`` is this method. TeamTool calls it with the role profile's
        class and a copy of its config whose ``name`` is unique in the team.
        """
        ...

    def on_hire(self, address: ActorAddress) -> None:
        """TeamTool has just created ``address`` from a role profile; record the hire.

        Called once per member hired, after it started. Should not block. If it raises,
        TeamTool reports that hire as failed and calls :meth:`on_fire` to undo it.
        """
        ...

    def on_fire(self, address: ActorAddress) -> None:
        """Stop the member at ``address`` and forget it.

        TeamTool has checked that ``address`` is a running, regular member of this team —
        not the agent itself, not the orchestrator, not a ``#`` tool actor, not a person.
        Must not wait for the member to stop (send it a stop message), and should stop it
        promptly, not after the messages queued for it (``BaseAgent.on_fire`` cuts its turn
        first, its waiting senders told). If it raises, the fire is reported as failed to
        the model.
        """
        ...

    @property
    def team_revision(self) -> int:
        """Moves whenever the team's members or role catalog may have changed; while it
        stays the same, TeamTool reuses the roster and catalog it last asked for.
        ``Akgent`` provides it."""
        ...
