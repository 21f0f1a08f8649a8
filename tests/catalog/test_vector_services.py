"""A catalog-configured embeddings endpoint or vector cluster reaches the vector store at
wiring time: the card names the instance, the URL and key are the catalog's and no stored
byte holds the key; a refused instance fails team creation naming the member."""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

from akgentic.catalog import CatalogService, bind_catalog
from akgentic.core import ActorSystem
from akgentic.storage import SqliteStorage
from akgentic.team import TeamCard, TeamManager
from akgentic.tool.vector_store import (
    SemanticIndex,
    VectorStoreParam,
    WeaviateBackend,
)
from tests.catalog.conftest import ADMIN, stored_bytes
from tests.catalog.embeddings_server import MODEL, serving
from tests.catalog.test_wiring import DATA
from tests.team.test_shared_state import answer

KEY = "sk-embed-LIVE-93c1d0e2"
WEAVIATE_URL = os.environ.get("AKGENTIC_WEAVIATE_URL", "").strip()


@pytest.fixture(autouse=True)
def _no_environment_services(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the catalog may give a cluster or an embedder here."""
    for name in (
        "AKGENTIC_EMBEDDING_BASE_URL",
        "AKGENTIC_EMBEDDING_API_KEY",
        "AKGENTIC_EMBEDDING_MODEL",
        "OPENAI_API_KEY",
        "AKGENTIC_QDRANT_URL",
        "AKGENTIC_QDRANT_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def test_a_catalog_embeddings_endpoint_serves_the_plan_and_no_stored_byte_holds_its_key(
    manager: TeamManager,
    catalog: CatalogService,
    storage: SqliteStorage,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with serving() as endpoint:
        name = "embeddings.openai_compatible"
        catalog.configure(ADMIN, name, {"base_url": endpoint.url, "model": MODEL})
        catalog.set_credential(ADMIN, name, KEY)
        catalog.enable(ADMIN, name)

        runtime = manager.create_team(TeamCard.from_yaml(DATA / "planner.yaml"))
        runtime.send("plan it")
        seq, _ = answer(runtime, 0)
        endpoint.wait_for(lambda: "Draft the quarterly report" in endpoint.inputs())
        runtime.send("find it")
        _, found = answer(runtime, seq)
        assert "quarterly report" in endpoint.inputs()  # the query was embedded too
        manager.shutdown()

    assert found.startswith("[scripted] - #1 [todo] Draft the quarterly report")
    assert {(auth, model) for auth, model, _ in endpoint.seen} == {(f"Bearer {KEY}", MODEL)}
    storage.close()
    everything = stored_bytes(storage.path.parent)
    assert b'"instance":"embeddings.openai_compatible"' in everything
    assert KEY.encode() not in everything
    assert KEY not in caplog.text


def test_a_plan_whose_endpoint_model_changed_is_embedded_again_on_resume(
    manager: TeamManager, catalog: CatalogService, caplog: pytest.LogCaptureFixture
) -> None:
    """The catalog's endpoint is reconfigured to another model while the team is stopped:
    its rows are of the old one, so the resume embeds the plan again with the new model
    (a model change between runs), and says so once."""
    caplog.set_level(logging.WARNING, logger="akgentic.tool.vector_store")
    with serving() as endpoint:
        name = "embeddings.openai_compatible"
        catalog.configure(ADMIN, name, {"base_url": endpoint.url, "model": MODEL})
        catalog.set_credential(ADMIN, name, KEY)
        catalog.enable(ADMIN, name)
        runtime = manager.create_team(TeamCard.from_yaml(DATA / "planner.yaml"))
        runtime.send("plan it")
        answer(runtime, 0)
        endpoint.wait_for(lambda: "Draft the quarterly report" in endpoint.inputs())
        manager.stop_team(runtime.team_id)

        catalog.configure(ADMIN, name, {"base_url": endpoint.url, "model": "bow-embed-2"})
        manager.resume_team(runtime.team_id)

        def embedded_again() -> bool:
            return any(
                model == "bow-embed-2" and any("Draft the quarterly report" in t for t in texts)
                for _, model, texts in endpoint.seen
            )

        endpoint.wait_for(embedded_again)
        manager.shutdown()

    said = [r.getMessage() for r in caplog.records if "embedded again" in r.getMessage()]
    assert said == [
        f"#PlanningTool: 1 row embedded with openai:{endpoint.url}:{MODEL} is embedded again "
        f"with openai:{endpoint.url}:bow-embed-2"
    ]


def test_a_named_service_the_catalog_refuses_fails_creation_naming_the_member(
    manager: TeamManager, catalog: CatalogService, storage: SqliteStorage
) -> None:
    card = TeamCard.from_yaml(DATA / "planner.yaml")
    with pytest.raises(
        ValueError,
        match="^@Planner: PlanningTool's vector_store.embedding.instance: catalog tool "
        "'embeddings.openai_compatible' is not enabled for agents",
    ):
        manager.create_team(card)
    clustered = card.model_copy(deep=True)
    [tool] = clustered.members[0].card.config.tools  # type: ignore[attr-defined]
    tool.vector_store = VectorStoreParam(cluster="http://127.0.0.1:6333")  # a URL, by mistake
    with pytest.raises(
        ValueError,
        match="^@Planner: PlanningTool's vector_store.cluster: no tool type or catalog "
        "instance is called 'http://127.0.0.1:6333'",
    ):
        manager.create_team(clustered)
    assert storage.teams.list() == []


class Agent:
    """An observer of ``system`` with no actor behind it: all ``bind`` asks of it."""

    def __init__(self, system: ActorSystem) -> None:
        self.system = system
        self.team_id = None


def test_a_cluster_instance_gives_the_store_its_url_and_key_without_connecting(
    system: ActorSystem, catalog: CatalogService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_VECTOR_TIMEOUT", "7")
    monkeypatch.delenv("AKGENTIC_WEAVIATE_URL", raising=False)
    catalog.configure(ADMIN, "vector.weaviate", {"url": "http://127.0.0.1:1", "grpc_port": 50052})
    catalog.set_credential(ADMIN, "vector.weaviate", "wv-key-1")
    catalog.enable(ADMIN, "vector.weaviate")
    bind_catalog(system, catalog)
    param = VectorStoreParam(cluster="vector.weaviate")
    index = SemanticIndex.bind(param, Agent(system), "notes", embedder=None)  # type: ignore[arg-type]
    store: Any = index._store
    assert index.spec.name == "weaviate" and isinstance(store, WeaviateBackend)
    config = store.config
    assert (config.url, config.api_key, config.grpc_port, config.timeout) == (
        "http://127.0.0.1:1",
        "wv-key-1",
        50052,
        7.0,
    )
    assert "wv-key-1" not in config.model_dump_json() and "wv-key-1" not in repr(config)

    catalog.configure(ADMIN, "vector.qdrant", {"url": "http://qdrant.internal:6333"})
    catalog.enable(ADMIN, "vector.qdrant", ["api"])
    qdrant = catalog.resolve("vector.qdrant", "api")  # a service resolves as any instance
    assert qdrant.vector_store_config().url == "http://qdrant.internal:6333"  # type: ignore[attr-defined]


@pytest.mark.skipif(not WEAVIATE_URL, reason="set AKGENTIC_WEAVIATE_URL to run against Weaviate")
def test_a_catalog_weaviate_holds_the_plan_s_rows(  # pragma: no cover — needs the service
    manager: TeamManager, catalog: CatalogService, monkeypatch: pytest.MonkeyPatch
) -> None:
    grpc = os.environ.get("AKGENTIC_WEAVIATE_GRPC_PORT", "").strip()
    api_key = os.environ.get("AKGENTIC_WEAVIATE_API_KEY", "").strip()
    for name in ("AKGENTIC_WEAVIATE_URL", "AKGENTIC_WEAVIATE_API_KEY"):
        monkeypatch.delenv(name)  # the catalog's instance, not the environment
    config: dict[str, Any] = {"url": WEAVIATE_URL} | ({"grpc_port": int(grpc)} if grpc else {})
    catalog.configure(ADMIN, "vector.weaviate", config)
    if api_key:
        catalog.set_credential(ADMIN, "vector.weaviate", api_key)
    catalog.enable(ADMIN, "vector.weaviate")
    with serving() as endpoint:
        catalog.configure(ADMIN, "embeddings.openai_compatible", {"base_url": endpoint.url})
        catalog.enable(ADMIN, "embeddings.openai_compatible")
        card = TeamCard.from_yaml(DATA / "planner.yaml")
        [tool] = card.members[0].card.config.tools  # type: ignore[attr-defined]
        tool.vector_store = tool.vector_store.model_copy(update={"cluster": "vector.weaviate"})
        runtime = manager.create_team(card)
        runtime.send("plan it")
        seq, _ = answer(runtime, 0)
        endpoint.wait_for(lambda: "Draft the quarterly report" in endpoint.inputs())
        runtime.send("find it")
        _, found = answer(runtime, seq)
    assert "Draft the quarterly report" in found
    store = WeaviateBackend(catalog.resolve("vector.weaviate").vector_store_config())  # type: ignore[attr-defined]
    assert store.delete_by_team(str(runtime.team_id)) >= 1
