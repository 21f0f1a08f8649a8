"""A new team whose member cannot start is refused at creation, with that member's own
reason, and leaves nothing behind: no actor running, no record, no lease."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import uuid4

import pytest

from akgentic.agent import AgentConfig
from akgentic.core import ActorSystem, AgentCard
from akgentic.storage import open_storage
from akgentic.team import MemberSpec, TeamCard, TeamManager, TeamStartError, team_resource
from akgentic.tool.core import BaseToolParam, ToolCard


class Undocumented(ToolCard):
    """A card whose tool has no docstring: the agent's factory refuses it at start-up."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def tally(amount: int) -> int:
            return amount

        return [tally]


class Reset(BaseToolParam):
    pass


class UndocumentedCommand(ToolCard):
    """A card whose command has no docstring: ``/help`` could not describe it."""

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        def tally_reset(name: str) -> str:
            return name

        return {Reset: tally_reset}


def member(
    name: str,
    *,
    broken: bool = False,
    parent: list[MemberSpec] | None = None,
    card: ToolCard | None = None,
) -> MemberSpec:
    tools = [card or Undocumented()] if broken else []
    config = AgentConfig(name=name, role=name[1:], tools=tools)
    card = AgentCard(role=name[1:], agent_class="akgentic.agent.agent.BaseAgent", config=config)
    return MemberSpec(card=card, members=parent or [])


@pytest.mark.parametrize("where", ["root", "hired by another member"])
def test_a_member_that_cannot_start_is_refused_and_nothing_is_left(
    storage_url: str, where: str
) -> None:
    broken = member("@Counter", broken=True)
    members = [broken] if where == "root" else [member("@Lead", parent=[broken])]
    card = TeamCard(name="tally", entry_point=members[0].card.config.name, members=members)
    system = ActorSystem()
    storage = open_storage(storage_url)
    team_id = uuid4()
    try:
        manager = TeamManager(system, storage)
        with pytest.raises(TeamStartError) as info:
            manager.create_team(card, team_id=team_id)
        message = str(info.value)
        assert message.startswith("team tally: @Counter could not start: ")
        assert "'tally' has no docstring" in message
        assert "\n" not in message
        assert info.value.member == "@Counter"
        assert manager.list_teams() == []  # nothing to list or resume
        assert manager.running() == []
        orchestrator = system.get_orchestrator(team_id)  # a stopped team's is forgotten
        assert orchestrator is None or not orchestrator.is_alive()
        assert storage.leases.inspect(team_resource(team_id)) is None
    finally:
        system.shutdown(10)


def test_a_card_with_an_undocumented_command_fails_to_wire_naming_the_card_and_command(
    storage_url: str,
) -> None:
    broken = member("@Counter", broken=True, card=UndocumentedCommand())
    card = TeamCard(name="tally", entry_point="@Counter", members=[broken])
    system = ActorSystem()
    storage = open_storage(storage_url)
    try:
        manager = TeamManager(system, storage)
        with pytest.raises(TeamStartError) as info:
            manager.create_team(card)
        message = str(info.value)
        assert message.startswith("team tally: @Counter could not start: ")
        assert "UndocumentedCommand.get_commands(): command /tally_reset has no docstring: " in (
            message
        )
        assert "write one" in message and "\n" not in message
        assert manager.list_teams() == []
    finally:
        system.shutdown(10)


def test_a_resume_starts_no_unstarted_child_of_a_parent_stopped_since() -> None:
    """A crash cut the team's creation before @Child started; @Parent started and was
    stopped later: a resume does not start @Child (it would have gone with its parent),
    and says nothing of a missing parent."""
    system = ActorSystem()
    manager = TeamManager(system, open_storage("memory://"))
    try:
        card = TeamCard(
            name="tree",
            entry_point="@Parent",
            members=[member("@Parent", parent=[member("@Child")])],
        )
        created: dict[str, Any] = {}
        started = {"@Human", "@Parent"}  # what the log saw start
        human = manager._start_card_members(card, uuid4(), created, skip=started)
        assert human is None and created == {}
    finally:
        manager.shutdown()
        system.shutdown()
