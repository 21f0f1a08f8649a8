"""A bare MCP server over stdio — or, as ``python raw_server.py http``, over streamable HTTP
on a free loopback port, printing ``PORT=<n>`` — JSON-RPC by hand: it can answer what the
``mcp`` package never would (its server refuses to send a tool list its client would
refuse). Tools: ``echo`` (a well-formed answer) and ``malformed`` (a result whose
``content`` is not a list); ``$RAW_TOOLS``, when set, names a JSON file holding the tool
list it sends instead, as is (the tests' hostile lists; a file, as an environment variable
holds no megabyte) — or ``{"pages": [list, ...]}``, a list per request, paged by cursor.
The requests it reads are its only state."""

from __future__ import annotations

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


def answer(request: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": result(request)}


class Handler(BaseHTTPRequestHandler):
    """Streamable HTTP, as little of it as a client needs: each POSTed request answered in
    JSON, a notification accepted, no event stream to GET."""

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in request:
            self.send_response(202)
            self.end_headers()
            return
        body = json.dumps(answer(request)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_response(405)
        self.end_headers()

    do_DELETE = do_GET

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    if sys.argv[1:] == ["http"]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(f"PORT={server.server_address[1]}", flush=True)
        server.serve_forever()
    for line in sys.stdin:
        request = json.loads(line)
        if "id" in request:  # else a notification
            sys.stdout.write(json.dumps(answer(request)) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
