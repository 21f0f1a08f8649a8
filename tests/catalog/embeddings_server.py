"""A loopback endpoint speaking the OpenAI embeddings API, for the real ``openai`` client.

``POST /v1/embeddings`` answers one hashed bag-of-words vector per input (as floats, or as
base64 float32 when ``encoding_format`` says so, as the client asks by default) and
records each request's key, model and inputs; ``GET /v1/models`` lists the model.
"""

from __future__ import annotations

import base64
import json
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.tool.vector_store.conftest import bag_of_words

MODEL = "bow-embed"


@dataclass
class Embeddings:
    url: str = ""
    seen: list[tuple[str, str, list[str]]] = field(default_factory=list)
    """(Authorization header, model, inputs) of each embeddings request."""
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, done: Callable[[], bool], timeout: float = 30.0) -> None:
        with self.changed:
            if not self.changed.wait_for(done, timeout):
                raise AssertionError(f"not seen within {timeout}s; seen: {self.seen}")

    def inputs(self) -> set[str]:
        return {text for _, _, texts in self.seen for text in texts}


@contextmanager
def serving() -> Iterator[Embeddings]:
    state = Embeddings()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.reply(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            as_base64 = body.get("encoding_format") == "base64"
            data = []
            for index, text in enumerate(texts):
                vector = bag_of_words(text)
                packed = struct.pack(f"<{len(vector)}f", *vector)
                embedding: Any = base64.b64encode(packed).decode() if as_base64 else vector
                data.append({"object": "embedding", "index": index, "embedding": embedding})
            with state.changed:
                state.seen.append((self.headers.get("Authorization", ""), body["model"], texts))
                state.changed.notify_all()
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            answer = {"object": "list", "data": data, "model": body["model"], "usage": usage}
            self.reply(200, answer)

        def reply(self, status: int, answer: dict[str, Any]) -> None:
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
