"""An MCP server on the ``mcp`` package's low-level ``Server``, over stdio, whose tool list
holds one tool out of shape (``text_only``: an input schema of type ``string``) between two
good ones. The ``mcp`` 2.x server checks its own answer, and sends an error in its place:
run by the tests with ``python lowlevel_server.py``."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(name="find", description="find", input_schema=SCHEMA),
            types.Tool(name="text_only", description="bad", input_schema={"type": "string"}),
            types.Tool(name="count", description="count", input_schema=SCHEMA),
        ]
    )


server = Server("lowlevel", on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
