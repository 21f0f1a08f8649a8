"""A real team for TeamTool: a manager agent implementing TeamManagementToolObserver, and a
catalog of role profiles registered on the orchestrator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from akgentic.core import (
    ActorAddress,
    AgentCard,
    Akgent,
    BaseConfig,
    BaseState,
    ResultMessage,
    StopRecursively,
    UserMessage,
)

from ..conftest import AgentStateWithTools, Team


class Manager(Akgent[BaseConfig, AgentStateWithTools]):
    """The hiring agent: records hires, stops fired members with a message (never waits)."""

    refuse_hires = False

    def records(self) -> dict[str, list[ActorAddress]]:
        records: dict[str, list[ActorAddress]] = self.__dict__.setdefault(
            "_records", {"hired": [], "fired": []}
        )
        return records

    def on_hire(self, address: ActorAddress) -> None:
        if self.refuse_hires:
            raise RuntimeError("no budget for new staff")
        self.records()["hired"].append(address)

    def on_fire(self, address: ActorAddress) -> None:
        self.records()["fired"].append(address)
        self.myAddress.send(address, StopRecursively())


class Writer(Akgent[BaseConfig, BaseState]):
    """Answers every request."""

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        if sender is not None:
            self.send(sender, ResultMessage(content=f"done: {msg.content}"))


class Critic(Akgent[BaseConfig, BaseState]):
    """Never answers: it stays busy with whatever it was sent."""

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        pass


CATALOG = [
    AgentCard(
        role="Writer",
        description="Writes drafts",
        skills=["prose"],
        agent_class=Writer,
        config=BaseConfig(name="@Writer", role="Writer"),
        routes_to=["Critic"],
    ),
    AgentCard(role="Critic", description="Reviews drafts", agent_class=Critic),
    AgentCard(role="Ghost", description="Defined nowhere", agent_class="tests.nowhere.Ghost"),
]


@dataclass
class Staffed:
    team: Team
    manager: Manager

    def member(self, name: str) -> ActorAddress | None:
        found: ActorAddress | None = self.team.proxy.get_team_member(name)
        return found

    def names(self) -> list[str]:
        return [a.name for a in self.team.proxy.get_team()]


@pytest.fixture
def staffed(team: Team) -> Staffed:
    team.proxy.register_agent_profiles(CATALOG)
    address = team.system.createActor(
        Manager,
        config=BaseConfig(name="@Manager", role="Manager"),
        team_id=team.orchestrator.team_id,
    )
    manager: Any = team.system.get_actor(address)
    return Staffed(team, manager)
