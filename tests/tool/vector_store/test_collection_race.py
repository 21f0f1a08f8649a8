"""Two processes creating, or re-creating, one shared cluster collection at once.

A cluster collection is created if absent, never checked-then-created: the create is
tried, and a refusal because the collection exists — another process made it, or re-made
it for the new dimension, first — is success when it holds the dimension asked for, and a
one-line ``VectorStoreConfigError`` when it holds another.

No shared cluster runs here (Qdrant's local mode serves one process; no Weaviate server),
so "another process" is a second backend object, with caches of its own, acting at the
racy moment through a hook on the client: for Qdrant the real local-mode client, which
raises its own "already exists" error; for Weaviate the stand-in client, which raises the
``UnexpectedStatusCodeError`` weaviate-client raises for the server's 422.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from akgentic.tool.vector_store import (
    QdrantBackend,
    VectorEntry,
    VectorStoreConfig,
    VectorStoreConfigError,
    WeaviateBackend,
    close_client,
    get_client,
)

from .weaviate_fake import FakeWeaviate

COLLECTION = "notes"


def entry(ref_id: str, dimension: int) -> VectorEntry:
    return VectorEntry(ref_id=ref_id, text=ref_id, vector=[1.0] + [0.0] * (dimension - 1))


class Racing:
    """The real client, with another process's move at the racy moment: just before this
    one creates a collection (``before_create``), or just after it deleted one
    (``after_delete``); each acts once."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.before_create: Callable[[str], None] | None = None
        self.after_delete: Callable[[str], None] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def create_collection(self, name: str, **kwargs: Any) -> Any:
        rival, self.before_create = self.before_create, None
        if rival is not None:
            rival(name)
        return self.real.create_collection(name, **kwargs)

    def delete_collection(self, name: str, **kwargs: Any) -> Any:
        deleted = self.real.delete_collection(name, **kwargs)
        rival, self.after_delete = self.after_delete, None
        if rival is not None:
            rival(name)
        return deleted


@pytest.fixture
def qdrant(tmp_path: Any) -> Iterator[tuple[QdrantBackend, Racing]]:
    """A backend on a local folder whose client is :class:`Racing`."""
    backend = QdrantBackend(VectorStoreConfig(backend="qdrant", path=str(tmp_path / "q")))
    real = backend._handle.client
    racing = backend._handle.client = Racing(real)
    yield backend, racing
    backend._handle.client = real
    close_client(backend.key)


def another_process(backend: QdrantBackend) -> QdrantBackend:
    """A second backend of the same store, knowing nothing of its collections."""
    return QdrantBackend(backend.config)


def test_qdrant_a_collection_another_process_created_first_is_taken(
    qdrant: tuple[QdrantBackend, Racing],
) -> None:
    backend, racing = qdrant
    rival = another_process(backend)
    racing.before_create = lambda _: rival.upsert(COLLECTION, "t2", [entry("b", 3)])

    backend.upsert(COLLECTION, "t1", [entry("a", 3)])  # its create: "already exists"

    assert backend.ref_ids(COLLECTION, "t1") == {"a"}
    assert backend.ref_ids(COLLECTION, "t2") == {"b"}


def test_qdrant_a_collection_another_process_created_of_another_dimension_is_refused(
    qdrant: tuple[QdrantBackend, Racing],
) -> None:
    backend, racing = qdrant
    rival = another_process(backend)
    racing.before_create = lambda _: rival.upsert(COLLECTION, "t2", [entry("b", 4)])

    with pytest.raises(VectorStoreConfigError) as refused:
        backend.upsert(COLLECTION, "t1", [entry("a", 3)])
    assert str(refused.value) == (
        "the Qdrant collection akgentic_notes holds vectors of 4 dimensions, and this "
        "embedding model makes 3: give this team its own collection (vector_store: "
        "{collection: <a name of its own>} in its card), embed with a model of 4 dimensions, "
        "or — every team moving to this model — delete akgentic_notes once: each team's next "
        "start embeds its rows again"
    )
    assert backend.ref_ids(COLLECTION, "t2") == {"b"}
    assert backend.ref_ids(COLLECTION, "t1") == set()


def test_qdrant_a_re_creation_another_process_made_meanwhile_is_success(
    qdrant: tuple[QdrantBackend, Racing],
) -> None:
    """Both saw the old dimension; the other one re-created the collection and wrote its
    point between this one's delete and create: this create is "already exists" of the
    new dimension — success, and that point stays (no second delete)."""
    backend, racing = qdrant
    backend.upsert(COLLECTION, "t1", [entry("a", 2)])
    rival = another_process(backend)
    racing.after_delete = lambda _: rival.upsert(COLLECTION, "t1", [entry("z", 3)])

    assert backend.adopt_dimension(COLLECTION, "t1", 3) == 1

    assert backend.ref_ids(COLLECTION, "t1") == {"z"}
    backend.upsert(COLLECTION, "t1", [entry("a", 3)])
    assert backend.ref_ids(COLLECTION, "t1") == {"a", "z"}
    assert backend.adopt_dimension(COLLECTION, "t1", 3) == 0


def test_qdrant_a_re_creation_of_another_dimension_meanwhile_is_refused(
    qdrant: tuple[QdrantBackend, Racing],
) -> None:
    backend, racing = qdrant
    backend.upsert(COLLECTION, "t1", [entry("a", 2)])
    rival = another_process(backend)
    racing.after_delete = lambda _: rival.upsert(COLLECTION, "t1", [entry("z", 5)])

    with pytest.raises(VectorStoreConfigError, match="holds vectors of 5 dimensions"):
        backend.adopt_dimension(COLLECTION, "t1", 3)
    assert backend.ref_ids(COLLECTION, "t1") == {"z"}


# -- Weaviate, on the stand-in client ----------------------------------------------------------

WEAVIATE = VectorStoreConfig(backend="weaviate", url="http://weaviate.race:8080")


@pytest.fixture
def weaviate() -> Iterator[FakeWeaviate]:
    fake = FakeWeaviate()
    key = WeaviateBackend(WEAVIATE).key
    assert get_client(key, lambda: fake) is fake
    yield fake
    close_client(key)


def test_weaviate_a_collection_another_process_created_first_is_taken(
    weaviate: FakeWeaviate,
) -> None:
    WeaviateBackend(WEAVIATE).upsert(COLLECTION, "t2", [entry("b", 3)])
    backend = WeaviateBackend(WEAVIATE)  # knows nothing of it: its create is refused (422)

    backend.upsert(COLLECTION, "t1", [entry("a", 3)])

    assert weaviate.collections.created == ["Akgentic_notes"]
    assert backend.ref_ids(COLLECTION, "t1") == {"a"}
    assert backend.ref_ids(COLLECTION, "t2") == {"b"}
    with pytest.raises(VectorStoreConfigError, match="holds vectors of 3 dimensions"):
        WeaviateBackend(WEAVIATE).upsert(COLLECTION, "t3", [entry("c", 4)])


def test_weaviate_a_re_creation_another_process_made_meanwhile_is_success(
    weaviate: FakeWeaviate,
) -> None:
    backend = WeaviateBackend(WEAVIATE)
    backend.upsert(COLLECTION, "t1", [entry("a", 2)])
    rival = WeaviateBackend(WEAVIATE)
    weaviate.collections.rival = lambda _: rival.upsert(COLLECTION, "t1", [entry("z", 3)])

    assert backend.adopt_dimension(COLLECTION, "t1", 3) == 1

    assert weaviate.collections.created == ["Akgentic_notes", "Akgentic_notes"]  # once each
    assert weaviate.collections.get("Akgentic_notes").dimension == 3
    assert backend.ref_ids(COLLECTION, "t1") == {"z"}
    assert backend.adopt_dimension(COLLECTION, "t1", 3) == 0


def test_weaviate_a_re_creation_of_another_dimension_meanwhile_is_refused(
    weaviate: FakeWeaviate,
) -> None:
    backend = WeaviateBackend(WEAVIATE)
    backend.upsert(COLLECTION, "t1", [entry("a", 2)])
    rival = WeaviateBackend(WEAVIATE)
    weaviate.collections.rival = lambda _: rival.upsert(COLLECTION, "t1", [entry("z", 5)])

    with pytest.raises(VectorStoreConfigError, match="holds vectors of 5 dimensions"):
        backend.adopt_dimension(COLLECTION, "t1", 3)
    assert backend.ref_ids(COLLECTION, "t1") == {"z"}
