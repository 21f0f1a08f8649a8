"""Seed 001: knowledge-search tools are absent while their base is empty.

Our knowledge base is the team's knowledge graph; its search tools are ``search_graph``
and ``get_entities``. While the graph holds no entity they are not offered to the model at
all (``update_graph``, which fills it, is); once it holds one they return by themselves at
the next run, and leave again when it is emptied — decided by the harness before each run,
not by any mark. Commands (for people) are not affected."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.core import ActorSystem, UserMessage
from akgentic.tool.knowledge_graph import KnowledgeGraphTool

from ..core.conftest import Team
from .conftest import Script

SEARCH = {"search_graph", "get_entities"}


def offered(info: AgentInfo) -> set[str]:
    return {tool.name for tool in info.function_tools}


def reply(text: str) -> Any:
    return lambda messages, info: ModelResponse(parts=[TextPart(text)])


def call(tool: str, **args: Any) -> Any:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def ask(system: ActorSystem, agent: Any, text: str) -> str:
    answer = system.ask(agent, UserMessage(content=text), timeout=30)
    return str(answer.content)  # type: ignore[attr-defined]


def test_graph_search_is_absent_while_the_graph_is_empty_and_returns_once_it_fills(
    system: ActorSystem, team: Team, model_key: Callable[[Script], str]
) -> None:
    script = Script(
        call("update_graph", entities_to_create=[{"name": "actor model", "entity_type": "idea"}]),
        reply("recorded"),
    )
    agent = system.createActor(
        BaseAgent,
        config=AgentConfig(
            name="@Analyst",
            role="Analyst",
            models=model_key(script),
            stream_events=False,
            tools=[KnowledgeGraphTool()],
        ),
        team_id=team.team_id,
    )

    assert ask(system, agent, "record the actor model") == "recorded"
    first_run = [offered(info) for info in script.infos]
    assert len(first_run) == 2  # the call, then the answer: one run, one tool list
    assert all("update_graph" in tools and not tools & SEARCH for tools in first_run)

    script.steps = [reply("seen")]
    assert ask(system, agent, "what do we know?") == "seen"
    assert offered(script.infos[-1]) >= SEARCH  # the base filled: search is back

    script.steps = [call("update_graph", entities_to_delete=["actor model"]), reply("emptied")]
    assert ask(system, agent, "forget it") == "emptied"
    script.steps = [reply("empty again")]
    assert ask(system, agent, "anything?") == "empty again"
    assert not offered(script.infos[-1]) & SEARCH

    commands = system.proxy_ask(agent, BaseAgent, timeout=30).get_commands()
    assert {"search_graph", "get_entities"} <= set(commands)  # people still have them


def test_a_read_only_reviewer_of_an_empty_graph_is_offered_no_graph_tool(
    system: ActorSystem, team: Team, model_key: Callable[[Script], str]
) -> None:
    script = Script(reply("nothing to read"))
    agent = system.createActor(
        BaseAgent,
        config=AgentConfig(
            name="@Reviewer",
            role="Reviewer",
            models=model_key(script),
            stream_events=False,
            tools=[KnowledgeGraphTool(read_only=True)],
        ),
        team_id=team.team_id,
    )
    assert ask(system, agent, "review") == "nothing to read"
    assert not offered(script.infos[0]) & (SEARCH | {"update_graph"})
