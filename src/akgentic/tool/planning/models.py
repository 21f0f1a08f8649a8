"""The plan's data: tasks, the edits agents send, and the actor's persisted state.

A :class:`Task` is a value: frozen, replaced whole on every change, so a row handed to
another thread (a snapshot, an event payload) can never change under its reader.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

from pydantic import ConfigDict, Field, GetCoreSchemaHandler, field_validator
from pydantic_core import core_schema

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.journal import DeltaState
from akgentic.tool.core.one_line import LINE_MAX, TEXT_MAX, one_line_problem

if TYPE_CHECKING:
    from akgentic.tool.planning.event import PlanningStateEvent

__all__ = [
    "CreateTask",
    "DeleteTask",
    "Plan",
    "PlanningItem",
    "Task",
    "TaskHit",
    "TaskStatus",
    "TaskTable",
    "TaskView",
    "UpdateTask",
    "same_agent",
]


def same_agent(a: str, b: str) -> bool:
    """Whether two agent names designate the same agent (``@Writer`` == ``writer``)."""
    return a.strip().lstrip("@").casefold() == b.strip().lstrip("@").casefold()


class TaskStatus(StrEnum):
    """Where a task stands. The values are what persisted payloads carry."""

    TODO = "todo"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    BLOCKED = "blocked"


class Task(SerializableModel):
    """One task of the team plan.

    ``id`` is assigned by the plan (1, 2, 3 … never reused). ``owner`` is the agent
    name responsible for it (``""``: unassigned). ``dependencies`` are ids of tasks that
    must be done first; the plan keeps them known and acyclic. ``output`` is the result
    text the owner records. ``created_by`` is the agent that created it.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(ge=1)
    title: str
    description: str = ""
    owner: str = ""
    status: TaskStatus = TaskStatus.TODO
    dependencies: tuple[int, ...] = ()
    output: str = ""
    created_by: str = ""

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """A frozen value is its own copy: a state snapshot copies the rows, not their fields."""
        return self


class TaskTable(dict[int, Task]):
    """The plan's tasks by id: a plain dict to validation and serialization.

    Its rows are frozen values, so its deep copy is a shallow copy — the snapshot every
    mutation publishes (``notify_state_change``) costs one dict copy, not a copy of
    every field of every task.
    """

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> TaskTable:
        return TaskTable(self)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(cls, handler(dict[int, Task]))


TITLE_MAX = LINE_MAX
"""The longest title a task takes: the plan is read back into every member's context."""


def _one_line_title(title: str) -> str:
    """A title is one line of every member's plan: refused when it is not one line."""
    problem = one_line_problem(title)
    if problem:
        raise ValueError(f"the title {problem}")
    return title


def _one_line_owner(owner: str | None) -> str | None:
    """An owner is on its task's line too; None (the caller) and "" (unassigned) pass."""
    problem = one_line_problem(owner) if owner else None
    if problem:
        raise ValueError(f"the owner {problem}")
    return owner


class CreateTask(SerializableModel):
    """Create a task. ``owner`` omitted means the calling agent; ``""`` means unassigned."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    op: Literal["create"] = "create"
    title: str = Field(min_length=1, max_length=TITLE_MAX, description="Short imperative title.")
    description: str = Field(default="", max_length=TEXT_MAX, description="What done looks like.")
    owner: str | None = Field(default=None, description="Agent name; omitted = you.")
    status: TaskStatus = TaskStatus.TODO
    dependencies: list[int] = Field(
        default_factory=list, description="Ids of existing tasks to finish first."
    )

    @field_validator("title")
    @classmethod
    def _one_line(cls, title: str) -> str:
        return _one_line_title(title)

    @field_validator("owner")
    @classmethod
    def _one_line_owner(cls, owner: str | None) -> str | None:
        return _one_line_owner(owner)


class UpdateTask(SerializableModel):
    """Change a task. Every field left out (None) is kept as it is."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    op: Literal["update"] = "update"
    task_id: int
    title: str | None = Field(default=None, min_length=1, max_length=TITLE_MAX)
    description: str | None = Field(default=None, max_length=TEXT_MAX)
    owner: str | None = None
    status: TaskStatus | None = None
    dependencies: list[int] | None = Field(
        default=None, description="Replaces the whole list when given."
    )
    output: str | None = Field(
        default=None, max_length=TEXT_MAX, description="The result of the task."
    )

    @field_validator("title")
    @classmethod
    def _one_line(cls, title: str | None) -> str | None:
        return title if title is None else _one_line_title(title)

    @field_validator("owner")
    @classmethod
    def _one_line_owner(cls, owner: str | None) -> str | None:
        return _one_line_owner(owner)


class DeleteTask(SerializableModel):
    """Remove a task. Refused while another task depends on it."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    op: Literal["delete"] = "delete"
    task_id: int


PlanningItem = Annotated[CreateTask | UpdateTask | DeleteTask, Field(discriminator="op")]
"""One edit of an ``update_planning`` call, told apart by its ``op``."""


class TaskView(SerializableModel):
    """A task with its neighbourhood: the tasks it waits on and the tasks waiting on it."""

    task: Task
    dependencies: list[Task] = Field(default_factory=list)
    dependents: list[Task] = Field(default_factory=list)


class TaskHit(SerializableModel):
    """A search result: the task and its score (higher is better)."""

    task: Task
    score: float


class Plan(DeltaState):
    """The ``#PlanningTool`` actor's state, persisted as its deltas (``StateJournal``).

    ``next_id`` is the id the next created task gets; ``event_seq`` is the seq of the
    last ``ToolStateEvent`` emitted, so a restored actor continues the stream without a
    gap. Rebuilt exactly from the event log by :meth:`apply_delta` (``reduce_planning``).
    """

    tasks: TaskTable = Field(default_factory=TaskTable)
    next_id: int = Field(default=1, ge=1)
    event_seq: int = Field(default=0, ge=0)

    def apply_delta(self, delta: PlanningStateEvent) -> None:
        """Apply one ``PlanningStateEvent`` in place: created, then updated, then deleted.

        A delta that does not fit (creating an existing id, updating or deleting an
        unknown one) raises ValueError: the log and the state have diverged.
        """
        tasks = self.tasks
        for task in delta.tasks_created:
            if task.id in tasks:
                raise ValueError(f"delta creates task {task.id}, which already exists")
            tasks[task.id] = task
            self.next_id = max(self.next_id, task.id + 1)
        for task in delta.tasks_updated:
            if task.id not in tasks:
                raise ValueError(f"delta updates task {task.id}, which does not exist")
            tasks[task.id] = task
        for task_id in delta.tasks_deleted:
            if tasks.pop(task_id, None) is None:
                raise ValueError(f"delta deletes task {task_id}, which does not exist")
