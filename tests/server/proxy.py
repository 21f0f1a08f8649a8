"""A TCP proxy that drops connections: what a flaky network does to an event stream.

Each of the first ``drops`` connections is cut (both sides closed) once ``cut_after``
bytes have gone from the server to the client; later connections pass untouched.
:meth:`cut_open` cuts every connection open now, whenever a test says so. A new
connection is put through to ``upstream_port`` as it is then (a test may point the
proxy elsewhere), once ``admit`` is set (a test clears it to hold reconnections back).
"""

from __future__ import annotations

import contextlib
import socket
import threading


class DroppingProxy:
    def __init__(self, upstream_port: int, *, cut_after: int, drops: int) -> None:
        self.upstream_port = upstream_port
        self.cut_after = cut_after
        self.drops_left = drops
        self.dropped = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        self._open: set[socket.socket] = set()
        self.admit = threading.Event()
        self.admit.set()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.admit.wait(60)
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            with self._lock:
                self._open.update((client, upstream))
                cut = self.drops_left > 0
                self.drops_left -= 1 if cut else 0
            threading.Thread(target=self._pipe, args=(client, upstream, None), daemon=True).start()
            limit = self.cut_after if cut else None
            threading.Thread(target=self._pipe, args=(upstream, client, limit), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, limit: int | None) -> None:
        sent = 0
        try:
            while True:
                chunk = source.recv(4096)
                if not chunk:
                    break
                if limit is not None and sent + len(chunk) >= limit:
                    sink.sendall(chunk[: max(limit - sent, 1)])
                    with self._lock:
                        self.dropped += 1
                    break
                sink.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                _close(sock)
            with self._lock:
                self._open.difference_update((source, sink))

    def cut_open(self) -> int:
        """Cut every connection open now (both sides); how many sockets were open."""
        with self._lock:
            sockets = list(self._open)
            self.dropped += len(sockets) // 2
        for sock in sockets:
            _close(sock)
        return len(sockets)

    def close(self) -> None:
        self._closed = True
        self._listener.close()


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()
