"""MCPTool.probe(), the catalog's "Test": start the real test server, list its tools, close;
a command that fails, a server that never answers, an unset ``${VAR}`` are each a reason."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.mcp import MCPProbeError, MCPStdioConnectionConfig, MCPTool

from .conftest import http, pid_alive, raw, stdio


def test_the_probe_lists_the_stdio_server_s_tools_and_stops_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("PID_FILE", str(pid_file))
    card = MCPTool(name="calc", connection=stdio(stdio_env={"MCP_PID_FILE": "${PID_FILE}"}))
    detail = card.probe(timeout=20)
    assert detail == (
        "MCP server 'calc' serves 7 tools: add, greet, picture, refuse, crash, garble, hang"
    )
    assert not pid_alive(int(pid_file.read_text()))  # the look is over: the process is gone


def test_the_probe_says_the_tools_the_client_left_out_and_why(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {}}
    card = raw(
        tmp_path,
        [
            {"name": "find", "inputSchema": schema},
            {"name": "text", "inputSchema": {"type": "string"}},
            {"name": "bare"},
        ],
    )
    assert card.probe(timeout=20) == (
        "MCP server 'raw' serves 1 tool: find; 2 tools left out, not valid MCP ('text': its "
        "type is 'string', not 'object'; 'bare': inputSchema: Field required): fix them on "
        "the server"
    )


def test_the_probe_reaches_a_streamable_http_server(http_url: str) -> None:
    detail = MCPTool(name="web", connection=http(http_url)).probe(timeout=20)
    assert detail.startswith("MCP server 'web' serves 7 tools: add, greet")


def test_a_command_that_fails_is_the_probe_s_error(tmp_path: Path) -> None:
    missing = MCPTool(
        name="gone", connection=MCPStdioConnectionConfig(stdio_command=str(tmp_path / "nope"))
    )
    with pytest.raises(MCPProbeError, match=rf"^MCP server 'gone' \({tmp_path / 'nope'}\) does"):
        missing.probe(timeout=10)
    exits = MCPTool(
        name="quits",
        connection=MCPStdioConnectionConfig(
            stdio_command=sys.executable, stdio_args=["-c", "raise SystemExit(3)"]
        ),
    )
    with pytest.raises(MCPProbeError) as failed:
        exits.probe(timeout=10)
    assert str(failed.value).endswith(
        "does not answer: the process exited before the MCP handshake (its stderr says why)"
    )


def test_a_server_that_never_answers_is_bounded_by_the_probe_s_timeout() -> None:
    mute = MCPStdioConnectionConfig(  # reads its stdin and never answers
        stdio_command=sys.executable, stdio_args=["-c", "import sys; sys.stdin.read()"]
    )
    with pytest.raises(MCPProbeError, match=r"does not answer: no answer within 1s$"):
        MCPTool(name="mute", connection=mute).probe(timeout=1)


def test_an_unset_reference_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AKGENTIC_TEST_UNSET", raising=False)
    card = MCPTool(name="calc", connection=stdio(stdio_env={"TOKEN": "${AKGENTIC_TEST_UNSET}"}))
    with pytest.raises(MCPProbeError, match="export AKGENTIC_TEST_UNSET"):
        card.probe(timeout=10)


def test_a_command_that_cannot_be_spawned_says_what_to_do_in_the_config_s_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was fastmcp's "Client failed to connect: [Errno 2] No such file or directory: 'x'",
    with the ``${VAR}`` in the command expanded: a secret could reach the team stream."""
    monkeypatch.setenv("AKGENTIC_TEST_SECRET", "s3cr3t")
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")  # not executable

    def said(**fields: Any) -> str:
        card = MCPTool(name="s", connection=MCPStdioConnectionConfig(**fields))
        with pytest.raises(MCPProbeError) as failed:
            card.probe(timeout=10)
        return str(failed.value).split(" does not answer: ")[1]

    assert said(stdio_command="no-such-${AKGENTIC_TEST_SECRET}") == (
        "the command 'no-such-${AKGENTIC_TEST_SECRET}' was not found: install it, or give "
        "its full path (a bare name is looked up on PATH)"
    )
    assert said(stdio_command=str(script)) == (
        f"the command '{script}' cannot be run (Permission denied): make it executable "
        f"(chmod +x), or give its interpreter as the command and it as an argument"
    )
    assert said(stdio_command=sys.executable, stdio_cwd=str(tmp_path / "gone")) == (
        f"its cwd '{tmp_path / 'gone'}' is not a folder that can be entered (No such file or "
        f"directory): fix cwd"
    )
