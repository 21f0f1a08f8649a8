"""The roster route: read from the log, so it answers while a member works; each member's
role, model (the one a /switch_model put in force), commands and whether it is in a turn."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from akgentic.client import MemberInfo
from akgentic.server import ServerSettings
from tests.server import gate_tool
from tests.server.conftest import Served, kind, until

SWITCHING = """
name: switching
entry_point: "@Pilot"
members:
  - card:
      role: Pilot
      config:
        name: "@Pilot"
        role: Pilot
        models: "scripted:default, {other}"
        tools:
          - type: ModelTool
"""


def by_name(members: list[MemberInfo]) -> dict[str, MemberInfo]:
    return {m.name: m for m in members}


def test_the_roster_answers_while_a_member_is_in_a_turn(served: Served) -> None:
    team = served.client.create_team("turns")
    message_id = team.send("wait here")
    assert gate_tool.ENTERED.wait(30)
    # The roster folds the log, which the recorder commits on its own thread: wait until
    # the tool call is logged, so the turn's start (reported before it) is there too.
    until(team, lambda r: kind(r) == "ToolCall")
    # @Boss is held at the gate: asking it would wait for its turn to end (an error
    # after the ask's timeout); the roster is read from the log instead
    boss = by_name(team.members())["@Boss"]
    gate_tool.OPEN.set()
    assert boss.busy is True
    assert (boss.role, boss.kind, boss.model) == ("Boss", "agent", "scripted:turns.scenario.yaml")
    assert {"stop", "compact", "clear"} <= set(boss.commands)
    until(team, lambda r: kind(r) == "End" and r.message is not None)
    after = by_name(team.members())
    assert after["@Boss"].busy is False
    assert after["@Boss"].usage["requests"] >= 1
    assert after["@Human"].kind == "human" and after["@Human"].model is None
    assert message_id is not None


def test_a_stopped_teams_roster_keeps_roles_models_and_commands(served: Served) -> None:
    team = served.client.create_team("analyst")
    first = team.send("study actors")
    until(team, lambda r: kind(r) == "End" and r.message is not None)
    assert team.stop() is True
    members = by_name(team.members())
    analyst = members["@Analyst"]
    assert (analyst.role, analyst.model) == ("Analyst", "scripted:analyst.scenario.yaml")
    assert "planning" in analyst.commands and analyst.busy is False
    assert analyst.usage["tool_calls"] == 3
    assert members["#PlanningTool"].kind == "tool"
    assert members["#PlanningTool"].role == "PlanningTool"
    assert first is not None
    # resumed: the members start again, and keep what they used
    resumed = served.client.resume_team(team.team_id)
    again = by_name(resumed.members())["@Analyst"]
    assert (again.model, again.busy, again.usage) == (analyst.model, False, analyst.usage)


def test_the_roster_shows_the_model_a_switch_put_in_force(
    serve_with: Callable[[ServerSettings], Served], tmp_path: Path
) -> None:
    served = serve_with(ServerSettings(port=0, allow_posted=["paths"]))  # a scenario in tmp
    scenario = tmp_path / "other.scenario.yaml"
    scenario.write_text('default: {text: "[scripted] the other model"}\n')
    other = f"scripted:{scenario}"
    card = SWITCHING.replace("{other}", other)
    info = served.client.request("POST", "/teams", json={"card_yaml": card}).json()
    team = served.client.get_team(info["team_id"])
    assert by_name(team.members())["@Pilot"].model == "scripted:default"
    command = team.command(f"/switch_model {other}")
    reply = until(
        team,
        lambda r: (
            kind(r) == "Message"
            and r.message is not None
            and getattr(r.message.message, "parent_id", None) == command
        ),  # type: ignore[attr-defined]
    )[-1]
    assert reply.message.message.content == f"Switched to {other}."  # type: ignore[union-attr]
    assert by_name(team.members())["@Pilot"].model == other


def test_a_team_stopped_before_any_turn_lists_every_member_of_its_run(served: Served) -> None:
    """A stopped team's roster is its last run's, read from its log: the person and the
    agents that never took a turn (they saved no state) are on it, with their kinds."""
    team = served.client.create_team("research")
    running = [(m.name, m.kind, m.role) for m in team.members()]
    assert team.stop() is True
    stopped = [(m.name, m.kind, m.role) for m in team.members()]
    assert stopped == running
    assert ("@Human", "human", "Human") in stopped
    assert {"@Manager", "@Worker"} <= {name for name, _, _ in stopped}


def test_a_member_fired_before_the_stop_is_not_on_the_stopped_teams_roster(
    served: Served,
) -> None:
    """A member that stopped before the team's own stop (fired) left the team: the stopped
    team's roster, like a resume, leaves it out; the others stay on it."""
    team = served.client.create_team("research")
    team.command("/fire_member @Worker")
    until(team, lambda r: kind(r) == "MemberStopped" and r.message.sender.name == "@Worker")  # type: ignore[union-attr]
    assert team.stop() is True
    assert [m.name for m in team.members()] == ["@Human", "@Manager"]


def test_a_team_stopping_while_its_roster_is_read_lists_its_last_runs_members(
    served: Served,
) -> None:
    """A stop from another client that lands while the roster is read (the orchestrator
    is gone before it answers who the members are): the roster of the run that just
    ended, from its log — not a 500."""
    team = served.client.create_team("research")
    running = [(m.name, m.kind, m.role) for m in team.members()]
    runtime = served.manager.get_team(team.team_id)
    assert runtime is not None
    read = runtime.members

    def stopped_first() -> object:
        served.manager.stop_team(team.team_id, 5)
        return read()

    runtime.members = stopped_first  # type: ignore[method-assign]
    raced = [(m.name, m.kind, m.role) for m in team.members()]
    assert raced == running
    assert all(not m.busy for m in team.members())
    assert served.client.info(team.team_id).status == "STOPPED"
