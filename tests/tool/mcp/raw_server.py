"""A bare MCP server over stdio, JSON-RPC by hand: it can answer what the ``mcp`` package
never would. Tools: ``echo`` (a well-formed answer) and ``malformed`` (a result whose
``content`` is not a list); ``$RAW_TOOLS``, when set, names a JSON file holding the tool
list it sends instead, as is (the tests' hostile lists; a file, as an environment variable
holds no megabyte) — or ``{"pages": [list, ...]}``, a list per request, paged by cursor.
The lines it reads are its only state: run by the
tests with ``python raw_server.py``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

TOOLS = [
    {"name": name, "description": name, "inputSchema": {"type": "object", "properties": {}}}
    for name in ("echo", "malformed")
]


def result(request: dict[str, Any]) -> dict[str, Any]:
    method = request.get("method")
    if method == "initialize":
        return {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
    if method == "tools/list":
        listed = os.environ.get("RAW_TOOLS")
        tools = json.loads(Path(listed).read_text()) if listed else TOOLS
        if isinstance(tools, dict):  # {"pages": [...]}: one page per request, by cursor
            page = int((request.get("params") or {}).get("cursor") or 0)
            more = page + 1 < len(tools["pages"])
            return {"tools": tools["pages"][page]} | ({"nextCursor": str(page + 1)} if more else {})
        return {"tools": tools}
    if method == "tools/call" and request["params"]["name"] == "malformed":
        return {"content": "not a list"}
    return {"content": [{"type": "text", "text": "echoed"}]}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": result(request)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
