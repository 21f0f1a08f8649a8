"""The plan's delta, and the reducer that rebuilds the plan from a log of them.

Every mutation of ``#PlanningTool`` emits one ``ToolStateEvent(tool_id="#PlanningTool",
seq, payload=PlanningStateEvent)`` carrying what it changed — never a snapshot. A client
that joins late replays the team's event history through :func:`reduce_planning`,
in ``seq`` order, and holds exactly the actor's state.
"""

from __future__ import annotations

from pydantic import Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.journal import reduce_delta
from akgentic.tool.planning.models import Plan, Task

__all__ = ["PlanningStateEvent", "reduce_planning"]


class PlanningStateEvent(SerializableModel):
    """What one ``update_planning`` call changed, as final values.

    Applied in this order: ``tasks_created`` (rows as they stand at the end of the
    call), ``tasks_updated`` (new full rows of tasks that existed before), then
    ``tasks_deleted`` (ids). A task created and deleted in the same call appears in
    both lists, which keeps id allocation replayable.
    """

    tasks_created: list[Task] = Field(default_factory=list)
    tasks_updated: list[Task] = Field(default_factory=list)
    tasks_deleted: list[int] = Field(default_factory=list)

    def is_empty(self) -> bool:
        """True when the call changed nothing: such a delta is never emitted."""
        return not (self.tasks_created or self.tasks_updated or self.tasks_deleted)


def reduce_planning(state: Plan, delta: PlanningStateEvent) -> Plan:
    """The plan after ``delta``: a pure function, ``state`` is not modified.

    Each delta is one emitted event, so ``event_seq`` advances by one. A delta that
    does not fit ``state`` (creating an existing id, updating or deleting an unknown
    one) raises ValueError: the log and the state have diverged. The rule itself is
    :meth:`Plan.apply_delta`, which restore folds with.
    """
    return reduce_delta(state, delta)
