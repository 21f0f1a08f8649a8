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
(JSON), ``team_id``, ``tenant`` and ``model`` (the embedder that made the vector; added
to a collection created before it was recorded, whose objects then hold none). Every
object is stamped with its team (so :meth:`WeaviateBackend.delete_by_team` can reap a
deleted team's vectors) and its uuid is :func:`point_id` of (team, tenant, ref id) —
the derivation Qdrant's point ids use — so a re-add replaces the object. Scope values
are stored with a ``=`` prefix, so an empty team or tenant is still an indexed,
filterable value. A collection's vectors are of one dimension:
:meth:`WeaviateBackend.adopt_dimension` re-creates it for another (an embedding model
changed), dropping its objects — only when they are all the asking scope's: a collection
other teams' (or tenants') objects live in is refused
(:func:`~akgentic.tool.vector_store.backends.dimension.shared_collection`).

A collection is created if absent, never checked-then-created: the create is attempted,
and a refusal because it exists — another process created (or re-created) it first — is
success when its vectors are of the dimension asked for (or it holds none yet), a
one-line :class:`VectorStoreConfigError` when they are of another.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from akgentic.core.words import counted
from akgentic.tool.vector_store.backends.dimension import other_dimension, shared_collection
from akgentic.tool.vector_store.client import client_key, get_client
from akgentic.tool.vector_store.params import env_value
from akgentic.tool.vector_store.protocol import (
    HeldRow,
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

logger = logging.getLogger("akgentic.tool.vector_store")

COLLECTION_PREFIX = "Akgentic_"
VECTOR_NAME = "default"
_RENEW_LOCK = threading.Lock()
"""Held while a collection's dimension is checked and it is re-created: two reconciles of
this process never both re-create it (the second would drop the first one's objects)."""
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
    def _collection(
        self, collection: str, *, create: bool, dimension: int | None = None
    ) -> Any | None:
        """The collection's handle; None when it is absent and not ``create``. With
        ``create`` it is created if absent in one step (see the module docstring): one that
        exists already must not hold vectors of another ``dimension``."""
        name = COLLECTION_PREFIX + check_collection_name(collection)
        client = self.client
        if name in self._known:
            return client.collections.get(name)
        if not create:
            if not client.collections.exists(name):
                return None
            return self._found(name)
        from weaviate.classes.config import Configure, DataType, Property, VectorDistances

        properties = [
            _keyword("ref_id"),
            _keyword("team_id"),
            _keyword("tenant"),
            _keyword("model"),
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
            handle = self._found(name)
            held = _held_dimension(handle)
            if dimension is not None and held not in (None, dimension):
                self._known.discard(name)
                raise other_dimension("Weaviate", name, held, dimension) from None
            return handle
        self._known.add(name)
        return client.collections.get(name)

    def _found(self, name: str) -> Any:
        """The handle of ``name``, which exists: given the ``model`` property if it was
        created before rows recorded their model, and known from now on."""
        handle = self.client.collections.get(name)
        _add_model_property(handle)
        self._known.add(name)
        return handle

    # -- VectorStore -------------------------------------------------------------------
    def upsert(
        self, collection: str, team_id: str, entries: Sequence[VectorEntry], tenant: str = ""
    ) -> None:
        check_collection_name(collection)
        if not entries:
            return
        from weaviate.classes.data import DataObject

        handle = self._collection(collection, create=True, dimension=len(entries[0].vector))
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
                    "model": e.model,
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
                    model=str(props.get("model") or ""),
                )
            )
        hits.sort(key=lambda hit: (-hit.score, hit.ref_id))
        return hits

    def ref_ids(self, collection: str, team_id: str, tenant: str = "") -> set[str]:
        """The scope's ref ids: the collection's cursor iterator, ids and scope only.

        Weaviate's cursor takes no filter, so the scope is matched here: one pass over the
        collection's ``ref_id``/``team_id``/``tenant`` properties, no vector, no text.
        """
        return set(self._listing(collection, team_id, tenant, []))

    def ref_texts(self, collection: str, team_id: str, tenant: str = "") -> dict[str, str]:
        """``ref_id -> text`` of the scope's rows: one pass, as :meth:`ref_ids`."""
        rows = self._listing(collection, team_id, tenant, ["text"])
        return {ref: row.text for ref, row in rows.items()}

    def ref_rows(
        self, collection: str, team_id: str, tenant: str = "", *, texts: bool = True
    ) -> dict[str, HeldRow]:
        """``ref_id -> (text, model)`` of the scope's rows (the text ``""`` unless
        ``texts``): one pass over the collection, as :meth:`ref_ids`."""
        return self._listing(collection, team_id, tenant, ["model", *(["text"] if texts else [])])

    def _listing(
        self, collection: str, team_id: str, tenant: str, fields: list[str]
    ) -> dict[str, HeldRow]:
        """The scope's rows through the collection's cursor (no vector), with ``fields``
        beside the ids and scope; what ``fields`` leaves out reads ``""``."""
        handle = self._collection(collection, create=False)
        if handle is None:
            return {}
        team, scope = _scope(team_id), _scope(tenant)
        found: dict[str, HeldRow] = {}
        for obj in handle.iterator(
            include_vector=False, return_properties=["ref_id", "team_id", "tenant", *fields]
        ):
            props = obj.properties
            if props.get("team_id") == team and props.get("tenant") == scope:
                found[str(props.get("ref_id", ""))] = _held(props)
        return found

    def adopt_dimension(
        self, collection: str, team_id: str, dimension: int, tenant: str = ""
    ) -> int:
        """Re-create the collection for vectors of ``dimension`` if it holds vectors of
        another (an embedding model changed: an index takes one dimension); how many
        objects went — the scope's own, which its reconcile embeds again. A no-op (0) when
        it holds ``dimension``, or nothing. A collection holding objects of other teams or
        tenants is not re-created: :func:`shared_collection` says what to do.

        Idempotent across processes: once deleted, the collection is created if absent, so
        another process that re-created it meanwhile (for ``dimension``, or holding nothing
        yet) is success, not a clash."""
        from weaviate.classes.query import Filter

        with _RENEW_LOCK:
            handle = self._collection(collection, create=False)
            if handle is None:
                return 0
            held = _held_dimension(handle)
            if held is None or held == dimension:
                return 0
            count = int(handle.aggregate.over_all(total_count=True).total_count or 0)
            scope = Filter.by_property("team_id").equal(_scope(team_id)) & Filter.by_property(
                "tenant"
            ).equal(_scope(tenant))
            own = int(handle.aggregate.over_all(filters=scope, total_count=True).total_count or 0)
            name = COLLECTION_PREFIX + collection
            if count > own:
                raise shared_collection("Weaviate", name, count - own, held, dimension)
            self._known.discard(name)
            self.client.collections.delete(name)
            self._collection(collection, create=True, dimension=dimension)
            logger.info(
                "Weaviate collection %s re-created for %d dimensions (was %d; %d objects dropped)",
                name,
                dimension,
                held,
                own,
            )
            return own

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


def _keyword(field: str) -> Any:
    """A property matched exactly (filters, scopes), never searched as words."""
    from weaviate.classes.config import DataType, Property, Tokenization

    return Property(
        name=field,
        data_type=DataType.TEXT,
        tokenization=Tokenization.FIELD,
        index_searchable=False,
    )


def _add_model_property(handle: Any) -> None:
    """Give a collection created before rows recorded their model the ``model`` property,
    so a listing may ask for it (its objects read ``""``: a model nobody can name). Best
    effort: a cluster with auto-schema adds it on the first insert anyway."""
    try:
        if any(p.name == "model" for p in handle.config.get().properties):
            return
        handle.config.add_property(_keyword("model"))
    except Exception as exc:
        logger.info("adding the model property to %s failed: %r", handle.name, exc)


def _held(props: Any) -> HeldRow:
    """An object's properties as a reconcile compares them: its text and its model."""
    return HeldRow(str(props.get("text") or ""), str(props.get("model") or ""))


def _held_dimension(handle: Any) -> int | None:
    """The length of the vectors a collection holds (one object's, fetched with its
    vector); None when it holds none yet — it takes the first one it is given."""
    sample = handle.query.fetch_objects(limit=1, include_vector=True)
    return _dimension_of(sample.objects[0]) if sample.objects else None


def _dimension_of(obj: Any) -> int | None:
    """The length of an object's vector (named ``default``, or its only one); None when
    it carries none."""
    vectors = obj.vector
    if isinstance(vectors, dict):
        vector = vectors.get(VECTOR_NAME) or next(iter(vectors.values()), None)
    else:
        vector = vectors
    return len(vector) if vector else None


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
