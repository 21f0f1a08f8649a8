"""THE fusion rule: relativeScoreFusion, min-max per result set, alpha = 0.7 by default."""

from __future__ import annotations

import pytest

from akgentic.tool.vector_store import (
    DEFAULT_ALPHA,
    hybrid_rank,
    hybrid_scores,
    keyword_scores,
    terms_of,
)
from akgentic.tool.vector_store.hybrid import Terms, min_max, tokenize


def test_min_max_normalises_one_result_set() -> None:
    assert min_max({"a": 0.2, "b": 0.6, "c": 1.0}) == pytest.approx({"a": 0.0, "b": 0.5, "c": 1.0})
    assert min_max({"a": 0.4, "b": 0.4}) == {"a": 1.0, "b": 1.0}
    assert min_max({}) == {}


def test_the_default_alpha_is_weaviates() -> None:
    assert DEFAULT_ALPHA == 0.7


def test_fused_score_is_the_weighted_sum_of_normalised_scores() -> None:
    keyword = {"a": 3.0, "b": 1.0}
    semantic = {"a": 0.2, "b": 0.9, "c": 0.5}
    scores = hybrid_scores(keyword, semantic, alpha=0.7)
    # semantic norm: a 0, b 1, c 3/7; keyword norm: a 1, b 0, c absent (0)
    assert scores == pytest.approx({"a": 0.3, "b": 0.7, "c": 0.7 * 3 / 7})


def test_below_half_a_keyword_match_outranks_a_strong_semantic_hit() -> None:
    keyword = {"exact": 5.0, "vague": 0.5}  # "exact" names the query's words
    semantic = {"vague": 0.93, "exact": 0.41, "other": 0.40}  # "vague" is the strong hit
    assert hybrid_rank(keyword, semantic, alpha=0.7, k=1) == [("vague", pytest.approx(0.7))]
    assert hybrid_rank(keyword, semantic, alpha=0.6, k=1)[0][0] == "vague"
    assert hybrid_rank(keyword, semantic, alpha=0.4, k=1)[0][0] == "exact"
    assert hybrid_rank(keyword, semantic, alpha=0.0, k=1) == [("exact", pytest.approx(1.0))]


def test_alpha_one_is_pure_semantic_and_degraded_semantic_is_pure_keyword() -> None:
    keyword = {"k1": 2.0, "k2": 1.0}
    semantic = {"s1": 0.9, "k2": 0.1}
    assert [r for r, _ in hybrid_rank(keyword, semantic, alpha=1.0, k=3)][:1] == ["s1"]
    # SemanticIndex.similar returned {} (degraded): the ranking is the keyword one.
    assert [r for r, _ in hybrid_rank(keyword, {}, alpha=0.7, k=3)] == ["k1", "k2"]


def test_ties_break_by_ref_id_and_k_bounds() -> None:
    ranked = hybrid_rank({}, {"b": 0.5, "a": 0.5, "c": 0.1}, alpha=0.7, k=2)
    assert ranked == [("a", pytest.approx(0.7)), ("b", pytest.approx(0.7))]
    assert hybrid_rank({"a": 1.0}, {}, k=0) == []


def test_non_positive_keyword_scores_are_no_match() -> None:
    assert hybrid_scores({"a": 0.0, "b": -1.0}, {}, alpha=0.5) == {}


def test_alpha_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="alpha"):
        hybrid_rank({}, {}, alpha=1.5)


def test_bm25_rewards_rare_terms_and_short_documents() -> None:
    docs = {
        "short": "revenue report",
        "long": "the report about many things and also revenue and more words here",
        "common": "the the the report",
        "none": "nothing relevant",
    }
    scores = keyword_scores("Revenue REPORT", docs)
    assert "none" not in scores
    assert scores["short"] > scores["long"] > scores["common"] > 0
    assert keyword_scores("", docs) == {}
    assert keyword_scores("x", {}) == {}
    assert keyword_scores("revenue", [("a", "revenue"), ("b", "cost")]) == pytest.approx(
        {"a": keyword_scores("revenue", {"a": "revenue", "b": "cost"})["a"]}
    )


def test_counted_terms_score_as_their_text() -> None:
    docs = {"a": "Revenue report, revenue", "b": "the cost report", "c": "nothing"}
    counted = {ref: terms_of(text) for ref, text in docs.items()}
    assert counted["a"].length == 3 and counted["a"].counts["revenue"] == 2
    assert keyword_scores("revenue report", counted) == keyword_scores("revenue report", docs)
    mixed = [("a", counted["a"]), ("b", docs["b"]), ("c", counted["c"])]
    assert keyword_scores("report", mixed) == keyword_scores("report", docs)


def test_tokenize_is_lowercase_unicode_words() -> None:
    assert tokenize("Café, déjà-vu! 42") == ["café", "déjà", "vu", "42"]


class Probed(dict[str, int]):
    """A document's term counts that count how often they are asked for a term."""

    probes = 0

    def __contains__(self, term: object) -> bool:
        Probed.probes += 1
        return super().__contains__(term)


def test_a_long_query_costs_each_document_its_own_terms_not_the_querys() -> None:
    """Each document was asked for every distinct word of the query: a pasted page of
    50,000 words against a graph of 2,000 entities held its actor for seconds."""
    docs = {
        f"d{i}": Terms(counts=Probed(terms_of(f"revenue report {i} cost").counts), length=4)
        for i in range(50)
    }
    noise = " ".join(f"noise{i}" for i in range(5_000))
    Probed.probes = 0
    scores = keyword_scores(f"report {noise} revenue 7", docs)
    assert Probed.probes <= sum(len(d.counts) for d in docs.values())
    # the words no document holds change nothing, to the last bit (same sums, same order)
    assert scores == keyword_scores("report revenue 7", docs)
    assert max(scores, key=scores.__getitem__) == "d7"
