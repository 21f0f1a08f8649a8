"""A loopback HTTP service standing in for a cluster's REST API, and a port nothing
listens on: the reachable and the unreachable endpoint of the probe tests."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Service", "free_port", "serving"]


@dataclass
class Service:
    """Answers ``routes[path] = (status, json body)`` (404 otherwise); ``seen`` records
    each request's path and headers."""

    url: str
    routes: dict[str, tuple[int, Any]] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)


@contextmanager
def serving() -> Iterator[Service]:
    """A :class:`Service` on 127.0.0.1 (a free port), stopped on exit."""
    state = Service(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.seen.append((self.path, dict(self.headers.items())))
            status, body = state.routes.get(self.path, (404, {"error": "no such path"}))
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
