"""A real MCP server for the tests, written with the ``mcp`` package.

``python server.py`` serves over stdio; ``python server.py http`` or ``python server.py sse``
serves on a free loopback port and prints ``PORT=<n>`` once it listens. It writes its pid
to ``$MCP_PID_FILE`` when that is set, so a test can see the process stop; with
``$MCP_CHILD_PID_FILE`` set it starts a process of its own (``CHILD``) and writes that one's
pid there; with ``$MCP_LINGER`` set it stays 600 s after its stdin closes.
"""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import EmbeddedResource, ImageContent, TextResourceContents

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)

app = MCPServer("akgentic-test")

CHILD = ["sleep", "600"]
"""The process the server starts when ``$MCP_CHILD_PID_FILE`` is set (its pid goes there):
long, yet bounded, should a test fail to see it stopped."""

_WIRE = [1]
"""The descriptor of the client's pipe: stdio serving moves the protocol off fd 1 (which
then writes to stderr), so ``main`` keeps a duplicate of it for ``garble``."""


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def greet(name: str) -> str:
    """Greet someone, with the greeting this server was started with ($GREETING)."""
    return f"{os.environ.get('GREETING', 'hello')}, {name}"


@app.tool()
def picture() -> list[ImageContent | EmbeddedResource]:
    """A one-pixel PNG and a text resource."""
    return [
        ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="file:///notes/today.txt", text="buy milk", mime_type="text/plain"
            ),
        ),
    ]


@app.tool()
def refuse(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ToolError(reason)


@app.tool()
def crash() -> str:
    """Kills this server mid-call."""
    os._exit(3)


@app.tool()
def garble() -> str:
    """Writes one line that is not UTF-8 to stdout (the client's pipe), then answers."""
    os.write(_WIRE[0], b"\xff\xfe not UTF-8\n")
    return "garbled"


@app.tool()
async def hang() -> str:
    """Never answers."""
    await anyio.sleep_forever()
    return "unreachable"


def main() -> None:
    pid_file = os.environ.get("MCP_PID_FILE")
    if pid_file:
        with open(pid_file, "w") as handle:
            handle.write(str(os.getpid()))
    child_pid_file = os.environ.get("MCP_CHILD_PID_FILE")
    if child_pid_file:  # a process of the server's own, which must end with it
        child = subprocess.Popen(CHILD, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        with open(child_pid_file, "w") as handle:
            handle.write(str(child.pid))
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        _WIRE[0] = os.dup(1)
        app.run()
        if os.environ.get("MCP_LINGER"):  # outlive the client's grace after stdin closes
            time.sleep(600)
        return
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    starlette = (
        app.sse_app(host="127.0.0.1")
        if mode == "sse"
        else app.streamable_http_app(host="127.0.0.1")
    )
    server = uvicorn.Server(uvicorn.Config(starlette, log_level="warning"))
    print(f"PORT={port}", flush=True)
    anyio.run(lambda: server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
