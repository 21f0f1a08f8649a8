"""Pure parts: the reducer, the delta, the context state's renderers, serialization."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import ToolStateEvent
from akgentic.tool.planning import (
    Plan,
    PlanningState,
    PlanningStateEvent,
    Task,
    TaskRow,
    TaskStatus,
    reduce_planning,
)


def task(task_id: int, title: str = "t", **fields: object) -> Task:
    return Task(id=task_id, title=title, **fields)  # type: ignore[arg-type]


def test_reduce_applies_created_updated_deleted_in_order_and_is_pure() -> None:
    start = Plan()
    one = reduce_planning(start, PlanningStateEvent(tasks_created=[task(1), task(2)]))
    assert start == Plan()  # untouched
    assert (set(one.tasks), one.next_id, one.event_seq) == ({1, 2}, 3, 1)
    # created and deleted in the same call: the id stays consumed
    two = reduce_planning(
        one,
        PlanningStateEvent(
            tasks_created=[task(3)],
            tasks_updated=[task(1, "renamed", status=TaskStatus.DONE)],
            tasks_deleted=[2, 3],
        ),
    )
    assert set(one.tasks) == {1, 2}
    assert (set(two.tasks), two.next_id, two.event_seq) == ({1}, 4, 2)
    assert two.tasks[1].title == "renamed" and two.tasks[1].status is TaskStatus.DONE


@pytest.mark.parametrize(
    "delta, problem",
    [
        (PlanningStateEvent(tasks_created=[task(1)]), "already exists"),
        (PlanningStateEvent(tasks_updated=[task(9)]), "updates task 9"),
        (PlanningStateEvent(tasks_deleted=[9]), "deletes task 9"),
    ],
)
def test_reduce_refuses_a_delta_that_does_not_fit(delta: PlanningStateEvent, problem: str) -> None:
    state = Plan(tasks={1: task(1)}, next_id=2, event_seq=1)
    with pytest.raises(ValueError, match=problem):
        reduce_planning(state, delta)


def test_empty_delta_is_empty() -> None:
    assert PlanningStateEvent().is_empty()
    assert not PlanningStateEvent(tasks_deleted=[1]).is_empty()


def test_event_round_trips_with_its_payload_class() -> None:
    delta = PlanningStateEvent(tasks_created=[task(1, dependencies=(), owner="@A")])
    event = ToolStateEvent(tool_id="#PlanningTool", seq=1, payload=delta)
    back = deserialize(serialize(event))
    assert isinstance(back.payload, PlanningStateEvent)
    assert back.payload == delta


def test_plan_state_round_trips() -> None:
    plan = Plan(tasks={1: task(1, dependencies=(), owner="@A"), 2: task(2, dependencies=(1,))})
    plan.next_id, plan.event_seq = 3, 2
    assert deserialize(serialize(plan)) == plan


def rows(*items: tuple[int, str, TaskStatus]) -> tuple[TaskRow, ...]:
    return tuple(TaskRow(id=i, title=t, status=s, owner="@A") for i, t, s in items)


def test_render_full_lists_rows_and_is_empty_for_no_rows() -> None:
    assert PlanningState(scope="@A").render_full() == ""
    state = PlanningState(scope="@A", rows=rows((1, "Write", TaskStatus.TODO)))
    assert state.render_full() == "Team plan — your tasks (@A):\n- #1 [todo] Write — @A"
    everyone = PlanningState(rows=state.rows)
    assert everyone.render_full().startswith("Team plan — all tasks:")


def test_render_delta_names_only_what_changed() -> None:
    before = PlanningState(
        scope="@A", rows=rows((1, "Write", TaskStatus.TODO), (2, "Read", TaskStatus.TODO))
    )
    assert before.render_delta(before) is None
    after = PlanningState(
        scope="@A", rows=rows((1, "Write", TaskStatus.DONE), (3, "Ship", TaskStatus.TODO))
    )
    delta = after.render_delta(before)
    assert delta == (
        "Team plan — changes to your tasks (@A):\n"
        "- #1 [done] Write — @A\n"
        "- #3 [todo] Ship — @A\n"
        "- #2 left this view"
    )


def test_a_changed_scope_renders_in_full() -> None:
    mine = PlanningState(scope="@A", rows=rows((1, "Write", TaskStatus.TODO)))
    everyone = PlanningState(rows=mine.rows)
    assert everyone.render_delta(mine) == everyone.render_full()


def test_rows_render_dependencies_and_unassigned() -> None:
    row = TaskRow(id=4, title="Ship", status=TaskStatus.BLOCKED, dependencies=(1, 2))
    assert row.render() == "#4 [blocked] Ship — unassigned — after #1, #2"


def test_snapshots_share_frozen_rows_but_never_the_table() -> None:
    plan = Plan(tasks={1: task(1)})
    snapshot = copy.deepcopy(plan)  # what notify_state_change publishes
    assert snapshot == plan and snapshot.tasks is not plan.tasks
    assert snapshot.tasks[1] is plan.tasks[1]  # a frozen value is its own copy
    plan.tasks[2] = task(2)
    assert 2 not in snapshot.tasks
    with pytest.raises(ValidationError, match="frozen"):
        plan.tasks[1].title = "changed"  # type: ignore[misc]
