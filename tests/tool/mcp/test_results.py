"""A server's answer fits a context: a text over ``max_result_chars`` is cut with a note,
through the toolset an agent calls (the real stdio test server)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError
from pydantic_ai import ModelRetry, RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from akgentic.tool.mcp import MCPStdioConnectionConfig, MCPTool

from .conftest import stdio

RAW_SERVER = Path(__file__).with_name("raw_server.py")


def answers(card: MCPTool, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    """What the server answers each call, over one connection, as an agent calls it."""
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def run() -> list[Any]:
        [toolset] = card.get_toolsets()
        async with toolset:
            tools = await toolset.get_tools(ctx)
            return [await toolset.call_tool(n, args, ctx, tools[n]) for n, args in calls]

    return anyio.run(run)


def test_a_long_text_answer_is_cut_with_a_note_and_a_short_one_is_whole() -> None:
    card = MCPTool(name="calc", connection=stdio(), max_result_chars=100)
    long, short, number = answers(
        card,
        ("calc__greet", {"name": "x" * 500}),
        ("calc__greet", {"name": "bob"}),
        ("calc__add", {"a": 2, "b": 3}),
    )
    assert long == (
        "hello, " + "x" * 93 + "\n[cut: 407 more characters; calc__greet's answer was longer; "
        "ask it for less]"
    )
    assert (short, number) == ("hello, bob", 5)


def test_a_server_error_that_echoes_its_input_is_clipped_for_the_model() -> None:
    card = MCPTool(name="calc", connection=stdio())
    with pytest.raises(ModelRetry) as refused:
        answers(card, ("calc__refuse", {"reason": "because " + "x" * 50_000}))
    said = str(refused.value)
    assert said.startswith("Error executing tool refuse: because xxx")
    assert said.endswith(" characters)") and len(said) < 1_100


def test_the_bound_is_a_validated_field() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 100"):
        MCPTool(connection=stdio(), max_result_chars=10)


def test_a_result_that_is_not_valid_mcp_is_said_so_and_the_connection_stays() -> None:
    """A ``content`` that is not a list was reported as "server stopped" (the server is
    alive) and closed the connection, so the next call found no server."""
    raw = MCPStdioConnectionConfig(stdio_command=sys.executable, stdio_args=[str(RAW_SERVER)])
    card = MCPTool(name="raw", connection=raw)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())

    async def run() -> tuple[str, Any]:
        [toolset] = card.get_toolsets()
        async with toolset:
            tools = await toolset.get_tools(ctx)
            try:
                await toolset.call_tool("raw__malformed", {}, ctx, tools["raw__malformed"])
            except ToolFailed as exc:
                said = exc.message
            return said, await toolset.call_tool("raw__echo", {}, ctx, tools["raw__echo"])

    said, after = anyio.run(run)
    assert said == (
        "MCP server 'raw' sent a result for raw__malformed that is not valid MCP "
        "(CallToolResult: content: Input should be a valid list), so there is no answer to "
        "read. The server is still running."
    )
    assert after == "echoed"
