"""One client per cluster per process: ``get_client(key, connect)`` and ``close_all()``.

Every consumer in a process reaches a cluster through one shared client, keyed on the
backend and the connection it names (host, port, scheme, a digest of the API key —
see :func:`client_key`). A cluster backend takes its client from here and never opens
or closes one of its own. ``connect`` runs at most once per key, even when several
threads ask at once (a per-key lock; other keys are not held up meanwhile).

:func:`close_all` closes every cached client; it is registered with ``atexit`` and so
runs by itself at process exit. A script that wants its connections released earlier
calls it once no consumer is live; a later ``get_client`` simply connects again.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["cached_keys", "client_key", "close_all", "close_client", "get_client"]

logger = logging.getLogger("akgentic.tool.vector_store")

T = TypeVar("T")

_clients: dict[Hashable, Any] = {}
_key_locks: dict[Hashable, threading.Lock] = {}
_lock = threading.Lock()


def client_key(backend: str, *parts: Any, api_key: str | None = None) -> tuple[Any, ...]:
    """A cache key: the backend, the connection parts, and a digest of the API key.

    The key itself never holds the secret, so it is safe to log.
    """
    digest = hashlib.sha256(api_key.encode()).hexdigest()[:16] if api_key else ""
    return (backend, *parts, digest)


def get_client(key: Hashable, connect: Callable[[], T]) -> T:
    """The client cached under ``key``, connecting (once) with ``connect`` if there is none."""
    with _lock:
        if key in _clients:
            client: T = _clients[key]
            return client
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:
        with _lock:
            if key in _clients:
                cached: T = _clients[key]
                return cached
        created = connect()
        with _lock:
            _clients[key] = created
        return created


def _close(key: Hashable, client: Any) -> None:
    close = getattr(client, "close", None)
    if callable(close):
        try:
            close()
        except Exception as exc:  # closing is best effort: never fail a shutdown
            logger.warning("closing vector store client %r failed: %r", key, exc)


def close_client(key: Hashable) -> bool:
    """Close and forget the client under ``key``; False when there was none."""
    with _lock:
        client = _clients.pop(key, None)
        found = client is not None
    if found:
        _close(key, client)
    return found


def close_all() -> None:
    """Close and forget every cached client (also run at process exit)."""
    with _lock:
        items = list(_clients.items())
        _clients.clear()
    for key, client in items:
        _close(key, client)


def cached_keys() -> list[Hashable]:
    """The keys of the clients currently cached."""
    with _lock:
        return list(_clients)


atexit.register(close_all)
