"""EmbeddingWorker: the short-lived actor that does the slow embedding call.

Spawned by the CONSUMER (the tool actor that owns a collection) as
``#embed-<collection>-<request_id>`` — so an embedding never runs on a tool actor's
thread — told one job, and stopped by itself once the job is done. The ``#`` prefix
is the teardown invariant: the worker counts as a tool actor, so the orchestrator's
phase-two stop releases unrelated tool actors in parallel instead of serialising them
behind it. It reports to its parent and to the ``#VectorStore`` it writes to
(:class:`EmbeddingWorkerConfig`), which therefore stops only after it.

It is a :class:`~akgentic.tool.core.deferred.DeferredWorker`: :meth:`produce` is the
slow call, bounded by :attr:`timeout`, which it hands to the embedder's I/O client
(``EmbeddingService.embed(texts, timeout=...)``) — a Python thread cannot be
cancelled, so a timeout that never reaches the client would be decoration. It keeps
the base class's ``work`` (deliver to a ``DeferredResultActor`` cache) and adds
:meth:`run`, which hands the outcome to a callback instead — how ``SemanticIndex``
writes the vector to the store (from this thread) or wakes a waiting query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from akgentic.core import ActorAddress, BaseConfig
from akgentic.tool.core.deferred import DeferredWorker
from akgentic.tool.vector_store.vector import EmbeddingService, vectors_problem

__all__ = ["EmbeddingJob", "EmbeddingWorker", "EmbeddingWorkerConfig"]

logger = logging.getLogger("akgentic.tool.vector_store")

Apply = Callable[["EmbeddingWorker", list[list[float]] | None, str | None], None]


@dataclass(frozen=True, slots=True)
class EmbeddingJob:
    """One job for one worker, passed in-process.

    ``texts`` are embedded by ``embedder`` (no texts or no embedder: nothing to embed,
    just ``apply``). ``apply(worker,
    vectors, error)`` then runs on the worker's thread with the vectors, or None and
    the error text.
    """

    texts: Sequence[str]
    embedder: EmbeddingService | None
    apply: Apply


class EmbeddingWorkerConfig(BaseConfig):
    """A worker's config: ``store`` is the ``#VectorStore`` its rows are written to (None
    when there is none: a query, a cluster backend)."""

    store: ActorAddress | None = None


class EmbeddingWorker(DeferredWorker[str, list[list[float]]]):
    """Embeds under :attr:`timeout`, hands the outcome on, and stops; see the module docstring."""

    config_class = EmbeddingWorkerConfig

    def reports_to(self) -> list[ActorAddress]:
        """Its parent, and the ``#VectorStore`` it writes to: that one stops after it."""
        store = self.config.store if isinstance(self.config, EmbeddingWorkerConfig) else None
        return [*super().reports_to(), *([store] if store is not None else [])]

    timeout: ClassVar[float] = 8.0
    """The budget of one embedding call, handed to the client; below the 10 s a parent
    waits for each child at stop (``Akgent.stop_timeout``), and the team's 30 s grace."""

    def produce(self, key: str, payload: Any, timeout: float) -> list[list[float]]:
        """Embed ``payload.texts`` (an :class:`EmbeddingJob`) with ``timeout`` handed down.

        An answer no store could take — a vector count that is not the text count, or a
        vector empty, of another length, not finite or zero (:func:`vectors_problem`) —
        raises: the job fails as a whole, its rows left to the next reconcile, a query
        degraded."""
        job = payload
        if not isinstance(job, EmbeddingJob):
            raise TypeError(f"EmbeddingWorker embeds an EmbeddingJob, got {type(job).__name__}")
        embedder = job.embedder
        if embedder is None or not job.texts:
            return []
        vectors = embedder.embed(list(job.texts), timeout=timeout)
        if len(vectors) != len(job.texts):
            raise RuntimeError(
                f"{embedder.name} returned {len(vectors)} vectors for {len(job.texts)} texts"
            )
        problem = vectors_problem(vectors)
        if problem is not None:  # never to a store: a failed embedding, as above
            raise RuntimeError(f"{embedder.name} answered a vector no store takes: {problem}")
        return vectors

    def run(self, job: EmbeddingJob) -> None:
        """Do ``job`` once (told, never asked), then stop."""
        try:
            vectors: list[list[float]] | None = None
            error: str | None = None
            try:
                vectors = self.produce(self.myAddress.name, job, self.timeout)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                logger.warning("%s: embedding failed: %s", self.myAddress.name, error)
            try:
                job.apply(self, vectors, error)
            except Exception as exc:
                logger.warning("%s: applying the result failed: %r", self.myAddress.name, exc)
        finally:
            self.stop()
