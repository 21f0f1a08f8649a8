"""A card names its cluster and its embedder by catalog instance: the vector store asks the
service directory bound to the observer's actor system (the catalog, in a team) — here a
directory of the test's own, over Qdrant's real local mode; every refusal fails at wiring."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.tool.core.services import bind_services, unbind_services
from akgentic.tool.vector_store import (
    EmbeddingConfig,
    QdrantBackend,
    SemanticIndex,
    VectorStoreConfig,
    VectorStoreConfigError,
    VectorStoreParam,
    close_client,
    get_embedding_service,
)
from akgentic.tool.vector_store.semantic import AUTO

from ..conftest import FakeAgent, Team
from .conftest import FakeEmbedder
from .test_semantic import fresh_setup, start_notes, wait_workers_stopped  # noqa: F401


class Cluster:
    def __init__(self, config: VectorStoreConfig) -> None:
        self.config = config

    def vector_store_config(self) -> VectorStoreConfig:
        return self.config


class Endpoint:
    def __init__(self) -> None:
        self.embedder = FakeEmbedder()

    def embedding_service(self) -> FakeEmbedder:
        return self.embedder


class Directory:
    """Resolves names as the catalog does: the built instance, or a refusal saying why."""

    def __init__(self, **instances: Any) -> None:
        self.instances = instances
        self.asked: list[tuple[str, str]] = []

    def resolve(self, name: str, surface: str = "agents") -> Any:
        self.asked.append((name, surface))
        if name not in self.instances:
            raise LookupError(f"catalog tool {name!r} is not enabled for {surface}")
        return self.instances[name]


def test_a_named_cluster_and_embedder_serve_the_index(team: Team, tmp_path: Any) -> None:
    config = VectorStoreConfig(backend="qdrant", path=str(tmp_path / "qdrant"))
    endpoint = Endpoint()
    directory = Directory(east=Cluster(config), bow=endpoint)
    bind_services(team.system, directory)
    param = VectorStoreParam(
        cluster="east", embedding=EmbeddingConfig(instance="bow"), query_timeout=30.0
    )
    try:
        notes, address = start_notes(team, param=param, embedder=AUTO)
        notes.add("a", "alpha beta")
        notes.add("b", "gamma delta")
        wait_workers_stopped(team, 2)
        assert next(iter(notes.search("alpha beta", 2))) == "a"
        index = team.system.get_actor(address).index
        assert index.spec.name == "qdrant" and isinstance(index._store, QdrantBackend)
        assert index.embedder is endpoint.embedder
        assert directory.asked == [("east", "agents"), ("bow", "agents")]
        assert {"alpha beta", "gamma delta"} <= {t for c in endpoint.embedder.calls for t in c[0]}
    finally:
        unbind_services(team.system)
        close_client(QdrantBackend(config).key)


class SystemAgent(FakeAgent):
    def __init__(self, system: object) -> None:
        super().__init__()
        self.system = system


def test_every_refusal_of_a_named_instance_fails_at_wiring(tmp_path: Any) -> None:
    system = type("System", (), {})()
    agent = SystemAgent(system)
    local = Cluster(VectorStoreConfig(backend="qdrant", path=str(tmp_path / "q")))

    def bind(param: VectorStoreParam) -> SemanticIndex:
        return SemanticIndex.bind(param, agent, "notes", embedder=None)  # type: ignore[arg-type]

    with pytest.raises(VectorStoreConfigError, match="no tool catalog is bound"):
        bind(VectorStoreParam(cluster="east"))
    bind_services(system, Directory(east=local, card=object()))
    with pytest.raises(
        VectorStoreConfigError,
        match="^vector cluster 'west': catalog tool 'west' is not enabled for agents$",
    ):
        bind(VectorStoreParam(cluster="west"))
    with pytest.raises(VectorStoreConfigError, match="'card' \\(object\\) is not a vector cluster"):
        bind(VectorStoreParam(cluster="card"))
    with pytest.raises(VectorStoreConfigError, match="store config is for backend 'qdrant'"):
        bind(VectorStoreParam(cluster="east", backend="weaviate"))
    with pytest.raises(VectorStoreConfigError, match="^embeddings endpoint 'bow': catalog tool"):
        SemanticIndex.bind(
            VectorStoreParam(embedding=EmbeddingConfig(instance="bow")),
            agent,  # type: ignore[arg-type]
            "notes",
        )
    index = bind(VectorStoreParam(cluster="east"))
    try:
        assert index.spec.name == "qdrant"
    finally:
        close_client(QdrantBackend(local.config).key)


def test_a_named_embedder_excludes_the_fields_its_instance_sets() -> None:
    with pytest.raises(ValidationError, match="give instance alone"):
        EmbeddingConfig(instance="bow", provider="openai")
    assert EmbeddingConfig(instance="bow").instance == "bow"
    assert VectorStoreParam(cluster="east").model_dump()["cluster"] == "east"


def test_a_named_embedder_is_not_resolved_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment")
    assert get_embedding_service(EmbeddingConfig(instance="bow")) is None
