"""A card whose shared ``#`` tool actor cannot start fails the team's start at wiring,
naming the card, the actor and the cause on one line — never later, at a tool call.

A new team is refused and leaves nothing behind (no actor running, no record, no lease);
a resume is refused and leaves the stored team as it was, to resume once fixed.
"""

from __future__ import annotations

from pathlib import Path
from uuid import UUID, uuid4

import pytest

from akgentic.agent import AgentConfig
from akgentic.core import ActorSystem, AgentCard
from akgentic.storage import TeamStatus, open_storage
from akgentic.team import (
    MemberSpec,
    ResumeError,
    TeamCard,
    TeamManager,
    TeamStartError,
    team_resource,
)
from akgentic.team.restorer import MEMBER_START_TIMEOUT
from akgentic.tool.core import team_actor
from tests.board_card import RELEASE, BoardTool

from .conftest import answer


def board_team(directory: Path, *, misconfigured: bool = False, slow: bool = False) -> TeamCard:
    """Two agents sharing the ``#Board`` of ``directory``."""

    def member(name: str) -> MemberSpec:
        card = BoardTool(directory=str(directory), misconfigured=misconfigured, slow=slow)
        config = AgentConfig(name=name, role=name[1:], models="scripted:default", tools=[card])
        agent_card = AgentCard(
            role=name[1:], agent_class="akgentic.agent.agent.BaseAgent", config=config
        )
        return MemberSpec(card=agent_card)

    return TeamCard(name="board", entry_point="@Lead", members=[member("@Lead"), member("@Aide")])


def running_in(system: ActorSystem, team_id: UUID) -> list[str]:
    """The names of the team's actors still in the actor system's registry."""
    return sorted(a.name for a in system._addresses_in_team(team_id) if a.is_alive())


@pytest.mark.parametrize("failing", ["on_start", "construction"])
def test_a_tool_actor_that_cannot_start_refuses_the_team_and_leaves_nothing(
    storage_url: str, system: ActorSystem, tmp_path: Path, failing: str
) -> None:
    missing = tmp_path / "no-such-board"
    card = board_team(missing, misconfigured=failing == "construction")
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    team_id = uuid4()

    with pytest.raises(TeamStartError) as info:
        manager.create_team(card, team_id=team_id)

    message = str(info.value)
    cause = (
        f"FileNotFoundError: [Errno 2] No such file or directory: '{missing}'"
        if failing == "on_start"
        else "TypeError: BoardActor is configured by BoardConfig, got a BaseConfig"
    )
    assert message == (
        "team board: @Lead could not start: BoardTool: its tool actor "
        f"#Board could not start: {cause}"
    )
    assert info.value.member == "@Lead"
    assert running_in(system, team_id) == []  # the board, the agents, the orchestrator
    assert manager.running() == []
    assert manager.list_teams() == []  # it never ran: nothing to resume
    assert storage.leases.inspect(team_resource(team_id)) is None


def test_a_resume_whose_tool_actor_cannot_start_is_refused_and_the_team_kept(
    storage_url: str, system: ActorSystem, tmp_path: Path
) -> None:
    board = tmp_path / "board"
    board.mkdir()
    (board / "plan.md").write_text("the plan")
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(board_team(board))
    team_id = runtime.team_id
    runtime.send("hello")
    seq, _ = answer(runtime, 0)  # the agents have a history to restore
    manager.stop_team(team_id)
    board.rename(tmp_path / "moved")

    with pytest.raises(ResumeError) as info:
        manager.resume_team(team_id)

    message = str(info.value)
    assert message.startswith("@Lead could not start: BoardTool: ")
    assert message.endswith(
        f"its tool actor #Board could not start: FileNotFoundError: [Errno 2] No such file or "
        f"directory: '{board}'"
    )
    assert "\n" not in message
    assert running_in(system, team_id) == []
    record = storage.teams.get(team_id)
    assert record is not None and record.status == TeamStatus.STOPPED  # kept, to resume
    assert storage.leases.inspect(team_resource(team_id)) is None

    (tmp_path / "moved").rename(board)  # fixed: the same team resumes
    resumed = manager.resume_team(team_id)
    assert sorted(a.name for a in resumed.members()) == ["#Board", "@Aide", "@Human", "@Lead"]
    resumed.send("again")
    assert answer(resumed, seq)[0] > seq


def test_a_tool_actor_that_does_not_finish_starting_is_named_with_what_to_do(
    storage_url: str, system: ActorSystem, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``#`` actor whose ``on_start`` waits on a service that does not answer: the
    agent's wiring gives up after ``START_TIMEOUT`` and the team's start names the tool
    actor (the team manager waits longer for a member than a member for its tool actor,
    so it is not reported as a member that did not answer)."""
    assert MEMBER_START_TIMEOUT > team_actor.START_TIMEOUT  # the tool actor is named first
    monkeypatch.setattr(team_actor, "START_TIMEOUT", 0.2)
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    team_id = uuid4()
    RELEASE.clear()
    try:
        with pytest.raises(TeamStartError) as info:
            manager.create_team(board_team(tmp_path, slow=True), team_id=team_id)
        left = [a for a in system._addresses_in_team(team_id) if a.is_alive()]
    finally:
        RELEASE.set()  # the board's on_start returns: its stop, queued behind it, runs
    assert str(info.value).startswith(
        "team board: @Lead could not start: BoardTool: its tool actor #Board could not "
        "start: its on_start did not finish within 0.2s: it may wait on a service that does "
        "not answer"
    )
    assert storage.teams.get(team_id) is None  # it never ran: nothing kept
    for address in left:
        assert system.wait_stopped(address, 30)
