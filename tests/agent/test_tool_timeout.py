"""A tool that never returns costs the model one retry, not the agent's turn.

``AgentConfig.tool_timeout`` bounds every tool call (a toolset's members too): past it
the model reads that the tool took too long, answers, and the turn ends. The blocking
tools wait on an Event the test sets at the end (no sleeps); the bound is small.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, UserMessage
from akgentic.tool import ToolCard
from akgentic.tool.toolsets import ToolsetCard

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent

Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]

RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def release() -> Iterator[None]:
    """Lets every blocked tool go when the test ends (no thread is left waiting)."""
    RELEASE.clear()
    yield
    RELEASE.set()


class Stuck(ToolCard):
    """A sync tool that blocks until the test lets it go, and an async one that never
    returns."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def hang(label: str) -> str:
            """Work on ``label``."""
            RELEASE.wait(60)
            return f"worked on {label}"

        async def wait_forever() -> str:
            """Wait."""
            await asyncio.Event().wait()
            return "never"

        return [hang, wait_forever]


def call(tool: str, **args: Any) -> Respond:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def echo_the_retry(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers with what the last request's tool part said (the retry), as the model would
    read it."""
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    said = [str(p.content) for p in request.parts if p.part_kind in ("tool-return", "retry-prompt")]
    return ModelResponse(parts=[TextPart(" | ".join(said))])


def ask(system: ActorSystem, team: Team, script: Script, tools: list[ToolCard]) -> str:
    cls: type[BaseAgent] = type("BoundAgent", (ScriptedAgent,), {"script": script})
    agent = system.createActor(
        cls,
        config=AgentConfig(
            name="@Agent", role="Assistant", tools=tools, stream_events=False, tool_timeout=0.2
        ),
        team_id=team.team_id,
    )
    reply = system.ask(agent, UserMessage(content="go"), timeout=30)
    assert isinstance(reply, AgentMessage)
    return reply.content


def test_a_sync_tool_that_blocks_is_a_retry_the_model_reads_and_the_turn_ends(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("hang", label="x"), echo_the_retry)
    answer = ask(system, team, script, [Stuck()])
    assert answer.startswith(
        "hang took longer than 0.2s (it may still finish in the background: check what it "
        "was to do before calling it again)"
    )


def test_an_async_tool_that_never_returns_is_stopped_and_the_turn_ends(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("wait_forever"), echo_the_retry)
    answer = ask(system, team, script, [Stuck()])
    assert answer.startswith("wait_forever took longer than 0.2s (it was stopped)")


def test_a_toolset_member_is_held_to_the_agents_bound(system: ActorSystem, team: Team) -> None:
    stuck = ToolsetCard(name="slow", description="Slow work", cards=[Stuck()])
    script = Script(call("slow_hang", label="x"), echo_the_retry)
    answer = ask(system, team, script, [stuck])
    assert answer.startswith("slow_hang took longer than 0.2s")  # the name the model called


class AsksItself(ToolCard):
    """A sync tool that asks its own agent: on its bounded thread, still a DeadlockError."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def ask_myself() -> str:
            """Ask the agent something."""
            observer: Any = self.get_observer()
            return str(observer.proxy_ask(observer.myAddress, BaseAgent).get_commands())

        return [ask_myself]


def test_a_bounded_sync_tool_still_acts_as_its_agent(system: ActorSystem, team: Team) -> None:
    """Its own thread acts for the agent: asking itself fails at once, as on the agent's
    thread (not a wait for the bound)."""
    script = Script(call("ask_myself"), echo_the_retry)
    answer = ask(system, team, script, [AsksItself()])
    assert answer.startswith("ask_myself failed (DeadlockError: @Agent asked itself")


def test_the_bound_is_generous_by_default_and_positive_or_none() -> None:
    assert AgentConfig(name="@A", role="R").tool_timeout == 300.0
    assert AgentConfig(name="@A", role="R", tool_timeout=None).tool_timeout is None
    with pytest.raises(ValidationError, match="tool_timeout"):
        AgentConfig(name="@A", role="R", tool_timeout=0)
