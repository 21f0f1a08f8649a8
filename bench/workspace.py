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
"""

from __future__ import annotations

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
from akgentic.tool.workspace import (
    GitJournal,
    Identity,
    WorkspaceExec,
    WorkspaceTool,
    WriteFile,
    WriteGate,
)
from akgentic.tool.workspace.workspace import KIND_ID, resolve_workspace_path

ROUNDS = 5
WRITES = 300
JOURNAL_WRITES = 60
EXECS = 30
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
        rows = exec_rows(Path(folder))
        if rows:
            print("\n| command | bare subprocess.run, ms | sandboxed, ms | ratio |")
            print("|---|---:|---:|---:|")
            for label, bare, boxed in rows:
                print(f"| {label} | {bare:.2f} | {boxed:.2f} | {boxed / bare:.1f} |")


if __name__ == "__main__":
    main()
