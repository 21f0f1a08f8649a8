"""Vector primitives: VectorEntry compatibility, VectorIndex, embedder resolution."""

from __future__ import annotations

import math
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import RetriableError
from akgentic.tool.vector_store import (
    EmbedderLoading,
    EmbeddingConfig,
    LocalEmbeddingService,
    OpenAIEmbeddingService,
    VectorEntry,
    VectorIndex,
    get_embedding_service,
)
from akgentic.tool.vector_store import vector as vector_module
from akgentic.tool.vector_store.vector import start_warm_up, vectors_problem

# -- VectorEntry ----------------------------------------------------------------------------


def test_vector_entry_round_trips_with_its_new_fields() -> None:
    row = VectorEntry(ref_id="r", text="t", vector=[0.5, 0.5], team_id="team", tenant="x")
    assert deserialize(serialize(row)) == row


def test_rows_stored_before_the_move_and_the_new_fields_still_decode() -> None:
    old = {
        "__model__": "akgentic.tool.vector.VectorEntry",
        "ref_id": "r",
        "text": "t",
        "vector": [1.0, 0.0],
        "metadata": {"k": 1},
    }
    row = deserialize(old)
    assert isinstance(row, VectorEntry)
    assert (row.team_id, row.tenant, row.metadata) == ("", "", {"k": 1})


def test_the_old_path_still_resolves_with_a_warning() -> None:
    import akgentic.tool.vector as old_module

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert old_module.VectorEntry is VectorEntry
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)


# -- VectorIndex -----------------------------------------------------------------------------


def test_index_ranks_by_cosine_and_replaces_on_upsert() -> None:
    index = VectorIndex()
    index.upsert("a", [1.0, 0.0])
    index.upsert("b", [3.0, 3.0])  # normalised on the way in
    index.add(VectorEntry(ref_id="c", text="", vector=[0.0, 2.0]))
    assert index.dimension == 2 and len(index) == 3 and "b" in index
    ranked = index.search([1.0, 0.0], k=3)
    assert [r for r, _ in ranked] == ["a", "b", "c"]
    assert [s for _, s in ranked] == pytest.approx([1.0, 0.70710677, 0.0], abs=1e-6)
    index.upsert("a", [0.0, 1.0])
    assert len(index) == 3
    assert index.search([0.0, 1.0], k=1)[0][0] in {"a", "c"}
    assert index.vector("b") == pytest.approx([0.70710677, 0.70710677], abs=1e-6)


def test_removed_slots_are_reused_and_never_returned() -> None:
    index = VectorIndex(dimension=2)
    for i in range(100):
        index.upsert(f"r{i}", [1.0, i / 100])
    assert index.remove("r0") and not index.remove("r0")
    assert "r0" not in [r for r, _ in index.search([1.0, 0.0], k=100)]
    assert len(index.search([1.0, 0.0], k=500)) == 99
    index.upsert("new", [1.0, 0.0])
    assert len(index) == 100
    assert index.search([1.0, 0.0], k=1)[0][0] == "new"
    assert index.vector("r0") is None
    assert sorted(index.ids()) == sorted([f"r{i}" for i in range(1, 100)] + ["new"])


def test_index_refuses_zero_vectors_and_wrong_dimensions() -> None:
    index = VectorIndex()
    with pytest.raises(ValueError, match="zero vector"):
        index.upsert("z", [0.0, 0.0])
    index.upsert("a", [1.0, 0.0])
    with pytest.raises(ValueError, match="dimension 3"):
        index.upsert("b", [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="2 ref ids for 1 vectors"):
        index.upsert_many(["x", "y"], [[1.0, 0.0]])
    assert index.search([1.0, 0.0], k=0) == []
    assert VectorIndex().search([1.0], k=3) == []


@pytest.mark.parametrize("bad", [[math.inf, 1.0], [math.nan, 1.0], [-math.inf, 0.0]])
def test_index_refuses_a_vector_holding_nan_or_infinity(bad: list[float]) -> None:
    """``[inf, 1]`` was normalised to ``[nan, 0]`` and kept: every query then scored NaN."""
    index = VectorIndex()
    index.upsert("a", [1.0, 0.0])
    with pytest.raises(ValueError, match="^cannot index a vector holding NaN or infinity$"):
        index.upsert("b", bad)
    with pytest.raises(ValueError, match="NaN or infinity"):
        index.search(bad, k=1)
    assert index.ids() == ["a"] and index.search([1.0, 0.0], k=5) == [("a", 1.0)]


def test_vectors_problem_names_the_first_vector_no_store_takes() -> None:
    assert vectors_problem([]) is None
    assert vectors_problem([[0.6, 0.8], [1.0, 0.0]]) is None
    assert vectors_problem([[1.0, 0.0], []]) == "vector 2 is empty"
    assert vectors_problem([[1.0, 0.0], [1.0]]) == "vector 2 has 1 dimensions, the first 2"
    assert vectors_problem([[math.nan, 1.0]]) == "vector 1 holds NaN or infinity"
    assert vectors_problem([[1.0], [0.0]]) == "vector 2 is zero (it has no direction)"


# -- embedder resolution ----------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "OPENAI_API_KEY",
        "AKGENTIC_EMBEDDING_BASE_URL",
        "AKGENTIC_EMBEDDING_API_KEY",
        "AKGENTIC_EMBEDDING_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_none_means_no_embedder(clean_env: pytest.MonkeyPatch) -> None:
    assert get_embedding_service(EmbeddingConfig(provider="none")) is None


def test_openai_without_a_key_is_unavailable_not_an_error(clean_env: pytest.MonkeyPatch) -> None:
    assert get_embedding_service(EmbeddingConfig(provider="openai")) is None
    clean_env.setenv("OPENAI_API_KEY", "")  # exported but empty counts as unset
    assert get_embedding_service(EmbeddingConfig(provider="openai")) is None


def test_openai_with_a_key_resolves_and_is_cached(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    clean_env.setenv("AKGENTIC_EMBEDDING_MODEL", "text-embedding-3-large")
    service = get_embedding_service(EmbeddingConfig(provider="openai"))
    assert isinstance(service, OpenAIEmbeddingService)
    assert service.model == "text-embedding-3-large" and service.base_url is None
    assert get_embedding_service(EmbeddingConfig(provider="openai")) is service


def test_openai_compatible_needs_a_base_url(clean_env: pytest.MonkeyPatch) -> None:
    config = EmbeddingConfig(provider="openai-compatible", model="nomic-embed-text")
    assert get_embedding_service(config) is None
    clean_env.setenv("AKGENTIC_EMBEDDING_BASE_URL", "http://127.0.0.1:11434/v1")
    service = get_embedding_service(config)
    assert isinstance(service, OpenAIEmbeddingService)
    assert service.base_url == "http://127.0.0.1:11434/v1"
    assert service.model == "nomic-embed-text"
    # Automatic resolution follows an exported endpoint.
    auto = get_embedding_service(EmbeddingConfig(model="nomic-embed-text"))
    assert auto is service


def test_automatic_prefers_the_bundled_local_model(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    service = get_embedding_service()
    if vector_module.local_model_available():
        assert isinstance(service, LocalEmbeddingService)
        assert service.name == "local:all-MiniLM-L6-v2"
    else:  # pragma: no cover — the embeddings extra is not installed
        assert isinstance(service, OpenAIEmbeddingService)


def test_automatic_without_anything_is_keyword_only(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setattr(vector_module, "local_model_available", lambda: False)
    assert get_embedding_service() is None


def test_a_local_model_is_a_directory_never_a_hub_name(clean_env: pytest.MonkeyPatch) -> None:
    config = EmbeddingConfig(provider="local", model="sentence-transformers/all-mpnet-base-v2")
    assert get_embedding_service(config) is None


def test_embedding_config_forbids_unknown_fields() -> None:
    with pytest.raises(ValueError, match="api_key"):
        EmbeddingConfig(provider="openai", api_key="sk-nope")  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        EmbeddingConfig(provider="cohere")  # type: ignore[arg-type]


# -- the OpenAI client gets the timeout --------------------------------------------------------


class _Item:
    def __init__(self, index: int, embedding: list[float]) -> None:
        self.index = index
        self.embedding = embedding


class _Embeddings:
    def __init__(self, log: list[dict[str, Any]]) -> None:
        self.log = log

    def create(self, **kwargs: Any) -> Any:
        self.log.append(kwargs)
        data = [_Item(i, [float(i), 1.0]) for i in range(len(kwargs["input"]))]

        class Response:
            pass

        response = Response()
        response.data = list(reversed(data))  # type: ignore[attr-defined]
        return response


class _Client:
    made: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        _Client.made.append(kwargs)
        self.calls: list[dict[str, Any]] = []
        self.embeddings = _Embeddings(self.calls)


def test_openai_service_hands_its_timeout_to_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    monkeypatch.setattr(openai, "OpenAI", _Client)
    service = OpenAIEmbeddingService(
        "m", api_key="k", base_url="http://127.0.0.1:9/v1", timeout=7.0
    )
    vectors = service.embed(["a", "", "c"], timeout=2.5)
    assert vectors == [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]]  # back in input order
    assert service.dimension == 2
    made = _Client.made[-1]
    assert made["timeout"] == 7.0 and made["base_url"] == "http://127.0.0.1:9/v1"
    call = service._client.calls[-1]
    assert call["timeout"] == 2.5 and call["model"] == "m"
    assert call["input"] == ["a", " ", "c"]  # an empty text is not sent empty
    assert service.embed([]) == []


# -- the local model: a load held on a gate, never a real model ------------------------------


class HeldModel:
    """``sentence_transformers`` as :class:`LocalEmbeddingService` imports it, with a model
    whose load is held until ``gate`` is set (``loading`` says one began) and fails with
    ``fail`` when it is set; ``loads`` counts the loads."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.loading = threading.Event()
        self.fail: Exception | None = None
        self.loads = 0
        held = self

        class SentenceTransformer:
            def __init__(self, path: str, local_files_only: bool = False) -> None:
                assert local_files_only  # never a hub
                held.loads += 1
                held.loading.set()
                if not held.gate.wait(60):
                    raise TimeoutError("the test never let the model load")
                if held.fail is not None:
                    raise held.fail

            def get_embedding_dimension(self) -> int:
                return 2

            def encode(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
                return [[float(len(text)), 1.0] for text in texts]

        self.module = types.ModuleType("sentence_transformers")
        self.module.SentenceTransformer = SentenceTransformer  # type: ignore[attr-defined]


@pytest.fixture
def held_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldModel]:
    held = HeldModel()
    monkeypatch.setitem(sys.modules, "sentence_transformers", held.module)
    yield held
    held.gate.set()  # a load the test left held ends


def in_thread(call: Callable[[], Any]) -> Future[Any]:
    """``call()`` on a daemon thread: a test waits for its outcome, bounded, even when the
    call itself would block for ever."""
    future: Future[Any] = Future()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return future


def test_an_embed_waits_for_a_loading_model_no_longer_than_its_timeout(
    held_model: HeldModel, tmp_path: Path
) -> None:
    service = LocalEmbeddingService(tmp_path, model_name="held")
    assert start_warm_up(service)  # as SemanticIndex.bind does
    assert held_model.loading.wait(30)

    call = in_thread(lambda: service.embed(["hello"], timeout=0.05))
    # the gate stays closed: an embed that waited for the load unbounded would never end
    with pytest.raises(EmbedderLoading, match=r"local:held is still loading .*try again"):
        call.result(timeout=30)
    assert isinstance(call.exception(), RetriableError)  # in a tool: the model retries

    held_model.gate.set()
    assert service.embed(["hello"], timeout=30) == [[5.0, 1.0]]
    assert held_model.loads == 1 and service.ready and service.dimension == 2


def test_an_embed_without_a_timeout_waits_for_the_load_it_starts(
    held_model: HeldModel, tmp_path: Path
) -> None:
    service = LocalEmbeddingService(tmp_path, model_name="held")
    call = in_thread(lambda: service.embed(["hey"]))
    assert held_model.loading.wait(30)  # the embed started the load, on a thread of its own
    assert not call.done()
    held_model.gate.set()
    assert call.result(timeout=30) == [[3.0, 1.0]]
    assert held_model.loads == 1


def test_a_failed_load_fails_the_embed_at_once_and_the_next_embed_loads_again(
    held_model: HeldModel, tmp_path: Path
) -> None:
    service = LocalEmbeddingService(tmp_path, model_name="held")
    held_model.fail = OSError("no model in this directory")
    held_model.gate.set()
    # not an EmbedderLoading after its timeout: the load failed, and the error says why
    with pytest.raises(RuntimeError, match="loading local:held failed: OSError: no model in"):
        service.embed(["a"], timeout=60)
    assert not service.ready

    held_model.fail = None
    assert service.embed(["ab"], timeout=30) == [[2.0, 1.0]]
    assert held_model.loads == 2
