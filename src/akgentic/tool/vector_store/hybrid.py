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
entities of a graph — computed on demand, with no index to keep in sync.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from akgentic.tool.vector_store.params import DEFAULT_ALPHA

__all__ = [
    "DEFAULT_ALPHA",
    "hybrid_rank",
    "hybrid_scores",
    "keyword_scores",
    "min_max",
    "tokenize",
]

_WORD = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode ``\\w+``)."""
    return _WORD.findall(text.lower())


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
    documents: Mapping[str, str] | Iterable[tuple[str, str]],
    *,
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[str, float]:
    """BM25 score of each document (``ref_id -> text``) for ``query``; matches only.

    Documents that share no term with the query are left out (score 0 is "no match").
    """
    items = list(documents.items() if isinstance(documents, Mapping) else documents)
    terms = set(tokenize(query))
    if not terms or not items:
        return {}
    tokenized = [(ref, tokenize(text)) for ref, text in items]
    n_docs = len(tokenized)
    avg_len = sum(len(tokens) for _, tokens in tokenized) / n_docs or 1.0
    doc_freq: Counter[str] = Counter()
    for _, tokens in tokenized:
        doc_freq.update(terms.intersection(tokens))
    idf = {term: math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) for term, df in doc_freq.items()}
    scores: dict[str, float] = {}
    for ref, tokens in tokenized:
        counts = Counter(token for token in tokens if token in idf)
        if not counts:
            continue
        norm = k1 * (1.0 - b + b * len(tokens) / avg_len)
        scores[ref] = sum(idf[t] * c * (k1 + 1.0) / (c + norm) for t, c in counts.items())
    return scores
