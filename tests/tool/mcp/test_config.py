"""MCPTool's configuration: mcp.json, connections, names, prefixes, env references."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from akgentic.core.excerpt import validation_words
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool.core import ToolFactory
from akgentic.tool.mcp import (
    MCPConfigError,
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
    MCPTool,
    expand_env,
    read_mcp_config,
)

from ..conftest import EventObserver
from .conftest import stdio


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(data))
    return path


CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"},
        },
        "search": {"url": "https://mcp.example.test/mcp", "headers": {"X-Key": "${KEY:-none}"}},
        "legacy": {"type": "sse", "url": "https://old.example.test/sse"},
    }
}


def test_a_claude_desktop_file_gives_one_card_per_server_in_file_order(tmp_path: Path) -> None:
    cards = MCPTool.from_config(write(tmp_path, CLAUDE_DESKTOP))
    assert [c.server_name for c in cards] == ["filesystem", "github", "search", "legacy"]
    fs, gh, web, old = (c.connection for c in cards)
    assert isinstance(fs, MCPStdioConnectionConfig) and fs.stdio_command == "npx"
    assert fs.stdio_args == ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
    assert isinstance(gh, MCPStdioConnectionConfig)
    assert gh.stdio_env == {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}  # not expanded
    assert isinstance(web, MCPHTTPConnectionConfig) and web.transport == "streamable-http"
    assert web.headers == {"X-Key": "${KEY:-none}"}
    assert isinstance(old, MCPHTTPConnectionConfig) and old.transport == "sse"
    assert [c.prefix for c in cards] == ["filesystem_", "github_", "search_", "legacy_"]


def test_a_stdio_server_runs_in_the_folder_of_its_mcp_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative paths in an mcp.json are the file's, from whatever folder it is read."""
    folder = tmp_path / "conf"
    folder.mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    servers = {
        "plain": {"command": "x"},
        "relative": {"command": "x", "cwd": "../data"},
        "absolute": {"command": "x", "cwd": "/srv/data"},
        "variable": {"command": "x", "cwd": "${DATA_DIR}"},
        "web": {"url": "https://h.test/mcp"},
    }
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))

    found = read_mcp_config(Path("..") / "conf" / "mcp.json")

    cwds = {n: getattr(c, "stdio_cwd", None) for n, c in found.items()}
    assert cwds == {
        "plain": str(folder),
        "relative": str(folder / "../data"),
        "absolute": "/srv/data",
        "variable": "${DATA_DIR}",
        "web": None,
    }


def test_akgentic_python_is_the_interpreter_running_akgentic_unless_set() -> None:
    assert expand_env("${AKGENTIC_PYTHON}", where="w", environ={}) == sys.executable
    assert expand_env("${AKGENTIC_PYTHON}", where="w", environ={"AKGENTIC_PYTHON": "py"}) == "py"


def test_a_stored_card_keeps_its_env_references_and_round_trips(tmp_path: Path) -> None:
    card = MCPTool.from_config(write(tmp_path, CLAUDE_DESKTOP))[1]
    data = serialize(card)
    assert "${GITHUB_TOKEN}" in json.dumps(data)
    assert deserialize(data) == card


def test_the_transport_is_never_inferred_from_the_url(tmp_path: Path) -> None:
    data = {"mcpServers": {"x": {"url": "https://host.test/sse"}}}
    [card] = MCPTool.from_config(write(tmp_path, data))
    assert isinstance(card.connection, MCPHTTPConnectionConfig)
    assert card.connection.transport == "streamable-http"


def test_an_mcp_card_whose_url_is_no_http_url_is_refused_in_words_not_as_a_pattern() -> None:
    with pytest.raises(ValidationError) as info:
        MCPTool.model_validate(
            {"name": "web", "connection": {"type": "http", "url": "localhost:8000/mcp"}}
        )
    message = validation_words(info.value)
    assert "url: must be an http:// or https:// URL or a ${VAR} reference, e.g. " in message
    assert "got 'localhost:8000/mcp'" in message and "pattern" not in message
    assert MCPHTTPConnectionConfig(url="${MCP_URL}").url == "${MCP_URL}"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "evn": {}}, "server 'bad': 1 unknown key evn; a stdio server takes"),
        ({"url": "https://h.test", "args": []}, "1 unknown key args; a streamable-http server"),
        ({"args": ["a"]}, "server 'bad': 1 unknown key args"),
        ({"type": "stdio", "args": ["a"]}, 'a stdio server needs "command"'),
        ({"type": "ws", "url": "x"}, "\"type\" is 'ws'; use one of http, sse, stdio"),
        (
            {"url": "ftp://h.test"},
            "server 'bad': url: must be an http:// or https:// URL or a ${VAR} reference, e.g. ",
        ),
        ("npx", 'an entry is an object with "command" (stdio) or "url"'),
    ],
)
def test_a_bad_server_entry_names_the_file_the_server_and_the_problem(
    tmp_path: Path, entry: object, message: str
) -> None:
    path = write(tmp_path, {"mcpServers": {"bad": entry}})
    with pytest.raises(MCPConfigError, match=re.escape(message)) as caught:
        read_mcp_config(path)
    assert str(caught.value).startswith(f"{path}: ")


def test_a_missing_or_malformed_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MCPConfigError, match="cannot read the MCP config"):
        read_mcp_config(tmp_path / "absent.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(MCPConfigError, match="not valid JSON"):
        read_mcp_config(tmp_path / "broken.json")
    with pytest.raises(MCPConfigError, match="the Claude Desktop format"):
        read_mcp_config(write(tmp_path, {"servers": {}}))


def test_env_references_expand_with_defaults_and_name_what_is_missing() -> None:
    env = {"TOKEN": "t0k"}
    assert expand_env("Bearer ${TOKEN}", where="x", environ=env) == "Bearer t0k"
    assert expand_env("${REGION:-eu}-${TOKEN}", where="x", environ=env) == "eu-t0k"
    assert expand_env("${EMPTY:-}", where="x", environ=env) == ""
    assert expand_env("$TOKEN stays", where="x", environ=env) == "$TOKEN stays"
    with pytest.raises(ValueError, match=r"header A refers to \$\{SECRET\}, which is not set"):
        expand_env("${SECRET}", where="header A", environ=env)


def test_sse_needs_a_stream_that_outlasts_a_call() -> None:
    with pytest.raises(ValidationError, match="raise sse_read_timeout"):
        MCPHTTPConnectionConfig(
            url="https://h.test/sse", transport="sse", call_timeout=600, sse_read_timeout=300
        )
    MCPHTTPConnectionConfig(url="https://h.test/mcp", call_timeout=600)  # not sse: no rule


def test_names_are_derived_prefixes_default_to_seed_003_and_can_be_changed() -> None:
    uvx = MCPStdioConnectionConfig(stdio_command="uvx", stdio_args=["acme-mcp-server", "--ro"])
    assert MCPTool(connection=uvx).server_name == "acme-mcp-server"
    web = MCPHTTPConnectionConfig(url="https://mcp.acme.example/api/v1/endpoint")
    assert MCPTool(connection=web).server_name == "mcp_acme_example"
    assert MCPTool(connection=web, name="acme").prefix == "acme_"  # tools: acme__<tool>
    assert MCPTool(connection=web, name="acme", tool_prefix="a").prefix == "a"
    assert MCPTool(connection=web, tool_prefix="").prefix == ""
    with pytest.raises(ValidationError, match="may hold letters, digits"):
        MCPTool(connection=web, name="my server")
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        MCPTool(connection=web, prefix="x")  # type: ignore[call-arg]


def test_mcp_capabilities_reach_the_agent_only_as_toolsets() -> None:
    card = MCPTool(name="calc", connection=stdio())
    assert card.get_tools() == []
    [toolset] = card.get_toolsets()
    assert toolset.server == "calc" and not toolset.is_open  # built, not connected
    [other] = card.get_toolsets()
    assert other is not toolset  # one connection per agent


def test_two_servers_with_one_prefix_are_refused_at_wiring_naming_both() -> None:
    a = MCPTool(name="docs", connection=stdio(), tool_prefix="kb")
    b = MCPTool(name="wiki", connection=MCPHTTPConnectionConfig(url="http://127.0.0.1:9/mcp"))
    b = b.model_copy(update={"tool_prefix": "kb"})
    with pytest.raises(ValueError) as caught:
        ToolFactory([a, b], observer=EventObserver())
    message = str(caught.value)
    assert "MCP servers 'docs'" in message and "and 'wiki' (http://127.0.0.1:9/mcp" in message
    assert "share the prefix 'kb'" in message


def test_two_servers_without_a_prefix_are_wired_their_names_checked_by_their_lists() -> None:
    """Two with tool_prefix "" were refused as sharing the prefix '', though the servers'
    own names need not meet: only their tool lists can say (at team creation)."""
    a = MCPTool(name="files", connection=stdio(), tool_prefix="")
    b = MCPTool(name="wiki", connection=MCPStdioConnectionConfig(stdio_command="other"))
    b = b.model_copy(update={"tool_prefix": ""})
    factory = ToolFactory([a, b], observer=EventObserver())
    assert len(factory.get_toolsets()) == 2  # one per server, both wired


def test_two_servers_with_one_name_are_refused_at_wiring() -> None:
    a = MCPTool(name="fs", connection=stdio())
    b = MCPTool(name="fs", connection=MCPStdioConnectionConfig(stdio_command="other"))
    with pytest.raises(
        ValueError, match=r"MCP servers 'fs' \(.*\) and 'fs' \(other\) share the name 'fs'"
    ):
        ToolFactory([a, b], observer=EventObserver())


def test_distinct_servers_and_rewiring_the_same_card_are_accepted() -> None:
    observer = EventObserver()
    a, b = MCPTool(name="a", connection=stdio()), MCPTool(name="b", connection=stdio())
    factory = ToolFactory([a, b], observer=observer)
    ToolFactory([a, b], observer=observer)  # the same cards again: not a collision
    assert [t.wrapped.server for t in factory.get_toolsets()] == ["a", "b"]


def test_a_tool_name_clash_says_to_change_the_cards_tool_prefix_through_the_wrappers() -> None:
    """pydantic-ai's clash line ends with the toolset's hint: the guarded toolset the
    factory hands out says the card's option, not pydantic-ai's ``.prefixed(...)``."""
    card = MCPTool(name="calc", connection=stdio())
    [toolset] = ToolFactory([card], observer=EventObserver()).get_toolsets()
    assert toolset.tool_name_conflict_hint == (
        "Give MCP server 'calc' another tool_prefix on its card (now 'calc_': its tools are "
        "named calc__<tool>)."
    )
