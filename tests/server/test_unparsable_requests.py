"""A request the HTTP parser refuses before the app runs — a ``Content-Length`` that is not
a whole number, negative, or given twice with two values; a request line that is not
HTTP — is answered like every other error of the API: a 400 whose body is JSON with a
``detail`` saying what to send, not uvicorn's plain text. Sent as raw bytes on a socket
to the server on its real uvicorn: no HTTP client would send them."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.server.conftest import Served

CONTENT_LENGTH = "send it once, as the body's size in bytes (a whole number, 0 or more)"


def _raw(url: str, request: bytes) -> tuple[bytes, dict[str, str], bytes]:
    """Send ``request`` as is to the server at ``url``; its status line, headers and body,
    read until it closes the connection (it does, after a 400)."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    answer = b""
    with socket.create_connection((where.hostname, where.port), timeout=30) as sock:
        sock.sendall(request)
        while chunk := sock.recv(65536):  # blocks until bytes or the close (timeout: 30 s)
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    headers = {
        k.strip().lower(): v.strip() for k, _, v in (ln.decode().partition(":") for ln in lines)
    }
    return status, headers, body


def _request(served: Served, *headers: str, line: str = "POST /teams HTTP/1.1") -> bytes:
    host = urlsplit(served.url).netloc
    return "\r\n".join([line, f"Host: {host}", *headers, "", ""]).encode()


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        (("Content-Length: abc",), "bad Content-Length"),
        (("Content-Length: -1",), "bad Content-Length"),
        (("Content-Length: 1", "Content-Length: 2"), "conflicting Content-Length headers"),
    ],
)
def test_a_content_length_the_parser_refuses_is_a_json_400_saying_what_to_send(
    served: Served, headers: tuple[str, ...], reason: str
) -> None:
    status, said, body = _raw(
        served.url, _request(served, "Content-Type: application/json", *headers)
    )
    assert status.startswith(b"HTTP/1.1 400 ")
    assert said["content-type"] == "application/json" and said["connection"] == "close"
    assert int(said["content-length"]) == len(body)
    answer: dict[str, Any] = json.loads(body)
    assert answer == {
        "detail": f"the request's Content-Length cannot be read ({reason}): {CONTENT_LENGTH}, "
        f"or send none with no body"
    }


def test_a_request_line_that_is_not_http_is_a_json_400_pointing_at_the_docs(
    served: Served,
) -> None:
    status, said, body = _raw(served.url, _request(served, line="\x01NOT HTTP"))
    assert status.startswith(b"HTTP/1.1 400 ") and said["content-type"] == "application/json"
    detail = json.loads(body)["detail"]
    assert detail.startswith("the request is not HTTP/1.1 this server can read (illegal request")
    assert detail.endswith("): send a well-formed HTTP/1.1 request; the API is described at /docs")


def test_the_server_still_answers_after_a_refused_request(served: Served) -> None:
    """The refused connection is closed; the next one is served as usual."""
    _raw(served.url, _request(served, "Content-Length: abc"))
    assert served.client.health().status == "ok"
