"""The ``Host`` check, through the real app on a real socket: a server without a token
answers only to its own names (DNS rebinding cannot reach it from a web page); names the
operator adds are answered; with a token, a rebound page has no token to send."""

from __future__ import annotations

import socket
from collections.abc import Callable
from urllib.parse import urlparse

import httpx
import pytest

from akgentic.server import ServerSettings
from akgentic.server.hosts import host_name
from tests.server.conftest import Served

TOKEN = "host-check-token-0123456"


def port_of(served: Served) -> int:
    port = urlparse(served.url).port
    assert port is not None
    return port


def test_a_server_without_a_token_answers_only_to_its_own_names(served: Served) -> None:
    port = port_of(served)
    for path in ("/teams", "/health", "/", "/docs"):
        for host in ("evil.example.com", f"evil.example.com:{port}", "127.0.0.1.nip.io"):
            response = httpx.get(f"{served.url}{path}", headers={"Host": host})
            assert response.status_code == 400, (path, host)
            detail = response.json()["detail"]
            assert detail.startswith(f"Host {host_name(host)!r} is not a name this server ")
            assert "127.0.0.1, ::1" not in detail and "[::1]" in detail
            assert detail.endswith("add it with akgentic serve --allowed-host NAME")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "LocalHost."):
        response = httpx.get(f"{served.url}/teams", headers={"Host": host})
        assert response.status_code == 200, host


def test_a_request_without_a_host_is_refused(served: Served) -> None:
    with socket.create_connection(("127.0.0.1", port_of(served)), timeout=30) as sock:
        sock.sendall(b"GET /teams HTTP/1.0\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400") and b"without a Host header" in answer


def test_names_the_operator_adds_are_answered(
    serve_with: Callable[[ServerSettings], Served],
) -> None:
    served = serve_with(ServerSettings(port=0, allowed_hosts=["akgentic.internal"]))
    ok = httpx.get(f"{served.url}/teams", headers={"Host": "akgentic.internal:8080"})
    assert ok.status_code == 200
    assert httpx.get(f"{served.url}/teams", headers={"Host": "evil.example"}).status_code == 400


def test_with_a_token_any_host_is_answered_to_who_has_the_token(
    serve_with: Callable[[ServerSettings], Served],
) -> None:
    served = serve_with(ServerSettings(port=0, token=TOKEN))
    rebound = {"Host": "evil.example.com"}
    assert httpx.get(f"{served.url}/teams", headers=rebound).status_code == 401
    with_token = {**rebound, "Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{served.url}/teams", headers=with_token).status_code == 200


@pytest.mark.parametrize(
    ("names", "refused"),
    [(["http://x"], "'http://x' is not a host name"), (["a b"], "'a b' is not a host name")],
)
def test_added_names_are_host_names(names: list[str], refused: str) -> None:
    with pytest.raises(ValueError, match=refused):
        ServerSettings(allowed_hosts=names)
