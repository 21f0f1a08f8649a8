"""Holds a stdio connection to the test server until it is killed (the SIGKILL test of
``test_process_tree.py``): ``python -m tests.tool.mcp.holder``, with ``$MCP_PID_FILE`` and
``$MCP_CHILD_PID_FILE`` set, opens the connection as an agent does, prints ``READY open``
once it is open, and waits."""

from __future__ import annotations

import os

import anyio

from akgentic.tool.mcp.toolset import build_server_toolset

from .conftest import stdio


async def hold() -> None:
    env = {name: os.environ[name] for name in ("MCP_PID_FILE", "MCP_CHILD_PID_FILE")}
    toolset = build_server_toolset("calc", stdio(stdio_env=env), "calc")
    async with toolset:
        assert toolset.is_open, toolset.failure
        print("READY open", flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    anyio.run(hold)
