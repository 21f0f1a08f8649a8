"""A reverse proxy whose server restarts: what nginx does while ``akgentic serve`` is down.

Each new connection takes the next status of :attr:`Gateway.refusals` (a test fills it):
it is answered with that status and a proxy's HTML page, and closed. With none left, the
connection is put through to ``upstream_port``, byte for byte, both ways, once ``admit``
is set (a test clears it to hold the server's return back).
:meth:`cut_open` cuts every connection put through now, as the server's exit does.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import deque
from http import HTTPStatus

PAGE = b"<html><body><h1>Bad Gateway</h1><p>nginx</p></body></html>"


class Gateway:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.refusals: deque[int] = deque()
        """Statuses the next connections are answered with, one each, in order."""
        self.refused: list[int] = []
        """The statuses answered so far."""
        self.put_through = 0
        """Connections put through to the server so far."""
        self.admit = threading.Event()
        self.admit.set()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                status = self.refusals.popleft() if self.refusals else None
            if status is not None:
                threading.Thread(target=self._refuse, args=(client, status), daemon=True).start()
                continue
            self.admit.wait(60)
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            with self._lock:
                self.put_through += 1
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _refuse(self, client: socket.socket, status: int) -> None:
        """Read the request's head, answer ``status`` with a page, close."""
        head = b""
        with contextlib.suppress(OSError):
            while b"\r\n\r\n" not in head:
                chunk = client.recv(4096)
                if not chunk:
                    break
                head += chunk
            reason = HTTPStatus(status).phrase
            client.sendall(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html\r\n"
                f"Content-Length: {len(PAGE)}\r\nConnection: close\r\n\r\n".encode()
                + PAGE
            )
        with self._lock:
            self.refused.append(status)
        _close(client)

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(4096):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                _close(sock)
            with self._lock:
                self._open.difference_update((source, sink))

    def cut_open(self) -> None:
        """Cut every connection put through now (both sides): the server went away."""
        with self._lock:
            sockets = list(self._open)
        for sock in sockets:
            _close(sock)

    def close(self) -> None:
        """Stop listening (a connection is then refused) and cut every connection."""
        _close(self._listener)  # shut down first: a bare close leaves accept() taking them
        self.cut_open()


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
