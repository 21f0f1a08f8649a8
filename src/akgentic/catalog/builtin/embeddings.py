"""The embeddings endpoints as catalog types: OpenAI, and any OpenAI-compatible server.

Their probe is the light ping the seed asks for — the endpoint's model list, not an
embedding request — and it checks that the configured model is served. The local MiniLM
embedder has no outside exit and is not a catalog type.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from akgentic.catalog.manifest import ToolManifest, register_tool
from akgentic.catalog.probe import ProbeFailedError, http_check

__all__ = ["OpenAICompatibleEmbeddings", "OpenAIEmbeddings", "http_url"]

DEFAULT_MODEL = "text-embedding-3-small"


def http_url(value: Any) -> Any:
    """A base URL: ``http://`` or ``https://``, no trailing slash."""
    if isinstance(value, str):
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
    return value


class _EmbeddingsEndpoint(BaseModel):
    """An endpoint speaking the OpenAI embeddings API, and its probe."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    model: str = Field(default=DEFAULT_MODEL, min_length=1)
    base_url: str

    _api_key: str | None = PrivateAttr(default=None)

    _url = field_validator("base_url", mode="before")(http_url)

    def bind_credential(self, secret: str) -> None:
        """The API key (kept private: never serialized)."""
        self._api_key = secret

    def probe(self, timeout: float) -> str:
        """The model list, within ``timeout``; the configured model must be in it."""
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        answer = http_check(
            f"{self.base_url}/models", timeout=timeout, headers=headers, what="the endpoint"
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
