"""A tiny OpenAI-compatible chat-completions server on loopback, for the examples' tests.

It speaks the real wire format (JSON and server-sent events), so the real OpenAI client
and pydantic-ai's OpenAI model talk to it exactly as they would to Ollama or vLLM. Its
"model" plays the manager/worker example by looking at the request: which tools are
offered and what the last message says — or whatever ``decide`` a test passes to
:func:`serve`; ``fail=STATUS`` makes it answer every request with that HTTP error (with
``fail_headers``, such as ``Retry-After``), ``html=True`` with a web page (a URL that is
no OpenAI-compatible API), and ``stall`` (a :class:`Stall`) holds its answers back until
the test releases them; ``cut`` (given the request's JSON body) makes it close a
streamed answer after its first chunk, with no finish reason (an HTTP/1.0 server's stream
ends where the connection does, so the client sees no error); ``finish_reason=False`` sends
every streamed answer whole but with no finish reason (a server that never sends one).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class Stall:
    """Holds the server's answers back until ``release`` is set (at the latest when
    :func:`serve` ends): a streamed text after its first word, any other before it starts
    (an endpoint that does not answer). ``arrived`` is set once a request is held. Only the
    requests ``holds`` picks (its JSON body) are held; by default, every one."""

    def __init__(self, holds: Callable[[dict[str, Any]], bool] = lambda body: True) -> None:
        self.arrived = threading.Event()
        self.release = threading.Event()
        self.holds = holds

    def hold(self) -> None:
        self.arrived.set()
        self.release.wait(120)


PAGE = b"<!doctype html><html><body><h1>Welcome</h1></body></html>"


Decision = tuple[str | None, tuple[str, dict[str, Any]] | None]


def last_text(body: dict[str, Any]) -> str:
    """What the last message of a request says."""
    return _text(body["messages"][-1].get("content"))


def decide(body: dict[str, Any]) -> Decision:
    """(text, None) or (None, (tool name, arguments)) for this request."""
    tools = [t["function"]["name"] for t in body.get("tools", [])]
    messages = body["messages"]
    last = messages[-1]
    said = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    if "take_note" in tools:  # the worker
        if last.get("role") == "tool":
            return "Findings: actors isolate state; messages are replayable; teams resume.", None
        return None, ("take_note", {"note": _text(last.get("content"))[:80]})
    output = next((t for t in tools if t.startswith("final_result")), None)
    if output is None:
        return "I have nothing to do.", None
    if (
        "Response from @Worker" in _text(last.get("content"))
        or "Findings:" in said.split("Message from @Human")[-1]
    ):
        reply = [{"to": "@Human", "type": "response", "content": "Relayed: " + said[-200:]}]
    else:
        reply = [
            {"to": "@Worker", "type": "request", "content": "Please research this for me."},
            {"to": "@Human", "type": "acknowledgment", "content": "On it."},
        ]
    return None, (output, {"messages": reply})


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)  # type: ignore[attr-defined]
        cut: Callable[[dict[str, Any]], bool] | None = self.server.cut  # type: ignore[attr-defined]
        fail: int | None = self.server.fail  # type: ignore[attr-defined]
        stall: Stall | None = self.server.stall  # type: ignore[attr-defined]
        if stall is not None and not stall.holds(body):
            stall = None
        if self.server.html:  # type: ignore[attr-defined]
            self.send_response(fail or 200)  # a web server's page, or its error page
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)
            return
        if fail is not None:
            error = json.dumps({"error": {"message": f"refused ({fail})", "type": "test"}})
            self.send_response(fail)
            for header, value in self.server.fail_headers.items():  # type: ignore[attr-defined]
                self.send_header(header, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error.encode())
            return
        text, call = self.server.decide(body)  # type: ignore[attr-defined]
        if stall is not None and not (text and body.get("stream")):
            stall.hold()  # nothing at all until released
        usage = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
        tool_calls = (
            [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": call[0], "arguments": json.dumps(call[1])},
                }
            ]
            if call
            else None
        )
        finish = "tool_calls" if call else "stop"
        base = {"id": "chatcmpl-1", "created": 0, "model": body["model"]}
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            delta: dict[str, Any] = {"role": "assistant", "content": text}
            if tool_calls:
                delta["tool_calls"] = tool_calls
            chunks = [
                {
                    **base,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
                },
                {
                    **base,
                    "object": "chat.completion.chunk",
                    "choices": [
                        {
                            "index": 0,
                            "delta": {},
                            "finish_reason": finish if self.server.finish_reason else None,  # type: ignore[attr-defined]
                        }
                    ],
                    "usage": usage,
                },
            ]
            if stall is not None and text:  # the first word now, the rest once released
                first, _, rest = text.partition(" ")
                head = {**chunks[0], "choices": [{"index": 0, "delta": {"content": first}}]}
                self.wfile.write(f"data: {json.dumps(head)}\n\n".encode())
                self.wfile.flush()
                delta["content"] = " " + rest
                stall.hold()
            if cut is not None and cut(body):  # the first word, then the connection closes
                word = (text or "").partition(" ")[0]
                head = {**chunks[0], "choices": [{"index": 0, "delta": {"content": word}}]}
                self.wfile.write(f"data: {json.dumps(head)}\n\n".encode())
                return
            with contextlib.suppress(OSError):  # a client that gave up has gone
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
            return
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool_calls:
            message["tool_calls"] = [
                {k: v for k, v in c.items() if k != "index"} for c in tool_calls
            ]
        payload = {
            **base,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        with contextlib.suppress(OSError):  # a client that gave up has gone
            self.wfile.write(data)


@contextmanager
def serve(
    decide: Callable[[dict[str, Any]], Decision] = decide,
    fail: int | None = None,
    *,
    html: bool = False,
    stall: Stall | None = None,
    fail_headers: dict[str, str] | None = None,
    cut: Callable[[dict[str, Any]], bool] | None = None,
    finish_reason: bool = True,
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A running server: yields its base URL (``http://127.0.0.1:PORT/v1``) and the
    requests it has received."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.requests = []  # type: ignore[attr-defined]
    server.decide = decide  # type: ignore[attr-defined]
    server.fail = fail  # type: ignore[attr-defined]
    server.html = html  # type: ignore[attr-defined]
    server.stall = stall  # type: ignore[attr-defined]
    server.cut = cut  # type: ignore[attr-defined]
    server.finish_reason = finish_reason  # type: ignore[attr-defined]
    server.fail_headers = fail_headers or {}  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.requests  # type: ignore[attr-defined]
    finally:
        if stall is not None:
            stall.release.set()
        server.shutdown()
        server.server_close()
