"""A local stand-in for the Tavily API on loopback, for the real ``tavily-python`` client.

It speaks the published request and response shapes of ``POST /search``, ``/extract``,
``/crawl`` and ``GET /usage`` (docs.tavily.com API reference) and the documented error
statuses, each with the documented message in Tavily's error body, ``{"detail": {"error": "..."}}``:

- 400 Bad Request; 401 Unauthorized: missing or invalid API key;
- 429 excessive requests; 432 plan limit; 433 pay-as-you-go limit; 500 server error.

A page's passages are its paragraphs: with a ``query`` the API returns at most
``chunks_per_source`` of them (each at most 500 characters) joined by ``" [...] "``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "tvly-test-0123456789"

ERRORS = {
    400: "Bad Request",
    401: "Unauthorized: missing or invalid API key.",
    429: "Your request has been blocked due to excessive requests. Please reduce rate of requests.",
    432: "This request exceeds your plan's set usage limit. Please upgrade your plan or contact "
    "support@tavily.com",
    433: "This request exceeds the pay-as-you-go limit. You can increase your limit on the "
    "Tavily dashboard.",
    500: "Internal Server Error",
}

PAGES = {
    "https://actors.example/intro": [
        "An actor handles one message at a time from its mailbox.",
        "Actors share nothing: they communicate only by messages.",
        "Supervisors restart actors that fail.",
        "A team of actors scales by adding actors.",
    ],
    "https://actors.example/history": [
        "The actor model was introduced by Carl Hewitt in 1973.",
        "Erlang made actors practical for telephone switches.",
    ],
    "https://actors.example/long": ["x" * 480, "y" * 480, "z" * 480],
}


USAGE = {
    "key": {"usage": 150, "limit": 1000, "search_usage": 100, "extract_usage": 25},
    "account": {
        "current_plan": "Bootstrap",
        "plan_usage": 500,
        "plan_limit": 15000,
        "paygo_usage": 25,
        "paygo_limit": 100,
    },
}
"""``GET /usage``: the key's and the account's credits this billing cycle."""


@dataclass
class FakeTavily:
    """The server's state: what it was asked, and the status it is told to answer."""

    url: str = ""
    requests: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    status: int | None = None
    raw: tuple[int, bytes] | None = None
    """A status and a body sent as they are, whatever was asked: a provider (or a gateway
    in front of it) answering garbage."""

    def answer(self, path: str, body: dict[str, Any], auth: str) -> tuple[int, dict[str, Any]]:
        self.requests.append((path, body, auth))
        if auth != f"Bearer {KEY}":
            return 401, {"detail": {"error": ERRORS[401]}}
        if self.status is not None:
            return self.status, {"detail": {"error": ERRORS[self.status]}}
        if path == "/search":
            return 200, search(body)
        if path == "/extract":
            return 200, extract(body)
        if path == "/crawl":
            return 200, crawl(body)
        if path == "/usage":
            return 200, USAGE
        return 404, {"detail": {"error": "Not Found"}}


def passages(url: str, body: dict[str, Any]) -> str:
    chunks = [p[:500] for p in PAGES[url]]
    if body.get("query") or body.get("instructions"):
        chunks = chunks[: int(body.get("chunks_per_source", 3))]
    return " [...] ".join(chunks)


def search(body: dict[str, Any]) -> dict[str, Any]:
    results = [
        {
            "title": f"Actors {index}",
            "url": url,
            "content": PAGES[url][0],
            "score": round(0.9 - index / 10, 2),
            "raw_content": None,
        }
        for index, url in enumerate(PAGES)
    ][: int(body.get("max_results", 5))]
    return {
        "query": body["query"],
        "answer": None,
        "images": [],
        "results": results,
        "response_time": 0.42,
        "request_id": "req-search-1",
    }


def extract(body: dict[str, Any]) -> dict[str, Any]:
    urls = body["urls"] if isinstance(body["urls"], list) else [body["urls"]]
    return {
        "results": [
            {"url": u, "raw_content": passages(u, body), "images": []} for u in urls if u in PAGES
        ],
        "failed_results": [
            {"url": u, "error": "Failed to fetch url"} for u in urls if u not in PAGES
        ],
        "response_time": 0.02,
        "request_id": "req-extract-1",
    }


def crawl(body: dict[str, Any]) -> dict[str, Any]:
    base = body["url"]
    found = [u for u in PAGES if u.startswith(base.rstrip("/"))][: int(body.get("limit", 50))]
    return {
        "base_url": base,
        "results": [{"url": u, "raw_content": passages(u, body)} for u in found],
        "response_time": 1.23,
        "request_id": "req-crawl-1",
    }


@contextmanager
def serve() -> Iterator[FakeTavily]:
    """The stand-in on a free loopback port, for the duration of the block."""
    fake = FakeTavily()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            self.reply(json.loads(self.rfile.read(length) or b"{}"))

        def do_GET(self) -> None:
            self.reply({})

        def reply(self, body: dict[str, Any]) -> None:
            status, answer = fake.answer(self.path, body, self.headers.get("Authorization", ""))
            data = json.dumps(answer).encode()
            if fake.raw is not None:
                status, data = fake.raw
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
