"""A scripted BaseAgent lists and calls real MCP servers: stdio, streamable HTTP, SSE."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import ActorSystem, EventMessage, SentMessage, UserMessage
from akgentic.tool.core import ToolCard
from akgentic.tool.mcp import MCPServerUnavailable, MCPStdioConnectionConfig, MCPTool

from ...agent.conftest import Script, ScriptedAgent
from ...core.conftest import Team
from .conftest import http, pid_alive, raw, stdio
from .server import PNG

Step = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def call(tool: str, **args: Any) -> Step:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def say_result(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answer with what the last tool call came back with (its return or its failure)."""
    for part in reversed(messages[-1].parts):
        if isinstance(part, ToolReturnPart) and isinstance(part.content, str):
            return ModelResponse(parts=[TextPart(f"got: {part.content}")])
        if isinstance(part, ToolReturnPart | RetryPromptPart):
            return ModelResponse(parts=[TextPart(f"got: {part.model_response_str()}")])
    return ModelResponse(parts=[TextPart("got nothing")])


def tools_offered(script: Script) -> set[str]:
    return {tool.name for info in script.infos for tool in info.function_tools}


def start(system: ActorSystem, team: Team, script: Script, *cards: Any) -> Any:
    agent_class = type("McpAgent", (ScriptedAgent,), {"script": script})
    return system.createActor(
        agent_class,
        config=AgentConfig(name="@Agent", role="Lead", tools=list(cards), stream_events=False),
        team_id=team.team_id,
    )


def ask(system: ActorSystem, agent: Any, text: str) -> str:
    reply = system.ask(agent, UserMessage(content=text), timeout=60)
    return str(reply.content)  # type: ignore[attr-defined]


def stop(system: ActorSystem, agent: Any) -> None:
    agent.request_stop()
    assert system.wait_stopped(agent, 30)


def settled(team: Team, replies: int) -> list[MCPServerUnavailable]:
    """The MCPServerUnavailable events, once the stream holds the agent's first ``replies``
    replies (an agent's reports arrive in order, so nothing it published before is missing)."""
    team.recorder.wait_for_type(
        SentMessage, replies, where=lambda m: m.sender is not None and m.sender.name == "@Agent"
    )
    return unavailable(team)


def unavailable(team: Team) -> list[MCPServerUnavailable]:
    return [
        m.event
        for m in team.recorder.of_type(EventMessage)
        if isinstance(m.event, MCPServerUnavailable)
    ]


def test_a_stdio_server_opens_on_the_first_turn_serves_and_stops_with_the_agent(
    system: ActorSystem, team: Team, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    card = MCPTool(name="calc", connection=stdio(stdio_env={"MCP_PID_FILE": str(pid_file)}))
    script = Script(call("calc__add", a=2, b=3), say_result)
    agent = start(system, team, script, card)
    assert not pid_file.exists()  # lazy: nothing is started before the first turn
    assert ask(system, agent, "add") == "got: 5"
    assert {"calc__add", "calc__greet", "calc__crash", "calc__hang"} <= tools_offered(script)
    pid = int(pid_file.read_text())
    script.steps = [call("calc__add", a=10, b=-4), say_result]
    assert ask(system, agent, "again") == "got: 6"
    assert int(pid_file.read_text()) == pid  # one connection for the agent's life
    stop(system, agent)
    assert not pid_alive(pid)
    assert settled(team, 2) == []


def test_a_streamable_http_server_on_loopback_is_listed_and_called(
    system: ActorSystem, team: Team, http_url: str
) -> None:
    script = Script(call("web__greet", name="Ada"), say_result)
    agent = start(system, team, script, MCPTool(name="web", connection=http(http_url)))
    assert ask(system, agent, "greet") == "got: hello, Ada"
    assert "web__add" in tools_offered(script)


def test_an_sse_server_is_reached_when_the_config_says_sse(
    system: ActorSystem, team: Team, sse_url: str
) -> None:
    script = Script(call("old__add", a=1, b=1), say_result)
    card = MCPTool(name="old", connection=http(sse_url, transport="sse"))
    agent = start(system, team, script, card)
    assert ask(system, agent, "add") == "got: 2"


def test_env_references_are_read_from_the_environment_when_the_server_starts(
    system: ActorSystem, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_TEST_GREETING", "ahoy")
    card = MCPTool(
        name="calc", connection=stdio(stdio_env={"GREETING": "${AKGENTIC_TEST_GREETING}"})
    )
    script = Script(call("calc__greet", name="Bob"), say_result)
    agent = start(system, team, script, card)
    assert ask(system, agent, "greet") == "got: ahoy, Bob"
    assert card.connection.stdio_env == {"GREETING": "${AKGENTIC_TEST_GREETING}"}


def test_a_server_that_crashes_mid_call_is_a_tool_failure_then_restarts_next_turn(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("calc__crash"), say_result)
    agent = start(system, team, script, MCPTool(name="calc", connection=stdio()))
    answer = ask(system, agent, "crash")
    assert answer.startswith("got: MCP server 'calc' stopped while running calc__crash")
    [event] = settled(team, 1)
    assert event.server == "calc" and "started again at the agent's next turn" in event.message
    script.steps = [call("calc__add", a=1, b=2), say_result]
    assert ask(system, agent, "add") == "got: 3"


def test_a_server_that_never_answers_times_out_and_the_agent_goes_on(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("calc__hang"), say_result)
    card = MCPTool(name="calc", connection=stdio(call_timeout=3))
    agent = start(system, team, script, card)
    assert ask(system, agent, "hang") == (
        "got: MCP server 'calc' did not answer calc__hang within 3s; its connection was "
        "restarted and the call did not complete. Call it again if you still need it."
    )
    script.steps = [call("calc__add", a=4, b=4), say_result]
    assert ask(system, agent, "add") == "got: 8"


def test_a_line_that_is_not_utf8_costs_one_call_and_the_connection_recovers(
    system: ActorSystem, team: Team, tmp_path: Path
) -> None:
    """One undecodable line stopped the ``mcp`` client's reader: every later call on the
    connection waited its full call_timeout, until the agent restarted. Now the call that
    timed out restarts the connection, says so, and the next call is answered."""
    pid_file = tmp_path / "pid"
    card = MCPTool(
        name="calc", connection=stdio(call_timeout=5, stdio_env={"MCP_PID_FILE": str(pid_file)})
    )
    script = Script(call("calc__garble"), say_result, call("calc__add", a=2, b=3), say_result)
    agent = start(system, team, script, card)
    assert ask(system, agent, "garble") == (
        "got: MCP server 'calc' did not answer calc__garble within 5s; its connection was "
        "restarted and the call did not complete. Call it again if you still need it."
    )
    [garbled] = script.seen[1][-1].parts  # a RetriableError, as the model reads it
    assert isinstance(garbled, ToolReturnPart) and garbled.outcome == "retried"
    restarted = int(pid_file.read_text())  # the server started again writes its pid again
    assert ask(system, agent, "add") == "got: 5"
    [event] = settled(team, 2)
    assert event.message == (
        f"MCP server 'calc' ({card.connection.describe()}) did not answer calc__garble "
        f"within 5s; its connection was restarted."
    )
    stop(system, agent)
    assert not pid_alive(restarted)


def test_an_error_the_server_reports_is_read_by_the_model_as_a_retry(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("calc__refuse", reason="no such file: a.txt"), say_result)
    agent = start(system, team, script, MCPTool(name="calc", connection=stdio()))
    assert ask(system, agent, "refuse") == "got: Error executing tool refuse: no such file: a.txt"
    [returned] = script.seen[-1][-1].parts
    assert isinstance(returned, ToolReturnPart) and returned.outcome == "retried"


def test_a_server_that_cannot_start_leaves_the_agent_running_with_one_line(
    system: ActorSystem, team: Team, tmp_path: Path
) -> None:
    missing = MCPStdioConnectionConfig(stdio_command=str(tmp_path / "no-such-server"))
    script = Script(lambda m, i: ModelResponse(parts=[TextPart(f"tools: {len(i.function_tools)}")]))
    agent = start(system, team, script, MCPTool(name="gone", connection=missing))
    first = ask(system, agent, "hello")
    assert ask(system, agent, "hello again") == first
    [event] = settled(team, 2)
    assert event.server == "gone"
    assert event.message.startswith(
        f"MCP server 'gone' ({tmp_path / 'no-such-server'}) cannot start: "
    )
    assert event.message.endswith("The agent goes on without its tools.")
    assert not any(t.startswith("gone__") for t in tools_offered(script))


def test_a_server_that_never_completes_the_handshake_is_a_failed_start(
    system: ActorSystem, team: Team
) -> None:
    mute = MCPStdioConnectionConfig(  # reads its stdin and never answers
        stdio_command=sys.executable,
        stdio_args=["-c", "import sys; sys.stdin.read()"],
        connect_timeout=2,
    )
    agent = start(
        system,
        team,
        Script(lambda m, i: ModelResponse(parts=[TextPart("ok")])),
        MCPTool(name="mute", connection=mute),
    )
    assert ask(system, agent, "hi") == "ok"
    [event] = settled(team, 1)
    assert event.message.startswith("MCP server 'mute' (")
    assert event.message.endswith(
        " cannot start: no answer within 2s. The agent goes on without its tools."
    )


def test_an_unset_env_reference_is_a_failed_start_naming_the_variable(
    system: ActorSystem, team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_TEST_UNSET", raising=False)
    card = MCPTool(name="calc", connection=stdio(stdio_env={"TOKEN": "${AKGENTIC_TEST_UNSET}"}))
    agent = start(system, team, Script(lambda m, i: ModelResponse(parts=[TextPart("ok")])), card)
    assert ask(system, agent, "hi") == "ok"
    [event] = settled(team, 1)
    assert "env TOKEN of MCP server 'calc' refers to ${AKGENTIC_TEST_UNSET}" in event.message
    assert "export AKGENTIC_TEST_UNSET" in event.message


def test_images_and_resources_reach_the_model_as_pydantic_ai_content(
    system: ActorSystem, team: Team
) -> None:
    script = Script(call("calc__picture"), lambda m, i: ModelResponse(parts=[TextPart("seen")]))
    agent = start(system, team, script, MCPTool(name="calc", connection=stdio()))
    assert ask(system, agent, "picture") == "seen"
    last = script.seen[-1][-1]
    assert isinstance(last, ModelRequest)
    contents: list[Any] = []
    for part in last.parts:
        if isinstance(part, ToolReturnPart | UserPromptPart):
            value = part.content
            contents.extend(value if isinstance(value, list) else [value])
    images = [c for c in contents if isinstance(c, BinaryContent)]
    assert [(i.media_type, i.data) for i in images] == [("image/png", PNG)]
    assert any(isinstance(c, str) and "buy milk" in c for c in contents)


def test_the_server_process_is_stopped_even_when_a_call_hangs(
    system: ActorSystem, team: Team, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    card = MCPTool(
        name="calc", connection=stdio(call_timeout=2, stdio_env={"MCP_PID_FILE": str(pid_file)})
    )
    agent = start(system, team, Script(call("calc__hang"), say_result), card)
    ask(system, agent, "hang")
    pid = int(pid_file.read_text())
    stop(system, agent)
    assert not pid_alive(pid)


class Greeter(ToolCard):
    """A plain ``greet`` tool: the test server serves one of that name too."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def greet(name: str) -> str:
            """Greet someone."""
            return f"hi {name}"

        return [greet]


def test_a_server_tool_named_as_another_tool_fails_the_turn_with_one_line_naming_both(
    system: ActorSystem, team: Team
) -> None:
    """Its tools are known only once it runs (the first turn): the turn fails with one line
    naming the server and the other source, and the card option that renames its tools."""
    script = Script(call("greet", name="x"), say_result)
    card = MCPTool(name="calc", connection=stdio(), tool_prefix="")
    agent = start(system, team, script, Greeter(), card)
    system.tell(agent, UserMessage(content="go"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    assert ended.event.error == (
        "UserError: MCP server 'calc' defines a tool whose name conflicts with existing tool "
        "from the agent: 'greet'. Give MCP server 'calc' a tool_prefix on its card (it has "
        "none: its tools keep the server's names)."
    )
    stop(system, agent)


def test_two_servers_whose_tools_meet_under_one_name_fail_the_turn_with_one_line_naming_both(
    system: ActorSystem, team: Team, tmp_path: Path
) -> None:
    """Distinct names and prefixes pass wiring, yet ``a`` + ``b__c`` and ``a__b`` + ``c`` are
    both ``a__b__c``: neither is dropped unsaid — the turn fails, naming both servers and
    the card option that renames the later one's tools (as with any other tool's name). An
    agent started from its config alone; a team card is refused at creation
    (``test_clash.py``)."""
    schema = {"type": "object", "properties": {}}
    first = raw(tmp_path, [{"name": "b__c", "inputSchema": schema}], name="a")
    second = raw(tmp_path, [{"name": "c", "inputSchema": schema}], name="a__b")
    agent = start(system, team, Script(say_result), first, second)
    system.tell(agent, UserMessage(content="go"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    assert ended.event.error == (
        "UserError: MCP server 'a__b' defines a tool whose name conflicts with existing tool "
        "from MCP server 'a': 'a__b__c'. Give MCP server 'a__b' another tool_prefix on its "
        "card (now 'a__b_': its tools are named a__b__<tool>)."
    )
    stop(system, agent)
