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
plan, not an embedder. Run: ``python bench/planning.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

from pydantic import Field

from akgentic.core import ActorSystem, Akgent, BaseConfig, BaseState, Message, Orchestrator
from akgentic.tool import ToolCard, ToolFactory, ToolState
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200, help="calls per agent")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    agents, calls, rounds = args.agents, args.calls, args.rounds
    if args.quick:
        calls, rounds = 20, 1
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
