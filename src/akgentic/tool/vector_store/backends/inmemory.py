"""The in-memory backend: numpy brute force over rows held in a pydantic state.

Its rows *are* :class:`VectorStoreState`, the state of the team's ``#VectorStore``
actor (``persists_in_actor_state=True``): the actor records each change as a
:class:`VectorStoreDelta` (a ``StateJournal``: the delta, a snapshot now and then) and
the framework persists and restores it with the team.
The numpy indexes (one :class:`VectorIndex` per collection, team and tenant) are a
cache rebuilt from the state on first use — after a restore, too. Each row keeps the
model that embedded it (``""`` in a state written before rows recorded it); a scope
holds vectors of one dimension, and :meth:`InMemoryBackend.adopt_dimension` empties a
scope of another one when the embedding model changed.

Vectors are stored as base64 float32 strings, and rows are immutable values that a
state snapshot shares instead of copying, so a snapshot costs one dict entry per row
rather than hundreds of floats. Not thread-safe: one owner (the actor) at a
time. Exact search; a query costs O(rows of the scope · dimension).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.journal import DeltaState
from akgentic.tool.vector_store.protocol import (
    HeldRow,
    SearchHit,
    VectorStoreConfig,
    check_collection_name,
    point_id,
)
from akgentic.tool.vector_store.registry import BackendSpec, register_backend
from akgentic.tool.vector_store.vector import VectorEntry, VectorIndex

__all__ = [
    "InMemoryBackend",
    "StoredVector",
    "VectorStoreDelta",
    "VectorStoreState",
    "decode_vector",
    "encode_vector",
]

Scope = tuple[str, str, str]  # collection, team_id, tenant


def encode_vector(vector: Sequence[float] | Any) -> str:
    """A vector as base64 of little-endian float32 bytes."""
    import numpy as np

    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(data: str) -> Any:
    """The float32 numpy vector :func:`encode_vector` wrote."""
    import numpy as np

    return np.frombuffer(base64.b64decode(data), dtype="<f4")


class StoredVector(SerializableModel):
    """One row as the state keeps it (the vector packed, see :func:`encode_vector`)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    ref_id: str
    text: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    team_id: str = ""
    tenant: str = ""
    vector: str
    model: str = ""

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> StoredVector:
        """A row is an immutable value (replaced, never edited): a snapshot shares it.

        This is what keeps the ``#VectorStore`` state snapshot O(rows) dict work rather
        than a deep copy of every row's fields.
        """
        return self


class VectorStoreDelta(SerializableModel):
    """What one mutation changed in one collection: rows written (whole, by point id)
    and point ids removed. A delta with neither made the collection exist."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    collection: str
    upserted: dict[str, StoredVector] = Field(default_factory=dict)
    deleted: list[str] = Field(default_factory=list)


class VectorStoreState(DeltaState):
    """Every row of the store: collection -> point id (:func:`point_id`) -> row."""

    collections: dict[str, dict[str, StoredVector]] = Field(default_factory=dict)

    def apply_delta(self, delta: VectorStoreDelta) -> None:
        """Apply one :class:`VectorStoreDelta` in place; removing a row that is not there
        raises ValueError (the log and the state diverged)."""
        rows = self.collections.setdefault(delta.collection, {})
        rows.update(delta.upserted)
        for pid in delta.deleted:
            if rows.pop(pid, None) is None:
                raise ValueError(
                    f"delta removes row {pid} of {delta.collection}, which is not there"
                )

    def rows(self) -> int:
        return max(sum(len(rows) for rows in self.collections.values()), 1)


class InMemoryBackend:
    """A :class:`~akgentic.tool.vector_store.protocol.VectorStore` over a state object."""

    name = "inmemory"

    def __init__(self, state: VectorStoreState | None = None) -> None:
        self.state = state if state is not None else VectorStoreState()
        self._indexes: dict[Scope, VectorIndex] | None = None

    # -- the numpy cache -------------------------------------------------------------
    def _all_indexes(self) -> dict[Scope, VectorIndex]:
        if self._indexes is None:
            indexes: dict[Scope, VectorIndex] = {}
            grouped: dict[Scope, tuple[list[str], list[Any]]] = {}
            for collection, rows in self.state.collections.items():
                for row in rows.values():
                    ids, vectors = grouped.setdefault(
                        (collection, row.team_id, row.tenant), ([], [])
                    )
                    ids.append(row.ref_id)
                    vectors.append(decode_vector(row.vector))
            for scope, (ids, vectors) in grouped.items():
                index = indexes[scope] = VectorIndex()
                index.upsert_many(ids, vectors)
            self._indexes = indexes
        return self._indexes

    # -- VectorStore -------------------------------------------------------------------
    def upsert(
        self, collection: str, team_id: str, entries: Sequence[VectorEntry], tenant: str = ""
    ) -> None:
        check_collection_name(collection)
        indexes = self._all_indexes()
        rows = self.state.collections.setdefault(collection, {})
        if not entries:
            return
        scope = (collection, team_id, tenant)
        index = indexes.get(scope)
        if index is None:
            index = VectorIndex()
        index.upsert_many([e.ref_id for e in entries], [e.vector for e in entries])  # validates all
        indexes[scope] = index
        for entry in entries:
            rows[point_id(team_id, tenant, entry.ref_id)] = StoredVector(
                ref_id=entry.ref_id,
                text=entry.text,
                metadata=dict(entry.metadata),
                team_id=team_id,
                tenant=tenant,
                vector=encode_vector(entry.vector),
                model=entry.model,
            )

    def delete(
        self, collection: str, team_id: str, ref_ids: Sequence[str], tenant: str = ""
    ) -> None:
        rows = self.state.collections.get(collection)
        if rows is None:
            return
        index = self._all_indexes().get((collection, team_id, tenant))
        for ref_id in ref_ids:
            rows.pop(point_id(team_id, tenant, ref_id), None)
            if index is not None:
                index.remove(ref_id)

    def query(
        self,
        collection: str,
        team_id: str,
        vector: Sequence[float],
        k: int,
        tenant: str = "",
    ) -> list[SearchHit]:
        index = self._all_indexes().get((collection, team_id, tenant))
        rows = self.state.collections.get(collection, {})
        if index is None or k <= 0:
            return []
        hits: list[SearchHit] = []
        for ref_id, score in index.search(vector, k):
            row = rows.get(point_id(team_id, tenant, ref_id))
            if row is not None:
                hits.append(
                    SearchHit(
                        ref_id=ref_id,
                        score=score,
                        text=row.text,
                        metadata=dict(row.metadata),
                        model=row.model,
                    )
                )
        return hits

    def delete_by_team(self, team_id: str) -> int:
        removed = 0
        for rows in self.state.collections.values():
            doomed = [pid for pid, row in rows.items() if row.team_id == team_id]
            for pid in doomed:
                del rows[pid]
            removed += len(doomed)
        indexes = self._all_indexes()
        for scope in [s for s in indexes if s[1] == team_id]:
            del indexes[scope]
        return removed

    def list_collections(self) -> list[str]:
        return sorted(self.state.collections)

    def ref_ids(self, collection: str, team_id: str, tenant: str = "") -> set[str]:
        rows = self.state.collections.get(collection, {})
        return {r.ref_id for r in rows.values() if r.team_id == team_id and r.tenant == tenant}

    def ref_texts(self, collection: str, team_id: str, tenant: str = "") -> dict[str, str]:
        """``ref_id -> text`` of the scope's rows: what a reconcile compares a consumer's
        rows with, so a row whose newer text a crash dropped is embedded again."""
        rows = self.state.collections.get(collection, {})
        return {
            r.ref_id: r.text for r in rows.values() if r.team_id == team_id and r.tenant == tenant
        }

    def ref_rows(
        self, collection: str, team_id: str, tenant: str = "", *, texts: bool = True
    ) -> dict[str, HeldRow]:
        """``ref_id -> (text, model)`` of the scope's rows (the text ``""`` unless
        ``texts``): what a reconcile compares with the consumer's rows and its embedder."""
        rows = self.state.collections.get(collection, {})
        return {
            r.ref_id: HeldRow(r.text if texts else "", r.model)
            for r in rows.values()
            if r.team_id == team_id and r.tenant == tenant
        }

    def adopt_dimension(
        self, collection: str, team_id: str, dimension: int, tenant: str = ""
    ) -> int:
        """Let the scope take vectors of ``dimension``: a scope holding another one (an
        embedding model changed) loses its rows, which its reconcile embeds again; how
        many went. A no-op (0) when the scope holds ``dimension``, or nothing."""
        indexes = self._all_indexes()
        scope = (collection, team_id, tenant)
        index = indexes.get(scope)
        if index is None or index.dimension in (None, dimension):
            return 0
        del indexes[scope]
        rows = self.state.collections.get(collection, {})
        doomed = [pid for pid, r in rows.items() if r.team_id == team_id and r.tenant == tenant]
        for pid in doomed:
            del rows[pid]
        return len(doomed)

    def count(self, collection: str | None = None, team_id: str | None = None) -> int:
        """How many rows (of one collection, of one team) the store holds."""
        total = 0
        for name, rows in self.state.collections.items():
            if collection is not None and name != collection:
                continue
            total += sum(1 for r in rows.values() if team_id is None or r.team_id == team_id)
        return total


def _factory(config: VectorStoreConfig) -> InMemoryBackend:
    return InMemoryBackend()


SPEC = register_backend(
    BackendSpec(
        name="inmemory",
        factory=_factory,
        persists_in_actor_state=True,
        requires=("numpy",),
        extra="vector",
        description="numpy brute force; rows live in the team's #VectorStore actor state",
    )
)
