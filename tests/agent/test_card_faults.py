"""A card author's bugs never cost the agent its turn, and never reach the model raw.

- a context provider that raises: the turn goes on without that state, and a
  ``WarningMessage`` on the team stream names the provider;
- a tool that raises a plain exception: the model reads a retry naming the tool;
- a tool the model could not use (no docstring): the agent refuses to start, with one
  line naming the card, the tool and the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, ErrorMessage, UserMessage, WarningMessage
from akgentic.tool import ContextState, ToolCard

from ..core.conftest import Team, eventually
from .conftest import Script, ScriptedAgent

Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def text(content: str) -> Respond:
    return lambda messages, info: ModelResponse(parts=[TextPart(content)])


def call(tool: str, **args: Any) -> Respond:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def start(system: ActorSystem, team: Team, script: Script, cards: list[ToolCard]) -> Any:
    cls: type[BaseAgent] = type("FaultAgent", (ScriptedAgent,), {"script": script})
    return system.createActor(
        cls,
        config=AgentConfig(name="@Agent", role="Assistant", tools=cards, stream_events=False),
        team_id=team.team_id,
    )


class Count(ContextState):
    n: int = 0

    def render_full(self) -> str:
        return f"count {self.n}"

    def render_delta(self, previous: Count) -> str | None:
        return None if previous.n == self.n else self.render_full()


class BrokenBoard(ToolCard):
    """One provider that raises, one that works."""

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def broken_board() -> ContextState | None:
            raise RuntimeError("the board's store is gone")

        def counter() -> ContextState | None:
            return Count(n=1)

        return [broken_board, counter]


class Buggy(ToolCard):
    """A tool with a bug: it raises a plain exception."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def lookup(key: str) -> str:
            """Look ``key`` up."""
            return {"a": "1"}[key]

        return [lookup]


class Undocumented(ToolCard):
    """A tool without a docstring."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def lookup(key: str) -> str:
            return key

        return [lookup]


def test_a_raising_context_provider_costs_a_warning_not_the_turn(
    system: ActorSystem, team: Team
) -> None:
    script = Script(text("done"))
    agent = start(system, team, script, [BrokenBoard()])
    reply = system.ask(agent, UserMessage(content="hello"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "done"
    [warning] = team.recorder.wait_for_type(WarningMessage)
    assert "broken_board" in warning.content and "the board's store is gone" in warning.content
    request = script.seen[0][-1]
    assert isinstance(request, ModelRequest)
    prompt = str(request.parts[-1].content)
    assert "**Context update 1**" in prompt and "count 1" in prompt  # the others delivered


def test_a_plain_exception_in_a_tool_reaches_the_model_as_a_retry(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("lookup", key="zz"), text("recovered"))
    agent = start(system, team, script, [Buggy()])
    reply = system.ask(agent, UserMessage(content="look zz up"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "recovered"
    last = script.seen[1][-1]
    assert isinstance(last, ModelRequest)
    [answer] = [p for p in last.parts if getattr(p, "tool_name", None) == "lookup"]
    assert isinstance(answer, RetryPromptPart | ToolReturnPart)
    assert getattr(answer, "outcome", "retried") == "retried"  # a retry, not a result
    assert "lookup failed (KeyError: 'zz')" in str(answer.content)
    assert not [m for m in team.recorder.messages if isinstance(m, ErrorMessage)]


def test_a_tool_without_a_docstring_stops_the_agent_at_start_with_one_line(
    system: ActorSystem, team: Team
) -> None:
    agent = start(system, team, Script(text("never")), [Undocumented()])
    [error] = team.recorder.wait_for_type(ErrorMessage)
    assert "Undocumented.get_tools(): tool 'lookup' has no docstring: write one" in error.content
    eventually(lambda: not agent.is_alive())
