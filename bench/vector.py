"""Vector search: latency and recall@10 of each backend against brute-force numpy.

    python bench/vector.py            # 10k and 100k vectors, about 2-3 minutes
    python bench/vector.py --quick    # 10k only

Random unit vectors of dimension 384 (MiniLM's), seeded. Ground truth is exact brute
force in float64. Every engine answers the same queries for the same rows, in one run:

- brute-force numpy — ``X @ q`` + ``argpartition`` over a float32 matrix: the baseline;
- the in-memory backend (``InMemoryBackend``, the rows a ``#VectorStore`` holds),
  called directly;
- the ``#VectorStore`` actor, through a proxy ask, as a consumer reaches it (its load
  includes the coalesced state snapshots);
- Qdrant local mode (``QdrantBackend`` over ``QdrantClient(":memory:")``), with the
  team filter every backend query carries. Local mode is Qdrant's in-process
  development mode, not its server; it answers fewer queries at 100k because each
  takes over a second.

Latency is per query (median and p95, milliseconds); the ratio is the median against
brute force's median in the same run.
"""

# ruff: noqa: E402  (the BLAS thread count must be set before numpy is imported)
from __future__ import annotations

import os

# One BLAS thread: on a small machine a multi-threaded matrix-vector product wakes
# sleeping pool threads and turns a 0.2 ms query into a bimodal 0.2 / 8 ms one. Every
# engine below uses the same numpy, so the ratios are unaffected.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from akgentic.core import ActorSystem, BaseConfig, Orchestrator, OrchestratorConfig
from akgentic.tool.vector_store import (
    InMemoryBackend,
    QdrantBackend,
    VectorEntry,
    VectorStoreActor,
    VectorStoreConfig,
    close_all,
)

DIM = 384
K = 10
TEAM = "bench-team"


def unit_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def truth(x: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    scores = queries.astype(np.float64) @ x.astype(np.float64).T
    return [set(np.argsort(-row)[:K].tolist()) for row in scores]


def measure(
    search: Callable[[np.ndarray], list[int]], queries: np.ndarray, gold: list[set[int]]
) -> tuple[list[float], float]:
    for query in queries[:5]:  # warm-up (lazy index builds, first-call caches)
        search(query)
    latencies: list[float] = []
    hits = 0
    for query, expected in zip(queries, gold, strict=False):
        start = time.perf_counter()
        found = search(query)
        latencies.append((time.perf_counter() - start) * 1000)
        hits += len(expected.intersection(found[:K]))
    return latencies, hits / (K * len(latencies))


def p95(values: list[float]) -> float:
    return float(np.percentile(values, 95))


def run(n: int, n_queries: int, qdrant_queries: int, rows: list[dict[str, Any]]) -> None:
    rng = np.random.default_rng(n)
    x = unit_rows(rng, n)
    queries = unit_rows(rng, n_queries)
    gold = truth(x, queries)
    ids = [f"r{i}" for i in range(n)]
    index_of = {ref: i for i, ref in enumerate(ids)}
    entries = [VectorEntry(ref_id=ids[i], text="", vector=x[i].tolist()) for i in range(n)]

    def record(engine: str, load: float, lat: list[float], recall: float) -> None:
        rows.append(
            {"n": n, "engine": engine, "load": load, "lat": lat, "recall": recall, "q": len(lat)}
        )
        print(
            f"  {engine:<28} load {load:6.2f}s  median {statistics.median(lat):8.3f} ms  "
            f"p95 {p95(lat):8.3f} ms  recall@10 {recall:.3f}  ({len(lat)} queries)",
            flush=True,
        )

    print(f"n = {n:,}", flush=True)

    # brute force: the baseline
    def brute(q: np.ndarray) -> list[int]:
        scores = x @ q
        top = np.argpartition(-scores, K - 1)[:K]
        return top[np.argsort(-scores[top])].tolist()

    lat, recall = measure(brute, queries, gold)
    record("brute-force numpy", 0.0, lat, recall)

    # the in-memory backend, direct
    start = time.perf_counter()
    backend = InMemoryBackend()
    for s in range(0, n, 5000):
        backend.upsert("bench", TEAM, entries[s : s + 5000])
    load = time.perf_counter() - start
    lat, recall = measure(
        lambda q: [index_of[h.ref_id] for h in backend.query("bench", TEAM, q, K)], queries, gold
    )
    record("inmemory backend", load, lat, recall)

    # the #VectorStore actor, through a proxy
    system = ActorSystem()
    try:
        orchestrator = system.createActor(Orchestrator, config=OrchestratorConfig())
        address = system.proxy_ask(orchestrator, Orchestrator, timeout=30).getChildrenOrCreate(
            VectorStoreActor, BaseConfig(name="#VectorStore")
        )
        store: Any = system.proxy_ask(address, VectorStoreActor, timeout=120)
        start = time.perf_counter()
        for s in range(0, n, 5000):
            store.upsert("bench", TEAM, entries[s : s + 5000])
        store.count()  # the last flush has been queued behind the upserts; wait for it
        store.count()
        load = time.perf_counter() - start
        lat, recall = measure(
            lambda q: [index_of[h.ref_id] for h in store.query("bench", TEAM, q.tolist(), K)],
            queries,
            gold,
        )
        record("#VectorStore actor (ask)", load, lat, recall)
    finally:
        system.shutdown(timeout=30)

    # Qdrant local mode
    qdrant = QdrantBackend(VectorStoreConfig(backend="qdrant"))
    collection = f"bench_{n}"
    start = time.perf_counter()
    qdrant.upsert_batches(collection, TEAM, entries, batch_size=1000)
    load = time.perf_counter() - start
    lat, recall = measure(
        lambda q: [index_of[h.ref_id] for h in qdrant.query(collection, TEAM, q.tolist(), K)],
        queries[:qdrant_queries],
        gold[:qdrant_queries],
    )
    record("qdrant local (:memory:)", load, lat, recall)
    qdrant.delete_by_team(TEAM)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| vectors | engine | load (s) | median (ms) | p95 (ms) | recall@10 "
        "| median ratio to brute force |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    base = {r["n"]: statistics.median(r["lat"]) for r in rows if r["engine"].startswith("brute")}
    for r in rows:
        median = statistics.median(r["lat"])
        lines.append(
            f"| {r['n']:,} | {r['engine']} | {r['load']:.2f} | {median:.3f} | {p95(r['lat']):.3f} "
            f"| {r['recall']:.3f} | {median / base[r['n']]:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    # Qdrant warns that local mode is not meant for > 20,000 points; the table says so.
    warnings.filterwarnings("ignore", message="Local mode is not recommended")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k vectors only")
    args = parser.parse_args()
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    run(10_000, n_queries=200, qdrant_queries=100, rows=rows)
    if not args.quick:
        run(100_000, n_queries=100, qdrant_queries=20, rows=rows)
    close_all()
    print()
    print(table(rows))
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
