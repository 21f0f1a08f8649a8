"""An interrupt (the team is stopping) ends a turn whose tool call blocks, at once: the
call is abandoned — an async tool cancelled, a sync tool's thread left to run on with its
result dropped — and the turn is reported interrupted as one cut in a model request is.
Nothing the abandoned call returns later reaches the model, the history or the log.

The blocking tools wait on an Event the test sets (no sleeps)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart

from akgentic.agent import AgentConfig, TurnInterrupted
from akgentic.agent.cut import CUT_NOTE
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent
from akgentic.core import ActorAddress, ActorSystem, CancelMessage, EventMessage, UserMessage
from akgentic.tool.core import ToolCard
from akgentic.tool.sandbox import BubblewrapBackend, registry
from akgentic.tool.workspace import ExecStartedEvent, WorkspaceExec, WorkspaceTool

from ..core.conftest import Team, eventually, hand_on
from ..tool.sandbox.conftest import bwrap, running  # noqa: F401  (the real-sandbox fixture)
from .conftest import Script, ScriptedAgent
from .test_base_agent import call, text

RELEASE = threading.Event()
ENTERED = threading.Event()
RETURNED = threading.Event()


@pytest.fixture(autouse=True)
def release() -> Iterator[None]:
    """Lets a blocked tool go when the test ends (no thread is left waiting)."""
    for event in (RELEASE, ENTERED, RETURNED):
        event.clear()
    yield
    RELEASE.set()


class Blocking(ToolCard):
    """``block`` (sync) waits for the test; ``wait`` (async) never returns."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def block() -> str:
            """Block until let go."""
            ENTERED.set()
            RELEASE.wait(60)
            RETURNED.set()
            return "the late result"

        async def wait() -> str:
            """Wait for ever."""
            ENTERED.set()
            await asyncio.Event().wait()
            return "never"

        return [block, wait]


def interrupted_in(team: Team, tool: str) -> tuple[ActorAddress, Script]:
    """An agent whose model calls ``tool``; interrupted once the tool has started. Returns
    once its turn has ended (the outcome checked), with the tool still blocked."""
    script = Script(call(tool), text("never asked"))
    cls = type("BlockedAgent", (ScriptedAgent,), {"script": script})
    config = AgentConfig(name="@Agent", role="Assistant", tools=[Blocking()], tool_timeout=120)
    agent = team.system.createActor(cls, config=config, team_id=team.team_id)
    team.system.tell(agent, UserMessage(content="go"))
    assert ENTERED.wait(30)
    team.system.tell(agent, CancelMessage(reason="Ctrl-C", interrupt=True))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent)
    assert ended.event.outcome == "interrupted"
    team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnInterruptedEvent)
    )
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, TurnInterrupted))
    return agent, script


def closed_as_interrupted(system: ActorSystem, agent: ActorAddress, tool: str) -> None:
    """The history keeps the model's call, closed out as not run to its end, and the note."""
    history = system.proxy_ask(agent, ScriptedAgent, timeout=30).get_history()
    response, closed, note = history[-3:]
    assert isinstance(response, ModelResponse)
    assert [p.tool_name for p in response.parts if isinstance(p, ToolCallPart)] == [tool]
    [ret] = [p for p in closed.parts if isinstance(p, ToolReturnPart)]
    assert ret.tool_name == tool and "late result" not in str(ret.content)
    assert isinstance(note, ModelResponse) and note.text == CUT_NOTE


def test_an_interrupt_ends_a_turn_blocked_in_a_sync_tool_and_drops_its_late_result(
    system: ActorSystem, team: Team
) -> None:
    agent, script = interrupted_in(team, "block")
    assert not RETURNED.is_set()  # the turn ended while the tool was still blocked
    closed_as_interrupted(system, agent, "block")
    recorded = len(team.recorder.messages)

    RELEASE.set()
    assert RETURNED.wait(30)  # the abandoned call has returned, in the background
    hand_on(system, team.orchestrator, agent)
    late = team.recorder.messages[recorded:]
    assert not any("late result" in repr(m) for m in team.recorder.messages), late
    closed_as_interrupted(system, agent, "block")  # the history did not take it either
    assert len(script.seen) == 1  # the model was never asked again


def test_an_interrupt_cancels_an_async_tool_that_never_returns(
    system: ActorSystem, team: Team
) -> None:
    agent, script = interrupted_in(team, "wait")
    closed_as_interrupted(system, agent, "wait")
    assert len(script.seen) == 1


def test_an_interrupt_kills_the_sandboxed_command_a_tool_call_waits_for(
    system: ActorSystem,
    team: Team,
    bwrap: BubblewrapBackend,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The turn ends at once, and the command does not run on: its process is gone."""
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(tmp_path / "workspaces"))
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", bwrap)
    command = "sleep 593"
    script = Script(call("workspace_exec", command=command), text("never asked"))
    cls = type("ExecAgent", (ScriptedAgent,), {"script": script})
    card = WorkspaceTool(workspace_exec=WorkspaceExec(timeout_seconds=600))
    config = AgentConfig(name="@Agent", role="Assistant", tools=[card], tool_timeout=900)
    agent = system.createActor(cls, config=config, team_id=team.team_id)
    system.tell(agent, UserMessage(content="go"))
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, ExecStartedEvent))
    eventually(lambda: running(command))  # started, and exec'd inside the sandbox
    system.tell(agent, CancelMessage(reason="Ctrl-C", interrupt=True))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "interrupted"
    eventually(lambda: not running(command))
    closed_as_interrupted(system, agent, "workspace_exec")


class SideBySide(ToolCard):
    """Two async tools that yield to the loop while inside, and a bounded sync one: how
    many calls were inside at once is kept in ``peak``."""

    inside: ClassVar[int] = 0
    peak: ClassVar[dict[str, int]] = {}

    def get_tools(self) -> list[Callable[..., Any]]:
        card = type(self)

        async def fetch_a() -> str:
            """Fetch a."""
            return await card.enter("async")

        async def fetch_b() -> str:
            """Fetch b."""
            return await card.enter("async")

        def count() -> str:
            """Count (sync)."""
            card.inside += 1
            card.peak["sync"] = max(card.peak.get("sync", 0), card.inside)
            card.inside -= 1
            return "counted"

        return [fetch_a, fetch_b, count]

    @classmethod
    async def enter(cls, kind: str) -> str:
        cls.inside += 1
        cls.peak[kind] = max(cls.peak.get(kind, 0), cls.inside)
        for _ in range(20):  # yield: a call beside this one gets its turn in between
            await asyncio.sleep(0)
        cls.inside -= 1
        return "fetched"


def two_calls(*tools: str) -> Callable[..., ModelResponse]:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(t) for t in tools])


def test_async_tools_of_one_response_run_side_by_side_and_a_bounded_sync_tool_alone(
    system: ActorSystem, team: Team
) -> None:
    """Only a bounded sync tool is a barrier (its calls are awaited on threads acting for
    the agent); async tools keep pydantic-ai's parallel calls, MCP servers' included."""
    SideBySide.peak = {}
    script = Script(two_calls("fetch_a", "fetch_b"), two_calls("count", "count"), text("done"))
    cls = type("ParallelAgent", (ScriptedAgent,), {"script": script})
    config = AgentConfig(name="@Agent", role="Assistant", tools=[SideBySide()], tool_timeout=60)
    agent = team.system.createActor(cls, config=config, team_id=team.team_id)
    team.system.tell(agent, UserMessage(content="go"))
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent))
    assert SideBySide.peak == {"async": 2, "sync": 1}
    tools = {t.name: t for t in script.infos[0].function_tools}
    assert tools["count"].sequential is True
    assert tools["fetch_a"].sequential is False and tools["fetch_b"].sequential is False
