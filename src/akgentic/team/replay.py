"""Replay for consumers: rebuild tool states from a team's event log.

Tool actors broadcast what changed (``ToolStateEvent(tool_id, seq, payload)``), never
snapshots, so a client that joins late replays the log and folds each tool's deltas
with that tool's reducer. This helper walks the log in order, checks that each tool's
``seq`` runs 1, 2, 3 ... and reports any gap (a missed event makes the rebuilt state
wrong, and a consumer must know), and hands each delta to the reducer registered for
its tool. Tool packages register their reducers with :func:`register_reducer`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from akgentic.core import EventMessage, Message
from akgentic.storage import EventRecord
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.core.journal import reduce_delta

__all__ = ["Gap", "Reducer", "ReplayResult", "register_reducer", "replay_tool_states"]

Reducer = Callable[[Any, ToolStateEvent], Any]
"""``reducer(state_or_None, event) -> new state``: pure, applied in ``seq`` order."""

_reducers: dict[str, Reducer] = {}


def _shipped_reducers() -> dict[str, Reducer]:
    """The reducers of the tool actors this package ships."""
    from akgentic.tool.knowledge_graph import KG_ACTOR_NAME, GraphState, reduce_graph
    from akgentic.tool.notification import NotificationState, apply_notification_event
    from akgentic.tool.notification.models import NOTIFICATION_TOOL_NAME
    from akgentic.tool.planning import PLANNING_ACTOR_NAME, Plan, reduce_planning
    from akgentic.tool.vector_store.actor import STORE_ACTOR_NAME
    from akgentic.tool.vector_store.backends.inmemory import VectorStoreState

    return {
        PLANNING_ACTOR_NAME: lambda state, event: reduce_planning(state or Plan(), event.payload),
        KG_ACTOR_NAME: lambda state, event: reduce_graph(state or GraphState(), event.payload),
        NOTIFICATION_TOOL_NAME: lambda state, event: apply_notification_event(
            state or NotificationState(), event
        ),
        STORE_ACTOR_NAME: lambda state, event: reduce_delta(
            state or VectorStoreState(), event.payload
        ),
    }


def register_reducer(tool_id: str, reducer: Reducer) -> None:
    """Fold ``tool_id``'s deltas (e.g. ``"#PlanningTool"``) with ``reducer``."""
    _reducers[tool_id] = reducer


@dataclass(frozen=True)
class Gap:
    """``tool_id`` jumped from ``expected`` to ``got`` at event-log position ``at_seq``."""

    tool_id: str
    expected: int
    got: int
    at_seq: int


@dataclass
class ReplayResult:
    states: dict[str, Any] = field(default_factory=dict)
    """Rebuilt state per tool id (tools with a reducer)."""
    last_seq: dict[str, int] = field(default_factory=dict)
    """The last delta number seen per tool id."""
    gaps: list[Gap] = field(default_factory=list)
    unknown_tools: set[str] = field(default_factory=set)
    """Tools whose deltas had no reducer (their deltas were skipped)."""


def _events(log: Iterable[EventRecord | Message]) -> Iterable[tuple[int, ToolStateEvent]]:
    for position, item in enumerate(log, start=1):
        msg = item.message if isinstance(item, EventRecord) else item
        at = item.seq if isinstance(item, EventRecord) else position
        if isinstance(msg, EventMessage) and isinstance(msg.event, ToolStateEvent):
            yield at, msg.event
        elif isinstance(msg, ToolStateEvent):
            yield at, msg


def replay_tool_states(
    log: Iterable[EventRecord | Message], reducers: dict[str, Reducer] | None = None
) -> ReplayResult:
    """Fold every tool's deltas in log order; report gaps in their ``seq``."""
    table = {**_shipped_reducers(), **_reducers, **(reducers or {})}
    result = ReplayResult()
    for at, event in _events(log):
        tool = event.tool_id
        expected = result.last_seq.get(tool, 0) + 1
        if event.seq != expected:
            result.gaps.append(Gap(tool, expected, event.seq, at))
        result.last_seq[tool] = event.seq
        reducer = table.get(tool)
        if reducer is None:
            result.unknown_tools.add(tool)
            continue
        result.states[tool] = reducer(result.states.get(tool), event)
    return result
