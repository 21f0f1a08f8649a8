"""A tool actor's state is persisted as its deltas, with a snapshot now and then, and a
resume rebuilds it exactly: from the last snapshot and the deltas after it (after a
SIGKILL, when no stop published a last snapshot), from an earlier snapshot when the last
one is corrupt, from every delta when no snapshot can be read — and it refuses, changing
nothing, when a delta is missing with no readable snapshot after it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import ActorSystem, EventMessage, StateChangedMessage
from akgentic.storage import StorageBundle, TeamStatus, open_storage
from akgentic.team import ResumeError, TeamManager, TeamRuntime
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.planning import (
    PLANNING_ACTOR_NAME,
    Plan,
    PlanActor,
    Task,
    TaskStatus,
    UpdateTask,
)
from tests.event_rows import unpack_events
from tests.processes import killed_when_ready

from .crash_cards import SlowStep  # noqa: F401  (the class must exist to restore the team)
from .journal_child import CHANGES, make_changes


def expected_plan(changes: int) -> Plan:
    """What :func:`make_changes` leaves: its tasks, task 1's last status, every delta."""
    tasks: dict[int, Task] = {}
    for n in range(1, changes + 1):
        if n % 3:
            task_id = len(tasks) + 1
            tasks[task_id] = Task(
                id=task_id, title=f"task {n}", description="x" * 40, owner="@Boss",
                created_by="@Boss",
            )  # fmt: skip
        else:
            status = TaskStatus.DONE if (n // 3) % 2 else TaskStatus.TODO
            tasks[1] = tasks[1].model_copy(update={"status": status})
    return Plan(tasks=tasks, next_id=len(tasks) + 1, event_seq=changes)


def plan_records(storage: StorageBundle, team_id: UUID) -> tuple[list[int], list[int]]:
    """The log positions of #PlanningTool's snapshots, and of its deltas."""
    snapshots, deltas = [], []
    for record in storage.events.read(team_id):
        msg = record.message
        if msg is None or msg.sender is None or msg.sender.name != PLANNING_ACTOR_NAME:
            continue
        if isinstance(msg, StateChangedMessage):
            snapshots.append(record.seq)
        elif isinstance(msg, EventMessage) and isinstance(msg.event, ToolStateEvent):
            deltas.append(record.seq)
    return snapshots, deltas


def plan_of(system: ActorSystem, runtime: TeamRuntime) -> Any:
    address = runtime.member(PLANNING_ACTOR_NAME)
    assert address is not None, "the resume did not bring #PlanningTool back"
    return system.get_actor(address).state


def corrupt(path: Path, team_id: UUID, *seqs: int) -> None:
    unpack_events(path, team_id)
    conn = sqlite3.connect(path)
    for seq in seqs:
        changed = conn.execute(
            'UPDATE akgentic_events SET payload = \'{"__model__": "torn\' '
            "WHERE team_id = ? AND seq = ?",
            (str(team_id), seq),
        ).rowcount
        assert changed == 1, f"no stored event {seq} to damage"
    conn.commit()
    conn.close()


def run_child_until_ready(url: str) -> UUID:
    return killed_when_ready("tests.team.journal_child", url)


def test_after_a_kill_the_state_is_the_last_snapshot_and_the_deltas_after_it(
    storage_url: str, system: ActorSystem
) -> None:
    team_id = run_child_until_ready(storage_url)
    storage = open_storage(storage_url)
    snapshots, deltas = plan_records(storage, team_id)
    # O(change): one delta per update, a snapshot only at the first change and once the
    # changes reached the plan's size (256 rows) — not one per update
    assert len(deltas) == CHANGES and len(snapshots) == 2
    assert snapshots[-1] < deltas[-1]  # the kill left deltas after the last snapshot

    runtime = TeamManager(system, storage).resume_team(team_id)
    assert plan_of(system, runtime) == expected_plan(CHANGES)
    # the stream goes on from the last delta: no gap, no repeat
    plan = system.proxy_ask(runtime.member(PLANNING_ACTOR_NAME), PlanActor, timeout=30)  # type: ignore[arg-type]
    plan.update_planning([UpdateTask(task_id=2, status=TaskStatus.DONE)], "@Boss")
    assert plan_of(system, runtime).event_seq == CHANGES + 1


def stopped_team(path: Path, system: ActorSystem) -> tuple[TeamManager, UUID, Plan]:
    """A team whose plan took CHANGES updates, stopped gracefully: its log holds the
    first snapshot, one the policy published, the stop's, and a delta per update."""
    from .crash_cards import crash_card

    manager = TeamManager(system, open_storage(f"sqlite:///{path}"))
    runtime = manager.create_team(crash_card())
    make_changes(runtime, CHANGES)
    before = plan_of(system, runtime)
    manager.stop_team(runtime.team_id)
    assert before == expected_plan(CHANGES)
    return manager, runtime.team_id, before


def test_a_corrupt_last_snapshot_falls_back_to_the_one_before(
    tmp_path: Path, system: ActorSystem
) -> None:
    path = tmp_path / "team.db"
    manager, team_id, before = stopped_team(path, system)
    snapshots, _ = plan_records(manager.storage, team_id)
    assert len(snapshots) == 3
    corrupt(path, team_id, snapshots[-1])  # the stop's snapshot is unreadable
    resumed = manager.resume_team(team_id)
    assert plan_of(system, resumed) == before  # the one before, and the deltas after it


def test_with_no_readable_snapshot_every_delta_is_folded_from_the_start(
    tmp_path: Path, system: ActorSystem
) -> None:
    path = tmp_path / "team.db"
    manager, team_id, before = stopped_team(path, system)
    snapshots, _ = plan_records(manager.storage, team_id)
    corrupt(path, team_id, *snapshots)
    resumed = manager.resume_team(team_id)
    assert plan_of(system, resumed) == before


def test_a_missing_delta_with_no_snapshot_after_it_refuses_the_resume_and_changes_nothing(
    tmp_path: Path, system: ActorSystem
) -> None:
    path = tmp_path / "team.db"
    manager, team_id, _ = stopped_team(path, system)
    snapshots, deltas = plan_records(manager.storage, team_id)
    corrupt(path, team_id, snapshots[-1], deltas[-2])
    last = manager.storage.events.last_seq(team_id)
    with pytest.raises(
        ResumeError, match=r"#PlanningTool's state cannot be rebuilt.*missing"
    ) as failed:
        manager.resume_team(team_id)
    assert failed.value.member == "#PlanningTool"
    record = manager.storage.teams.get(team_id)
    assert record is not None and record.status is TeamStatus.STOPPED
    assert manager.storage.events.last_seq(team_id) == last  # nothing written


def test_a_resumed_tool_owns_its_state_apart_from_the_view_its_snapshot_was_replayed_into(
    tmp_path: Path, system: ActorSystem
) -> None:
    """A graceful stop's snapshot is the plan's last record, with no delta after it. The
    orchestrator's view keeps that snapshot's object; the resumed actor starts from an
    equal copy of its own, so a change it makes in place (on its thread) never reaches
    a view another thread is reading or serializing."""
    from akgentic.core import Orchestrator

    manager, team_id, before = stopped_team(tmp_path / "team.db", system)
    snapshots, deltas = plan_records(manager.storage, team_id)
    assert snapshots[-1] > deltas[-1]  # the stop's snapshot comes last
    runtime = manager.resume_team(team_id)
    address = runtime.member(PLANNING_ACTOR_NAME)
    assert address is not None
    views = system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=30)
    viewed, actual = views.get_states()[address.agent_id], plan_of(system, runtime)
    assert viewed == before == actual
    assert viewed is not actual
    manager.stop_team(team_id)
