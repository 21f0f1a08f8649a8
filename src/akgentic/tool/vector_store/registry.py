"""The pluggable backend registry: ``BackendSpec`` and ``register_backend``.

A backend is registered once per process under its name. The built-in ones
(``inmemory``, ``qdrant``, ``weaviate``) register themselves when
``akgentic.tool.vector_store.backends`` is imported — which the package does, and
which :func:`get_backend` makes sure of — without importing any optional client.

``persists_in_actor_state`` is the backend's answer to "does an actor exist at all":
True means the rows live in the team's ``#VectorStore`` actor state (created through
``ensure_store_actor``); False means the rows live elsewhere (a cluster, a local
database) and each consumer calls the backend object directly.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from akgentic.tool.vector_store.protocol import (
    VectorStore,
    VectorStoreConfig,
    VectorStoreConfigError,
)

__all__ = ["BackendSpec", "backend_names", "get_backend", "register_backend"]


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """How to build one backend, and what it needs.

    - ``factory`` builds the backend from a resolved :class:`VectorStoreConfig`.
    - ``persists_in_actor_state`` — see the module docstring.
    - ``requires`` — importable module names the backend needs; ``extra`` is the
      package extra that installs them (named in the ImportError).
    - ``check`` — wiring-time validation of the config (e.g. "the URL is set"),
      raising :class:`VectorStoreConfigError` with what to do.
    """

    name: str
    factory: Callable[[VectorStoreConfig], VectorStore]
    persists_in_actor_state: bool
    requires: tuple[str, ...] = ()
    extra: str | None = None
    check: Callable[[VectorStoreConfig], None] | None = None
    description: str = field(default="", compare=False)

    def missing_modules(self) -> list[str]:
        """The required modules that are not installed."""
        return [name for name in self.requires if importlib.util.find_spec(name) is None]

    def validate(self, config: VectorStoreConfig) -> None:
        """Raise now what would otherwise fail later: missing client, missing settings."""
        missing = self.missing_modules()
        if missing:
            hint = f"pip install 'akgentic[{self.extra}]'" if self.extra else "install them"
            raise ImportError(
                f"vector store backend {self.name!r} needs {', '.join(missing)}, which "
                f"is not installed: {hint}"
            )
        if self.check is not None:
            self.check(config)


_backends: dict[str, BackendSpec] = {}
_lock = threading.Lock()


def register_backend(spec: BackendSpec, *, replace: bool = False) -> BackendSpec:
    """Register ``spec`` under ``spec.name``; a second registration needs ``replace=True``."""
    with _lock:
        existing = _backends.get(spec.name)
        if existing is not None and existing != spec and not replace:
            raise ValueError(
                f"a vector store backend named {spec.name!r} is already registered; "
                f"pass replace=True to override it"
            )
        _backends[spec.name] = spec
    return spec


def _ensure_builtins() -> None:
    import akgentic.tool.vector_store.backends  # noqa: F401  (self-registration)


def get_backend(name: str) -> BackendSpec:
    """The spec registered under ``name``; :class:`VectorStoreConfigError` if none is."""
    _ensure_builtins()
    with _lock:
        spec = _backends.get(name)
        known = sorted(_backends)
    if spec is None:
        raise VectorStoreConfigError(
            f"unknown vector store backend {name!r}: use one of {', '.join(known)}, leave it "
            f"out for the default, or register your own (register_backend) in a module "
            f"imported first"
        )
    return spec


def backend_names() -> list[str]:
    """The registered backend names, sorted."""
    _ensure_builtins()
    with _lock:
        return sorted(_backends)
