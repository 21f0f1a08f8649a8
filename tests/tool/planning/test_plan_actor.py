"""#PlanningTool itself: validation, partial application, emit-before-return, replay, restore."""

from __future__ import annotations

import contextlib

import pytest

from akgentic.core import ActorAddress
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import RetriableError
from akgentic.tool.core import fold_deltas
from akgentic.tool.planning import (
    CreateTask,
    DeleteTask,
    Plan,
    PlanActor,
    PlanConfig,
    Task,
    TaskStatus,
    UpdateTask,
    reduce_planning,
)

from ..conftest import Team
from .conftest import deltas, plan_events, wait_events


def bind(team: Team) -> tuple[ActorAddress, PlanActor]:
    address = team.proxy.getChildrenOrCreate(PlanActor, PlanConfig())
    return address, team.system.proxy_ask(address, PlanActor, timeout=30)


def test_create_update_delete_and_queries(team: Team) -> None:
    _, plan = bind(team)
    reply = plan.update_planning(
        [
            CreateTask(title="Draft", owner="@Writer"),
            CreateTask(title="Review", dependencies=[1], description="check facts"),
        ],
        "@Lead",
    )
    assert reply == "Done: created #1 'Draft' (@Writer); created #2 'Review' (@Lead)."
    view = plan.get_task(1)
    assert view.task.created_by == "@Lead" and [t.id for t in view.dependents] == [2]
    assert [t.id for t in plan.get_task(2).dependencies] == [1]
    assert [t.id for t in plan.list_tasks("writer")] == [1]  # '@' and case do not matter
    plan.update_planning(
        [UpdateTask(task_id=1, status=TaskStatus.DONE, output="v1 in drafts/")], "@Writer"
    )
    assert plan.get_task(1).task.output == "v1 in drafts/"
    plan.update_planning([UpdateTask(task_id=2, dependencies=[]), DeleteTask(task_id=1)], "@Lead")
    assert plan.get_task(1) is None
    assert [t.id for t in plan.list_tasks()] == [2]


@pytest.mark.parametrize(
    "item, reason",
    [
        (
            CreateTask(title="x", dependencies=[9]),
            "unknown dependencies #9: depend only on existing tasks (create them first, then "
            "update the dependencies). Fix the failed",
        ),
        (UpdateTask(task_id=1, dependencies=[1]), "cycle (#1 -> #1)"),
        (
            UpdateTask(task_id=1, dependencies=[3]),
            "cycle (#1 -> #3 -> #2 -> #1): a task cannot wait on itself, directly or through "
            "others. Fix the failed",
        ),
        (UpdateTask(task_id=7, status=TaskStatus.DONE), "there is no task #7"),
        (DeleteTask(task_id=1), "#2 depend on #1"),
        (DeleteTask(task_id=8), "there is no task #8"),
    ],
)
def test_refused_items_name_the_reason(team: Team, item: object, reason: str) -> None:
    _, plan = bind(team)
    plan.update_planning(
        [
            CreateTask(title="a"),
            CreateTask(title="b", dependencies=[1]),
            CreateTask(title="c", dependencies=[2]),
        ],
        "@A",
    )
    before = plan.list_tasks()
    with pytest.raises(RetriableError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        plan.update_planning([item], "@A")  # type: ignore[list-item]
    assert plan.list_tasks() == before


def test_partial_update_emits_what_succeeded_before_raising(team: Team) -> None:
    _, plan = bind(team)
    plan.update_planning([CreateTask(title="a")], "@A")
    with pytest.raises(RetriableError) as caught:
        plan.update_planning(
            [
                CreateTask(title="b"),
                UpdateTask(task_id=5, title="nope"),
                UpdateTask(task_id=1, status=TaskStatus.IN_PROGRESS),
                DeleteTask(task_id=9),
            ],
            "@A",
        )
    message = str(caught.value)
    assert "applied 2 of 4 items (" in message
    assert "created #2" in message and "updated #1" in message
    assert "item 2 (update #5): there is no task #5" in message
    assert "item 4 (delete #9): there is no task #9" in message
    # The event is already on the stream when the caller gets the exception: the
    # orchestrator drains its queue on this very ask, no waiting.
    events = [
        e.event
        for e in team.proxy.get_events()
        if getattr(e.event, "tool_id", "") == "#PlanningTool"
    ]
    assert [e.seq for e in events] == [1, 2]
    (delta,) = deltas(events[1:])
    assert [t.id for t in delta.tasks_created] == [2]
    assert [(t.id, t.status) for t in delta.tasks_updated] == [(1, TaskStatus.IN_PROGRESS)]
    assert delta.tasks_deleted == []


def test_an_update_repeating_the_owner_of_a_member_who_left_is_accepted(team: Team) -> None:
    """The model repeats ``owner`` while it only moves the status; that owner may have been
    fired since. Only an owner the task does not have yet must be on the team."""
    _, plan = bind(team)
    plan.update_planning(
        [CreateTask(title="Draft", owner="@Writer")], "@Lead", ["@Lead", "@Writer"]
    )
    left = ["@Lead"]  # @Writer was fired
    done = UpdateTask(task_id=1, owner="writer", status=TaskStatus.DONE)
    assert plan.update_planning([done], "@Lead", left) == "Done: updated #1."
    assert plan.get_task(1).task.status is TaskStatus.DONE
    for item in (
        UpdateTask(task_id=1, owner="@Ghost"),
        CreateTask(title="b", owner="@Writer"),
        UpdateTask(task_id=9, owner="@Writer"),
    ):
        with pytest.raises(RetriableError, match="is not on the team: name one of @Lead,"):
            plan.update_planning([item], "@Lead", left)
    assert plan.get_task(1).task.owner == "@Writer"


def test_nothing_changed_emits_nothing_and_keeps_seq(team: Team) -> None:
    _, plan = bind(team)
    plan.update_planning([CreateTask(title="a")], "@A")
    assert plan.update_planning([UpdateTask(task_id=1, title="a")], "@A") == "Done: #1 unchanged."
    with pytest.raises(RetriableError):
        plan.update_planning([DeleteTask(task_id=3)], "@A")  # all failed: empty delta
    plan.update_planning([UpdateTask(task_id=1, title="b")], "@A")
    events = wait_events(team, 2)
    assert [e.seq for e in events] == [1, 2]
    assert plan_events(team) == events


def test_replaying_the_event_log_rebuilds_the_state_exactly(team: Team) -> None:
    address, plan = bind(team)
    script: list[list[CreateTask | UpdateTask | DeleteTask]] = [
        [CreateTask(title="a", owner="@A"), CreateTask(title="b", dependencies=[1])],
        [UpdateTask(task_id=2, status=TaskStatus.IN_PROGRESS, owner="@B")],
        [CreateTask(title="tmp"), DeleteTask(task_id=3)],  # created and deleted at once
        [UpdateTask(task_id=1, output="done it"), UpdateTask(task_id=1, status=TaskStatus.DONE)],
        [UpdateTask(task_id=2, dependencies=[]), DeleteTask(task_id=1), DeleteTask(task_id=42)],
        [CreateTask(title="c", dependencies=[2]), UpdateTask(task_id=4, title="c2")],
    ]
    for items in script:
        with contextlib.suppress(RetriableError):
            plan.update_planning(items, "@Lead")
    events = wait_events(team, len(script))
    assert [e.seq for e in events] == list(range(1, len(script) + 1))
    stored = [deserialize(serialize(e)) for e in events]  # what a late client reads back
    rebuilt = Plan()
    for delta in deltas(stored):
        rebuilt = reduce_planning(rebuilt, delta)
    actual = team.system.get_actor(address).state
    assert rebuilt == actual
    assert rebuilt.next_id == 5 and rebuilt.event_seq == len(script)
    # ...and what is persisted is the deltas over one snapshot, taken at the first change
    snapshot = team.proxy.get_states()[address.agent_id]
    assert isinstance(snapshot, Plan) and snapshot.event_seq == 1
    assert fold_deltas(snapshot, stored) == actual


def test_a_seeded_actor_resumes_with_its_state_and_seq(team: Team) -> None:
    seed = Plan(
        tasks={1: Task(id=1, title="kept", owner="@A"), 3: Task(id=3, title="also kept")},
        next_id=4,
        event_seq=7,
    )
    restored = deserialize(serialize(seed))  # as restore reads it from the event store
    address = team.system.createActor(
        PlanActor,
        config=PlanConfig(),
        team_id=team.orchestrator.team_id,
        restoring=True,
        state=restored,
    )
    plan = team.system.proxy_ask(address, PlanActor, timeout=30)
    assert [t.title for t in plan.list_tasks()] == ["kept", "also kept"]
    assert plan.update_planning([CreateTask(title="new")], "@A") == ("Done: created #4 'new' (@A).")
    (event,) = wait_events(team, 1)
    assert event.seq == 8  # the stream continues, no gap, no restart at 1


def test_search_ranks_by_keywords_without_embeddings(team: Team) -> None:
    _, plan = bind(team)
    plan.update_planning(
        [
            CreateTask(title="Write the introduction", description="chapter one"),
            CreateTask(title="Fix the build", description="CI is red"),
            CreateTask(title="Review chapter two", description="the introduction links to it"),
        ],
        "@A",
    )
    hits = plan.search("introduction", 10)
    assert [h.task.id for h in hits] == [1, 3]
    assert hits[0].score == 1.0 and 0 < hits[1].score < 1.0
    assert plan.search("kubernetes", 10) == []
    assert [h.task.id for h in plan.search("chapter introduction", 1)] == [1]
