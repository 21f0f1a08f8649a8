"""The embeddings endpoints as catalog types: OpenAI, and any OpenAI-compatible server.

Their probe is the light ping the seed asks for — the endpoint's model list, not an
embedding request — and it checks that the configured model is served. The local MiniLM
embedder has no outside exit and is not a catalog type.

A consumer card names an instance in ``EmbeddingConfig(instance=...)``; at wiring the
vector store asks it for :meth:`_EmbeddingsEndpoint.embedding_service`: the OpenAI-API
embedder of its URL and model, with its key.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, field_validator

from akgentic.catalog.builtin._service import KeyedService, http_url
from akgentic.catalog.manifest import ToolManifest, register_tool
from akgentic.catalog.probe import ProbeFailedError, http_check
from akgentic.tool.vector_store.vector import EmbeddingService, openai_embedding_service

__all__ = ["OpenAICompatibleEmbeddings", "OpenAIEmbeddings"]

DEFAULT_MODEL = "text-embedding-3-small"


class _EmbeddingsEndpoint(KeyedService):
    """An endpoint speaking the OpenAI embeddings API, and its probe."""

    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    base_url: str

    _url = field_validator("base_url", mode="before")(http_url)

    def embedding_service(self) -> EmbeddingService | None:
        """The embedder of this endpoint and model, with the instance's key (None, with a
        warning, when the ``openai`` package is not installed: keyword-only)."""
        return openai_embedding_service(self.model, base_url=self.base_url, api_key=self._api_key)

    def probe(self, timeout: float) -> str:
        """The model list, within ``timeout``; the configured model must be in it."""
        answer = http_check(
            f"{self.base_url}/models",
            timeout=timeout,
            headers=self.key_header(),
            what="the endpoint",
        )
        data = answer.body.get("data") if isinstance(answer.body, dict) else None
        if not isinstance(data, list):
            raise ProbeFailedError(f"{self.base_url}/models did not answer a model list")
        served = sorted(str(m.get("id")) for m in data if isinstance(m, dict))
        if self.model not in served:
            shown = ", ".join(served[:10]) or "none"
            raise ProbeFailedError(
                f"the endpoint does not serve {self.model!r} (it serves: {shown})"
            )
        return f"{answer.summary}; serves {self.model}"


@register_tool
class OpenAIEmbeddings(_EmbeddingsEndpoint):
    """OpenAI's embeddings API (the key is the catalog credential)."""

    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="embeddings.openai",
        description="OpenAI embeddings: semantic search for the plan and the graph.",
        credential="api_key",
    )

    base_url: str = "https://api.openai.com/v1"


@register_tool
class OpenAICompatibleEmbeddings(_EmbeddingsEndpoint):
    """Any server speaking the OpenAI embeddings API (Ollama, vLLM, llama.cpp...)."""

    manifest: ClassVar[ToolManifest] = ToolManifest(
        name="embeddings.openai_compatible",
        description="An OpenAI-compatible embeddings server (Ollama, vLLM, llama.cpp).",
        credential="api_key",
        credential_required=False,
    )
