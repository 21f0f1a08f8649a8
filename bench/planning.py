"""The team plan under load: ten agents updating #PlanningTool at once.

What is measured (same machine, same run, same workload):

- **10 agents** — ten member agents of one team, each wired with ``PlanningTool``
  through ``ToolFactory``, each on its own thread, call ``update_planning`` N times at
  once (released together by a barrier). Every call goes the real way: item
  validation, an ask to the one ``#PlanningTool``, the mutation, the state snapshot
  (``notify_state_change``), the ``ToolStateEvent`` on the team stream, the reply.
  The team has one subscriber receiving every telemetry message (what an event store
  sees).
- **1 agent** — the same total number of calls, from one agent, one after another.
- **plain dict** — the same edits applied single-threaded to a dict of dicts: the
  floor, what the edits cost with no actor, no validation, no events.

Each call is one edit: agents alternate "create a task of my own" and "mark my
previous task in progress". Reported: updates per second, p50 / p95 latency per call,
and ratios to the baselines. Rounds alternate the three sides; medians are reported.
Embeddings are switched off (``EmbeddingConfig(provider="none")``): this measures the
plan, not an embedder.

**Plan size** (``--sizes``): the cost of one update as the plan grows, on the recorded
path — the team's real ``EventRecorder`` on a SQLite file is subscribed. The plan is
filled to N tasks (100 per call), then one agent makes ``--size-calls`` single-edit calls
(a status change of task 1, 2, ... N, 1, ...: the plan stays at N tasks). Reported:
updates per second and its ratio to N=100, and the bytes the calls wrote to the store,
read back from it — the log rows they added (deltas, snapshots) plus the latest-state
table row each snapshot rewrites — per update. The same run measures the plan as it was
persisted before ``StateJournal`` (a snapshot of the whole plan with every update) for
contrast, over a hundredth of the calls (it writes the whole plan each time).
Run: ``python bench/planning.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

from pydantic import Field

import akgentic.tool.planning.planning_actor as planning_actor
from akgentic.core import (
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    Message,
    Orchestrator,
    StateChangedMessage,
)
from akgentic.storage import SqliteStorage
from akgentic.team import EventRecorder
from akgentic.tool import ToolCard, ToolFactory, ToolState
from akgentic.tool.core import SnapshotPolicy, StateJournal, ToolStateEvent
from akgentic.tool.planning import PlanningTool
from akgentic.tool.vector_store import EmbeddingConfig, VectorStoreParam

KEYWORD_ONLY = VectorStoreParam(embedding=EmbeddingConfig(provider="none"))


class MemberState(BaseState):
    tool_state: ToolState = Field(default_factory=ToolState)


class MemberConfig(BaseConfig):
    cards: list[ToolCard] = Field(default_factory=list)


class Member(Akgent[MemberConfig, MemberState]):
    def on_start(self) -> None:
        self._factory = ToolFactory(self.config.cards, observer=self)

    def update_tool(self) -> Callable[..., str]:
        (tool,) = [t for t in self._factory.get_tools() if t.__name__ == "update_planning"]
        return tool


class CountingSubscriber:
    def __init__(self) -> None:
        self.count = 0

    def on_message(self, msg: Message) -> None:
        self.count += 1

    def set_restoring(self, team_id: UUID, restoring: bool) -> None: ...

    def on_stop_request(self, team_id: UUID) -> None: ...

    def on_stop(self, team_id: UUID) -> None: ...


def edits(agent: int, calls: int) -> list[dict[str, Any]]:
    """What one agent sends, one edit per call. Task ids are filled in at run time."""
    out: list[dict[str, Any]] = []
    for k in range(calls):
        if k % 2 == 0:
            out.append({"op": "create", "title": f"task {agent}-{k}", "description": "bench"})
        else:
            out.append({"op": "update", "status": "in_progress"})
    return out


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_team(agents: int, calls: int) -> tuple[float, list[float]]:
    """Wall time of ``agents`` x ``calls`` update_planning calls, and every call's latency."""
    system = ActorSystem()
    try:
        orchestrator = system.createActor(Orchestrator)
        system.proxy_ask(orchestrator, Orchestrator, timeout=10).subscribe(CountingSubscriber())
        members = [
            system.createActor(
                Member,
                config=MemberConfig(
                    name=f"@Agent{i}", cards=[PlanningTool(vector_store=KEYWORD_ONLY)]
                ),
                team_id=orchestrator.team_id,
            )
            for i in range(agents)
        ]
        tools = [system.proxy_ask(m, Member, timeout=10).update_tool() for m in members]
        latencies: list[list[float]] = [[] for _ in tools]
        start = threading.Barrier(len(tools) + 1)

        def work(n: int) -> None:
            update = tools[n]
            mine = 0
            start.wait()
            for edit in edits(n, calls):
                item = dict(edit)
                if item["op"] == "update":
                    item["task_id"] = mine
                began = time.perf_counter()
                reply = update([item])
                latencies[n].append(time.perf_counter() - began)
                if item["op"] == "create":
                    mine = int(reply.split("#", 1)[1].split(" ", 1)[0])

        threads = [threading.Thread(target=work, args=(n,)) for n in range(len(tools))]
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        return wall, [x for per in latencies for x in per]
    finally:
        system.shutdown(timeout=10)


def run_dict(agents: int, calls: int) -> tuple[float, list[float]]:
    """The same edits, single-threaded, on a plain dict model."""
    tasks: dict[int, dict[str, Any]] = {}
    next_id = 1
    latencies: list[float] = []
    began = time.perf_counter()
    for n in range(agents):
        mine = 0
        for edit in edits(n, calls):
            t0 = time.perf_counter()
            if edit["op"] == "create":
                tasks[next_id] = {
                    "id": next_id,
                    "title": edit["title"],
                    "description": edit["description"],
                    "owner": f"@Agent{n}",
                    "status": "todo",
                    "dependencies": [],
                }
                mine, next_id = next_id, next_id + 1
            else:
                tasks[mine]["status"] = edit["status"]
            latencies.append(time.perf_counter() - t0)
    return time.perf_counter() - began, latencies


# -- plan size, on the recorded path --------------------------------------------------------


class EveryUpdate(SnapshotPolicy):
    """How the plan was persisted before StateJournal: the whole plan with every update."""

    def due(self, changed_rows: int, snapshot_rows: int) -> bool:
        return True


def journal_every_update(actor: Any) -> StateJournal:
    return StateJournal(actor, policy=EveryUpdate())


STATUSES = ("in_progress", "done", "todo")


def run_sized(size: int, calls: int, directory: Path) -> tuple[float, dict[str, float]]:
    """Updates per second of ``calls`` single edits on a plan of ``size`` tasks, and the
    bytes they wrote to the store per update, by kind (read back from the store)."""
    storage = SqliteStorage(directory / f"plan-{size}-{time.monotonic_ns()}.db")
    system = ActorSystem()
    try:
        orchestrator = system.createActor(Orchestrator)
        team = orchestrator.team_id
        assert team is not None
        recorder = EventRecorder(storage, team)
        proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=30)
        proxy.subscribe(recorder)
        member = system.createActor(
            Member,
            config=MemberConfig(name="@Agent", cards=[PlanningTool(vector_store=KEYWORD_ONLY)]),
            team_id=team,
        )
        update = system.proxy_ask(member, Member, timeout=10).update_tool()
        for first in range(0, size, 100):
            count = min(100, size - first)
            update([{"op": "create", "title": f"task {first + i}"} for i in range(count)])

        def settle() -> int:  # everything reported so far is committed
            system.proxy_ask(orchestrator, Orchestrator, timeout=600).get_team()
            last = storage.events.last_seq(team)
            assert recorder.wait_seq(last, 600)
            return last

        before = settle()
        began, cpu = time.perf_counter(), time.process_time()
        for k in range(calls):
            task, status = 1 + k % size, STATUSES[(k // size) % 3]
            update([{"op": "update", "task_id": task, "status": status}])
        settle()  # the recording is part of the cost
        elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
        written = {"delta": 0.0, "snapshot": 0.0, "other": 0.0}
        for record in storage.events.read(team, from_seq=before + 1):
            size_of = len(record.raw.encode())
            msg = record.message
            if isinstance(msg, EventMessage) and isinstance(msg.event, ToolStateEvent):
                written["delta"] += size_of
            elif isinstance(msg, StateChangedMessage):
                written["snapshot"] += 2 * size_of  # the log row, and the state table's
            else:
                written["other"] += size_of
        return calls / elapsed, {"cpu": cpu / calls, **{k: v / calls for k, v in written.items()}}
    finally:
        system.shutdown(timeout=10)
        storage.close()


def plan_sizes(sizes: list[int], calls: int, rounds: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="akgentic-plan-"))
    journal = planning_actor.StateJournal
    try:
        results: dict[tuple[str, int], list[tuple[float, dict[str, float]]]] = {}
        for _ in range(rounds):
            for size in sizes:
                for mode in ("journal", "every"):
                    planning_actor.StateJournal = (  # type: ignore[misc]
                        journal if mode == "journal" else journal_every_update
                    )
                    # the old way writes the whole plan per update: fewer calls measure it
                    n = calls if mode == "journal" else max(50, calls // 100)
                    results.setdefault((mode, size), []).append(run_sized(size, n, directory))
    finally:
        planning_actor.StateJournal = journal  # type: ignore[misc]
        shutil.rmtree(directory, ignore_errors=True)
    print()
    print(f"plan size: {calls} single-edit calls per run, EventRecorder on SQLite, {rounds} rounds")
    print(
        f"{'':<26}{'tasks':>7}{'updates/s':>11}{'vs N=100':>9}{'CPU µs':>8}{'vs N=100':>9}"
        f"{'delta B':>9}{'snapshot B':>11}{'total B/update':>15}"
    )
    for mode, label in (
        ("journal", "deltas + snapshots (now)"),
        ("every", "snapshot every update"),
    ):
        base = statistics.median(r[0] for r in results[(mode, sizes[0])])
        base_cpu = statistics.median(r[1]["cpu"] for r in results[(mode, sizes[0])])
        for size in sizes:
            runs = results[(mode, size)]
            rate = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1]["cpu"] for r in runs)
            delta = statistics.median(r[1]["delta"] for r in runs)
            snap = statistics.median(r[1]["snapshot"] for r in runs)
            total = statistics.median(
                r[1]["delta"] + r[1]["snapshot"] + r[1]["other"] for r in runs
            )
            print(
                f"{label:<26}{size:>7,}{rate:>11,.0f}{rate / base:>9.2f}{cpu * 1e6:>8.0f}"
                f"{base_cpu / cpu:>9.2f}{delta:>9,.0f}{snap:>11,.0f}{total:>15,.0f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200, help="calls per agent")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="100,1000,10000", help="plan sizes ('' to skip)")
    parser.add_argument("--size-calls", type=int, default=10_000, help="calls per size run")
    parser.add_argument("--size-rounds", type=int, default=3)
    parser.add_argument("--skip-agents", action="store_true", help="only the plan sizes")
    args = parser.parse_args()
    agents, calls, rounds = args.agents, args.calls, args.rounds
    sizes = [int(s) for s in args.sizes.split(",") if s]
    size_calls, size_rounds = args.size_calls, args.size_rounds
    if args.quick:
        calls, rounds, size_calls, size_rounds = 20, 1, 500, 1
    if not args.skip_agents:
        agents_at_once(agents, calls, rounds)
    if sizes:
        plan_sizes(sizes, size_calls, size_rounds)


def agents_at_once(agents: int, calls: int, rounds: int) -> None:
    total = agents * calls
    results: dict[str, list[tuple[float, float, float]]] = {"team": [], "one": [], "dict": []}
    for _ in range(rounds):
        for key, run in (
            ("team", lambda: run_team(agents, calls)),
            ("one", lambda: run_team(1, total)),
            ("dict", lambda: run_dict(agents, calls)),
        ):
            wall, lat = run()
            results[key].append((total / wall, percentile(lat, 0.5), percentile(lat, 0.95)))

    def median(key: str, i: int) -> float:
        return statistics.median(r[i] for r in results[key])

    team, one, plain = (median(k, 0) for k in ("team", "one", "dict"))
    print(f"{agents} agents x {calls} calls = {total} update_planning calls, {rounds} rounds")
    print(f"{'':<34}{'updates/s':>12}{'p50 ms':>10}{'p95 ms':>10}{'vs 1 agent':>12}{'vs dict':>10}")
    for label, key, rate in (
        (f"{agents} agents at once (threads)", "team", team),
        ("1 agent, sequential", "one", one),
        ("plain dict, single-threaded", "dict", plain),
    ):
        p50, p95 = median(key, 1) * 1e3, median(key, 2) * 1e3
        print(
            f"{label:<34}{rate:>12,.0f}{p50:>10.3f}{p95:>10.3f}"
            f"{rate / one:>12.2f}{rate / plain:>10.4f}"
        )
    print(
        f"p95 latency, {agents} agents / 1 agent: "
        f"{median('team', 2) / median('one', 2):.1f}x (calls queue on one mailbox)"
    )


if __name__ == "__main__":
    main()
