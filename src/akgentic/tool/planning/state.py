"""The plan as LLM_CONTEXT state: one row per task in view, rendered in full or as a delta.

A :class:`PlanningState` is a snapshot — frozen rows, never changed once handed out —
so the ``ContextUpdater`` may keep it as the baseline it diffs the next turn against.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core import ContextState
from akgentic.tool.planning.models import Task, TaskStatus

__all__ = ["PlanningState", "TaskRow"]


class TaskRow(SerializableModel):
    """What the model sees of one task per turn: no description, no output."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    id: int
    title: str
    status: TaskStatus
    owner: str = ""
    dependencies: tuple[int, ...] = ()

    @classmethod
    def of(cls, task: Task) -> TaskRow:
        return cls(
            id=task.id,
            title=task.title,
            status=task.status,
            owner=task.owner,
            dependencies=task.dependencies,
        )

    def render(self) -> str:
        line = f"#{self.id} [{self.status.value}] {self.title} — {self.owner or 'unassigned'}"
        if self.dependencies:
            line += " — after " + ", ".join(f"#{d}" for d in self.dependencies)
        return line


class PlanningState(ContextState):
    """The tasks in an agent's view of the team plan.

    ``scope`` is the agent whose own tasks these are, or ``""`` for the whole plan.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    scope: str = ""
    rows: tuple[TaskRow, ...] = ()

    def _title(self) -> str:
        return f"your tasks ({self.scope})" if self.scope else "all tasks"

    def render_full(self) -> str:
        """Every row of the view; ``""`` when the view holds no task."""
        if not self.rows:
            return ""
        lines = [f"Team plan — {self._title()}:"]
        lines += [f"- {row.render()}" for row in self.rows]
        return "\n".join(lines)

    def render_delta(self, previous: PlanningState) -> str | None:
        """Rows added or changed, and ids that left the view; None when nothing did."""
        if previous.scope != self.scope:
            return self.render_full() or f"Team plan — {self._title()}: no tasks."
        before = {row.id: row for row in previous.rows}
        now = {row.id: row for row in self.rows}
        lines = [f"- {row.render()}" for row in self.rows if before.get(row.id) != row]
        lines += [f"- #{task_id} left this view" for task_id in before if task_id not in now]
        if not lines:
            return None
        return "\n".join([f"Team plan — changes to {self._title()}:", *lines])
