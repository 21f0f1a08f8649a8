"""A server that is not akgentic: every request gets the same answer, as a proxy's or
another service's error page does (a plain-text 404, a 503 page)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


class StubServer:
    """Answers every GET with ``status`` and ``body`` (``content_type``) on a loopback
    port of its own, on a thread, until closed."""

    def __init__(
        self, status: int, body: str = "Not Found", content_type: str = "text/plain"
    ) -> None:
        payload = body.encode()
        self.requests = 0
        """How many GETs it answered."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                stub.requests += 1
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass  # no access log in the test output

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(30)

    def __enter__(self) -> StubServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
