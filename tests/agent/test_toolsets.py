"""Toolsets on a BaseAgent, asserted on the requests the model actually receives: zero
footprint without a ToolsetCard, the frozen catalog (byte-identical prompt across
enabling), the active sets on the per-turn context block, the 10-minute edge with an
injected clock, auto-activation both ways, the response table through the agent, two
agents of one team, /clear and restore (activation is never persisted)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorAddress, ActorSystem, UserMessage
from akgentic.tool.core import ToolCard
from akgentic.tool.toolsets import CATALOG_HEADER, ToolsetCard

from ..core.conftest import Team
from ..tool.toolsets.test_registry import FakeClock
from .conftest import Script, ScriptedAgent

Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse]

MEDIA_TOOLS = ["media_info", "media_search"]


class Films(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def search(query: str) -> str:
            """Search films by title."""
            return f"found {query}"

        def info(id: int) -> str:
            """Details of one film."""
            return f"film {id}"

        return [search, info]


class Pages(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def fetch(url: str) -> str:
            """Fetch a page."""
            return f"page {url}"

        return [fetch]


class Calc(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        return [add]


def toolsets() -> list[ToolCard]:
    return [
        Calc(),
        ToolsetCard(name="media", description="Films: search and details", cards=[Films()]),
        ToolsetCard(name="web", description="Fetch web pages", cards=[Pages()]),
    ]


def text(content: str = "ok") -> Step:
    return lambda messages, info: ModelResponse(parts=[TextPart(content)])


def call(tool: str, **args: Any) -> Step:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def start(
    system: ActorSystem, team: Team, script: Script, clock: FakeClock | None = None, **config: Any
) -> ActorAddress:
    config.setdefault("stream_events", False)
    attrs: dict[str, Any] = {"script": script}
    if clock is not None:
        attrs["toolset_clock"] = clock
    cls = type("ToolsetAgent", (ScriptedAgent,), attrs)
    return system.createActor(
        cls,
        config=AgentConfig(name=config.pop("name", "@Agent"), role="Assistant", **config),
        team_id=team.team_id,
    )


def say(system: ActorSystem, agent: ActorAddress, content: str) -> str:
    reply = system.ask(agent, UserMessage(content=content), timeout=30)
    assert isinstance(reply, AgentMessage)
    return reply.content


OURS = ("add", "enable_toolset", "disable_toolset", "media_", "web_")


def tool_names(info: AgentInfo) -> list[str]:
    """The request's tools, less the default cards' (TeamTool, MailboxTool)."""
    return sorted(t.name for t in info.function_tools if t.name.startswith(OURS))


def returns(messages: list[ModelMessage]) -> list[str]:
    """The tool returns (and retries) in the last request the model saw."""
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return [str(p.content) for p in request.parts if p.part_kind in ("tool-return", "retry-prompt")]


def user_text(messages: list[ModelMessage]) -> str:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return "\n".join(
        p.content
        for p in request.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    )


# -- zero footprint --
def test_no_toolset_card_means_no_tool_no_prompt_section_no_context(
    system: ActorSystem, team: Team
) -> None:
    script = Script(text())
    agent = start(system, team, script, tools=[Calc()])
    say(system, agent, "hello")
    [info] = script.infos
    names = tool_names(info)
    assert "enable_toolset" not in names and "disable_toolset" not in names
    assert "add" in names
    assert "Toolsets" not in (info.instructions or "")
    assert "toolset" not in user_text(script.seen[0]).lower()
    prompt = system.proxy_ask(agent, BaseAgent, timeout=30).get_system_prompt()
    assert info.instructions == prompt


# -- the catalog, frozen --
def test_the_catalog_is_in_the_prompt_and_the_prompt_never_changes_when_enabling(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("enable_toolset", name="media"), text("enabled"), text("later"))
    agent = start(system, team, script, tools=toolsets())
    prompt = system.proxy_ask(agent, BaseAgent, timeout=30).get_system_prompt()
    assert prompt.endswith(
        f"{CATALOG_HEADER}\nmedia — Films: search and details\nweb — Fetch web pages"
    )
    assert say(system, agent, "find me a film") == "enabled"
    assert say(system, agent, "and now?") == "later"
    first, second, third = script.infos
    assert first.instructions == second.instructions == third.instructions == prompt
    assert (
        prompt.encode()
        == system.proxy_ask(agent, BaseAgent, timeout=30).get_system_prompt().encode()
    )
    assert tool_names(first) == ["add", "disable_toolset", "enable_toolset"]
    assert tool_names(second) == ["add", "disable_toolset", "enable_toolset", *MEDIA_TOOLS]
    assert tool_names(third) == tool_names(second)
    assert returns(script.seen[1]) == ["Toolset 'media' activated."]


def test_the_active_sets_arrive_on_the_context_block(system: ActorSystem, team: Team) -> None:
    script = Script(call("enable_toolset", name="web"), text(), text(), text())
    clock = FakeClock()
    agent = start(system, team, script, clock, tools=toolsets())
    say(system, agent, "one")
    assert "Active toolsets" not in user_text(script.seen[0])  # none active: nothing said
    say(system, agent, "two")
    assert "Active toolsets now: web." in user_text(script.seen[2])
    say(system, agent, "three")
    assert "**Context update" not in user_text(script.seen[3])  # nothing changed: no block
    clock.advance(600)
    say(system, agent, "four")
    block = user_text(script.seen[4])
    assert "No longer active: web" in block and "Active toolsets now: none." in block


# -- the timeout, across the 10-minute edge --
def test_a_set_leaves_the_tool_list_ten_minutes_after_its_last_use(
    system: ActorSystem, team: Team
) -> None:
    clock = FakeClock()
    script = Script(
        call("enable_toolset", name="media"),
        text(),
        call("media_search", query="Alien"),  # a use, 9 minutes in: extends to 19
        text(),
        text(),
        text(),
    )
    agent = start(system, team, script, clock, tools=toolsets())
    say(system, agent, "enable")  # t=0
    clock.advance(540)
    say(system, agent, "search")  # t=9 min: still active, the call is a use
    assert MEDIA_TOOLS[1] in tool_names(script.infos[2])
    assert returns(script.seen[3]) == ["found Alien"]
    clock.advance(599.9)  # 9 min 59.9 s after the last use
    say(system, agent, "still?")
    assert set(MEDIA_TOOLS) <= set(tool_names(script.infos[4]))
    clock.advance(0.1)  # exactly 10 minutes after the last use
    say(system, agent, "and now?")
    assert not set(MEDIA_TOOLS) & set(tool_names(script.infos[5]))


# -- auto-activation, both ways --
def test_a_valid_call_into_an_inactive_set_runs_at_once_and_activates_it(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("media_search", query="Heat"), text("done"), text())
    agent = start(system, team, script, tools=toolsets())
    assert say(system, agent, "search Heat") == "done"
    assert not set(MEDIA_TOOLS) & set(tool_names(script.infos[0]))
    assert returns(script.seen[1]) == ["found Heat"]
    assert set(MEDIA_TOOLS) <= set(tool_names(script.infos[1]))
    say(system, agent, "next")
    assert "Active toolsets now: media." in user_text(script.seen[2])


def test_an_invalid_call_into_an_inactive_set_is_not_executed_and_lists_the_set(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("media_search", title="Heat"), call("media_search", query="Heat"), text())
    agent = start(system, team, script, tools=toolsets())
    say(system, agent, "search Heat")
    [answer] = returns(script.seen[1])
    assert answer.startswith(
        "Toolset 'media' activated; its tools: media_search(query), media_info(id). "
        "Your call to media_search was NOT executed yet: its arguments do not match its schema "
        "(query: Field required; title: Extra inputs are not permitted). Its schema: "
    )
    assert '"required":["query"]' in answer
    assert set(MEDIA_TOOLS) <= set(tool_names(script.infos[1]))
    assert returns(script.seen[2]) == ["found Heat"]


def test_invalid_arguments_for_an_active_set_are_answered_with_the_schema(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("enable_toolset", name="media"), call("media_info", id="seven"), text())
    agent = start(system, team, script, tools=toolsets())
    say(system, agent, "film seven")
    [answer] = returns(script.seen[2])
    assert answer.startswith("The arguments of media_info do not match its schema (id: ")
    assert 'Its schema: {"additionalProperties":false,"properties":{"id":' in answer
    assert "NOT executed" not in answer


def test_a_tool_outside_every_set_keeps_the_ordinary_validation(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("add", a="x", b=1), text())
    agent = start(system, team, script, tools=toolsets())
    say(system, agent, "add")
    [answer] = returns(script.seen[1])
    assert "schema" not in answer and "a" in answer


# -- the response table through the agent --
def test_the_response_table_as_ordinary_tool_returns(system: ActorSystem, team: Team) -> None:
    steps: list[Step] = [
        call("enable_toolset", name="media"),
        call("enable_toolset", name="media"),
        call("enable_toolset", name="films"),
        call("disable_toolset", name="media"),
        call("disable_toolset", name="media"),
        call("disable_toolset", name="films"),
        call("enable_toolset", name=" "),
        text("done"),
    ]
    script = Script(*steps)
    agent = start(system, team, script, tools=toolsets())
    say(system, agent, "go")
    answers = [returns(seen)[0] for seen in script.seen[1:]]
    assert answers[:6] == [
        "Toolset 'media' activated.",
        "Toolset 'media' is already active; its timeout is extended.",
        "There is no toolset 'films'. Available toolsets: media, web.",
        "Toolset 'media' deactivated.",
        "Toolset 'media' deactivated (it was not active).",
        "There is no toolset 'films'. Available toolsets: media, web.",
    ]
    assert "enable_toolset needs the name of a toolset: one of media, web." in answers[6]
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    calls = [p.tool_name for m in history for p in m.parts if isinstance(p, ToolCallPart)]
    assert calls.count("enable_toolset") == 4 and calls.count("disable_toolset") == 3


# -- per conversation --
def test_two_agents_of_one_team_have_their_own_active_sets(system: ActorSystem, team: Team) -> None:
    a_script = Script(call("enable_toolset", name="media"), text(), text())
    b_script = Script(call("enable_toolset", name="web"), text(), text())
    a = start(system, team, a_script, tools=toolsets(), name="@A")
    b = start(system, team, b_script, tools=toolsets(), name="@B")
    say(system, a, "media please")
    say(system, b, "web please")
    say(system, a, "again")
    say(system, b, "again")
    assert tool_names(a_script.infos[2]) == [
        "add",
        "disable_toolset",
        "enable_toolset",
        *MEDIA_TOOLS,
    ]
    assert tool_names(b_script.infos[2]) == [
        "add",
        "disable_toolset",
        "enable_toolset",
        "web_fetch",
    ]
    assert system.proxy_ask(a, BaseAgent, timeout=30).active_toolsets() == {"media"}
    assert system.proxy_ask(b, BaseAgent, timeout=30).active_toolsets() == {"web"}


def test_clear_starts_a_conversation_with_no_active_set(system: ActorSystem, team: Team) -> None:
    script = Script(call("enable_toolset", name="media"), text(), text())
    agent = start(system, team, script, tools=toolsets())
    say(system, agent, "enable")
    assert say(system, agent, "/clear") == "Conversation cleared."
    say(system, agent, "fresh")
    assert not set(MEDIA_TOOLS) & set(tool_names(script.infos[2]))


def test_a_restored_agent_starts_with_no_active_set(system: ActorSystem, team: Team) -> None:
    script = Script(call("enable_toolset", name="media"), text(), text())
    agent = start(system, team, script, tools=toolsets())
    say(system, agent, "enable")
    say(system, agent, "still on")
    live = system.get_actor(agent)
    state = live.state.model_copy(deep=True)
    history = live.get_history()
    assert state.tool_state.context_baselines["active_toolsets"].names == ["media"]

    again = Script(text("restored"))
    cls = type("Restored", (ScriptedAgent,), {"script": again})
    restored = system.createActor(
        cls,
        config=AgentConfig(name="@Agent2", role="Assistant", tools=toolsets(), stream_events=False),
        team_id=team.team_id,
        restoring=True,
        state=state,
    )
    system.proxy_ask(restored, BaseAgent, timeout=30).restore_history(history)
    assert say(system, restored, "after the restart") == "restored"
    [info] = again.infos
    assert not set(MEDIA_TOOLS) & set(tool_names(info))
    assert "No longer active: media" in user_text(again.seen[0])


def test_toolsets_work_with_streamed_runs(system: ActorSystem, team: Team) -> None:
    script = Script(call("media_search", query="Up"), text("streamed"))
    agent = start(system, team, script, tools=toolsets(), stream_events=True)
    assert say(system, agent, "search") == "streamed"
    assert returns(script.seen[1]) == ["found Up"]


# -- skills that enable a toolset --
def test_a_skill_that_enables_a_set_is_hidden_while_the_set_is_active(
    system: ActorSystem, team: Team
) -> None:
    from akgentic.tool.skill import SkillEntry, Skills, SkillTool

    films = SkillEntry(
        name="films", description="For films enable media.", content="...", toolset="media"
    )
    skills = SkillTool(skills=Skills(skills=[films], folders=[]))
    script = Script(
        text(),
        call("enable_toolset", name="media"),
        text(),
        text(),
        call("disable_toolset", name="media"),
        text(),
        text(),
    )
    agent = start(system, team, script, tools=[*toolsets(), skills])
    prompt = system.proxy_ask(agent, BaseAgent, timeout=30).get_system_prompt()
    assert "films" not in prompt  # never in the frozen menu: it lives in the per-turn view
    say(system, agent, "hi")
    assert "films — For films enable media." in user_text(script.seen[0])
    say(system, agent, "films please")  # enables media
    say(system, agent, "and?")
    block = user_text(script.seen[3])
    assert "films (media is active)" in block and "films — For films" not in block
    say(system, agent, "done with films")  # disables media
    say(system, agent, "next")
    assert "Skills offered again:\nfilms — For films enable media." in user_text(script.seen[6])
    assert prompt == system.proxy_ask(agent, BaseAgent, timeout=30).get_system_prompt()


# -- a set's tool named as one of the agent's own --
class WebSearch(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def web_search(q: str) -> str:
            """Search the web."""
            return f"web {q}"

        return [web_search]


class Finder(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def search(q: str) -> str:
            """Search the pages."""
            return f"pages {q}"

        return [search]


def test_a_sets_tool_named_as_one_of_the_agents_own_is_refused_at_start() -> None:
    """``search`` in set ``web`` is ``web_search``, the name of a tool the agent has
    outside every set: refused when the agent starts, saying what to rename, not a first
    turn failing on pydantic-ai's advice to wrap a toolset in a PrefixedToolset."""
    from akgentic.core import AgentCard
    from akgentic.storage import open_storage
    from akgentic.team import MemberSpec, TeamCard, TeamManager, TeamStartError

    web = ToolsetCard(name="web", description="Pages", cards=[Finder()])
    config = AgentConfig(name="@Agent", role="Agent", tools=[WebSearch(), web])
    card = TeamCard(
        name="web",
        entry_point="@Agent",
        members=[MemberSpec(card=AgentCard(role="Agent", agent_class=BaseAgent, config=config))],
    )
    system = ActorSystem()
    storage = open_storage("memory://")
    try:
        with pytest.raises(TeamStartError) as refused:
            TeamManager(system, storage).create_team(card)
        assert str(refused.value) == (
            "team web: @Agent could not start: ValueError: toolset 'web': its tool web_search "
            "has the name of a tool this agent has outside every toolset; rename the toolset "
            "(its tools are named web_<verb>), or move one of the two cards"
        )
    finally:
        system.shutdown(10)
        storage.close()
