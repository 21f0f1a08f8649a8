"""akgentic.tool.planning — the team's shared task board.

``PlanningTool`` is the card; ``#PlanningTool`` (:class:`PlanActor`) is the one actor per
team that holds the plan. Every mutation emits a :class:`PlanningStateEvent` delta, and
:func:`reduce_planning` rebuilds the plan from the event log. See README.md.
"""

from akgentic.tool.core.one_line import TEXT_MAX
from akgentic.tool.planning.event import PlanningStateEvent, reduce_planning
from akgentic.tool.planning.models import (
    TITLE_MAX,
    CreateTask,
    DeleteTask,
    Plan,
    PlanningItem,
    Task,
    TaskHit,
    TaskStatus,
    TaskView,
    UpdateTask,
)
from akgentic.tool.planning.planning import (
    GetPlanning,
    GetPlanningTask,
    PlanningTool,
    SearchPlanning,
    UpdatePlanning,
)
from akgentic.tool.planning.planning_actor import PLANNING_ACTOR_NAME, PlanActor, PlanConfig
from akgentic.tool.planning.state import PlanningState, TaskRow

__all__ = [
    "PLANNING_ACTOR_NAME",
    "TEXT_MAX",
    "TITLE_MAX",
    "CreateTask",
    "DeleteTask",
    "GetPlanning",
    "GetPlanningTask",
    "Plan",
    "PlanActor",
    "PlanConfig",
    "PlanningItem",
    "PlanningState",
    "PlanningStateEvent",
    "PlanningTool",
    "SearchPlanning",
    "Task",
    "TaskHit",
    "TaskRow",
    "TaskStatus",
    "TaskView",
    "UpdatePlanning",
    "UpdateTask",
    "reduce_planning",
]
