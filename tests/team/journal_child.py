"""The process the journal crash test kills: a team whose #PlanningTool took 300 changes.

Creates the team, binds ``#PlanningTool`` and makes :data:`CHANGES` updates (each one
delta: a new task, or — every third — task 1's status flipped), waits until the last
delta is committed, prints ``READY <team_id>`` and waits to be killed — so the log ends
with deltas after the last snapshot, and no stop ever published a final one.
"""

from __future__ import annotations

import sys
import threading

from akgentic.core import ActorSystem, EventMessage, Orchestrator
from akgentic.storage import open_storage
from akgentic.team import TeamManager, TeamRuntime
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.planning import CreateTask, PlanActor, PlanConfig, TaskStatus, UpdateTask
from akgentic.tool.vector_store import EmbeddingConfig, VectorStoreParam
from tests.team.crash_cards import crash_card

CHANGES = 300
KEYWORD_ONLY = VectorStoreParam(embedding=EmbeddingConfig(provider="none"))


def make_changes(runtime: TeamRuntime, changes: int) -> None:
    """``changes`` update_planning calls on the team's #PlanningTool (the same every run)."""
    system = runtime.system
    orchestrator = system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=30)
    address = orchestrator.getChildrenOrCreate(PlanActor, PlanConfig(vector_store=KEYWORD_ONLY))
    plan = system.proxy_ask(address, PlanActor, timeout=30)
    for n in range(1, changes + 1):
        if n % 3 == 0:
            status = TaskStatus.DONE if (n // 3) % 2 else TaskStatus.TODO
            plan.update_planning([UpdateTask(task_id=1, status=status)], "@Boss")
        else:
            plan.update_planning([CreateTask(title=f"task {n}", description="x" * 40)], "@Boss")


def wait_for_delta(runtime: TeamRuntime, seq: int) -> None:
    for record in runtime.follow(1, idle_timeout=60):
        msg = record.message
        event = msg.event if isinstance(msg, EventMessage) else None
        if isinstance(event, ToolStateEvent) and event.seq == seq:
            return
    raise SystemExit(f"delta {seq} never reached the log")


def main(url: str) -> None:
    manager = TeamManager(ActorSystem(), open_storage(url))
    runtime = manager.create_team(crash_card())
    make_changes(runtime, CHANGES)
    wait_for_delta(runtime, CHANGES)
    print(f"READY {runtime.team_id}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1])
