"""The VectorStore protocol, its resolved connection config, and the data it answers with.

A backend answers pure similarity queries over rows it stamps with their team; it is
never asked for text search and never fuses scores (that is ``hybrid``, above every
backend, so all backends rank identically).

Every method takes the ``collection`` (a consumer's name, e.g. ``"planning"``) and
the ``team_id`` the row belongs to — taken by the caller from the actor/observer,
never from a card — plus an optional ``tenant`` that narrows a team further (``""``
by default). A row's identity is :func:`point_id` of (team, tenant, ref id): a
re-added ``ref_id`` replaces its row instead of doubling it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

from pydantic import ConfigDict, Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.vector_store.params import env_value
from akgentic.tool.vector_store.vector import VectorEntry

__all__ = [
    "POINT_NAMESPACE",
    "HeldRow",
    "SearchHit",
    "VectorStore",
    "VectorStoreConfig",
    "VectorStoreConfigError",
    "check_collection_name",
    "point_id",
]

POINT_NAMESPACE = uuid.UUID("6f1d2a34-8a36-5c56-9d0e-6b2f3c9a7e11")
"""The uuid5 namespace every backend derives its row ids in."""

_COLLECTION = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")


class VectorStoreConfigError(ValueError):
    """A vector store cannot be wired as configured; the message says what to change."""


def check_collection_name(name: str) -> str:
    """``name`` if it is a valid collection name (letters, digits, ``_``; a letter first)."""
    if not isinstance(name, str) or not _COLLECTION.match(name):
        raise VectorStoreConfigError(
            f"invalid collection name {name!r}: use letters, digits and '_', starting "
            f"with a letter (at most 63 characters)"
        )
    return name


def point_id(team_id: str, tenant: str, ref_id: str) -> str:
    """The deterministic id of a row: uuid5 over team, tenant and ref id."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{team_id}\x1f{tenant}\x1f{ref_id}"))


class SearchHit(SerializableModel):
    """One answer to a similarity query: the row and its cosine similarity to the query.

    ``model`` names the embedding model that made the row's vector (``""``: the row
    recorded none): a cosine between vectors of two models means nothing, so a consumer
    whose embedder is another model does not trust the score."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    ref_id: str
    score: float
    text: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    model: str = ""


class HeldRow(NamedTuple):
    """What a store holds of one row, as a reconcile compares it with the consumer's (no
    vector): its ``text`` (``""`` when the listing left texts out) and the ``model`` that
    embedded it (``""`` when the row recorded none — written before rows recorded their
    model, so of a model nobody can name)."""

    text: str
    model: str


@runtime_checkable
class VectorStore(Protocol):
    """A backend: upsert, delete, query by vector, and team-scoped cleanup.

    Contracts every backend honours (one contract test suite checks them all):

    - ``upsert`` stamps each row with ``team_id`` and ``tenant`` (overriding whatever
      the entry carried) and replaces a row with the same (team, tenant, ref id).
    - ``query`` returns at most ``k`` hits of that team and tenant only, best cosine
      first; an unknown collection answers ``[]``.
    - ``delete`` of an unknown ref id or collection is a no-op.
    - ``delete_by_team`` removes every row stamped with ``team_id`` in every
      collection this store manages and returns how many it removed.
    - ``list_collections`` names the collections this store manages (the consumer's
      names, without any backend prefix).
    - ``ref_ids`` names the ref ids it holds for (collection, team, tenant) — ids only, no
      vector or text — and an empty set for an unknown collection: how a consumer finds
      the rows its store is missing (or holds for nothing) without re-embedding any.
    - Every row keeps the ``model`` of its :class:`VectorEntry` (the embedder that made its
      vector) and gives it back on a :class:`SearchHit`.

    Optional, found by name (every built-in backend has them; a reconcile does without):

    - ``ref_rows(collection, team_id, tenant="", *, texts=True) -> dict[str, HeldRow]``
      — each row's text (``""`` with ``texts=False``) and model, in one listing: how a
      reconcile finds a row held with an older text, or embedded by another model.
    - ``ref_texts(collection, team_id, tenant="") -> dict[str, str]`` — texts alone.
    - ``adopt_dimension(collection, team_id, dimension, tenant="") -> int`` — make the
      store take vectors of ``dimension`` where it holds vectors of another (an embedding
      model changed): it drops what held the other dimension, in one step, and says how
      many rows went; a no-op (0) when it holds that dimension already, or nothing. It
      drops the scope's rows alone: a store that would have to drop other teams' (or
      tenants') rows with them — a cluster collection they share — raises
      ``VectorStoreConfigError`` saying what to do instead, and drops nothing.
    - A cluster backend takes its client from the shared cache (``client.get_client``)
      and never opens or closes one of its own.
    """

    def upsert(
        self, collection: str, team_id: str, entries: Sequence[VectorEntry], tenant: str = ""
    ) -> None: ...

    def delete(
        self, collection: str, team_id: str, ref_ids: Sequence[str], tenant: str = ""
    ) -> None: ...

    def query(
        self,
        collection: str,
        team_id: str,
        vector: Sequence[float],
        k: int,
        tenant: str = "",
    ) -> list[SearchHit]: ...

    def delete_by_team(self, team_id: str) -> int: ...

    def list_collections(self) -> list[str]: ...

    def ref_ids(self, collection: str, team_id: str, tenant: str = "") -> set[str]: ...


class VectorStoreConfig(SerializableModel):
    """Where a backend's data lives: resolved at wiring time, mostly from the environment.

    Infrastructure, not card configuration — a card never carries it. Built by
    :meth:`from_env`, or directly (tests, scripts). ``api_key`` is excluded from
    serialization and from ``repr``.

    - ``url`` — a cluster (Weaviate, or a Qdrant server).
    - ``path`` — Qdrant local mode on disk; ``None`` with no ``url`` is Qdrant's
      in-process ``":memory:"`` mode.
    - ``grpc_port`` — Weaviate's gRPC port (default 50051; 443 for https clouds).
    - ``timeout`` — seconds handed to the cluster client for every call.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    backend: str
    url: str | None = None
    api_key: str | None = Field(default=None, exclude=True, repr=False)
    path: str | None = None
    grpc_port: int | None = None
    timeout: float = Field(default=10.0, gt=0.0)

    @classmethod
    def from_env(cls, backend: str) -> VectorStoreConfig:
        """The config of ``backend`` from ``AKGENTIC_<BACKEND>_URL`` / ``_API_KEY`` / …

        Reads ``AKGENTIC_WEAVIATE_URL``, ``AKGENTIC_WEAVIATE_API_KEY``,
        ``AKGENTIC_WEAVIATE_GRPC_PORT``, ``AKGENTIC_QDRANT_URL``,
        ``AKGENTIC_QDRANT_API_KEY``, ``AKGENTIC_QDRANT_PATH`` and
        ``AKGENTIC_VECTOR_TIMEOUT``. An exported but empty variable counts as unset.
        """
        prefix = f"AKGENTIC_{re.sub(r'[^A-Za-z0-9]', '_', backend).upper()}"
        grpc = env_value(f"{prefix}_GRPC_PORT")
        timeout = env_value("AKGENTIC_VECTOR_TIMEOUT")
        try:
            return cls(
                backend=backend,
                url=env_value(f"{prefix}_URL"),
                api_key=env_value(f"{prefix}_API_KEY"),
                path=env_value(f"{prefix}_PATH"),
                grpc_port=int(grpc) if grpc else None,
                timeout=float(timeout) if timeout else 10.0,
            )
        except ValueError as exc:
            raise VectorStoreConfigError(
                f"invalid vector store environment for {backend!r}: {exc}"
            ) from exc
