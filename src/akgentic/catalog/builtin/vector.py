"""The vector clusters as catalog types: a Qdrant server and a Weaviate cluster.

Each probe is one authenticated read of the cluster's REST API — Qdrant's collection
list, Weaviate's ``/v1/meta`` — so a stale key shows as "refused", not only a dead host.
Qdrant's local mode and the in-memory store have no outside exit and are not types.

A consumer card names an instance in ``VectorStoreParam(cluster=...)``; at wiring the
vector store asks the instance for :meth:`_Cluster.vector_store_config` — its URL and key
(the client timeout stays ``AKGENTIC_VECTOR_TIMEOUT``'s).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from akgentic.catalog.builtin._service import KeyedService, http_url
from akgentic.catalog.manifest import ToolManifest, register_tool
from akgentic.catalog.probe import http_check
from akgentic.tool.vector_store import VectorStoreConfig

__all__ = ["QdrantServer", "WeaviateCluster"]


class _Cluster(KeyedService):
    backend: ClassVar[str]
    """The vector store backend that speaks to this cluster."""

    url: str

    _url = field_validator("url", mode="before")(http_url)

    def vector_store_config(self) -> VectorStoreConfig:
        """The vector store's connection to this cluster: its URL and key (never
        serialized: ``VectorStoreConfig`` excludes the key)."""
        connection = {"url": self.url, "api_key": self._api_key, "path": None}
        return VectorStoreConfig.from_env(self.backend).model_copy(update=connection)


@register_tool
class QdrantServer(_Cluster):
    """A Qdrant server (``url``: its REST endpoint, e.g. ``http://qdrant:6333``)."""

    backend: ClassVar[str] = "qdrant"
    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="vector.qdrant",
        description="A Qdrant server holding the vector store's rows.",
        access="write",
        credential="api_key",
        credential_required=False,
    )

    def probe(self, timeout: float) -> str:
        """The collection list, within ``timeout``."""
        headers = self.key_header("api-key", scheme="")
        answer = http_check(
            f"{self.url}/collections", timeout=timeout, headers=headers, what="Qdrant"
        )
        result = answer.body.get("result") if isinstance(answer.body, dict) else None
        collections = result.get("collections") if isinstance(result, dict) else None
        count = f"; {len(collections)} collections" if isinstance(collections, list) else ""
        return f"{answer.summary}{count}"


@register_tool
class WeaviateCluster(_Cluster):
    """A Weaviate cluster (``url``: its HTTP endpoint; ``grpc_port``: its gRPC port)."""

    backend: ClassVar[str] = "weaviate"
    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="vector.weaviate",
        description="A Weaviate cluster holding the vector store's rows.",
        access="write",
        credential="api_key",
        credential_required=False,
    )

    grpc_port: int | None = Field(default=None, ge=1, le=65535)

    def vector_store_config(self) -> VectorStoreConfig:
        """The cluster's connection, its gRPC port included."""
        return super().vector_store_config().model_copy(update={"grpc_port": self.grpc_port})

    def probe(self, timeout: float) -> str:
        """The cluster's meta (its version), within ``timeout``."""
        headers = self.key_header()
        answer = http_check(
            f"{self.url}/v1/meta", timeout=timeout, headers=headers, what="Weaviate"
        )
        version = answer.body.get("version") if isinstance(answer.body, dict) else None
        return f"{answer.summary}; Weaviate {version}" if version else answer.summary
