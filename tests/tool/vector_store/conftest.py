"""Fixtures for the vector store: deterministic embedders and the backends under contract."""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from akgentic.tool.vector_store import (
    InMemoryBackend,
    QdrantBackend,
    VectorStore,
    VectorStoreActor,
    VectorStoreConfig,
    WeaviateBackend,
    close_client,
)
from akgentic.tool.vector_store.hybrid import tokenize

from ..conftest import Team

DIM = 32


def bag_of_words(text: str, dim: int = DIM) -> list[float]:
    """A deterministic, normalised hashed bag of words (never the zero vector)."""
    vector = [0.0] * dim
    vector[0] = 0.05  # a bias, so an empty text still has a direction
    for token in tokenize(text):
        slot = int(hashlib.sha256(token.encode()).hexdigest(), 16) % (dim - 1) + 1
        vector[slot] += 1.0
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


class FakeEmbedder:
    """An EmbeddingService without a model: hashed bag of words, and a call log."""

    name = "fake:bow"
    dimension: int | None = DIM

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], float | None]] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        with self._lock:
            self.calls.append((list(texts), timeout))
        return [bag_of_words(t) for t in texts]


class GatedEmbedder(FakeEmbedder):
    """Blocks every call on texts in ``hold`` until ``gate`` is set; reports entries."""

    def __init__(self, hold: set[str] | None = None) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.hold = hold  # None: hold every call
        self.entered = threading.Condition()
        self.in_flight: list[str] = []

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        held = self.hold is None or any(t in self.hold for t in texts)
        if held:
            with self.entered:
                self.in_flight.extend(texts)
                self.entered.notify_all()
            if not self.gate.wait(60):
                raise TimeoutError("gate never opened")
        return super().embed(texts, timeout)

    def wait_entered(self, text: str, timeout: float = 30.0) -> None:
        with self.entered:
            if not self.entered.wait_for(lambda: text in self.in_flight, timeout):
                raise AssertionError(f"{text!r} never reached the embedder")


class FailingEmbedder(FakeEmbedder):
    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        super().embed(texts, timeout)
        raise ConnectionError("embedder down")


# -- the backends under one contract -------------------------------------------------------


class ActorStore:
    """The in-memory backend as consumers reach it: through the #VectorStore actor."""

    def __init__(self, team: Team) -> None:
        from akgentic.core import BaseConfig

        address = team.proxy.getChildrenOrCreate(VectorStoreActor, BaseConfig(name="#VectorStore"))
        self.proxy: Any = team.system.proxy_ask(address, VectorStoreActor, timeout=30)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.proxy, name)


WEAVIATE_URL = os.environ.get("AKGENTIC_WEAVIATE_URL", "").strip()

BACKENDS = [
    "inmemory",
    "inmemory-actor",
    "qdrant-local",
    pytest.param(
        "weaviate",
        marks=pytest.mark.skipif(
            not WEAVIATE_URL, reason="set AKGENTIC_WEAVIATE_URL to run the Weaviate contract"
        ),
    ),
]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[VectorStore]:
    kind = request.param
    if kind == "inmemory":
        yield InMemoryBackend()
    elif kind == "inmemory-actor":
        team: Team = request.getfixturevalue("team")
        yield ActorStore(team)  # type: ignore[misc]
    elif kind == "qdrant-local":
        backend = QdrantBackend(VectorStoreConfig(backend="qdrant", path=str(tmp_path / "qdrant")))
        yield backend
        close_client(backend.key)
    else:
        config = VectorStoreConfig.from_env("weaviate")
        backend_w = WeaviateBackend(config)
        for name in backend_w.list_collections():  # a scratch cluster: start clean
            if name.startswith("contract"):
                backend_w.client.collections.delete("Akgentic_" + name)
        yield backend_w
        for name in backend_w.list_collections():
            if name.startswith("contract"):
                backend_w.client.collections.delete("Akgentic_" + name)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: loads a real model (seconds); still part of the default suite"
    )
