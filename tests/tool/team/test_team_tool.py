"""TeamTool on a real team: routing, hire (partial success), fire, roster and catalog state,
role profiles, team_activity, and the observer contract."""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

import pytest
from pydantic import ValidationError

from akgentic.core import (
    ActorAddress,
    AgentCard,
    Akgent,
    BaseConfig,
    BaseState,
    Orchestrator,
    OrchestratorConfig,
    ResultMessage,
    StopMessage,
    StopRecursively,
    UserMessage,
)
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import (
    COMMAND,
    LLM_CONTEXT,
    TOOL_CALL,
    ActorToolObserver,
    RetriableError,
    ToolFactory,
)
from akgentic.tool.team import (
    ActivitySummarizer,
    FireMember,
    GetTeamActivity,
    HireMembers,
    RoleCatalog,
    RoleCatalogState,
    RoleProfile,
    RoleRow,
    TeamManagementToolObserver,
    TeamRoster,
    TeamRosterState,
    TeamTool,
)

from ..conftest import FakeAgent, Team
from .conftest import CATALOG, Manager, Staffed


class RetryError(Exception):
    """Stands in for pydantic-ai's ModelRetry."""


def tools(factory: ToolFactory) -> dict[str, Any]:
    return {fn.__name__: fn for fn in factory.get_tools()}


def wired(staffed: Staffed, card: TeamTool | None = None, **kwargs: Any) -> ToolFactory:
    return ToolFactory([card or TeamTool()], observer=staffed.manager, **kwargs)


# -- routing -------------------------------------------------------------------------------


def test_default_routing(staffed: Staffed) -> None:
    factory = wired(staffed)
    assert list(tools(factory)) == ["hire_members", "fire_member", "role_profile", "team_activity"]
    assert list(factory.get_commands()) == [
        HireMembers,
        FireMember,
        TeamRoster,
        RoleCatalog,
        RoleProfile,
        GetTeamActivity,
    ]
    assert factory.get_command_registry().names() == [
        "hire_members",
        "fire_member",
        "team_roster",
        "role_catalog",
        "role_profile",
        "team_activity",
    ]
    assert [p.__name__ for p in factory.get_context_states()] == ["team_roster", "role_catalog"]
    assert factory.get_system_prompts() == []


def test_a_roster_or_catalog_persisted_on_system_prompt_is_served_on_llm_context(
    staffed: Staffed,
) -> None:
    stored = {"expose": ["system_prompt", "command"]}
    card = TeamTool(
        team_roster=TeamRoster.model_validate(stored),
        role_catalog=RoleCatalog.model_validate(stored),
    )
    assert card.team_roster == TeamRoster(expose={LLM_CONTEXT, COMMAND})
    factory = wired(staffed, card)
    assert [p.__name__ for p in factory.get_context_states()] == ["team_roster", "role_catalog"]
    assert factory.get_system_prompts() == []


def test_management_only_and_firing_left_to_humans(staffed: Staffed) -> None:
    card = TeamTool(get_team_activity=False, fire_member=FireMember(expose={COMMAND}))
    factory = wired(staffed, card)
    assert list(tools(factory)) == ["hire_members", "role_profile"]
    assert "fire_member" in factory.get_command_registry()
    assert "team_activity" not in factory.get_command_registry()


def test_state_exposed_on_tool_call_is_dropped_silently(staffed: Staffed) -> None:
    card = TeamTool(team_roster=TeamRoster(expose={TOOL_CALL}), role_catalog=False)
    factory = wired(staffed, card)
    assert "team_roster" not in tools(factory)
    assert factory.get_context_states() == []
    assert "team_roster" not in factory.get_command_registry()


def test_instructions_reach_the_tool_docstring(staffed: Staffed) -> None:
    card = TeamTool(hire_members=HireMembers(instructions="Hire at most two."))
    hire = tools(wired(staffed, card))["hire_members"]
    assert (hire.__doc__ or "").endswith("Hire at most two.")


# -- hiring --------------------------------------------------------------------------------


def test_hire_creates_a_member_and_tells_the_agent(staffed: Staffed) -> None:
    hire = tools(wired(staffed))["hire_members"]
    assert hire(["Writer"]) == "Hired 1 of 1: @Writer (Writer)."
    address = staffed.member("@Writer")
    assert address is not None and address.is_alive()
    assert staffed.manager.records()["hired"] == [address]
    assert address.role == "Writer"


def test_repeated_roles_get_unique_names(staffed: Staffed) -> None:
    hire = tools(wired(staffed))["hire_members"]
    hire(["Writer"])
    assert hire(["Writer", "Critic"]) == "Hired 2 of 2: @Writer-2 (Writer), @Critic (Critic)."
    assert {"@Writer", "@Writer-2", "@Critic"} <= set(staffed.names())


def test_partial_success_reports_both_sides(staffed: Staffed) -> None:
    hire = tools(wired(staffed, retry_exception=RetryError))["hire_members"]
    report = hire(["Writer", "Poet", "Ghost"])
    assert report == (
        "Hired 1 of 3: @Writer (Writer). Not hired: 'Poet' — not in the catalog; "
        "'Ghost' — not hireable by you. Hireable roles: Writer, Critic."
    )
    assert staffed.member("@Writer") is not None


def test_an_unknown_role_is_retriable_and_lists_the_hireable_roles(staffed: Staffed) -> None:
    hire = tools(wired(staffed, retry_exception=RetryError))["hire_members"]
    with pytest.raises(RetryError) as info:
        hire(["Poet"])
    assert str(info.value) == (
        "Hired nobody of 1. Not hired: 'Poet' — not in the catalog. Hireable roles: Writer, "
        "Critic. Try hire_members again with roles from that list."
    )
    assert isinstance(info.value.__cause__, RetriableError)
    with pytest.raises(RetryError, match="at least one role"):
        hire([])
    with pytest.raises(RetriableError) as typed:  # a person is told the command to type
        wired(staffed).get_command_registry().dispatch("/hire_members Poet")
    assert str(typed.value).endswith(
        "Hireable roles: Writer, Critic. Try /hire_members again with roles from that list."
    )


def test_a_hire_whose_creation_fails_gives_its_reserved_name_back(
    staffed: Staffed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name reserved for a member that never started is free again: the next hire of
    that role gets it, not ``-2``."""
    hire = tools(wired(staffed, retry_exception=RetryError))["hire_members"]

    def refused(*args: Any, **kwargs: Any) -> ActorAddress:
        raise RuntimeError("no room")

    monkeypatch.setattr(staffed.manager, "createActor", refused)
    with pytest.raises(RetryError, match=r"could not be created \(RuntimeError: no room\)"):
        hire(["Writer"])
    monkeypatch.undo()
    assert hire(["Writer"]) == "Hired 1 of 1: @Writer (Writer)."


class Unstartable(Akgent[BaseConfig, BaseState]):
    """A member whose ``on_start`` raises, as one whose model cannot be built does."""

    def on_start(self) -> None:
        raise RuntimeError("no API key for its model")


def test_a_hire_whose_member_fails_its_start_is_reported_not_hired(staffed: Staffed) -> None:
    """Before, the hire returned once the member was created: a member whose ``on_start``
    then failed (and stopped) was reported hired, and the model addressed a member that was
    not there."""
    staffed.team.proxy.register_agent_profile(
        AgentCard(role="Unstartable", description="Cannot start", agent_class=Unstartable)
    )
    hire = tools(wired(staffed, retry_exception=RetryError))["hire_members"]
    with pytest.raises(RetryError) as info:
        hire(["Unstartable"])
    told = str(info.value)
    assert told.startswith(
        "Hired nobody of 1. Not hired: 'Unstartable' — could not start (RuntimeError: no API "
        "key for its model)."
    ), told
    assert staffed.member("@Unstartable") is None
    assert staffed.manager.records()["hired"] == []  # never announced as a hire
    assert hire(["Writer", "Unstartable"]).startswith("Hired 1 of 2: @Writer (Writer).")


def test_the_team_has_a_size_bound_and_a_hire_past_it_says_so(staffed: Staffed) -> None:
    """A model hiring in a loop fills the team to ``max_members`` regular members (the
    hiring agent counts, tools and persons do not) and is told, in one line, to fire."""
    assert HireMembers().max_members == 50  # bounded by default
    card = TeamTool(hire_members=HireMembers(max_members=3))
    hire = tools(wired(staffed, card))["hire_members"]
    assert hire(["Writer"] * 5) == (
        "Hired 2 of 5: @Writer (Writer), @Writer-2 (Writer). Not hired: 3 more — the team "
        "is full (3 members, the most hire_members allows). Hireable roles: Writer, Critic."
    )
    with pytest.raises(RetriableError) as full:
        hire(["Critic"])
    assert str(full.value) == (
        "The team is full: it has 3 members, the most hire_members allows. Fire a member "
        "you no longer need, then hire again."
    )
    assert staffed.member("@Critic") is None
    with pytest.raises(ValidationError):
        HireMembers(max_members=0)


def test_a_thousand_unknown_roles_are_reported_in_a_few_lines(staffed: Staffed) -> None:
    hire = tools(wired(staffed))["hire_members"]
    with pytest.raises(RetriableError) as info:
        hire([f"Poet{i}" for i in range(1000)])
    told = str(info.value)
    assert "'Poet9' — not in the catalog; and 990 more." in told
    assert "Poet10'" not in told and len(told) < 1000


def test_the_param_restricts_what_may_be_hired(staffed: Staffed) -> None:
    card = TeamTool(hire_members=HireMembers(roles=["Critic"]))
    hire = tools(wired(staffed, card))["hire_members"]
    with pytest.raises(RetriableError, match="'Writer' — not hireable by you. Hireable roles: "):
        hire(["Writer"])
    assert staffed.member("@Writer") is None


def test_a_refused_hire_is_undone_and_reported(staffed: Staffed) -> None:
    staffed.manager.refuse_hires = True
    hire = tools(wired(staffed))["hire_members"]
    with pytest.raises(RetriableError, match=r"hire was refused \(RuntimeError: no budget"):
        hire(["Critic"])
    (undone,) = staffed.manager.records()["fired"]
    assert undone.name == "@Critic"


# -- firing --------------------------------------------------------------------------------


def wait_stopped(staffed: Staffed, address: ActorAddress) -> None:
    staffed.team.recorder.wait_for(
        lambda: any(
            isinstance(m, StopMessage) and m.sender == address for m in staffed.team.recorder.log
        )
    )


def test_fire_tells_the_agent_and_the_member_leaves(staffed: Staffed) -> None:
    built = tools(wired(staffed))
    built["hire_members"](["Writer"])
    address = staffed.member("@Writer")
    assert address is not None
    assert built["fire_member"]("@Writer") == (
        "Fired @Writer (Writer): it is stopping and leaves the roster."
    )
    assert staffed.manager.records()["fired"] == [address]
    wait_stopped(staffed, address)
    assert "@Writer" not in staffed.names()


@pytest.mark.parametrize(
    ("name", "why"),
    [("@Nobody", "is not on the team"), ("@Manager", "cannot be fired")],
)
def test_fire_refusals_list_who_can_be_fired(staffed: Staffed, name: str, why: str) -> None:
    built = tools(wired(staffed))
    built["hire_members"](["Critic"])
    with pytest.raises(RetriableError, match=f"'{name}' {why}. Members you can fire: @Critic."):
        built["fire_member"](name)
    assert staffed.manager.records()["fired"] == []


def test_a_member_cannot_fire_the_member_that_hired_it(staffed: Staffed) -> None:
    """Firing its parent would stop the agent too, with the parent's branch (a research
    team's @Worker firing @Manager left nobody): refused, naming whom it can fire."""
    as_manager = staffed.team.system.proxy_ask(staffed.manager.myAddress, Manager, timeout=30)
    deputy_address = as_manager.createActor(
        Manager, config=BaseConfig(name="@Deputy", role="Deputy")
    )
    deputy: Any = staffed.team.system.get_actor(deputy_address)
    built = tools(ToolFactory([TeamTool()], observer=deputy))
    built["hire_members"](["Critic"])
    with pytest.raises(
        RetriableError, match="'@Manager' cannot be fired. Members you can fire: @Critic."
    ):
        built["fire_member"]("@Manager")
    assert deputy.records()["fired"] == []
    assert "@Manager" in staffed.names() and "@Deputy" in staffed.names()


def test_nobody_up_the_chain_that_hired_it_can_be_fired_yet_all_are_in_its_report(
    staffed: Staffed,
) -> None:
    """@Manager hires @Deputy, who hires @Critic: @Critic firing either would stop itself
    with the branch. Refused; the activity report still shows them (they are colleagues)."""
    system = staffed.team.system
    as_manager = system.proxy_ask(staffed.manager.myAddress, Manager, timeout=30)
    deputy = as_manager.createActor(Manager, config=BaseConfig(name="@Deputy", role="Deputy"))
    as_deputy = system.proxy_ask(deputy, Manager, timeout=30)
    critic_address = as_deputy.createActor(Manager, config=BaseConfig(name="@Critic", role="C"))
    critic: Any = system.get_actor(critic_address)
    built = tools(ToolFactory([TeamTool()], observer=critic))
    for name in ("@Manager", "@Deputy"):
        with pytest.raises(RetriableError, match=f"'{name}' cannot be fired"):
            built["fire_member"](name)
    assert critic.records()["fired"] == []
    report = built["team_activity"]()
    assert "@Manager" in report and "@Deputy" in report
    assert system.parent_of(critic_address) == deputy
    assert system.parent_of(staffed.manager.myAddress) is None  # created by the system


def test_nobody_can_fire_the_teams_entry_point_and_the_refusal_says_why(team: Team) -> None:
    """@Lead, the member the person talks to, and @Peer both start with the team (neither
    hired the other): @Peer firing @Lead would leave the person nobody to answer them.
    Refused, saying so and what to do instead; the entry point still fires others."""
    system = team.system
    orchestrator = system.createActor(Orchestrator, config=OrchestratorConfig(entry_point="@Lead"))
    assert system.proxy_ask(orchestrator, Orchestrator, timeout=30).get_entry_point() == "@Lead"
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).register_agent_profiles(CATALOG)
    members: dict[str, Any] = {}
    for name in ("@Lead", "@Peer"):
        address = system.createActor(
            Manager, config=BaseConfig(name=name, role=name[1:]), team_id=orchestrator.team_id
        )
        members[name] = system.get_actor(address)
    peer = ToolFactory([TeamTool()], observer=members["@Peer"])
    built = tools(peer)
    built["hire_members"](["Critic"])
    with pytest.raises(RetriableError) as info:
        built["fire_member"]("@Lead")
    assert str(info.value) == (
        "@Lead is the team's entry point, the member the person talks to: firing it would "
        "leave the person nobody to answer them, so it cannot be fired. If its work should "
        "change, write to @Lead and say so. Members you can fire: @Critic."
    )
    with pytest.raises(RetriableError, match="@Lead is the team's entry point"):
        peer.get_command_registry().dispatch("/fire_member @Lead")  # a person's command too
    assert members["@Peer"].records()["fired"] == []
    lead = tools(ToolFactory([TeamTool()], observer=members["@Lead"]))
    assert lead["fire_member"]("@Peer").startswith("Fired @Peer (Peer)")


# -- roster and role catalog ---------------------------------------------------------------


def test_roster_state_and_its_delta_through_the_context_updater(staffed: Staffed) -> None:
    factory = wired(staffed)
    updater = factory.get_context_updater()
    first = updater.compose_update([])
    assert first is not None
    assert "Team members:\n- @Manager (Manager, you)" in first
    assert "- Writer — Writes drafts (hireable)" in first
    assert "- Ghost — Defined nowhere (not hireable)" in first
    tools(factory)["hire_members"](["Writer"])
    second = updater.compose_update([first])
    assert second is not None
    assert "Team changes:\n+ @Writer (Writer) joined" in second
    assert "Role catalog" not in second  # unchanged: no delta
    assert updater.compose_update([first, second]) is None


def test_roster_excludes_tools_and_the_orchestrator(staffed: Staffed) -> None:
    staffed.team.proxy.getChildrenOrCreate(Akgent, BaseConfig(name="#Board", role="Board"))
    assert "#Board" in staffed.names()  # a tool actor is a member of the team...
    (roster, _) = wired(staffed).get_context_states()
    state = roster()
    assert isinstance(state, TeamRosterState)
    assert [m.name for m in state.members] == ["@Manager"]  # ...never on the roster
    assert wired(staffed).get_command_registry().dispatch("/team_roster") == (
        "Team members:\n- @Manager (Manager, you)"
    )


def test_catalog_marks_every_role(staffed: Staffed) -> None:
    card = TeamTool(hire_members=HireMembers(roles=["Critic"]))
    (_, catalog) = wired(staffed, card).get_context_states()
    assert catalog() == RoleCatalogState(
        roles=[
            RoleRow(role="Writer", description="Writes drafts", hireable=False),
            RoleRow(role="Critic", description="Reviews drafts", hireable=True),
            RoleRow(role="Ghost", description="Defined nowhere", hireable=False),
        ]
    )
    card_no_hiring = TeamTool(hire_members=False)
    (_, catalog) = wired(staffed, card_no_hiring).get_context_states()
    state = catalog()
    assert isinstance(state, RoleCatalogState)
    assert not any(row.hireable for row in state.roles)


def test_roster_and_catalog_commands(staffed: Staffed) -> None:
    registry = wired(staffed).get_command_registry()
    assert registry.dispatch("/team_roster") == "Team members:\n- @Manager (Manager, you)"
    assert registry.dispatch("/role_catalog").startswith("Roles in this team's catalog:\n")


# -- role profiles -------------------------------------------------------------------------


def test_role_profile_in_full(staffed: Staffed) -> None:
    profile = tools(wired(staffed))["role_profile"]
    assert profile("Writer") == (
        "Role: Writer\nDescription: Writes drafts\nSkills: prose\nRoutes to: Critic\n"
        "Hireable by you: yes"
    )
    assert profile("Ghost").endswith("Hireable by you: no")


def test_unknown_role_profile_lists_the_roles(staffed: Staffed) -> None:
    profile = tools(wired(staffed))["role_profile"]
    with pytest.raises(RetriableError, match="No role 'Poet' in the catalog. Roles: Writer, "):
        profile("Poet")


# -- team activity -------------------------------------------------------------------------


def test_team_activity_from_orchestrator_data(staffed: Staffed) -> None:
    built = tools(wired(staffed))
    built["hire_members"](["Writer", "Critic"])
    writer, critic = staffed.member("@Writer"), staffed.member("@Critic")
    assert writer is not None and critic is not None
    me = staffed.manager.myAddress
    me.send(writer, UserMessage(content="draft the intro"))
    me.send(critic, UserMessage(content="review chapter " + "x" * 300))
    staffed.team.recorder.wait_for(
        lambda: any(
            isinstance(m, SentMessage) and isinstance(m.message, ResultMessage)
            for m in staffed.team.recorder.log
        )
    )
    report = built["team_activity"]()
    assert report.startswith("Team activity (busy = has a message it has not answered yet):")
    assert "- @Writer (Writer): idle\n  last said: done: draft the intro" in report
    assert "- @Critic (Critic): busy\n  working on: review chapter xxx" in report
    working_on = report.split("working on: ")[1].split("\n")[0]
    assert len(working_on) == 200 + 1 and working_on.endswith("…")
    assert "@Manager" not in report  # itself: obviously busy, not reported


def test_activity_param_fields_are_read_at_bind_time(staffed: Staffed) -> None:
    card = TeamTool(get_team_activity=GetTeamActivity(max_chars=20, window=1))
    built = tools(wired(staffed, card))
    built["hire_members"](["Critic"])
    critic = staffed.member("@Critic")
    assert critic is not None
    staffed.manager.myAddress.send(critic, UserMessage(content="a" * 50))
    staffed.manager.myAddress.send(critic, UserMessage(content="b" * 50))
    staffed.team.recorder.wait_for(
        lambda: len([m for m in staffed.team.recorder.log if isinstance(m, SentMessage)]) >= 2
    )
    assert "working on: " + "b" * 20 + "…" in built["team_activity"]()


def test_activity_config_forbids_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="temperature"):
        ActivitySummarizer(model="m", temperature=0)  # type: ignore[call-arg]


# -- the orchestrator unreachable ----------------------------------------------------------


class Unreachable(FakeAgent):
    """A team manager whose orchestrator never answers."""

    def __init__(self) -> None:
        super().__init__()
        self.orchestrator = ActorAddress(agent_id=UUID(int=1), name="@Orchestrator")

    def proxy_ask(
        self, addr: ActorAddress, actor_type: type[Any], timeout: float | None = None
    ) -> Any:
        raise TimeoutError(f"no answer within {timeout}s")

    def createActor(
        self, actor_class: Any, agent_id: UUID | None = None, config: BaseConfig | None = None
    ) -> ActorAddress:
        raise AssertionError("never reached")

    def on_hire(self, address: ActorAddress) -> None: ...

    def on_fire(self, address: ActorAddress) -> None: ...

    team_revision = 0


def test_an_unreachable_orchestrator_is_retriable_for_tools_and_none_for_providers() -> None:
    agent = Unreachable()
    factory = ToolFactory([TeamTool()], observer=agent, retry_exception=RetryError)
    with pytest.raises(RetryError, match=r"orchestrator did not answer .*no answer within 10.0s"):
        tools(factory)["hire_members"](["Writer"])
    with pytest.raises(RetriableError, match=r"did not answer \(TimeoutError: no answer"):
        factory.get_command_registry().dispatch("/team_roster")  # commands are not wrapped
    assert [provider() for provider in factory.get_context_states()] == [None, None]


# -- the observer contract -----------------------------------------------------------------


def test_the_manager_satisfies_the_protocol(staffed: Staffed) -> None:
    assert isinstance(staffed.manager, TeamManagementToolObserver)


@pytest.mark.parametrize("missing", ["createActor", "on_hire", "on_fire"])
def test_a_missing_member_fails_the_protocol_check(missing: str) -> None:
    """The conformance guard, proven by removing one member (never the decorator)."""

    class Partial(FakeAgent):
        def createActor(
            self, actor_class: Any, agent_id: UUID | None = None, config: Any = None
        ) -> ActorAddress:
            raise AssertionError

        def on_hire(self, address: ActorAddress) -> None: ...

        def on_fire(self, address: ActorAddress) -> None: ...

    delattr(Partial, missing)
    partial = Partial()
    assert isinstance(partial, ActorToolObserver)
    assert not isinstance(partial, TeamManagementToolObserver)
    with pytest.raises(TypeError, match="TeamManagementToolObserver"):
        ToolFactory([TeamTool()], observer=partial)


def test_an_agent_outside_a_team_is_refused_at_wiring() -> None:
    agent = Unreachable()
    agent.orchestrator = None
    with pytest.raises(ValueError, match="needs an agent in a team"):
        ToolFactory([TeamTool()], observer=agent)


def test_everything_off_needs_no_team() -> None:
    card = TeamTool(
        hire_members=False,
        fire_member=False,
        team_roster=False,
        role_catalog=False,
        role_profile=False,
        get_team_activity=False,
    )
    factory = ToolFactory([card], observer=FakeAgent())
    assert factory.get_tools() == [] and factory.get_commands() == {}
    assert factory.get_context_states() == []


def test_card_round_trips() -> None:
    card = TeamTool(
        hire_members=HireMembers(roles=["Writer"]),
        get_team_activity=GetTeamActivity(summarizer=ActivitySummarizer(model="a:b")),
        team_roster=TeamRoster(expose={LLM_CONTEXT}),
    )
    assert deserialize(serialize(card)) == card


# -- the roster and catalog, asked for only when the team changed -----------------------------


def test_the_context_asks_the_orchestrator_again_only_once_the_team_changed(
    staffed: Staffed, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    for name in ("get_team", "get_agent_catalog"):
        original = getattr(Orchestrator, name)

        def counting(self: Orchestrator, _original: Any = original, _name: str = name) -> Any:
            asked.append(_name)
            return _original(self)

        monkeypatch.setattr(Orchestrator, name, counting)
    factory = wired(staffed)
    updater = factory.get_context_updater()
    first = updater.compose_update([])
    assert first is not None and {"get_agent_catalog", "get_team"} <= set(asked)
    asked.clear()
    assert updater.compose_update([first]) is None  # the same team: the answers are reused
    assert updater.compose_update([first]) is None
    roster, catalog = factory.get_context_states()
    assert roster() is roster() and catalog() is catalog()  # its baseline, handed back
    assert asked == []

    tools(factory)["hire_members"](["Writer"])  # a member started
    second = updater.compose_update([first])
    assert second is not None and "+ @Writer (Writer) joined" in second

    staffed.team.proxy.register_agent_profile(
        AgentCard(role="Editor", description="Edits", agent_class=Akgent)
    )
    third = updater.compose_update([first, second])
    assert third is not None and "Editor — Edits" in third  # the catalog changed

    writer = staffed.member("@Writer")
    assert writer is not None
    tools(factory)["fire_member"]("@Writer")
    wait_stopped(staffed, writer)  # seen by a subscriber: the revision moved before
    fourth = updater.compose_update([first, second, third])
    assert fourth is not None and "- @Writer (Writer) left" in fourth
    asked.clear()
    assert updater.compose_update([first, second, third, fourth]) is None
    assert asked == []


def test_team_revision_moves_when_a_member_starts_or_stops_or_the_catalog_changes(
    staffed: Staffed,
) -> None:
    manager, system = staffed.manager, staffed.team.system
    before = manager.team_revision
    address = system.createActor(
        Akgent, config=BaseConfig(name="@Extra"), team_id=staffed.team.orchestrator.team_id
    )
    started = manager.team_revision
    assert started > before
    staffed.team.proxy.register_agent_profile(
        AgentCard(role="Editor", description="Edits", agent_class=Akgent)
    )
    catalogued = manager.team_revision
    assert catalogued > started
    system.tell(address, StopRecursively())
    wait_stopped(staffed, address)
    assert manager.team_revision > catalogued

    loner: Any = system.get_actor(system.createActor(Akgent, config=BaseConfig(name="@Loner")))
    assert loner.team_revision == 0  # outside a team: nothing to follow


def test_two_agents_hiring_at_once_never_both_take_the_last_place(
    staffed: Staffed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, each hire counted the members, then created its own: one held between the
    two (its member not started yet) left the last place free to the other, and the team
    ended past its bound. Now the place is taken with the name, in one step."""
    other_address = staffed.team.system.createActor(
        Manager,
        config=BaseConfig(name="@Other", role="Manager"),
        team_id=staffed.team.orchestrator.team_id,
    )
    other: Any = staffed.team.system.get_actor(other_address)
    card = TeamTool(hire_members=HireMembers(max_members=3))  # @Manager, @Other: one place
    first = tools(ToolFactory([card], observer=staffed.manager))["hire_members"]
    second = tools(ToolFactory([card.model_copy()], observer=other))["hire_members"]
    creating, go_on = threading.Event(), threading.Event()
    create = staffed.manager.createActor

    def held(*args: Any, **kwargs: Any) -> ActorAddress:
        creating.set()  # its place and name are taken: held before its member exists
        assert go_on.wait(30)
        return create(*args, **kwargs)

    monkeypatch.setattr(staffed.manager, "createActor", held)
    results: list[str] = []
    holder = threading.Thread(target=lambda: results.append(first(["Writer"])))
    holder.start()
    try:
        assert creating.wait(30)
        with pytest.raises(RetriableError) as full:
            second(["Critic"])
    finally:
        go_on.set()
        holder.join(30)
    assert str(full.value).startswith("The team is full: it has 3 members")
    assert results == ["Hired 1 of 1: @Writer (Writer)."]
    assert staffed.member("@Critic") is None
    regular = [n for n in staffed.names() if n.startswith("@")]
    assert sorted(regular) == ["@Manager", "@Other", "@Writer"]
