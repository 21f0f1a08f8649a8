"""MCP fixtures: the test server over stdio and on loopback, and agents that use it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.mcp import MCPHTTPConnectionConfig, MCPStdioConnectionConfig, MCPTool

from ...core.conftest import system, team  # noqa: F401  (shared fixtures)

SERVER = Path(__file__).with_name("server.py")
RAW_SERVER = Path(__file__).with_name("raw_server.py")


def stdio(**fields: object) -> MCPStdioConnectionConfig:
    """A connection that starts the test server over stdio."""
    return MCPStdioConnectionConfig(
        stdio_command=sys.executable, stdio_args=[str(SERVER)], **fields
    )


def raw(
    folder: Path, tools: list[Any] | str | dict[str, Any], name: str = "raw", **fields: Any
) -> MCPTool:
    """A card for the bare stdio server (``raw_server.py``) listing ``tools`` as they are
    (a string too: a list that is not one; ``{"pages": [...]}``: a list in pages)."""
    listing = folder / f"{name}.tools.json"
    listing.write_text(json.dumps(tools))
    connection = MCPStdioConnectionConfig(
        stdio_command=sys.executable,
        stdio_args=[str(RAW_SERVER)],
        stdio_env={"RAW_TOOLS": str(listing)},
    )
    return MCPTool(name=name, connection=connection, **fields)


@contextmanager
def raw_http(folder: Path, tools: list[Any], name: str = "raw") -> Iterator[MCPTool]:
    """A card for the bare server (``raw_server.py``) over streamable HTTP, listing
    ``tools`` as they are, while it runs."""
    listing = folder / f"{name}.tools.json"
    listing.write_text(json.dumps(tools))
    for url in serve("http", RAW_SERVER, {"RAW_TOOLS": str(listing)}):
        yield MCPTool(name=name, connection=MCPHTTPConnectionConfig(url=url))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except OSError:
        return False


def serve(mode: str, script: Path = SERVER, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start the test server (or ``script``) on loopback (``http`` or ``sse``), with ``env``
    added to the environment; yield its URL."""
    process = subprocess.Popen(
        [sys.executable, str(script), mode],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("PORT="), f"the test server did not start: {line!r}"
        port = int(line.strip().split("=")[1])
        yield f"http://127.0.0.1:{port}" + ("/sse" if mode == "sse" else "/mcp")
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def http_url() -> Iterator[str]:
    yield from serve("http")


@pytest.fixture
def sse_url() -> Iterator[str]:
    yield from serve("sse")


def http(url: str, **fields: object) -> MCPHTTPConnectionConfig:
    return MCPHTTPConnectionConfig(url=url, **fields)  # type: ignore[arg-type]
