"""Replay for consumers: rebuild tool states from a team's event log.

Tool actors broadcast what changed (``ToolStateEvent(tool_id, seq, payload)``), so a
client that joins late replays the log and folds each tool's deltas. This helper walks
the log in order, checks that each tool's ``seq`` runs 1, 2, 3 ... and reports any gap
(a missed event makes the rebuilt state wrong, and a consumer must know), and rebuilds
each tool's state:

- with the reducer registered for the tool (:func:`register_reducer`; the shipped tool
  actors' are built in), which folds every delta — a registered reducer comes first;
- else, for a tool actor whose state is a :class:`DeltaState` (a custom card's ``#``
  actor with a ``StateJournal``): from the latest snapshot of that state in the log (the
  ``StateChangedMessage`` its journal publishes at the first change and now and then),
  with the deltas after its ``event_seq`` folded on by the state's own ``apply_delta``
  (:func:`fold_deltas`, as a restore does), so no registration is needed. The snapshot
  is one the store decoded, and the store decodes only to registered serializable
  classes, never importing a module the data names: a snapshot of a class this process
  does not know is an unreadable row, like a corrupt one, and replay falls back to the
  snapshot before it.

A tool with neither — no reducer and no readable snapshot — is reported in
``unknown_tools``, its deltas skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from akgentic.core import EventMessage, Message, StateChangedMessage
from akgentic.storage import EventRecord
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.core.journal import DeltaState, fold_deltas, reduce_delta

__all__ = [
    "Gap",
    "Reducer",
    "ReplayResult",
    "initial_state",
    "register_reducer",
    "replay_tool_states",
]

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


def initial_state(tool_id: str) -> Any | None:
    """The state a shipped tool actor starts from, before its first delta (an empty plan,
    an empty graph...; its ``event_seq``, where it has one, is 0): the state its reducer
    folds the first delta onto. None for a tool this package does not ship (its first
    snapshot in the log is the first state a consumer can know)."""
    from akgentic.tool.knowledge_graph import KG_ACTOR_NAME, GraphState
    from akgentic.tool.notification import NotificationState
    from akgentic.tool.notification.models import NOTIFICATION_TOOL_NAME
    from akgentic.tool.planning import PLANNING_ACTOR_NAME, Plan
    from akgentic.tool.vector_store.actor import STORE_ACTOR_NAME
    from akgentic.tool.vector_store.backends.inmemory import VectorStoreState

    starts: dict[str, type[Any]] = {
        PLANNING_ACTOR_NAME: Plan,
        KG_ACTOR_NAME: GraphState,
        NOTIFICATION_TOOL_NAME: NotificationState,
        STORE_ACTOR_NAME: VectorStoreState,
    }
    start = starts.get(tool_id)
    return start() if start is not None else None


def register_reducer(tool_id: str, reducer: Reducer) -> None:
    """Fold ``tool_id``'s deltas (e.g. ``"#PlanningTool"``) with ``reducer``.

    A tool actor whose state is a ``DeltaState`` needs none (see the module docstring);
    a registered reducer overrides that."""
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
    """Rebuilt state per tool id: by its reducer, or from its state's last snapshot. A
    ``DeltaState`` rebuilt from a snapshot stops before a missing delta (its
    ``event_seq`` is the last delta it includes; the gap is in ``gaps``)."""
    last_seq: dict[str, int] = field(default_factory=dict)
    """The last delta number seen per tool id."""
    gaps: list[Gap] = field(default_factory=list)
    unknown_tools: set[str] = field(default_factory=set)
    """Tools whose deltas had no reducer and no readable snapshot (they were skipped)."""


@dataclass
class _Unreduced:
    """A tool with no reducer: the actor that emits its deltas, and those deltas after
    that actor's latest snapshot (all of them before its first)."""

    owner: UUID | None = None
    deltas: list[ToolStateEvent] = field(default_factory=list)


def _messages(log: Iterable[EventRecord | Message]) -> Iterator[tuple[int, Message]]:
    """Each decoded message with its log position (an unreadable row is skipped)."""
    for position, item in enumerate(log, start=1):
        if isinstance(item, EventRecord):
            if item.message is not None:
                yield item.seq, item.message
        else:
            yield position, item


def replay_tool_states(
    log: Iterable[EventRecord | Message], reducers: dict[str, Reducer] | None = None
) -> ReplayResult:
    """Rebuild every tool's state in log order; report gaps in their ``seq``.

    A delta that does not fit the state raises ``ValueError`` (the reducer's, or
    ``apply_delta``'s): the log and the state have diverged."""
    table = {**_shipped_reducers(), **_reducers, **(reducers or {})}
    result = ReplayResult()
    snapshots: dict[UUID, DeltaState] = {}  # each actor's latest snapshot
    unreduced: dict[str, _Unreduced] = {}
    for at, msg in _messages(log):
        if isinstance(msg, StateChangedMessage):
            if msg.sender is not None and isinstance(msg.state, DeltaState):
                snapshots[msg.sender.agent_id] = msg.state
                _rebase(unreduced, msg.sender.agent_id, msg.state.event_seq)
            continue
        event = msg.event if isinstance(msg, EventMessage) else msg
        if not isinstance(event, ToolStateEvent):
            continue
        tool = event.tool_id
        expected = result.last_seq.get(tool, 0) + 1
        if event.seq != expected:
            result.gaps.append(Gap(tool, expected, event.seq, at))
        result.last_seq[tool] = event.seq
        reducer = table.get(tool)
        if reducer is not None:
            result.states[tool] = reducer(result.states.get(tool), event)
            continue
        entry = unreduced.setdefault(tool, _Unreduced())
        if msg.sender is not None:
            entry.owner = msg.sender.agent_id
        entry.deltas.append(event)
    for tool, entry in unreduced.items():
        base = snapshots.get(entry.owner) if entry.owner is not None else None
        if base is None:
            result.unknown_tools.add(tool)
        else:
            result.states[tool] = fold_deltas(base, _continuing(base.event_seq, entry.deltas))
    return result


def _rebase(unreduced: dict[str, _Unreduced], owner: UUID, event_seq: int) -> None:
    """``owner`` published a snapshot including its deltas up to ``event_seq``: keep only
    the later ones (what a fold over that snapshot needs)."""
    for entry in unreduced.values():
        if entry.owner == owner:
            entry.deltas = [e for e in entry.deltas if e.seq > event_seq]


def _continuing(event_seq: int, deltas: list[ToolStateEvent]) -> list[ToolStateEvent]:
    """The deltas after ``event_seq`` up to the first missing one (reported as a gap): a
    state folded past a missing delta would not be the state the actor held."""
    run: list[ToolStateEvent] = []
    for event in deltas:
        if event.seq <= event_seq:
            continue
        if event.seq != event_seq + len(run) + 1:
            break
        run.append(event)
    return run
