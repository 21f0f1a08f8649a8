"""VectorStoreParam, VectorStoreConfig, the backend registry and the client cache."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool.vector_store import (
    BackendSpec,
    EmbeddingConfig,
    InMemoryBackend,
    VectorStoreConfig,
    VectorStoreConfigError,
    VectorStoreParam,
    WeaviateBackend,
    backend_names,
    close_all,
    close_client,
    get_backend,
    get_client,
    register_backend,
    registry,
)
from akgentic.tool.vector_store import client as client_module
from akgentic.tool.vector_store.protocol import check_collection_name, point_id

# -- VectorStoreParam ------------------------------------------------------------------------


def test_param_defaults_and_round_trip() -> None:
    param = VectorStoreParam()
    assert (param.backend, param.collection, param.embedding) == (None, None, None)
    assert param.hybrid_alpha == 0.7
    custom = VectorStoreParam(
        backend="qdrant",
        collection="tasks_v2",
        embedding=EmbeddingConfig(provider="openai", model="text-embedding-3-large"),
        hybrid_alpha=0.4,
    )
    assert deserialize(serialize(custom)) == custom


def test_param_forbids_unknown_fields_and_bad_values() -> None:
    with pytest.raises(ValueError, match="weaviate_url"):
        VectorStoreParam(weaviate_url="http://x")  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        VectorStoreParam(hybrid_alpha=1.5)
    with pytest.raises(
        ValueError,
        match="invalid collection name 'has space': use letters, digits and '_', starting "
        "with a letter",
    ):
        VectorStoreParam(collection="has space")
    with pytest.raises(ValueError, match="valid string"):
        VectorStoreParam(collection=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backend"):
        VectorStoreParam(backend=" ")


def test_param_refuses_a_backend_no_one_registered_as_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not first when a consumer binds it (the team starting): the field, the value, the
    names accepted and what to do, on one line."""
    with pytest.raises(ValidationError) as info:
        VectorStoreParam(backend="faiss")
    (error,) = info.value.errors()
    assert error["loc"] == ("backend",)
    assert error["msg"] == (
        "Value error, unknown vector store backend 'faiss': use one of "
        f"{', '.join(backend_names())}, leave it out for the default, or register your own "
        "(register_backend) in a module imported first"
    )
    later = BackendSpec(
        name="test-later", factory=lambda config: InMemoryBackend(), persists_in_actor_state=False
    )
    monkeypatch.setitem(registry._backends, later.name, later)  # registered for this test only
    assert VectorStoreParam(backend="test-later").backend == "test-later"  # once registered


def test_backend_resolves_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AKGENTIC_WEAVIATE_URL", raising=False)
    assert VectorStoreParam().resolved_backend() == "inmemory"
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "   ")  # exported but empty: unset
    assert VectorStoreParam().resolved_backend() == "inmemory"
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "http://weaviate.internal:8080")
    assert VectorStoreParam().resolved_backend() == "weaviate"
    assert VectorStoreParam(backend="qdrant").resolved_backend() == "qdrant"


# -- VectorStoreConfig -----------------------------------------------------------------------


def test_config_reads_the_environment_and_hides_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "https://c.weaviate.cloud")
    monkeypatch.setenv("AKGENTIC_WEAVIATE_API_KEY", "secret-key")
    monkeypatch.setenv("AKGENTIC_WEAVIATE_GRPC_PORT", "")
    config = VectorStoreConfig.from_env("weaviate")
    assert config.url == "https://c.weaviate.cloud" and config.api_key == "secret-key"
    assert config.grpc_port is None
    assert "secret-key" not in repr(config)
    assert "secret-key" not in str(serialize(config))
    monkeypatch.setenv("AKGENTIC_WEAVIATE_GRPC_PORT", "not-a-port")
    with pytest.raises(VectorStoreConfigError, match="weaviate"):
        VectorStoreConfig.from_env("weaviate")


def test_weaviate_without_a_url_is_a_clear_error() -> None:
    config = VectorStoreConfig(backend="weaviate")
    with pytest.raises(VectorStoreConfigError, match="AKGENTIC_WEAVIATE_URL"):
        get_backend("weaviate").validate(config)
    with pytest.raises(VectorStoreConfigError, match="AKGENTIC_WEAVIATE_URL"):
        WeaviateBackend(config)


def test_weaviate_without_its_client_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "weaviate" else real(name, *a)
    )
    config = VectorStoreConfig(backend="weaviate", url="http://127.0.0.1:1")
    with pytest.raises(ImportError, match=r"pip install 'akgentic\[weaviate\]'"):
        WeaviateBackend(config)
    with pytest.raises(ImportError, match=r"akgentic\[weaviate\]"):
        get_backend("weaviate").validate(config)


def test_constructing_weaviate_does_not_connect() -> None:
    backend = WeaviateBackend(VectorStoreConfig(backend="weaviate", url="http://127.0.0.1:1"))
    assert backend.key not in client_module.cached_keys()  # connects on first use only


def test_point_ids_are_deterministic_per_team_tenant_and_ref() -> None:
    assert point_id("t", "", "r") == point_id("t", "", "r")
    assert len({point_id("t", "", "r"), point_id("u", "", "r"), point_id("t", "x", "r")}) == 3


def test_collection_names_are_checked() -> None:
    assert check_collection_name("planning") == "planning"
    for bad in ("", "1abc", "a-b", "a" * 64):
        with pytest.raises(VectorStoreConfigError):
            check_collection_name(bad)


# -- the registry --------------------------------------------------------------------------


def test_builtins_self_register() -> None:
    assert {"inmemory", "qdrant", "weaviate"} <= set(backend_names())
    assert get_backend("inmemory").persists_in_actor_state
    assert not get_backend("qdrant").persists_in_actor_state
    assert not get_backend("weaviate").persists_in_actor_state


def test_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(VectorStoreConfigError, match="inmemory, qdrant, weaviate"):
        get_backend("pinecone")


def test_register_a_backend_of_your_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from akgentic.tool.vector_store import registry

    # the registry is the process's: this test's backend goes with the test
    registry._ensure_builtins()  # registered for good before the copy is taken
    monkeypatch.setattr(registry, "_backends", dict(registry._backends))
    spec = BackendSpec(
        name="test-custom", factory=lambda config: InMemoryBackend(), persists_in_actor_state=False
    )
    assert register_backend(spec) is spec
    assert get_backend("test-custom") is spec
    other = BackendSpec(
        name="test-custom", factory=lambda config: InMemoryBackend(), persists_in_actor_state=True
    )
    with pytest.raises(ValueError, match="already registered"):
        register_backend(other)
    register_backend(other, replace=True)
    assert get_backend("test-custom").persists_in_actor_state


def test_a_missing_dependency_fails_validation_with_the_extra() -> None:
    spec = BackendSpec(
        name="test-needs",
        factory=lambda config: InMemoryBackend(),
        persists_in_actor_state=False,
        requires=("surely_not_installed_module",),
        extra="needs",
    )
    with pytest.raises(ImportError, match=r"surely_not_installed_module.*akgentic\[needs\]"):
        spec.validate(VectorStoreConfig(backend="test-needs"))


# -- the client cache ----------------------------------------------------------------------


class Closable:
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_one_client_per_key_even_under_concurrency() -> None:
    made: list[Closable] = []
    barrier = threading.Barrier(8)
    got: list[Any] = []
    lock = threading.Lock()

    def connect() -> Closable:
        client = Closable()
        made.append(client)
        return client

    def worker() -> None:
        barrier.wait(30)
        client = get_client(("test", "one"), connect)
        with lock:
            got.append(client)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert len(made) == 1 and all(c is made[0] for c in got)
    assert close_client(("test", "one")) and made[0].closed == 1
    assert not close_client(("test", "one"))


def test_close_all_closes_every_client_and_a_later_get_reconnects() -> None:
    a = get_client(("test", "a"), Closable)
    b = get_client(("test", "b"), Closable)
    close_all()
    assert (a.closed, b.closed) == (1, 1)
    assert get_client(("test", "a"), Closable) is not a
    close_all()


def test_close_all_runs_at_process_exit(tmp_path: Any) -> None:
    marker = tmp_path / "closed"
    code = (
        "from akgentic.tool.vector_store import get_client\n"
        "class C:\n"
        f"    def close(self): open({str(marker)!r}, 'w').write('yes')\n"
        "get_client(('exit', 1), C)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert marker.read_text() == "yes"
