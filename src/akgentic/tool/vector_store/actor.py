"""VectorStoreActor: the team's ``#VectorStore``, for backends that keep rows in actor state.

It exists only for such a backend (``BackendSpec.persists_in_actor_state``; today the
in-memory one): its state *is* the database, persisted with the team as its changes —
each mutation records a :class:`VectorStoreDelta` (the rows it wrote, the ids it removed)
through a ``StateJournal``, which publishes a snapshot of the whole store only now and
then — and restored with the team. On a cluster there is nothing for an actor to own, and
none is created.

Binding: :func:`ensure_store_actor` asks the orchestrator to ``getChildrenOrCreate``
it — get-or-create in one step on the orchestrator's thread, never check-then-create
(two consumers wiring at once would otherwise both find nothing and both create).
The ``#`` prefix makes it a tool actor, stopped only after the team's regular members.

Every method is fast (numpy over the team's rows, no I/O), so callers may ask it;
embedding never happens here — it happens in ``EmbeddingWorker``s spawned by the
consumers. What a mutation writes to the team's log is the rows it changed, O(change),
recorded before it returns; ``on_stop`` publishes a last snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

from akgentic.core import ActorAddress, Akgent, BaseConfig
from akgentic.tool.core.journal import StateJournal
from akgentic.tool.core.observer import ActorToolObserver
from akgentic.tool.core.team_actor import bind_team_actor
from akgentic.tool.vector_store.backends.inmemory import (
    InMemoryBackend,
    VectorStoreDelta,
    VectorStoreState,
)
from akgentic.tool.vector_store.protocol import HeldRow, SearchHit, point_id
from akgentic.tool.vector_store.vector import VectorEntry

__all__ = ["STORE_ACTOR_NAME", "VectorStoreActor", "ensure_store_actor"]

STORE_ACTOR_NAME = "#VectorStore"


class VectorStoreActor(Akgent[BaseConfig, VectorStoreState]):
    """The team's in-memory vector store; a ``VectorStore`` reachable through a proxy."""

    def on_start(self) -> None:
        self._backend = InMemoryBackend(self.state)
        self._journal = StateJournal(self)

    # -- VectorStore -------------------------------------------------------------------
    def upsert(
        self, collection: str, team_id: str, entries: Sequence[VectorEntry], tenant: str = ""
    ) -> None:
        """Add or replace rows, stamped with ``team_id`` and ``tenant``."""
        existed = collection in self.state.collections
        self._backend.upsert(collection, team_id, entries, tenant)
        rows = self.state.collections.get(collection, {})
        written = {pid: rows[pid] for pid in (point_id(team_id, tenant, e.ref_id) for e in entries)}
        self._journal.record(
            VectorStoreDelta(collection=collection, upserted=written), empty=existed and not written
        )

    def delete(
        self, collection: str, team_id: str, ref_ids: Sequence[str], tenant: str = ""
    ) -> None:
        """Remove rows by ref id (unknown ones are ignored)."""
        rows = self.state.collections.get(collection, {})
        gone = list(
            dict.fromkeys(p for p in (point_id(team_id, tenant, r) for r in ref_ids) if p in rows)
        )
        self._backend.delete(collection, team_id, ref_ids, tenant)
        self._journal.record(VectorStoreDelta(collection=collection, deleted=gone), empty=not gone)

    def query(
        self,
        collection: str,
        team_id: str,
        vector: Sequence[float],
        k: int,
        tenant: str = "",
    ) -> list[SearchHit]:
        """The ``k`` rows of that team and tenant nearest ``vector``, best first."""
        return self._backend.query(collection, team_id, vector, k, tenant)

    def delete_by_team(self, team_id: str) -> int:
        """Remove every row stamped with ``team_id``; how many were removed."""
        doomed = {
            name: [pid for pid, row in rows.items() if row.team_id == team_id]
            for name, rows in self.state.collections.items()
        }
        removed = self._backend.delete_by_team(team_id)
        for name, gone in doomed.items():
            self._journal.record(VectorStoreDelta(collection=name, deleted=gone), empty=not gone)
        return removed

    def list_collections(self) -> list[str]:
        """The collections this store holds."""
        return self._backend.list_collections()

    def ref_ids(self, collection: str, team_id: str, tenant: str = "") -> set[str]:
        """The ref ids held for that collection, team and tenant."""
        return self._backend.ref_ids(collection, team_id, tenant)

    def ref_texts(self, collection: str, team_id: str, tenant: str = "") -> dict[str, str]:
        """``ref_id -> text`` of the rows held for that collection, team and tenant."""
        return self._backend.ref_texts(collection, team_id, tenant)

    def ref_rows(
        self, collection: str, team_id: str, tenant: str = "", *, texts: bool = True
    ) -> dict[str, HeldRow]:
        """``ref_id -> (text, model)`` of the rows held for that collection, team and tenant."""
        return self._backend.ref_rows(collection, team_id, tenant, texts=texts)

    def adopt_dimension(
        self, collection: str, team_id: str, dimension: int, tenant: str = ""
    ) -> int:
        """Empty the scope if it holds vectors of another dimension; how many rows went."""
        before = set(self.state.collections.get(collection, {}))
        removed = self._backend.adopt_dimension(collection, team_id, dimension, tenant)
        gone = sorted(before - set(self.state.collections.get(collection, {})))
        self._journal.record(VectorStoreDelta(collection=collection, deleted=gone), empty=not gone)
        return removed

    def count(self, collection: str | None = None, team_id: str | None = None) -> int:
        """How many rows (of one collection, of one team) the store holds."""
        return self._backend.count(collection, team_id)

    # -- persistence -------------------------------------------------------------------
    def on_stop(self) -> None:
        """A last snapshot, so the next restore folds nothing."""
        self._journal.close()


def ensure_store_actor(observer: ActorToolObserver, timeout: float = 10.0) -> ActorAddress:
    """The team's ``#VectorStore``, created if it does not exist — in one step.

    Asks the observer's orchestrator to ``getChildrenOrCreate`` it; never
    check-then-create. ``timeout`` bounds the ask. Raises ``RuntimeError`` when the
    observer belongs to no team.
    """
    orchestrator = observer.orchestrator
    if orchestrator is None:
        raise RuntimeError(
            "the in-memory vector store lives in the team's #VectorStore actor, and this "
            "observer belongs to no team (its orchestrator is None)"
        )
    config = BaseConfig(name=STORE_ACTOR_NAME, role="VectorStore")
    return bind_team_actor(observer, VectorStoreActor, config, timeout)
