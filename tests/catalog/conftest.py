"""Fixtures of the catalog tests: a key, a catalog over a real store, a loopback HTTP
service standing in for a cluster's REST API, and a port nothing listens on."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from akgentic.catalog import CatalogService, Principal, SecretBox, discover
from akgentic.storage import SqliteStorage
from tests.catalog.tooltypes import RELEASE, HangingService, LeakyService, VaultTool

ADMIN = Principal(name="ann", via="python")


@pytest.fixture
def box() -> SecretBox:
    return SecretBox(os.urandom(32))


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    store = SqliteStorage(tmp_path / "catalog.db")
    yield store
    store.close()


@pytest.fixture
def catalog(storage: SqliteStorage, box: SecretBox) -> CatalogService:
    registry = discover(entry_point_group=None, extra=[VaultTool, HangingService, LeakyService])
    return CatalogService(storage, registry=registry, secrets=box)


@pytest.fixture(autouse=True)
def _release_hanging_probes() -> Iterator[None]:
    RELEASE.clear()
    yield
    RELEASE.set()


@dataclass
class Service:
    """A loopback HTTP server answering ``routes[path] = (status, json body)``."""

    url: str
    routes: dict[str, tuple[int, Any]] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)


@pytest.fixture
def service() -> Iterator[Service]:
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
    yield state
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
