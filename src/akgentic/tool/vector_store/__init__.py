"""The vector store: backends, embedders, hybrid fusion, and the consumer facade.

There is no vector-store card. A consumer card carries ``vector_store:
VectorStoreParam`` and binds a :class:`SemanticIndex` per collection when wired; the
index resolves the backend (in memory in the team's ``#VectorStore`` actor, Qdrant, or
Weaviate), embeds in ``#embed-…`` workers, and answers ``ref_id -> cosine``. The
consumer fuses that with its own keyword scores through :func:`hybrid_rank` — the one
rule, above every backend. See ``README.md`` beside this file.

Importing this package needs no extra: numpy, the cluster clients, sentence-transformers
and openai are imported on first use.
"""

from akgentic.tool.vector_store.actor import STORE_ACTOR_NAME, VectorStoreActor, ensure_store_actor
from akgentic.tool.vector_store.backends import InMemoryBackend, QdrantBackend, WeaviateBackend
from akgentic.tool.vector_store.client import close_all, close_client, get_client
from akgentic.tool.vector_store.embedding_actor import EmbeddingJob, EmbeddingWorker
from akgentic.tool.vector_store.hybrid import (
    Terms,
    hybrid_rank,
    hybrid_scores,
    keyword_scores,
    terms_of,
)
from akgentic.tool.vector_store.params import DEFAULT_ALPHA, EmbeddingConfig, VectorStoreParam
from akgentic.tool.vector_store.protocol import (
    HeldRow,
    SearchHit,
    VectorStore,
    VectorStoreConfig,
    VectorStoreConfigError,
    point_id,
)
from akgentic.tool.vector_store.registry import (
    BackendSpec,
    backend_names,
    get_backend,
    register_backend,
)
from akgentic.tool.vector_store.semantic import SemanticIndex, WriteWatch
from akgentic.tool.vector_store.vector import (
    EmbedderLoading,
    EmbeddingService,
    LocalEmbeddingService,
    OpenAIEmbeddingService,
    VectorEntry,
    VectorIndex,
    get_embedding_service,
)

__all__ = [
    "DEFAULT_ALPHA",
    "STORE_ACTOR_NAME",
    "BackendSpec",
    "EmbedderLoading",
    "EmbeddingConfig",
    "EmbeddingJob",
    "EmbeddingService",
    "EmbeddingWorker",
    "HeldRow",
    "InMemoryBackend",
    "LocalEmbeddingService",
    "OpenAIEmbeddingService",
    "QdrantBackend",
    "SearchHit",
    "SemanticIndex",
    "Terms",
    "VectorEntry",
    "VectorIndex",
    "VectorStore",
    "VectorStoreActor",
    "VectorStoreConfig",
    "VectorStoreConfigError",
    "VectorStoreParam",
    "WeaviateBackend",
    "WriteWatch",
    "backend_names",
    "close_all",
    "close_client",
    "ensure_store_actor",
    "get_backend",
    "get_client",
    "get_embedding_service",
    "hybrid_rank",
    "hybrid_scores",
    "keyword_scores",
    "point_id",
    "register_backend",
    "terms_of",
]
