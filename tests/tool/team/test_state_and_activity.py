"""TeamTool's context states (full and delta renderers) and the activity derivation."""

from __future__ import annotations

from uuid import uuid4

from akgentic.core import ActorAddress, CancelMessage, Message, ResultMessage, UserMessage
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool.team import (
    MemberActivity,
    RoleCatalogState,
    RoleRow,
    TeamMemberRow,
    TeamRosterState,
    derive_activity,
    render_activity,
    truncate,
)

ME = TeamMemberRow(name="@Manager", role="Manager", you=True)
ALICE = TeamMemberRow(name="@Alice", role="Human", human=True)
WRITER = TeamMemberRow(name="@Writer", role="Writer")


def test_roster_full_rendering() -> None:
    state = TeamRosterState(members=[ME, ALICE, WRITER])
    assert state.render_full() == (
        "Team members:\n- @Manager (Manager, you)\n- @Alice (Human, a person)\n- @Writer (Writer)"
    )
    assert TeamRosterState().render_full() == ""


def test_roster_delta_lists_departures_then_arrivals() -> None:
    before = TeamRosterState(members=[ME, WRITER])
    after = TeamRosterState(members=[ME, ALICE])
    assert after.render_delta(before) == (
        "Team changes:\n- @Writer (Writer) left\n+ @Alice (Human, a person) joined"
    )
    assert after.render_delta(TeamRosterState(members=[ME, ALICE])) is None


def test_catalog_renderings() -> None:
    before = RoleCatalogState(
        roles=[RoleRow(role="Writer", description="Writes"), RoleRow(role="Critic")]
    )
    after = RoleCatalogState(
        roles=[RoleRow(role="Writer", description="Writes", hireable=True), RoleRow(role="Poet")]
    )
    assert before.render_full() == (
        "Roles in this team's catalog:\n- Writer — Writes (not hireable)\n- Critic (not hireable)"
    )
    assert after.render_delta(before) == (
        "Role catalog changes:\n- Critic removed\n+ Writer — Writes (hireable)\n"
        "+ Poet (not hireable)"
    )
    assert after.render_delta(after.model_copy(deep=True)) is None


def test_states_round_trip_as_baselines() -> None:
    roster = TeamRosterState(members=[ME, ALICE])
    catalog = RoleCatalogState(roles=[RoleRow(role="Writer", hireable=True)])
    assert deserialize(serialize(roster)) == roster
    assert deserialize(serialize(catalog)) == catalog
    stored = {"__model__": serialize(roster)["__model__"], "members": [{"name": "@Old"}]}
    assert deserialize(stored) == TeamRosterState(members=[TeamMemberRow(name="@Old")])


# -- activity ------------------------------------------------------------------------------


def address(name: str, role: str = "") -> ActorAddress:
    return ActorAddress(agent_id=uuid4(), name=name, role=role)


def sent(msg: Message, sender: ActorAddress, recipient: ActorAddress) -> Message:
    msg.init(sender, None)
    msg.__dict__["recipient"] = recipient
    return msg


def test_busy_means_a_message_received_after_the_last_one_sent() -> None:
    boss, writer, critic, idle = (
        address("@Boss"),
        address("@W", "Writer"),
        address("@C"),
        address("@I"),
    )
    window = [
        sent(UserMessage(content="draft"), boss, writer),
        sent(ResultMessage(content="drafted"), writer, boss),
        sent(UserMessage(content="review"), boss, critic),
        sent(UserMessage(content="again"), boss, writer),
        sent(ResultMessage(content="ok"), critic, boss),
        sent(CancelMessage(), boss, critic),
    ]
    rows = derive_activity([writer, critic, idle], window, max_chars=50)
    assert rows == [
        MemberActivity(
            name="@W", role="Writer", busy=True, working_on="again", last_said="drafted"
        ),
        MemberActivity(name="@C", busy=True, working_on="(CancelMessage)", last_said="ok"),
        MemberActivity(name="@I"),
    ]


def test_rendering() -> None:
    rows = [
        MemberActivity(name="@W", role="Writer", busy=True, working_on="x", last_said="y"),
        MemberActivity(name="@I"),
    ]
    assert render_activity(rows) == (
        "Team activity (busy = has a message it has not answered yet):\n"
        "- @W (Writer): busy\n  working on: x\n  last said: y\n- @I (no role): idle"
    )
    assert render_activity([]) == "Nobody else is on the team."


def test_truncate_flattens_and_cuts() -> None:
    assert truncate("a  b\nc", 10) == "a b c"
    assert truncate("abcdefghijklmnop", 5) == "abcde…"
