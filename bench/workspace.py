"""Benchmark: what the write gate and the sandbox cost, as ratios in one run.

Run: ``.venv/bin/python bench/workspace.py`` (a script, not a test).

1. **Gate overhead per mutation.** The baseline is a plain atomic write — the same
   ``Filesystem.write`` the gate ends with (a staging file in the same directory renamed
   over the target). The gated side is ``WriteGate.mutate(WriteFile)`` of the same bytes:
   the flock on the path, what the agent last saw (read and written back), the last-write
   record, the hashes, then that same atomic write. A third row adds the git journal (one
   commit per mutation), for scale. Rounds alternate the sides; medians are reported.
2. **Exec latency.** The same command through ``BubblewrapBackend.run`` (cgroup as root,
   ``prlimit``, ``bwrap`` with every namespace unshared) against a bare
   ``subprocess.run`` of it, for ``true`` and for ``python3 -c pass``; and the whole
   ``workspace_exec`` path through the card (actor, lease, worker thread, run record) for
   ``true``.
3. **Search of an unchanged tree.** ``DocumentIndex.search`` over a copy of this
   repository's ``src`` and ``docs`` (each file's record stored, as the indexer leaves it,
   and every mtime an hour old), repeated: what a search keeps per document (the record,
   its chunks' BM25 terms) against the same search with that cache cleared before each
   call — the cold path, every record read and every chunk tokenised — as the baseline.
   Two more rows for scale: records kept but every chunk tokenised again (the search before
   it kept the terms), and a tree written within the last 2 s (its mtimes held there by
   dating them an hour ahead), which search does not trust on its files' identities and
   so settles afresh on every call.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from akgentic.core import (
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    Orchestrator,
    OrchestratorConfig,
)
from akgentic.tool import ToolFactory
from akgentic.tool.sandbox import BubblewrapBackend, ExecLimits, registry
from akgentic.tool.vector_store import keyword_scores
from akgentic.tool.workspace import (
    DocumentIndex,
    GitJournal,
    Identity,
    WorkspaceExec,
    WorkspaceTool,
    WriteFile,
    WriteGate,
)
from akgentic.tool.workspace import search as search_module
from akgentic.tool.workspace.search import chunk_refs
from akgentic.tool.workspace.workspace import (
    KIND_ID,
    Filesystem,
    WorkspacePath,
    resolve_workspace_path,
)

ROUNDS = 5
WRITES = 300
JOURNAL_WRITES = 60
EXECS = 30
SEARCHES = 5
SEARCH_ROUNDS = 3
QUERIES = ("actor mailbox stop", "workspace record search", "token usage of a model turn")
CONTENT = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(40))


def per_op(fn: Callable[[int], None], count: int) -> float:
    """Milliseconds per call of ``fn(i)`` over ``count`` calls."""
    begin = time.perf_counter()
    for i in range(count):
        fn(i)
    return (time.perf_counter() - begin) * 1000 / count


def gate_rows(root: Path) -> list[tuple[str, float]]:
    """Per-mutation medians; plain and gated writes interleaved one by one, so both see the
    same disk (a rename over a file costs a data flush on ext4, and it drifts)."""
    workspace = resolve_workspace_path(kind=KIND_ID, leaf="bench", root=root)
    gate = WriteGate(workspace)
    me = Identity(name="@Bench", team="bench")
    target = gate.fs.root / "plain.txt"
    journal_space = resolve_workspace_path(kind=KIND_ID, leaf="journal", root=root)
    journal_gate = WriteGate(journal_space)
    journal = GitJournal(journal_space.tree, journal_space.git_dir)

    def plain(i: int) -> None:
        gate.fs.write(target, f"{CONTENT}{i}\n".encode())

    def gated(i: int) -> None:
        gate.mutate(me, WriteFile(path="gated.txt", content=f"{CONTENT}{i}\n"))

    def journaled(i: int) -> None:
        journal_gate.mutate(me, WriteFile(path="j.txt", content=f"{CONTENT}{i}\n"), journal)

    plain(0), gated(0), journaled(0)  # warm up (creates the files, the repository)
    samples: dict[str, list[float]] = {"plain": [], "gated": [], "journal": []}
    for _ in range(ROUNDS):
        for i in range(WRITES):
            samples["plain"].append(per_op(lambda _i, n=i: plain(n), 1))
            samples["gated"].append(per_op(lambda _i, n=i: gated(n), 1))
        samples["journal"].append(per_op(journaled, JOURNAL_WRITES))
    return [
        ("plain atomic write (baseline)", statistics.median(samples["plain"])),
        ("gated write (WriteGate.mutate)", statistics.median(samples["gated"])),
        ("gated write + git journal", statistics.median(samples["journal"])),
    ]


def exec_rows(root: Path) -> list[tuple[str, float, float]]:
    backend = BubblewrapBackend()
    reason = backend.unavailable_reason()
    if reason is not None:
        print(f"exec latency skipped: {reason}")
        return []
    tree = root / "exec-tree"
    tree.mkdir()
    limits = ExecLimits()
    python = shutil.which("python3", path="/usr/bin:/bin") or "python3"
    rows = []
    for label, argv in (("true", ["true"]), ("python3 -c pass", [python, "-c", "pass"])):
        command = " ".join(argv[:1] + [f"'{a}'" if " " in a else a for a in argv[1:]])
        bare, boxed = [], []
        for _ in range(ROUNDS):
            bare.append(per_op(lambda _i, a=argv: subprocess.run(a, cwd=tree, check=True), EXECS))
            boxed.append(per_op(lambda _i, c=command: backend.run(tree, c, limits), EXECS))
        rows.append((label, statistics.median(bare), statistics.median(boxed)))
    # The whole tool path, for `true`.
    registry.SANDBOX_BACKEND = backend
    system = ActorSystem()
    try:
        orchestrator = system.createActor(Orchestrator, config=OrchestratorConfig())
        card = WorkspaceTool(
            workspace_id="bench-exec", workspace_exec=WorkspaceExec(), workspace_search=False
        )
        member = system.createActor(
            Member, config=BaseConfig(name="@Bench"), team_id=orchestrator.team_id
        )
        factory = ToolFactory([card], observer=system.get_actor(member))
        run = {t.__name__: t for t in factory.get_tools()}["workspace_exec"]
        run("true")
        bare_true = rows[0][1]
        tool = statistics.median(per_op(lambda _i: run("true"), EXECS) for _ in range(ROUNDS))
        rows.append(("true, via workspace_exec (the card)", bare_true, tool))
    finally:
        system.shutdown(timeout=10)
        registry.SANDBOX_BACKEND = None
    return rows


def search_tree(root: Path, leaf: str, *, hours: int) -> tuple[WorkspacePath, Filesystem, int]:
    """A tree holding this repository's ``src`` and ``docs`` text, each file's record stored,
    every file and record dated ``hours`` from now: an hour back is a tree search trusts on
    its files' identities; an hour ahead stays, for as long as the run lasts, what a tree
    written within the last 2 s is. The tree, its filesystem and its chunk count."""
    workspace = resolve_workspace_path(kind=KIND_ID, leaf=leaf, root=root)
    fs = Filesystem(workspace.tree)
    docs = DocumentIndex(workspace, fs)
    repo = Path(__file__).resolve().parent.parent
    dated = time.time_ns() + hours * 3600 * 1_000_000_000
    chunks = 0
    for source in sorted([*repo.glob("src/**/*.py"), *repo.glob("docs/**/*.md")]):
        rel = source.relative_to(repo).as_posix()
        target = workspace.tree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        os.utime(target, ns=(dated, dated))
        record = docs.build(rel, convert=False)
        if record is None:
            continue
        docs.save(record)
        chunks += len(record.chunks)
        os.utime(docs._file(rel), ns=(dated, dated))
    return workspace, fs, chunks


def search_rows(root: Path) -> tuple[int, int, list[tuple[str, float]]]:
    """Per-search medians (ms), the sides interleaved search by search; the tree's documents
    and chunks."""
    workspace, fs, chunks = search_tree(root, "search", hours=-1)
    fresh, fresh_fs, _ = search_tree(root, "fresh", hours=1)
    documents = sum(1 for _ in fs.iter_files())

    def cold(i: int) -> None:
        search_module._TREES.clear()  # the process's settled documents, every tree
        DocumentIndex(workspace, fs).search(QUERIES[i % len(QUERIES)], 10)

    def retokenised(i: int) -> None:  # what search did before it kept the chunks' terms
        texts = {
            ref: chunk.text
            for rel, record in DocumentIndex(workspace, fs).current().items()
            for ref, chunk in zip(chunk_refs(rel, record), record.chunks, strict=True)
        }
        keyword_scores(QUERIES[i % len(QUERIES)], texts)

    def warm(i: int) -> None:
        DocumentIndex(workspace, fs).search(QUERIES[i % len(QUERIES)], 10)

    def just_written(i: int) -> None:
        DocumentIndex(fresh, fresh_fs).search(QUERIES[i % len(QUERIES)], 10)

    sides = {"cold": cold, "retokenised": retokenised, "warm": warm, "fresh": just_written}
    for side in sides.values():
        side(0)  # warm up: the caches filled, the modules' first calls made
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(SEARCH_ROUNDS):
        for i in range(SEARCHES):
            for name, side in sides.items():
                samples[name].append(per_op(lambda _i, f=side, n=i: f(n), 1))
    rows = [
        ("cache cleared before each search (baseline)", statistics.median(samples["cold"])),
        ("records kept, every chunk tokenised again", statistics.median(samples["retokenised"])),
        (
            "repeat search, unchanged tree (records and terms kept)",
            statistics.median(samples["warm"]),
        ),
        ("tree written within 2 s (settled afresh each time)", statistics.median(samples["fresh"])),
    ]
    return documents, chunks, rows


class Member(Akgent[BaseConfig, BaseState]):
    """A plain team member for the card to be wired on (it needs an agent in a team)."""


def print_gate(label: str, root: Path) -> None:
    rows = gate_rows(root)
    base = rows[0][1]
    print(f"\n{label}\n\n| mutation | ms | ratio to a plain atomic write |\n|---|---:|---:|")
    for name, ms in rows:
        print(f"| {name} | {ms:.3f} | {ms / base:.2f} |")


def main() -> None:
    print(f"python {sys.version.split()[0]}; {ROUNDS} rounds, medians")
    with tempfile.TemporaryDirectory(prefix="akgentic-bench-") as folder:
        print_gate(f"tree on disk ({folder})", Path(folder))
    shm = Path("/dev/shm")
    if shm.is_dir():
        with tempfile.TemporaryDirectory(prefix="akgentic-bench-", dir=shm) as folder:
            print_gate(
                "tree in memory (/dev/shm: the gate's own cost, no disk flush)", Path(folder)
            )
    with tempfile.TemporaryDirectory(prefix="akgentic-bench-") as folder:
        documents, chunks, search = search_rows(Path(folder))
        base = search[0][1]
        print(f"\nsearch: {documents} documents, {chunks} chunks, {SEARCHES} searches a round")
        print("\n| search | ms | ratio to the cold path |\n|---|---:|---:|")
        for name, ms in search:
            print(f"| {name} | {ms:.1f} | {ms / base:.2f} |")
    with tempfile.TemporaryDirectory(prefix="akgentic-bench-") as folder:
        rows = exec_rows(Path(folder))
        if rows:
            print("\n| command | bare subprocess.run, ms | sandboxed, ms | ratio |")
            print("|---|---:|---:|---:|")
            for label, bare, boxed in rows:
                print(f"| {label} | {bare:.2f} | {boxed:.2f} | {boxed / bare:.1f} |")


if __name__ == "__main__":
    main()
