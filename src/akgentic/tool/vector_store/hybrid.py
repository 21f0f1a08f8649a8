"""THE hybrid rule: one fusion of keyword and vector scores, above every backend.

Backends answer pure similarity queries (ref id -> cosine) and are never asked for
text. Consumers score their own rows by keyword (:func:`keyword_scores`), ask the
index for cosines, and fuse the two here — so in-memory, Qdrant and Weaviate rank
identically for the same data, by construction.

The rule is Weaviate's ``relativeScoreFusion``::

    fused(id) = alpha * norm(cosine)(id) + (1 - alpha) * norm(keyword)(id)

where ``norm`` is min-max normalisation over *one result set*:
``(s - min) / (max - min)``, and 1.0 for every member when all scores of the set are
equal. An id absent from a set contributes 0 from that set. Keyword scores <= 0 are
"no match" and are not part of the keyword set. Ties are broken by ref id, so the
ranking is deterministic. ``alpha = 0.7`` by default: below 0.5 a keyword match
outranks a strong semantic hit.

The keyword scorer is Okapi BM25 (k1 = 1.2, b = 0.75, Lucene's always-positive idf)
over a simple tokenizer: lower-cased Unicode word characters. It is the keyword side
Weaviate itself uses (BM25F), scaled for a consumer's own rows — a plan of tasks, the
entities of a graph — computed on demand, with no index to keep in sync. A consumer that
scores the same rows again and again (the workspace's chunks) may hand over each row's
:class:`Terms` instead of its text — counted once, kept beside the text — so a query
tokenises only itself.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from akgentic.tool.vector_store.params import DEFAULT_ALPHA

__all__ = [
    "DEFAULT_ALPHA",
    "Terms",
    "hybrid_rank",
    "hybrid_scores",
    "keyword_scores",
    "min_max",
    "terms_of",
    "tokenize",
]

_WORD = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode ``\\w+``)."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True, slots=True)
class Terms:
    """What BM25 needs of one text: how often each token occurs, and how many there are."""

    counts: Mapping[str, int]
    length: int


def terms_of(text: str) -> Terms:
    """``text``'s :class:`Terms`. Tokens are interned: a consumer keeping the terms of many
    texts holds each distinct word once, not once per text."""
    tokens = tokenize(text)
    return Terms(counts=Counter(map(sys.intern, tokens)), length=len(tokens))


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Min-max normalisation of one result set into [0, 1]; all-equal sets map to 1.0."""
    if not scores:
        return {}
    low = min(scores.values())
    high = max(scores.values())
    span = high - low
    if span <= 0.0:
        return dict.fromkeys(scores, 1.0)
    return {ref: (score - low) / span for ref, score in scores.items()}


def hybrid_scores(
    keyword: Mapping[str, float],
    semantic: Mapping[str, float],
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, float]:
    """Fused score of every id present in either set (see the module docstring)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be within [0, 1], got {alpha}")
    kw = min_max({ref: score for ref, score in keyword.items() if score > 0.0})
    sem = min_max(semantic)
    fused: dict[str, float] = {}
    for ref in kw.keys() | sem.keys():
        fused[ref] = alpha * sem.get(ref, 0.0) + (1.0 - alpha) * kw.get(ref, 0.0)
    return fused


def hybrid_rank(
    keyword: Mapping[str, float],
    semantic: Mapping[str, float],
    alpha: float = DEFAULT_ALPHA,
    k: int = 10,
) -> list[tuple[str, float]]:
    """The top ``k`` ``(ref_id, fused score)`` pairs, best first, ties by ref id.

    ``keyword`` is the consumer's own keyword scores (e.g. :func:`keyword_scores`),
    ``semantic`` what :meth:`SemanticIndex.similar` returned (``{}`` when degraded —
    the ranking is then keyword-only, as it must be).
    """
    if k <= 0:
        return []
    fused = hybrid_scores(keyword, semantic, alpha)
    ranked = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:k]


def keyword_scores(
    query: str,
    documents: Mapping[str, str | Terms] | Iterable[tuple[str, str | Terms]],
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[str, float]:
    """BM25 score of each document (``ref_id -> text``, or its :class:`Terms`) for
    ``query``; matches only.

    Documents that share no term with the query are left out (score 0 is "no match").
    A text is tokenised here, on every call; :class:`Terms` are taken as they are.
    Each document costs the smaller of its own distinct terms and the query's, so a query
    of a pasted page costs what a short one does.
    """
    items = list(documents.items() if isinstance(documents, Mapping) else documents)
    wanted = list(dict.fromkeys(tokenize(query)))  # in the query's order: sums are stable
    if not wanted or not items:
        return {}
    position = {term: index for index, term in enumerate(wanted)}

    def shared(counts: Mapping[str, int]) -> list[str]:
        """The query's terms ``counts`` holds, in the query's order."""
        if len(counts) < len(position):
            return sorted((t for t in counts if t in position), key=position.__getitem__)
        return [term for term in wanted if term in counts]

    counted = [(ref, doc if isinstance(doc, Terms) else terms_of(doc)) for ref, doc in items]
    matched = [(ref, terms, shared(terms.counts)) for ref, terms in counted]
    n_docs = len(counted)
    avg_len = sum(terms.length for _, terms in counted) / n_docs or 1.0
    doc_freq = Counter(term for _, _, common in matched for term in common)
    idf = {
        term: math.log(1.0 + (n_docs - count + 0.5) / (count + 0.5))
        for term, count in doc_freq.items()
    }
    scores: dict[str, float] = {}
    for ref, terms, common in matched:
        if not common:
            continue
        norm = k1 * (1.0 - b + b * terms.length / avg_len)
        counts = terms.counts
        scores[ref] = sum(idf[t] * counts[t] * (k1 + 1.0) / (counts[t] + norm) for t in common)
    return scores
