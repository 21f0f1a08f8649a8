"""BaseAgent with the cards that act on the agent: hire/fire, model switch, skills, mailbox."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, AgentMessage, AgentState, BaseAgent
from akgentic.core import ActorSystem, AgentCard, UserMessage
from akgentic.llm import ModelConfig, ModelRoster
from akgentic.tool import ModelTool, SkillTool
from akgentic.tool.core import ToolCard
from akgentic.tool.skill import SkillEntry, Skills

from ..core.conftest import Team
from .conftest import Script

ModelKey = Callable[[Script], str]


def text(content: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    return lambda messages, info: ModelResponse(parts=[TextPart(content)])


def call(tool: str, **args: Any) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def start(system: ActorSystem, team: Team, models: str, name: str = "@Agent", **config: Any) -> Any:
    config.setdefault("stream_events", False)
    return system.createActor(
        BaseAgent,
        config=AgentConfig(name=name, role="Lead", models=models, **config),
        team_id=team.team_id,
    )


def test_hire_and_fire_through_the_team_tool(
    system: ActorSystem, team: Team, model_key: ModelKey
) -> None:
    helper = AgentCard(
        role="Helper",
        agent_class=BaseAgent,
        config=AgentConfig(name="@Helper", role="Helper"),
    )
    team.proxy.register_agent_profile(helper)
    script = Script(call("hire_members", roles=["Helper"]), text("hired"))
    lead = start(system, team, model_key(script))
    assert system.ask(lead, UserMessage(content="get help"), timeout=30).content == "hired"  # type: ignore[attr-defined]
    hired = team.proxy.get_team_member("@Helper")
    assert hired is not None and hired.is_alive() and hired.role == "Helper"

    script.steps = [call("fire_member", name="@Helper"), text("fired")]
    assert system.ask(lead, UserMessage(content="let go"), timeout=30).content == "fired"  # type: ignore[attr-defined]
    assert system.wait_stopped(hired, 10)
    assert team.proxy.get_team_member("@Helper") is None


def test_an_unknown_role_is_a_retry_listing_the_hireable_roles(
    system: ActorSystem, team: Team, model_key: ModelKey
) -> None:
    team.proxy.register_agent_profile(
        AgentCard(role="Helper", agent_class=BaseAgent, config=AgentConfig(name="@Helper"))
    )
    script = Script(call("hire_members", roles=["Wizard"]), text("ok"))
    lead = start(system, team, model_key(script))
    system.ask(lead, UserMessage(content="hire a wizard"), timeout=30)
    assert "Helper" in str(script.seen[1][-1]) and "Wizard" in str(script.seen[1][-1])
    assert team.proxy.get_team_member("@Wizard") is None


def roster() -> ModelRoster:
    return ModelRoster(
        models=[
            ModelConfig(provider="test", model="small"),
            ModelConfig(provider="test", model="large"),
        ]
    )


def test_a_model_switch_is_persisted_and_restored(system: ActorSystem, team: Team) -> None:
    lead = system.createActor(
        BaseAgent,
        config=AgentConfig(name="@Lead", role="Lead", models=roster(), tools=[ModelTool()]),
        team_id=team.team_id,
    )
    reply = system.ask(lead, UserMessage(content="/switch_model test:large"), timeout=30)
    assert "test:large" in reply.content  # type: ignore[attr-defined]
    actor = system.get_actor(lead)
    assert isinstance(actor, BaseAgent)
    assert actor.state.tool_state.active_model == "test:large"
    rows = system.proxy_ask(lead, BaseAgent, timeout=30).list_model_rows()
    assert [r.key for r in rows if r.active] == ["test:large"]
    bad = system.ask(lead, UserMessage(content="/switch_model key=test:nope"), timeout=30)
    assert "test:nope" in bad.content and "test:small" in bad.content  # type: ignore[attr-defined]

    saved = actor.state.model_copy(deep=True)
    restored = system.createActor(
        BaseAgent,
        config=AgentConfig(name="@Lead2", role="Lead", models=roster(), tools=[ModelTool()]),
        team_id=team.team_id,
        restoring=True,
        state=AgentState.model_validate(saved.model_dump()),
    )
    rows = system.proxy_ask(restored, BaseAgent, timeout=30).list_model_rows()
    assert [r.key for r in rows if r.active] == ["test:large"]


def test_skill_bodies_arrive_on_demand_in_the_same_turn(
    system: ActorSystem, team: Team, model_key: ModelKey
) -> None:
    skills = Skills(
        skills=[
            SkillEntry(
                name="refunds", description="How refunds work.", content="Under 100 EUR: approve."
            )
        ]
    )

    def answer_with_body(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned = str(messages[-1])
        return ModelResponse(parts=[TextPart("body seen" if "Under 100 EUR" in returned else "no")])

    script = Script(call("use_skill", name="refunds"), answer_with_body)
    lead = start(system, team, model_key(script), tools=[SkillTool(skills=skills)])
    assert system.ask(lead, UserMessage(content="refund?"), timeout=30).content == "body seen"  # type: ignore[attr-defined]
    assert "refunds" in (script.infos[0].instructions or "")  # the menu is in the prefix
    assert "Under 100 EUR" not in (script.infos[0].instructions or "")  # the body is not


def test_a_message_arriving_mid_run_is_announced_to_the_model(
    system: ActorSystem, team: Team, model_key: ModelKey
) -> None:
    entered, release = threading.Event(), threading.Event()

    class Slow(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def wait() -> str:
                """Wait a moment."""
                entered.set()
                release.wait(30)
                return "waited"

            return [wait]

    script = Script(call("wait"), text("done"))
    lead = start(system, team, model_key(script), tools=[Slow()])
    other = start(system, team, model_key(Script(text("unused"))), name="@Other")
    with system.private() as context:
        context.tell(lead, UserMessage(content="go"))
        assert entered.wait(30)
        system.proxy_ask(other, BaseAgent, timeout=30).send(
            lead, AgentMessage(content="urgent news", type="notification")
        )
        release.set()
        assert context.listen(30) is not None
    second_request = script.seen[1][-1]
    assert isinstance(second_request, ModelRequest)
    assert "urgent news" in str(second_request) and "read_mailbox" in str(second_request)


def test_a_tool_card_given_as_data_that_does_not_validate_is_named_by_its_position() -> None:
    """Which of two cards of one type is wrong: ``tools.1.bogus``, not ``tools.bogus``."""
    with pytest.raises(ValidationError) as caught:
        AgentConfig.model_validate(
            {
                "name": "@A",
                "role": "A",
                "tools": [{"type": "SearchTool"}, {"type": "SearchTool", "bogus": 1}],
            }
        )
    [error] = caught.value.errors()
    assert (error["loc"], error["type"]) == (("tools", 1, "bogus"), "extra_forbidden")


def test_a_card_listed_twice_is_refused_as_the_config_is_built_naming_member_and_position() -> None:
    """Two PlanningTools would serve get_planning twice; the factory refuses that only when
    the team starts. The config refuses it at once, saying which card and what to do."""
    with pytest.raises(ValidationError) as caught:
        AgentConfig.model_validate(
            {
                "name": "@A",
                "role": "A",
                "tools": [
                    {"type": "PlanningTool"},
                    {"type": "SearchTool"},
                    {"type": "PlanningTool"},
                ],
            }
        )
    [error] = caught.value.errors()
    assert error["loc"] == ("tools",)
    assert error["msg"] == (
        "Value error, @A: tools[2] (PlanningTool) turns on get_planning, get_planning_task, "
        "update_planning, search_planning again, as tools[0] (PlanningTool) does: a member "
        "has each capability once. Remove the duplicate card, or turn those off on one of "
        "them (get_planning: false)"
    )


def test_two_cards_of_one_type_sharing_no_capability_are_one_members_tools() -> None:
    """The rule is per capability, not per card type: split between two cards, each
    capability is still served once."""
    config = AgentConfig.model_validate(
        {
            "name": "@A",
            "role": "A",
            "tools": [
                {"type": "SearchTool", "web_fetch": False, "web_crawl": False},
                {"type": "SearchTool", "web_search": False},
            ],
        }
    )
    assert [type(card).__name__ for card in config.tools] == ["SearchTool", "SearchTool"]
