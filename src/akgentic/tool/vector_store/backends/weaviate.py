"""The Weaviate backend (``weaviate-client`` v4; the ``weaviate`` extra) and its environment.

Enabled by ``AKGENTIC_WEAVIATE_URL`` (+ ``AKGENTIC_WEAVIATE_API_KEY`` for an
authenticated cluster, ``AKGENTIC_WEAVIATE_GRPC_PORT`` when gRPC is not on 50051 /
443). An exported but empty variable counts as unset. Exporting the URL also makes
``"weaviate"`` the default backend of every card naming none; naming
``backend="weaviate"`` without it fails at wiring (:func:`check_config`) — a card asking
for durable, shared storage is never silently handed a process-local index.

Constructing :class:`WeaviateBackend` without the client installed raises ImportError
with the install command. The backend connects lazily, on its first call (from a
worker's thread, never at wiring), through the process-wide client cache, and never
closes the shared client.

Each consumer collection is the Weaviate collection ``Akgentic_<collection>`` with a
self-provided cosine vector and the properties ``ref_id``, ``text``, ``metadata``
(JSON), ``team_id`` and ``tenant``. Every object is stamped with its team (so
:meth:`WeaviateBackend.delete_by_team` can reap a deleted team's vectors) and its
uuid is :func:`point_id` of (team, tenant, ref id) — the derivation Qdrant's point
ids use — so a re-add replaces the object. Scope values are stored with a ``=``
prefix, so an empty team or tenant is still an indexed, filterable value.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from akgentic.core.words import counted
from akgentic.tool.vector_store.client import client_key, get_client
from akgentic.tool.vector_store.params import env_value
from akgentic.tool.vector_store.protocol import (
    SearchHit,
    VectorStoreConfig,
    VectorStoreConfigError,
    check_collection_name,
    point_id,
)
from akgentic.tool.vector_store.registry import BackendSpec, register_backend
from akgentic.tool.vector_store.vector import VectorEntry

__all__ = [
    "COLLECTION_PREFIX",
    "WeaviateBackend",
    "check_config",
    "weaviate_api_key",
    "weaviate_configured",
    "weaviate_url",
]

COLLECTION_PREFIX = "Akgentic_"
VECTOR_NAME = "default"
_CLOUD_SUFFIXES = (".weaviate.cloud", ".weaviate.network")

INSTALL_HINT = (
    "the Weaviate backend needs weaviate-client: pip install 'akgentic[weaviate]' "
    "(or pip install 'weaviate-client>=4.9')"
)


def weaviate_url() -> str | None:
    """``AKGENTIC_WEAVIATE_URL``, or None when unset or empty."""
    return env_value("AKGENTIC_WEAVIATE_URL")


def weaviate_api_key() -> str | None:
    """``AKGENTIC_WEAVIATE_API_KEY``, or None when unset or empty."""
    return env_value("AKGENTIC_WEAVIATE_API_KEY")


def weaviate_configured() -> bool:
    """Whether a Weaviate cluster is configured (``AKGENTIC_WEAVIATE_URL`` is set)."""
    return weaviate_url() is not None


def check_config(config: VectorStoreConfig) -> None:
    """Wiring-time check: a Weaviate backend needs a URL."""
    if not config.url:
        raise VectorStoreConfigError(
            "backend='weaviate' needs a cluster: export AKGENTIC_WEAVIATE_URL (and "
            "AKGENTIC_WEAVIATE_API_KEY for an authenticated cluster), or choose "
            "backend='inmemory' or 'qdrant'. It never falls back to a process-local index."
        )


def _scope(value: str) -> str:
    return "=" + value


def connect(config: VectorStoreConfig) -> Any:
    """Open a client for ``config`` (called once per cluster, by the client cache)."""
    import weaviate
    from weaviate.classes.init import AdditionalConfig, Auth, Timeout

    check_config(config)
    assert config.url is not None
    parsed = urlparse(config.url if "://" in config.url else f"http://{config.url}")
    host = parsed.hostname or "localhost"
    secure = parsed.scheme == "https"
    budget = max(1, math.ceil(config.timeout))
    extra = AdditionalConfig(timeout=Timeout(init=budget, query=budget, insert=budget))
    auth = Auth.api_key(config.api_key) if config.api_key else None
    if auth is not None and host.endswith(_CLOUD_SUFFIXES):
        return weaviate.connect_to_weaviate_cloud(
            cluster_url=config.url, auth_credentials=auth, additional_config=extra
        )
    return weaviate.connect_to_custom(
        http_host=host,
        http_port=parsed.port or (443 if secure else 8080),
        http_secure=secure,
        grpc_host=host,
        grpc_port=config.grpc_port or (443 if secure else 50051),
        grpc_secure=secure,
        auth_credentials=auth,
        additional_config=extra,
    )


class WeaviateBackend:
    """A :class:`~akgentic.tool.vector_store.protocol.VectorStore` on a Weaviate cluster."""

    name = "weaviate"

    def __init__(self, config: VectorStoreConfig) -> None:
        if importlib.util.find_spec("weaviate") is None:
            raise ImportError(INSTALL_HINT)
        check_config(config)
        self.config = config
        parsed = urlparse(config.url or "")
        self.key = client_key(
            "weaviate",
            parsed.hostname or config.url,
            parsed.port,
            parsed.scheme,
            config.grpc_port,
            api_key=config.api_key,
        )
        self._known: set[str] = set()

    @property
    def client(self) -> Any:
        """The shared client (connects on first use)."""
        return get_client(self.key, lambda: connect(self.config))

    # -- collections -------------------------------------------------------------------
    def _collection(self, collection: str, *, create: bool) -> Any | None:
        name = COLLECTION_PREFIX + check_collection_name(collection)
        client = self.client
        if name in self._known or client.collections.exists(name):
            self._known.add(name)
            return client.collections.get(name)
        if not create:
            return None
        from weaviate.classes.config import (
            Configure,
            DataType,
            Property,
            Tokenization,
            VectorDistances,
        )

        def keyword(field: str) -> Any:
            return Property(
                name=field,
                data_type=DataType.TEXT,
                tokenization=Tokenization.FIELD,
                index_searchable=False,
            )

        properties = [
            keyword("ref_id"),
            keyword("team_id"),
            keyword("tenant"),
            Property(name="text", data_type=DataType.TEXT),
            Property(
                name="metadata",
                data_type=DataType.TEXT,
                index_filterable=False,
                index_searchable=False,
            ),
        ]
        index = Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
        try:
            if _named_vectors():
                client.collections.create(
                    name,
                    properties=properties,
                    vector_config=Configure.Vectors.self_provided(
                        name=VECTOR_NAME, vector_index_config=index
                    ),
                )
            else:  # pragma: no cover — weaviate-client before named self-provided vectors
                client.collections.create(
                    name,
                    properties=properties,
                    vectorizer_config=Configure.Vectorizer.none(),
                    vector_index_config=index,
                )
        except Exception:
            if not client.collections.exists(name):  # not a creation race: a real failure
                raise
        self._known.add(name)
        return client.collections.get(name)

    # -- VectorStore -------------------------------------------------------------------
    def upsert(
        self, collection: str, team_id: str, entries: Sequence[VectorEntry], tenant: str = ""
    ) -> None:
        check_collection_name(collection)
        if not entries:
            return
        from weaviate.classes.data import DataObject

        handle = self._collection(collection, create=True)
        assert handle is not None
        named = _named_vectors()
        objects = [
            DataObject(
                uuid=point_id(team_id, tenant, e.ref_id),
                properties={
                    "ref_id": e.ref_id,
                    "text": e.text,
                    "metadata": json.dumps(e.metadata, default=str),
                    "team_id": _scope(team_id),
                    "tenant": _scope(tenant),
                },
                vector={VECTOR_NAME: list(e.vector)} if named else list(e.vector),
            )
            for e in entries
        ]
        result = handle.data.insert_many(objects)
        errors = getattr(result, "errors", None)
        if errors:
            first = next(iter(errors.values()))
            raise RuntimeError(f"Weaviate refused {counted(len(errors), 'object')}: {first}")

    def delete(
        self, collection: str, team_id: str, ref_ids: Sequence[str], tenant: str = ""
    ) -> None:
        if not ref_ids:
            return
        from weaviate.classes.query import Filter

        handle = self._collection(collection, create=False)
        if handle is None:
            return
        ids = [point_id(team_id, tenant, ref) for ref in ref_ids]
        handle.data.delete_many(where=Filter.by_id().contains_any(ids))

    def query(
        self,
        collection: str,
        team_id: str,
        vector: Sequence[float],
        k: int,
        tenant: str = "",
    ) -> list[SearchHit]:
        if k <= 0:
            return []
        from weaviate.classes.query import Filter, MetadataQuery

        handle = self._collection(collection, create=False)
        if handle is None:
            return []
        where = Filter.by_property("team_id").equal(_scope(team_id)) & Filter.by_property(
            "tenant"
        ).equal(_scope(tenant))
        kwargs: dict[str, Any] = {"target_vector": VECTOR_NAME} if _named_vectors() else {}
        response = handle.query.near_vector(
            near_vector=[float(x) for x in vector],
            limit=k,
            filters=where,
            return_metadata=MetadataQuery(distance=True),
            **kwargs,
        )
        hits = []
        for obj in response.objects:
            props = obj.properties
            try:
                metadata = json.loads(str(props.get("metadata") or "{}"))
            except ValueError:
                metadata = {}
            distance = obj.metadata.distance if obj.metadata is not None else None
            hits.append(
                SearchHit(
                    ref_id=str(props.get("ref_id", "")),
                    score=1.0 - float(distance if distance is not None else 1.0),
                    text=str(props.get("text") or ""),
                    metadata=metadata if isinstance(metadata, dict) else {},
                )
            )
        hits.sort(key=lambda hit: (-hit.score, hit.ref_id))
        return hits

    def ref_ids(self, collection: str, team_id: str, tenant: str = "") -> set[str]:
        """The scope's ref ids: the collection's cursor iterator, ids and scope only.

        Weaviate's cursor takes no filter, so the scope is matched here: one pass over the
        collection's ``ref_id``/``team_id``/``tenant`` properties, no vector, no text.
        """
        handle = self._collection(collection, create=False)
        if handle is None:
            return set()
        team, scope = _scope(team_id), _scope(tenant)
        found: set[str] = set()
        for obj in handle.iterator(
            include_vector=False, return_properties=["ref_id", "team_id", "tenant"]
        ):
            props = obj.properties
            if props.get("team_id") == team and props.get("tenant") == scope:
                found.add(str(props.get("ref_id", "")))
        return found

    def delete_by_team(self, team_id: str) -> int:
        from weaviate.classes.query import Filter

        removed = 0
        for collection in self.list_collections():
            handle = self._collection(collection, create=False)
            if handle is None:
                continue
            result = handle.data.delete_many(
                where=Filter.by_property("team_id").equal(_scope(team_id))
            )
            removed += int(getattr(result, "successful", 0) or 0)
        return removed

    def list_collections(self) -> list[str]:
        names = self.client.collections.list_all(simple=True)
        return sorted(
            name[len(COLLECTION_PREFIX) :] for name in names if name.startswith(COLLECTION_PREFIX)
        )


def _named_vectors() -> bool:
    from weaviate.classes.config import Configure

    vectors = getattr(Configure, "Vectors", None)
    return vectors is not None and hasattr(vectors, "self_provided")


def _factory(config: VectorStoreConfig) -> WeaviateBackend:
    return WeaviateBackend(config)


SPEC = register_backend(
    BackendSpec(
        name="weaviate",
        factory=_factory,
        persists_in_actor_state=False,
        requires=("weaviate",),
        extra="weaviate",
        check=check_config,
        description="Weaviate cluster (AKGENTIC_WEAVIATE_URL, AKGENTIC_WEAVIATE_API_KEY)",
    )
)
