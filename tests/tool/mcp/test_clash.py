"""An agent that would be offered two tools under one name — by two of its MCP servers, or
by a server and another card — refuses the team when it is created (before any member
starts), in one line naming the agent, both sources, the tool and the card setting to
change; only servers whose names can meet are started to see."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig
from akgentic.core import ActorSystem
from akgentic.llm import register_model
from akgentic.storage import TeamStatus, open_storage, sqlite_url
from akgentic.team import ResumedToolNameClashError, TeamCard, TeamManager
from akgentic.team.mcp import attach_mcp_servers
from akgentic.tool.core import ToolCard
from akgentic.tool.mcp import MCPStdioConnectionConfig, MCPTool
from akgentic.tool.mcp.clash import MCPToolNameClashError, can_meet, can_meet_tool

from ...team.conftest import answer
from .conftest import SERVER, raw

SCHEMA = {"type": "object", "properties": {}}

CARD = """
name: clash
entry_point: "@Lead"
members:
  - card:
      role: Lead
      config: {name: "@Lead"}
profiles:
  - role: Reviewer
    config: {name: "@Reviewer"}
"""


class Greeter(ToolCard):
    """A plain ``greet`` tool, as a server may serve one too."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def greet(name: str) -> str:
            """Greet someone."""
            return f"hi {name}"

        return [greet]


def team_with(tmp_path: Path, *servers: ToolCard, profile: bool = False) -> TeamCard:
    """A team whose lead (or, with ``profile``, whose Reviewer profile) holds ``servers``
    (and any other card)."""
    path = tmp_path / "team.yaml"
    path.write_text(CARD)
    card = TeamCard.from_yaml(path)
    config = card.profiles[0].config if profile else card.members[0].card.config
    assert isinstance(config, AgentConfig)
    config.tools.extend(servers)
    return card


def tools(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "inputSchema": SCHEMA} for n in names]


def test_two_servers_without_prefixes_serving_one_name_refuse_the_team(tmp_path: Path) -> None:
    first = raw(tmp_path, tools("echo", "files"), name="one", tool_prefix="")
    second = raw(tmp_path, tools("search", "echo"), name="two", tool_prefix="")
    with pytest.raises(MCPToolNameClashError) as refused:
        attach_mcp_servers(team_with(tmp_path, first, second))
    said = str(refused.value)
    assert said.startswith("team clash: @Lead: MCP servers 'one' (")
    assert ") both serve a tool named 'echo' (their 'echo' and 'echo'); the agent's first " in said
    assert said.endswith(
        "turn would fail. Give MCP server 'two' a tool_prefix on its card (it has none: its "
        "tools keep the server's names)."
    )
    assert "\n" not in said


def test_prefixes_that_meet_are_found_in_a_profile_too(tmp_path: Path) -> None:
    """``a`` + ``b__c`` and ``a__b`` + ``c`` are both ``a__b__c``: distinct names and
    prefixes, which wiring lets through."""
    first = raw(tmp_path, tools("b__c", "d"), name="a")
    second = raw(tmp_path, tools("c"), name="a__b")
    with pytest.raises(MCPToolNameClashError) as refused:
        attach_mcp_servers(team_with(tmp_path, first, second, profile=True))
    said = str(refused.value)
    assert said.startswith("team clash: @Reviewer: MCP servers 'a' (")
    assert " both serve a tool named 'a__b__c' (their 'b__c' and 'c'); " in said
    assert said.endswith(
        "Give MCP server 'a__b' another tool_prefix on its card (now 'a__b_': its tools are "
        "named a__b__<tool>)."
    )


def test_a_server_serving_another_card_s_tool_name_refuses_the_team(tmp_path: Path) -> None:
    server = raw(tmp_path, tools("search", "greet"), name="people", tool_prefix="")
    with pytest.raises(MCPToolNameClashError) as refused:
        attach_mcp_servers(team_with(tmp_path, Greeter(), server))
    said = str(refused.value)
    assert said.startswith("team clash: @Lead: MCP server 'people' (")
    assert said.endswith(
        ") serves a tool named 'greet' (its 'greet'), as its card Greeter does; the agent's "
        "first turn would fail. Give MCP server 'people' a tool_prefix on its card (it has "
        "none: its tools keep the server's names)."
    )


def test_a_server_serving_a_tool_the_agent_s_class_adds_refuses_the_team(
    tmp_path: Path,
) -> None:
    """Every agent gets MailboxTool's ``read_mailbox`` when it starts, listed or not."""
    server = raw(tmp_path, tools("read_mailbox"), name="mail", tool_prefix="")
    with pytest.raises(MCPToolNameClashError) as refused:
        attach_mcp_servers(team_with(tmp_path, server))
    assert " serves a tool named 'read_mailbox' (its 'read_mailbox'), as its card " in str(
        refused.value
    )
    assert "as its card MailboxTool does; " in str(refused.value)


def test_a_prefixed_server_beside_another_card_is_not_started(tmp_path: Path) -> None:
    """``people__greet`` cannot be ``greet``: nothing to list."""
    pid_file = tmp_path / "people.pid"
    attach_mcp_servers(team_with(tmp_path, Greeter(), started(pid_file, name="people")))
    assert not pid_file.exists()


def test_servers_whose_names_can_meet_but_do_not_pass(tmp_path: Path) -> None:
    first = raw(tmp_path, tools("b__c"), name="a")
    second = raw(tmp_path, tools("d"), name="a__b")
    card = team_with(tmp_path, first, second)
    attach_mcp_servers(card)  # listed, and no name in common
    lead = card.members[0].card.config
    assert isinstance(lead, AgentConfig) and lead.tools == [first, second]


def test_a_server_that_cannot_start_is_passed_over_as_it_is_at_the_first_turn(
    tmp_path: Path,
) -> None:
    """Its failure is said when an agent starts it: a server that cannot start is never
    fatal, not even to the check."""
    missing = MCPTool(
        name="gone",
        tool_prefix="",
        connection=MCPStdioConnectionConfig(stdio_command=str(tmp_path / "no-such-server")),
    )
    attach_mcp_servers(team_with(tmp_path, missing, raw(tmp_path, tools("echo"), tool_prefix="")))


def started(pid_file: Path, **fields: Any) -> MCPTool:
    """A card for the test server, which writes its pid to ``pid_file`` when it starts."""
    connection = MCPStdioConnectionConfig(
        stdio_command=sys.executable,
        stdio_args=[str(SERVER)],
        stdio_env={"MCP_PID_FILE": str(pid_file)},
    )
    return MCPTool(connection=connection, **fields)


def test_servers_whose_names_cannot_meet_are_not_started(tmp_path: Path) -> None:
    """Default prefixes of names without ``__``: no clash is possible, nothing starts (each
    would cost the team a start of the server)."""
    pid_files = [tmp_path / "calc.pid", tmp_path / "files.pid"]
    calc, files = (started(f, name=f.stem) for f in pid_files)
    attach_mcp_servers(team_with(tmp_path, calc, files))
    assert not any(f.exists() for f in pid_files)
    # the same servers, one of them unprefixed: both are started to be listed
    bare = started(pid_files[1], name="files", tool_prefix="")
    attach_mcp_servers(team_with(tmp_path, calc, bare))
    assert all(f.exists() for f in pid_files)


@pytest.mark.parametrize(
    ("first", "second", "meet"),
    [
        ({"name": "a"}, {"name": "b"}, False),
        ({"name": "a"}, {"name": "a__b"}, True),
        ({"name": "ab"}, {"name": "a"}, False),  # 'a__' does not begin 'ab__'
        ({"name": "a", "tool_prefix": ""}, {"name": "b"}, True),
        ({"name": "a", "tool_prefix": "x"}, {"name": "b", "tool_prefix": "x_y"}, True),
        ({"name": "a", "tool_prefix": "x"}, {"name": "b", "tool_prefix": "xy"}, False),
    ],
)
def test_which_servers_can_meet(first: dict[str, str], second: dict[str, str], meet: bool) -> None:
    connection = MCPStdioConnectionConfig(stdio_command="server")
    one, other = MCPTool(connection=connection, **first), MCPTool(connection=connection, **second)
    assert can_meet(one, other) is meet and can_meet(other, one) is meet


@pytest.mark.parametrize(
    ("server", "tool", "meet"),
    [
        ({"name": "calc"}, "greet", False),
        ({"name": "calc"}, "calc__add", True),
        ({"name": "calc"}, "calc_add", False),
        ({"name": "calc", "tool_prefix": ""}, "greet", True),
    ],
)
def test_which_card_tools_a_server_can_meet(server: dict[str, str], tool: str, meet: bool) -> None:
    card = MCPTool(connection=MCPStdioConnectionConfig(stdio_command="server"), **server)
    assert can_meet_tool(card, tool) is meet


RESUMED = """
name: clash
entry_point: "@Lead"
members:
  - card:
      role: Lead
      config: {name: "@Lead", models: "registered:clash-lead"}
"""


def offered(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers with the names of the MCP tools (``docs_...``) it is offered."""
    names = sorted(t.name for t in info.function_tools if t.name.startswith("docs_"))
    return ModelResponse(parts=[TextPart(", ".join(names))])


def test_a_resume_whose_servers_now_serve_one_name_is_refused_and_loses_nothing(
    tmp_path: Path, system: ActorSystem
) -> None:
    """The servers start anew at a resume, and may serve other tools than at creation (a
    newer version): the resume is refused before any member starts, the stored team as it
    was, in one line saying what can be done (the cards cannot be changed); the servers
    serving their tools again, the next resume runs."""
    path = tmp_path / "team.yaml"
    path.write_text(RESUMED)
    card = TeamCard.from_yaml(path)
    lead = card.members[0].card.config
    assert isinstance(lead, AgentConfig)
    lead.tools.extend(
        [
            raw(tmp_path, tools("echo"), name="one", tool_prefix="docs"),
            raw(tmp_path, tools("search"), name="two", tool_prefix="docs_web"),
        ]
    )
    manager = TeamManager(system, open_storage(sqlite_url(tmp_path / "team.db")))
    try:
        with register_model("clash-lead", FunctionModel(offered)):
            runtime = manager.create_team(card)
            team_id = runtime.team_id
            runtime.send("which tools?")
            assert answer(runtime, runtime.first_seq)[1] == "docs_echo, docs_web_search"
            manager.stop_team(team_id)
            # a newer 'one' serves web_search: 'docs_web_search', as 'two' names its search
            (tmp_path / "one.tools.json").write_text(json.dumps(tools("echo", "web_search")))
            before = manager.record(team_id)
            log = [r.seq for r in manager.storage.events.read(team_id)]

            with pytest.raises(ResumedToolNameClashError) as refused:
                manager.resume_team(team_id)

            said = str(refused.value)
            assert isinstance(refused.value, MCPToolNameClashError)  # as at creation
            assert said.startswith("team clash: @Lead: MCP servers 'one' (")
            assert said.endswith(
                ") both serve a tool named 'docs_web_search' (their 'web_search' and 'search'); "
                "the agent's first turn would fail. A stored team's cards cannot be changed, "
                "and its MCP servers are listed anew at each resume: have them serve the tools "
                "they served when the team was created (the server's earlier version, say) and "
                "resume again, or "
                "create a new team from its card with another tool_prefix for MCP server 'two'."
            )
            assert "\n" not in said
            assert manager.record(team_id) == before
            assert before.status == TeamStatus.STOPPED
            assert [r.seq for r in manager.storage.events.read(team_id)] == log
            assert manager.get_team(team_id) is None and manager.lease_of(team_id) is None

            (tmp_path / "one.tools.json").write_text(json.dumps(tools("echo")))
            resumed = manager.resume_team(team_id)
            resumed.send("which tools now?")
            assert answer(resumed, resumed.first_seq)[1] == "docs_echo, docs_web_search"
    finally:
        manager.shutdown()
