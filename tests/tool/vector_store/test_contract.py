"""ONE contract, every backend: in memory (direct and through #VectorStore), Qdrant local
mode, and Weaviate when AKGENTIC_WEAVIATE_URL is set."""

from __future__ import annotations

import math

import pytest

from akgentic.tool.vector_store import (
    HeldRow,
    InMemoryBackend,
    VectorEntry,
    VectorStore,
    hybrid_rank,
    keyword_scores,
)

from .conftest import bag_of_words

A = "contract_a"
B = "contract_b"
TEAM = "team-1"
OTHER = "team-2"


def unit(*xs: float) -> list[float]:
    norm = math.sqrt(sum(x * x for x in xs))
    return [x / norm for x in xs]


def entry(ref: str, vector: list[float], text: str = "", **meta: object) -> VectorEntry:
    return VectorEntry(ref_id=ref, text=text or ref, vector=vector, metadata=dict(meta))


def test_query_ranks_by_cosine(store: VectorStore) -> None:
    store.upsert(
        A,
        TEAM,
        [
            entry("east", unit(1, 0, 0)),
            entry("north_east", unit(1, 1, 0)),
            entry("north", unit(0, 1, 0)),
            entry("west", unit(-1, 0.1, 0)),
        ],
    )
    hits = store.query(A, TEAM, unit(1, 0.1, 0), k=3)
    assert [h.ref_id for h in hits] == ["east", "north_east", "north"]
    expected = [
        sum(a * b for a, b in zip(unit(1, 0.1, 0), v, strict=True))
        for v in (unit(1, 0, 0), unit(1, 1, 0), unit(0, 1, 0))
    ]
    assert [h.score for h in hits] == pytest.approx(expected, abs=1e-5)
    assert hits[0].text == "east"


def test_upsert_again_replaces_the_row(store: VectorStore) -> None:
    store.upsert(A, TEAM, [entry("doc", unit(1, 0, 0), "first", v=1)])
    store.upsert(A, TEAM, [entry("doc", unit(0, 1, 0), "second", v=2)])
    hits = store.query(A, TEAM, unit(0, 1, 0), k=10)
    assert [(h.ref_id, h.text, h.metadata) for h in hits] == [("doc", "second", {"v": 2})]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_delete_removes_and_ignores_unknown(store: VectorStore) -> None:
    store.upsert(A, TEAM, [entry("x", unit(1, 0, 0)), entry("y", unit(0, 1, 0))])
    store.delete(A, TEAM, ["x", "never-there"])
    store.delete("contract_nowhere", TEAM, ["x"])  # unknown collection: a no-op
    assert [h.ref_id for h in store.query(A, TEAM, unit(1, 0, 0), k=10)] == ["y"]


def test_unknown_collection_answers_nothing(store: VectorStore) -> None:
    assert store.query("contract_nowhere", TEAM, unit(1, 0, 0), k=5) == []


def test_rows_are_stamped_and_scoped_by_team_and_tenant(store: VectorStore) -> None:
    # An entry carrying a team of its own is stamped with the caller's team anyway.
    forged = VectorEntry(ref_id="same", text="mine", vector=unit(1, 0, 0), team_id=OTHER)
    store.upsert(A, TEAM, [forged])
    store.upsert(A, OTHER, [entry("same", unit(1, 0, 0), "theirs")])
    store.upsert(A, TEAM, [entry("same", unit(1, 0, 0), "tenant t")], tenant="t")
    assert [h.text for h in store.query(A, TEAM, unit(1, 0, 0), k=10)] == ["mine"]
    assert [h.text for h in store.query(A, OTHER, unit(1, 0, 0), k=10)] == ["theirs"]
    assert [h.text for h in store.query(A, TEAM, unit(1, 0, 0), k=10, tenant="t")] == ["tenant t"]
    store.delete(A, OTHER, ["same"])  # deleting in one team leaves the other's row alone
    assert [h.text for h in store.query(A, TEAM, unit(1, 0, 0), k=10)] == ["mine"]


def test_delete_by_team_reaps_every_collection_of_that_team_only(store: VectorStore) -> None:
    store.upsert(A, TEAM, [entry("a1", unit(1, 0, 0)), entry("a2", unit(0, 1, 0))])
    store.upsert(B, TEAM, [entry("b1", unit(1, 0, 0))], tenant="t")
    store.upsert(A, OTHER, [entry("a1", unit(1, 0, 0))])
    assert store.delete_by_team(TEAM) == 3
    assert store.query(A, TEAM, unit(1, 0, 0), k=10) == []
    assert store.query(B, TEAM, unit(1, 0, 0), k=10, tenant="t") == []
    assert [h.ref_id for h in store.query(A, OTHER, unit(1, 0, 0), k=10)] == ["a1"]
    assert store.delete_by_team(TEAM) == 0


def test_list_collections_names_the_consumers_collections(store: VectorStore) -> None:
    store.upsert(A, TEAM, [entry("a", unit(1, 0))])
    store.upsert(B, OTHER, [entry("b", unit(0, 1))])
    names = [n for n in store.list_collections() if n.startswith("contract")]
    assert names == [A, B]


def test_ref_ids_names_the_rows_of_one_scope_only(store: VectorStore) -> None:
    assert store.ref_ids("contract_nowhere", TEAM) == set()  # unknown collection
    store.upsert(A, TEAM, [entry("a1", unit(1, 0)), entry("a2", unit(0, 1))])
    store.upsert(A, TEAM, [entry("t1", unit(1, 0))], tenant="t")
    store.upsert(A, OTHER, [entry("o1", unit(1, 0))])
    store.upsert(B, TEAM, [entry("b1", unit(1, 0))])
    store.delete(A, TEAM, ["a2"])
    assert store.ref_ids(A, TEAM) == {"a1"}
    assert store.ref_ids(A, TEAM, tenant="t") == {"t1"}
    assert store.ref_ids(A, OTHER) == {"o1"}
    assert store.ref_ids(B, TEAM) == {"b1"}


def test_ref_ids_lists_past_one_page(store: VectorStore) -> None:
    store.upsert(A, TEAM, [entry(f"r{i}", unit(1, i / 2000)) for i in range(1500)])
    assert store.ref_ids(A, TEAM) == {f"r{i}" for i in range(1500)}


def test_rows_keep_the_model_that_embedded_them(store: VectorStore) -> None:
    """What a start compares with its embedder: each row's model (``""``: it recorded
    none), with the text or without it; a hit names it too."""
    made = VectorEntry(ref_id="m", text="made by a", vector=unit(1, 0), model="fake:a")
    store.upsert(A, TEAM, [made, entry("n", unit(0, 1), "unrecorded")])
    assert store.ref_rows(A, TEAM) == {  # type: ignore[attr-defined]
        "m": HeldRow("made by a", "fake:a"),
        "n": HeldRow("unrecorded", ""),
    }
    assert store.ref_rows(A, TEAM, texts=False) == {  # type: ignore[attr-defined]
        "m": HeldRow("", "fake:a"),
        "n": HeldRow("", ""),
    }
    assert store.ref_rows("contract_nowhere", TEAM) == {}  # type: ignore[attr-defined]
    assert [(h.ref_id, h.model) for h in store.query(A, TEAM, unit(1, 0), k=1)] == [("m", "fake:a")]


def test_adopt_dimension_lets_the_store_take_another_dimension(store: VectorStore) -> None:
    """A store holding 3 dimensions refuses a vector of 2 (a new embedding model) until it
    adopts 2: the rows of 3 go, and it takes the new ones. Adopting the dimension it holds,
    or in a collection it lacks, is a no-op."""
    store.upsert(A, TEAM, [entry("x", unit(1, 0, 0)), entry("y", unit(0, 1, 0))])
    with pytest.raises((ValueError, RuntimeError)):
        store.upsert(A, TEAM, [entry("z", unit(1, 0))])
    assert store.adopt_dimension(A, TEAM, 3) == 0  # type: ignore[attr-defined]
    assert store.adopt_dimension("contract_nowhere", TEAM, 2) == 0  # type: ignore[attr-defined]
    assert store.ref_ids(A, TEAM) == {"x", "y"}

    assert store.adopt_dimension(A, TEAM, 2) == 2  # type: ignore[attr-defined]
    assert store.ref_ids(A, TEAM) == set()
    store.upsert(A, TEAM, [entry("z", unit(1, 0)), entry("w", unit(0, 1))])
    assert [h.ref_id for h in store.query(A, TEAM, unit(1, 0.1), k=5)] == ["z", "w"]


def test_k_bounds_the_answer(store: VectorStore) -> None:
    store.upsert(A, TEAM, [entry(f"r{i}", unit(1, i / 10, 0)) for i in range(6)])
    assert len(store.query(A, TEAM, unit(1, 0, 0), k=2)) == 2
    assert store.query(A, TEAM, unit(1, 0, 0), k=0) == []


CORPUS = {
    "t1": "write the quarterly revenue report",
    "t2": "fix the login bug in the web app",
    "t3": "summarise the revenue figures for the board",
    "t4": "book travel to the Paris conference",
    "t5": "draft a report on user login failures",
}


def fused(store: VectorStore, query: str, alpha: float) -> list[tuple[str, float]]:
    semantic = {h.ref_id: h.score for h in store.query(A, TEAM, bag_of_words(query), k=10)}
    return hybrid_rank(keyword_scores(query, CORPUS), semantic, alpha, k=10)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.7, 1.0])
def test_hybrid_scores_are_identical_across_backends(store: VectorStore, alpha: float) -> None:
    entries = [entry(ref, bag_of_words(text), text) for ref, text in CORPUS.items()]
    reference = InMemoryBackend()
    reference.upsert(A, TEAM, entries)
    store.upsert(A, TEAM, entries)
    for query in ("revenue report", "login problems", "conference trip"):
        got = fused(store, query, alpha)
        want = fused(reference, query, alpha)
        assert [ref for ref, _ in got] == [ref for ref, _ in want]
        assert [score for _, score in got] == pytest.approx([s for _, s in want], abs=1e-6)
