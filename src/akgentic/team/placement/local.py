"""LocalPlacement: every team in the manager's own ``ActorSystem``, in this process.

The default, and what the manager always did: the team runs on this process's threads,
its lease is renewed by the manager's heartbeat, and it stops with the process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from pydantic import BaseModel

from akgentic.llm import ModelRoster
from akgentic.team.card import TeamCard
from akgentic.team.placement.protocol import HostedTeam

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager

__all__ = ["LocalPlacement"]


class LocalPlacement:
    """Teams run here; see the module docstring."""

    def create(
        self, manager: TeamManager, card: TeamCard, team_id: UUID, metadata: BaseModel | None
    ) -> HostedTeam:
        return manager._create_here(card, team_id, metadata)

    def resume(
        self,
        manager: TeamManager,
        team_id: UUID,
        model: str | ModelRoster | None,
        retry_interrupted: bool = False,
        wait_for_stop: bool = True,
    ) -> HostedTeam:
        return manager._resume_here(team_id, model, retry_interrupted, wait_for_stop)

    def find(self, manager: TeamManager, team_id: UUID) -> HostedTeam | None:
        return manager._local_team(team_id)

    def running(self, manager: TeamManager) -> list[HostedTeam]:
        return list(manager.local_teams())

    def close(self) -> None:
        return None
