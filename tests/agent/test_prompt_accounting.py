"""Prompt accounting on a BaseAgent: a record per model request on the team stream, parts
attributed to the cards that served them (toolsets and runtime toolsets included), the
prefix kept across turns as shipped, a card that re-renders its system prompt named as
the breaker, the provider's usage beside our count, and the switch to turn it off."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.agent.accounting import (
    AGENT,
    REPLY_PRIMING,
    TOOLSETS,
    PrefixCacheRules,
    PromptAccountingEvent,
)
from akgentic.core import ActorAddress, ActorSystem, EventMessage, Message, UserMessage
from akgentic.llm import LlmUsageEvent, ModelRoster, register_model
from akgentic.tool.core import ContextState, ToolCard
from akgentic.tool.model import ModelTool
from akgentic.tool.toolsets import ToolsetCard

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent

Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse]
ANY = PrefixCacheRules(name="test", min_prefix_tokens=0)


def text(content: str = "ok") -> Step:
    return lambda messages, info: ModelResponse(parts=[TextPart(content)])


def call(tool: str, **args: Any) -> Step:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


class Adder(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        return [add]


class Counter(ContextState):
    value: int = 0

    def render_full(self) -> str:
        return f"Counter: {self.value}."

    def render_delta(self, previous: Counter) -> str | None:
        return None if previous.value == self.value else f"Counter now: {self.value}."


class Ticking(ToolCard):
    """A card with static rules and volatile state that changes at every read."""

    ticks: list[int] = [0]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        def rules() -> str:
            return f"Ticking rules, edition {self.ticks[0]}."

        return [rules]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def counter() -> ContextState | None:
            self.ticks[0] += 1
            return Counter(value=self.ticks[0])

        return [counter]


class Films(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def search(query: str) -> str:
            """Search films by title."""
            return f"found {query}"

        def info(id: int) -> str:
            """Details of one film."""
            return f"film {id}"

        return [search, info]


class Runtime(ToolCard):
    """A card serving its capability as a runtime toolset (as an MCP server's card does)."""

    def get_toolsets(self) -> list[Any]:
        def weather(city: str) -> str:
            """The weather in a city."""
            return f"sunny in {city}"

        return [FunctionToolset([weather])]


def start(system: ActorSystem, team: Team, script: Script, **config: Any) -> ActorAddress:
    config.setdefault("stream_events", False)
    config.setdefault("prompt_accounting", {"cache": ANY.model_dump()})
    cls = type("AccountedAgent", (ScriptedAgent,), {"script": script})
    return system.createActor(
        cls, config=AgentConfig(name="@Agent", role="Assistant", **config), team_id=team.team_id
    )


def say(system: ActorSystem, agent: ActorAddress, content: str) -> str:
    reply = system.ask(agent, UserMessage(content=content), timeout=30)
    assert isinstance(reply, AgentMessage)
    return reply.content


def accounted(team: Team, count: int) -> list[PromptAccountingEvent]:
    found = team.recorder.wait_for_type(
        EventMessage, count, where=lambda m: isinstance(m.event, PromptAccountingEvent)
    )
    return [m.event for m in found]


def rows(event: PromptAccountingEvent) -> dict[tuple[str, str], int]:
    return {(p.channel, p.card): p.tokens for p in event.parts}


def test_every_model_request_is_accounted_on_the_team_stream(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("add", a=1, b=2), text("3"))
    agent = start(system, team, script, tools=[Adder()])
    assert say(system, agent, "add one and two") == "3"
    first, second = accounted(team, 2)
    assert (first.agent, first.request, second.request) == ("@Agent", 1, 2)
    assert first.run_id == second.run_id != ""
    assert ("tool_call", "Adder") in rows(first)
    for card in ("TeamTool", "MailboxTool", AGENT):
        assert ("tool_call", card) in rows(first)
    assert ("system_prompt", AGENT) in rows(first)
    assert second.channel_tokens("history") > 0 and second.channel_tokens("message") > 0
    assert second.breaker is None and second.cached_tokens == second.shared_prefix_tokens > 0
    assert first.cache_rules == ANY
    [found] = team.recorder.wait_for_type(
        EventMessage, 1, where=lambda m: isinstance(m.event, LlmUsageEvent)
    )
    usage = found.event
    assert first.provider.input_tokens + second.provider.input_tokens == usage.input_tokens
    assert first.provider.output_tokens + second.provider.output_tokens == usage.output_tokens


def test_as_shipped_a_volatile_card_never_breaks_the_prefix(
    system: ActorSystem, team: Team
) -> None:
    script = Script(text())
    agent = start(system, team, script, tools=[Ticking(ticks=[0])])
    for turn in ("one", "two", "three"):
        say(system, agent, turn)
    first, second, third = accounted(team, 3)
    assert ("llm_context", "Ticking") in rows(second)  # the state changed, at the tail
    assert ("system_prompt", "Ticking") in rows(first)
    for previous, event in ((first, second), (second, third)):
        assert event.breaker is None
        assert event.shared_prefix_tokens == previous.input_tokens - 3  # all but the priming


class Rerendering(ScriptedAgent):
    """An agent that renders its system prompt afresh at every turn (not what ships)."""

    def _take_turn(self, msg: Message, text: str, sender: ActorAddress | None) -> bool:
        prompt = self._wiring.render_system_prompt(
            prompt=self.config.prompt.render(name=self.config.name, role=self.config.role)
        )
        with self._agent.override(instructions=prompt):
            return super()._take_turn(msg, text, sender)


def test_a_card_that_changes_its_system_prompt_between_turns_is_named_as_the_breaker(
    system: ActorSystem, team: Team
) -> None:
    script = Script(text())
    cls = type("Rerender", (Rerendering,), {"script": script})
    ticking = Ticking(ticks=[0])
    agent = system.createActor(
        cls,
        config=AgentConfig(
            name="@Agent",
            tools=[Adder(), ticking],
            stream_events=False,
            prompt_accounting={"cache": ANY.model_dump()},
        ),
        team_id=team.team_id,
    )
    say(system, agent, "one")
    say(system, agent, "two")
    _, second = accounted(team, 2)
    assert second.breaker is not None
    assert second.breaker.model_dump() == {
        "channel": "system_prompt",
        "card": "Ticking",
        "name": "rules",
        "change": "changed",
        "lost_tokens": second.breaker.lost_tokens,
    }
    assert second.breaker.lost_tokens > 0
    # the tools and the parts of the prompt before Ticking's are still shared
    assert second.shared_prefix_tokens >= second.tool_schema_tokens


def test_toolset_tools_are_attributed_to_their_set_and_member(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("enable_toolset", name="media"), text("on"), text("later"))
    cards = [Adder(), ToolsetCard(name="media", description="Films", cards=[Films()])]
    agent = start(system, team, script, tools=cards)
    say(system, agent, "find a film")
    say(system, agent, "again")
    before, after, later = accounted(team, 3)
    assert ("tool_call", TOOLSETS) in rows(before)  # enable_toolset / disable_toolset
    assert ("system_prompt", TOOLSETS) in rows(before)  # the catalog
    assert ("tool_call", "ToolsetCard[media].Films") not in rows(before)
    assert ("tool_call", "ToolsetCard[media].Films") in rows(after)
    assert after.breaker is not None
    assert (after.breaker.change, after.breaker.card, after.breaker.channel) == (
        "added",
        "ToolsetCard[media].Films",
        "tool_call",
    )
    assert after.breaker.name in ("media_search", "media_info")
    assert later.breaker is None  # the set stays: the next turn extends the prefix


def test_a_runtime_toolset_is_attributed_to_its_card(system: ActorSystem, team: Team) -> None:
    script = Script(call("weather", city="Paris"), text("sunny"))
    agent = start(system, team, script, tools=[Runtime()])
    assert say(system, agent, "weather?") == "sunny"
    first, _ = accounted(team, 2)
    assert ("tool_call", "Runtime") in rows(first)
    assert not any(card == "(unattributed)" for _, card in rows(first))


def test_accounting_can_be_switched_off(system: ActorSystem, team: Team) -> None:
    script = Script(text("hi"))
    agent = start(system, team, script, prompt_accounting={"enabled": False})
    assert say(system, agent, "hello") == "hi"
    team.recorder.wait_for_type(EventMessage, 1, where=lambda m: isinstance(m.event, LlmUsageEvent))
    assert not [
        m for m in team.recorder.of_type(EventMessage) if isinstance(m.event, PromptAccountingEvent)
    ]


def test_the_accounting_config_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="cach"):
        AgentConfig(name="@A", prompt_accounting={"cach": {}})
    with pytest.raises(ValueError, match="min_prefix"):
        AgentConfig(name="@A", prompt_accounting={"cache": {"min_prefix": 10}})


def test_the_cache_rules_default_to_the_model_provider(system: ActorSystem, team: Team) -> None:
    script = Script(text())
    agent = start(system, team, script, prompt_accounting={})
    say(system, agent, "hi")
    [event] = accounted(team, 1)
    assert event.cache_rules.name == "default"  # the scripted / test providers publish none
    assert (event.cache_rules.min_prefix_tokens, event.cache_rules.ttl_seconds) == (1024, 300)


def test_a_switched_model_is_modelled_with_its_own_cache(system: ActorSystem, team: Team) -> None:
    """A provider caches a prefix per model: the first request after a switch is cold, not
    served the prefix another model read, and a switch back within the TTL finds the
    first model's prefix where it left it."""
    script = Script(text())
    alpha = register_model("alpha", FunctionModel(script, model_name="alpha"))
    beta = register_model("beta", FunctionModel(script, model_name="beta"))
    try:
        config = AgentConfig(
            name="@Agent",
            models=ModelRoster(models=["registered:alpha", "registered:beta"]),
            tools=[ModelTool()],
            stream_events=False,
            prompt_accounting={"cache": ANY.model_dump()},
        )
        agent = system.createActor(BaseAgent, config=config, team_id=team.team_id)
        say(system, agent, "one")
        say(system, agent, "/switch_model registered:beta")
        say(system, agent, "two")
        say(system, agent, "/switch_model registered:alpha")
        say(system, agent, "three")
    finally:
        alpha.unregister()
        beta.unregister()
    one, two, three = accounted(team, 3)
    assert (one.model, two.model, three.model) == ("alpha", "beta", "alpha")
    assert two.cache_status == "cold"
    assert (two.shared_prefix_tokens, two.cached_tokens, two.breaker) == (0, 0, None)
    assert two.seconds_since_previous is None
    # back on alpha: its last request (turn one) is a prefix of this one
    assert three.cache_status == "hit" and three.breaker is None
    assert three.shared_prefix_tokens == one.input_tokens - REPLY_PRIMING
