"""The Qdrant backend (``qdrant-client``; the ``qdrant`` extra).

Where the data lives, from :class:`VectorStoreConfig` (``from_env``):

- ``AKGENTIC_QDRANT_URL`` (+ ``AKGENTIC_QDRANT_API_KEY``) — a Qdrant server;
- else ``AKGENTIC_QDRANT_PATH`` — local mode on disk, ``QdrantClient(path=...)``;
- else local in-process mode, ``QdrantClient(location=":memory:")`` (one per process).

Local mode needs no server. Its client is shared per folder (Qdrant locks the
directory, so a second client on it — in this process or another — would fail; the
folder is keyed by its real path) and its calls are serialised on one lock, since
workers call it from their own threads. A folder another process holds, or a damaged
one, is a :class:`VectorStoreConfigError` saying what to do, at wiring.

Each consumer collection is the Qdrant collection ``akgentic_<collection>``, created
on first upsert with the vectors' dimension and cosine distance. Every point carries
``ref_id``, ``text``, ``metadata``, ``team_id``, ``tenant`` and ``model`` (the embedder
that made its vector; absent on points written before it was recorded) in its payload;
its id is :func:`point_id` of (team, tenant, ref id), so a re-add replaces the point.
A collection holds one dimension: :meth:`QdrantBackend.adopt_dimension` re-creates it
for another (an embedding model changed), dropping its points — only when they are all
the asking scope's: a collection other teams' (or tenants') points live in is refused
(:func:`~akgentic.tool.vector_store.backends.dimension.shared_collection`).

A collection is created if absent, never checked-then-created: the create is attempted,
and a refusal because it exists — another process (of a shared server) created it, or
re-created it, first — is success when it holds the dimension asked for, a one-line
:class:`VectorStoreConfigError` when it holds another.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Sequence
from typing import Any

from akgentic.core.excerpt import exception_line
from akgentic.tool.vector_store.backends.dimension import other_dimension, shared_collection
from akgentic.tool.vector_store.client import client_key, get_client
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

__all__ = ["COLLECTION_PREFIX", "QdrantBackend", "QdrantHandle"]

logger = logging.getLogger("akgentic.tool.vector_store")

COLLECTION_PREFIX = "akgentic_"
_PAGE = 1000  # points per page when listing a scope's ref ids

_INSTALL = "the Qdrant backend needs qdrant-client: pip install 'akgentic[qdrant]'"


def _qdrant() -> Any:
    try:
        import qdrant_client
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc
    return qdrant_client


class QdrantHandle:
    """A shared Qdrant client, with the lock that serialises a local-mode client."""

    def __init__(self, client: Any, *, local: bool) -> None:
        self.client = client
        self.local = local
        self._lock = threading.RLock() if local else None
        self.renew_lock = threading.Lock()
        """Held while a collection's dimension is checked and it is re-created: two
        reconciles of this process never both re-create it (the second would drop the
        first one's new points)."""

    def __enter__(self) -> Any:
        if self._lock is not None:
            self._lock.acquire()
        return self.client

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.release()

    def close(self) -> None:
        with self as client:
            client.close()


def connect(config: VectorStoreConfig) -> tuple[tuple[Any, ...], QdrantHandle]:
    """The cache key and the (shared) handle for ``config``."""
    qdrant_client = _qdrant()
    timeout = max(1, math.ceil(config.timeout))
    if config.url:
        key = client_key("qdrant", config.url, api_key=config.api_key)
        return key, get_client(
            key,
            lambda: QdrantHandle(
                qdrant_client.QdrantClient(url=config.url, api_key=config.api_key, timeout=timeout),
                local=False,
            ),
        )
    if config.path:
        # one folder, one key, however it is spelt: a second client on it would be refused
        path = os.path.realpath(config.path)
        key = client_key("qdrant", "path", path)
        return key, get_client(key, lambda: QdrantHandle(_open_folder(path), local=True))
    key = client_key("qdrant", ":memory:")
    return key, get_client(
        key,
        lambda: QdrantHandle(qdrant_client.QdrantClient(location=":memory:"), local=True),
    )


def _open_folder(path: str) -> Any:
    """The local-mode client of the folder ``path``; :class:`VectorStoreConfigError` in one
    line saying what to do when the folder cannot be opened — another process holds it
    (Qdrant's local mode locks it for one process), or it is damaged or no folder. Qdrant's
    own errors (a JSON or SQLite error, a traceback's worth of lock) name neither."""
    qdrant_client = _qdrant()
    try:
        return qdrant_client.QdrantClient(path=path, force_disable_check_same_thread=True)
    except Exception as exc:
        if "already accessed" in str(exc):
            raise VectorStoreConfigError(
                f"the Qdrant folder {path} is open in another process (Qdrant local mode "
                f"serves one process at a time): stop that process, give this one another "
                f"folder (AKGENTIC_QDRANT_PATH), or use a Qdrant server (AKGENTIC_QDRANT_URL)"
            ) from None
        raise VectorStoreConfigError(
            f"the Qdrant folder {path} cannot be opened ({exception_line(exc)}): move it "
            f"aside, or point AKGENTIC_QDRANT_PATH at another folder, and start again (the "
            f"consumers index their rows again as they start)"
        ) from None


class QdrantBackend:
    """A :class:`~akgentic.tool.vector_store.protocol.VectorStore` on Qdrant."""

    name = "qdrant"

    def __init__(self, config: VectorStoreConfig) -> None:
        self._models = _qdrant().models
        self.config = config
        self.key, self._handle = connect(config)
        self._timeout = None if self._handle.local else max(1, math.ceil(config.timeout))
        self._known: set[str] = set()
        self._sizes: dict[str, int] = {}
        """The dimension each collection this backend created or checked holds."""

    def _team_filter(self, team_id: str, tenant: str | None = None) -> Any:
        m = self._models
        must = [m.FieldCondition(key="team_id", match=m.MatchValue(value=team_id))]
        if tenant is not None:
            must.append(m.FieldCondition(key="tenant", match=m.MatchValue(value=tenant)))
        return m.Filter(must=must)

    def _exists(self, client: Any, name: str) -> bool:
        if name in self._known:
            return True
        if client.collection_exists(name):
            self._known.add(name)
            return True
        return False

    def _size(self, client: Any, name: str) -> int | None:
        """The dimension the existing collection ``name`` holds; None when it names none
        (named vectors: not one of ours)."""
        vectors = client.get_collection(name).config.params.vectors
        size = getattr(vectors, "size", None)
        return int(size) if size is not None else None

    def _ensure(self, client: Any, name: str, dimension: int) -> None:
        """Create ``name`` for ``dimension`` if absent, in one step: the create is tried,
        and one refused because the collection exists (another process made it first) is
        success when it holds ``dimension`` — :func:`other_dimension` when it holds another,
        the client's own error when it is absent still (a real failure)."""
        if self._sizes.get(name) == dimension:
            return
        m = self._models
        try:
            client.create_collection(
                name,
                vectors_config=m.VectorParams(size=dimension, distance=m.Distance.COSINE),
                timeout=self._timeout,
            )
        except Exception:
            if not client.collection_exists(name):
                raise  # not a creation race: a real failure
            held = self._size(client, name)
            if held is not None and held != dimension:
                raise other_dimension("Qdrant", name, held, dimension) from None
        else:
            if not self._handle.local:  # idempotent: a second creator's indexes are the same
                for field in ("team_id", "tenant"):
                    client.create_payload_index(
                        name, field, field_schema=m.PayloadSchemaType.KEYWORD, timeout=self._timeout
                    )
        self._known.add(name)
        self._sizes[name] = dimension

    # -- VectorStore -------------------------------------------------------------------
    def upsert(
        self, collection: str, team_id: str, entries: Sequence[VectorEntry], tenant: str = ""
    ) -> None:
        name = COLLECTION_PREFIX + check_collection_name(collection)
        if not entries:
            return
        m = self._models
        points = [
            m.PointStruct(
                id=point_id(team_id, tenant, e.ref_id),
                vector=[float(x) for x in e.vector],
                payload={
                    "ref_id": e.ref_id,
                    "text": e.text,
                    "metadata": dict(e.metadata),
                    "team_id": team_id,
                    "tenant": tenant,
                    "model": e.model,
                },
            )
            for e in entries
        ]
        with self._handle as client:
            self._ensure(client, name, len(entries[0].vector))
            client.upsert(name, points=points, wait=True, timeout=self._timeout)

    def upsert_batches(
        self,
        collection: str,
        team_id: str,
        entries: Sequence[VectorEntry],
        tenant: str = "",
        batch_size: int = 1000,
    ) -> None:
        """``upsert`` in batches of ``batch_size`` (bulk loads)."""
        for start in range(0, len(entries), batch_size):
            self.upsert(collection, team_id, entries[start : start + batch_size], tenant)

    def delete(
        self, collection: str, team_id: str, ref_ids: Sequence[str], tenant: str = ""
    ) -> None:
        name = COLLECTION_PREFIX + collection
        if not ref_ids:
            return
        m = self._models
        with self._handle as client:
            if not self._exists(client, name):
                return
            client.delete(
                name,
                points_selector=m.PointIdsList(
                    points=[point_id(team_id, tenant, ref) for ref in ref_ids]
                ),
                wait=True,
                timeout=self._timeout,
            )

    def query(
        self,
        collection: str,
        team_id: str,
        vector: Sequence[float],
        k: int,
        tenant: str = "",
    ) -> list[SearchHit]:
        name = COLLECTION_PREFIX + collection
        if k <= 0:
            return []
        with self._handle as client:
            if not self._exists(client, name):
                return []
            response = client.query_points(
                name,
                query=[float(x) for x in vector],
                query_filter=self._team_filter(team_id, tenant),
                limit=k,
                with_payload=True,
                timeout=self._timeout,
            )
        hits = [
            SearchHit(
                ref_id=str(point.payload.get("ref_id", "")),
                score=float(point.score),
                text=str(point.payload.get("text", "")),
                metadata=dict(point.payload.get("metadata") or {}),
                model=str(point.payload.get("model") or ""),
            )
            for point in response.points
        ]
        hits.sort(key=lambda hit: (-hit.score, hit.ref_id))
        return hits

    def ref_ids(self, collection: str, team_id: str, tenant: str = "") -> set[str]:
        """The scope's ref ids, scrolled a page at a time with only the ``ref_id`` payload."""
        return set(self._scroll(collection, team_id, tenant, ["ref_id"]))

    def ref_texts(self, collection: str, team_id: str, tenant: str = "") -> dict[str, str]:
        """``ref_id -> text`` of the scope's rows (no vectors): what a reconcile compares a
        consumer's rows with, so a row whose newer text a crash dropped is embedded again."""
        rows = self._scroll(collection, team_id, tenant, ["ref_id", "text"])
        return {ref: row.text for ref, row in rows.items()}

    def ref_rows(
        self, collection: str, team_id: str, tenant: str = "", *, texts: bool = True
    ) -> dict[str, HeldRow]:
        """``ref_id -> (text, model)`` of the scope's rows (no vectors; the text ``""``
        unless ``texts``), scrolled a page at a time."""
        fields = ["ref_id", "model", *(["text"] if texts else [])]
        return self._scroll(collection, team_id, tenant, fields)

    def adopt_dimension(
        self, collection: str, team_id: str, dimension: int, tenant: str = ""
    ) -> int:
        """Re-create the collection for vectors of ``dimension`` if it holds another one (an
        embedding model changed: Qdrant fixes a collection's dimension when it creates it);
        how many points went — the scope's own, which its reconcile embeds again. A no-op
        (0) when it holds ``dimension``, or is absent. A collection holding points of other
        teams or tenants is not re-created: :func:`shared_collection` says what to do.

        Idempotent across processes: once deleted, the collection is created if absent, so
        another process that re-created it for ``dimension`` meanwhile is success, not a
        clash. (Points written into a re-created collection between another process's
        check and its delete are the one thing a server without a conditional delete
        cannot keep; each writer's next start reconciles them.)"""
        name = COLLECTION_PREFIX + check_collection_name(collection)
        with self._handle.renew_lock, self._handle as client:
            if not client.collection_exists(name):
                return 0
            size = self._size(client, name)
            if size is None or size == dimension:
                return 0
            count = int(client.count(name, exact=True, timeout=self._timeout).count)
            scope = self._team_filter(team_id, tenant)
            own = int(
                client.count(name, count_filter=scope, exact=True, timeout=self._timeout).count
            )
            if count > own:
                raise shared_collection("Qdrant", name, count - own, size, dimension)
            self._known.discard(name)
            self._sizes.pop(name, None)
            try:
                client.delete_collection(name, timeout=self._timeout)
            except Exception:
                if client.collection_exists(name):
                    raise
            self._ensure(client, name, dimension)
            logger.info(
                "Qdrant collection %s re-created for %d dimensions (was %s; %d points dropped)",
                name,
                dimension,
                size,
                own,
            )
            return own

    def _scroll(
        self, collection: str, team_id: str, tenant: str, fields: list[str]
    ) -> dict[str, HeldRow]:
        """``ref_id -> (text, model)`` (``""`` for what ``fields`` leaves out), a page at a
        time."""
        name = COLLECTION_PREFIX + collection
        found: dict[str, HeldRow] = {}
        offset: Any = None
        with self._handle as client:
            if not self._exists(client, name):
                return found
            while True:
                points, offset = client.scroll(
                    name,
                    scroll_filter=self._team_filter(team_id, tenant),
                    limit=_PAGE,
                    offset=offset,
                    with_payload=fields,
                    with_vectors=False,
                    timeout=self._timeout,
                )
                for p in points:
                    if p.payload:
                        found[str(p.payload.get("ref_id", ""))] = HeldRow(
                            str(p.payload.get("text", "")), str(p.payload.get("model") or "")
                        )
                if offset is None:
                    return found

    def delete_by_team(self, team_id: str) -> int:
        m = self._models
        removed = 0
        with self._handle as client:
            for collection in self._collections(client):
                name = COLLECTION_PREFIX + collection
                flt = self._team_filter(team_id)
                count = client.count(
                    name, count_filter=flt, exact=True, timeout=self._timeout
                ).count
                if count:
                    client.delete(
                        name,
                        points_selector=m.FilterSelector(filter=flt),
                        wait=True,
                        timeout=self._timeout,
                    )
                removed += int(count)
        return removed

    def list_collections(self) -> list[str]:
        with self._handle as client:
            return self._collections(client)

    def _collections(self, client: Any) -> list[str]:
        names = [c.name for c in client.get_collections().collections]
        return sorted(n[len(COLLECTION_PREFIX) :] for n in names if n.startswith(COLLECTION_PREFIX))


def _factory(config: VectorStoreConfig) -> QdrantBackend:
    return QdrantBackend(config)


SPEC = register_backend(
    BackendSpec(
        name="qdrant",
        factory=_factory,
        persists_in_actor_state=False,
        requires=("qdrant_client",),
        extra="qdrant",
        description="Qdrant: a server (AKGENTIC_QDRANT_URL) or local mode (path / :memory:)",
    )
)
