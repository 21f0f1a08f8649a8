"""A tool actor's state persisted in O(change): its deltas, and a snapshot now and then.

A stateful tool actor (a ``#`` team singleton) tells the team what each mutation
changed with a ``ToolStateEvent`` — the delta. That event *is* the record of the
change: the event store keeps it and a restore folds it. The whole state is published
(``notify_state_change``: a ``StateChangedMessage``) only as a snapshot for restore:

- at the first change of the actor's life, so every later delta has a base;
- once the rows changed since the last snapshot reach the rows that snapshot held
  (:class:`SnapshotPolicy`): a snapshot of N rows is paid for by N changed rows (and
  the next one holds at most those N plus the rows added since), so what one update
  writes stays proportional to the update — its delta, and at most about twice that
  again for snapshots, amortised — however large the state grows, and a restore folds
  at most about a snapshot's worth of deltas;
- when the actor stops, if anything changed since the last one.

A snapshot carries ``event_seq``, the ``seq`` of the last delta it includes. A restore
takes the last snapshot it can read and folds the deltas after it with the state's
own :meth:`DeltaState.apply_delta` (:func:`fold_deltas`). A snapshot it cannot read (a
corrupt row) is skipped like any corrupt row, so the restore falls back to the
snapshot before it, or to the empty state and every delta: the log is append-only,
so every delta since any snapshot is still there — nothing the log holds is lost.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Set, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from pydantic import Field, PrivateAttr

from akgentic.core import BaseState
from akgentic.core.serialization import SerializableModel, SerializationError, serialize
from akgentic.tool.core.event import ToolStateEmitter, ToolStateEvent

if TYPE_CHECKING:
    from akgentic.core import Akgent

__all__ = [
    "DeltaGapError",
    "DeltaState",
    "SnapshotPolicy",
    "StateJournal",
    "check_persistable",
    "fold_deltas",
    "reduce_delta",
    "rows_of",
]

S = TypeVar("S", bound="DeltaState")


class DeltaState(BaseState):
    """The state of a tool actor persisted as its deltas (see the module docstring).

    ``event_seq`` is the ``seq`` of the last ``ToolStateEvent`` the state includes.
    A subclass defines :meth:`apply_delta`: the one rule by which a delta changes the
    state, shared by restore and by the consumers' reducers, so replay is exact.
    """

    event_seq: int = Field(default=0, ge=0)
    _settlement: Any = PrivateAttr(default=None)

    def apply_delta(self, delta: Any) -> None:
        """Apply one delta in place. Raise ``ValueError`` when it does not fit the state
        (the log and the state have diverged)."""
        raise NotImplementedError(f"{type(self).__name__} must define apply_delta")

    def sent_in_log(self, sent: Set[UUID]) -> Any | None:
        """The delta that settles what this state still holds to send, where the team's
        log shows it as sent (``sent``: the ids of every message the log has); None when
        there is nothing to settle — the default, for a state that sends nothing.

        Why: an actor that sends a message and then records the delta saying so (send
        first, so a crash cannot lose what was to be sent) can crash between the two.
        The log then keeps the send without the delta, and a restore would send again
        what the resume already delivers. A state that holds messages to send names each
        by the id it will be sent under, so this can tell."""
        return None

    def settle_with_log(self, sent: Set[UUID]) -> None:
        """Keep :meth:`sent_in_log`'s delta for the restored actor's :class:`StateJournal`,
        which applies and records it as the actor starts (a restore calls this on the
        state it gives the actor): the settlement is then a delta like any other, on the
        log and on the clients' streams."""
        self._settlement = self.sent_in_log(sent)

    def take_settlement(self) -> Any | None:
        """The delta :meth:`settle_with_log` kept, once (None: none)."""
        settlement, self._settlement = self._settlement, None
        return settlement

    def rows(self) -> int:
        """How many rows the state holds: what a snapshot costs, counted in rows."""
        return rows_of(self)


def rows_of(model: SerializableModel) -> int:
    """The rows a model carries: the sizes of its collection fields added up (at least 1).

    A delta's rows are what it changed; a state's rows are what a snapshot writes.
    """
    total = 0
    for value in model.__dict__.values():
        if isinstance(value, Sized) and not isinstance(value, str | bytes):
            total += len(value)
    return max(total, 1)


def check_persistable(state: BaseState, owner: str) -> None:
    """Raise ``TypeError`` naming the first field of ``state`` that cannot be serialized.

    A tool actor's state is persisted (snapshots, restore), so every field must
    round-trip; runtime handles belong on the actor (or in a ``PrivateAttr``).
    """
    try:
        serialize(state)
    except SerializationError as exc:
        field = next((n for n in type(state).model_fields if not _serializes(state, n)), None)
        where = f"{type(state).__name__}.{field}" if field else type(state).__name__
        raise TypeError(
            f"{owner}: {where} cannot be persisted ({exc}); keep runtime handles (locks, "
            f"clients, open files) on the actor or in a PrivateAttr, not in its state"
        ) from None


def _serializes(state: BaseState, field: str) -> bool:
    try:
        serialize(getattr(state, field))
    except SerializationError:
        return False
    return True


class DeltaGapError(ValueError):
    """A delta is missing between a snapshot and the deltas after it."""


def reduce_delta(state: S, delta: Any) -> S:
    """``state`` after one more delta: a pure function (``state`` is not modified), the
    reducer a consumer folds a log with. ``event_seq`` advances by one; a delta that
    does not fit raises ``ValueError``."""
    result = copy.deepcopy(state)
    result.apply_delta(delta)
    result.event_seq = state.event_seq + 1
    return result


def fold_deltas(state: S, events: Iterable[ToolStateEvent]) -> S:
    """A copy of ``state`` with the events after its ``event_seq`` applied, in order.

    Events the state already includes (``seq <= event_seq``) are skipped, so folding a
    log over a snapshot taken in its middle is exact. ``state`` is not modified (one
    copy, then every delta in place: O(state + deltas)). A jump in ``seq`` raises
    :class:`DeltaGapError` naming it; a delta that does not fit raises ``ValueError``.
    """
    result = copy.deepcopy(state)
    for event in events:
        if event.seq <= result.event_seq:
            continue
        if event.seq != result.event_seq + 1:
            raise DeltaGapError(
                f"{event.tool_id}: delta {result.event_seq + 1} is missing (the next one "
                f"is {event.seq}); the state after delta {result.event_seq} cannot be rebuilt"
            )
        result.apply_delta(event.payload)
        result.event_seq = event.seq
    return result


@dataclass(frozen=True)
class SnapshotPolicy:
    """When a snapshot is due: once the rows changed since the last one reach the rows
    that snapshot held, and never more often than every ``min_rows`` changed rows."""

    min_rows: int = 256

    def due(self, changed_rows: int, snapshot_rows: int) -> bool:
        return changed_rows >= max(self.min_rows, snapshot_rows)


class StateJournal:
    """One tool actor's persistence: each delta emitted, the state snapshotted when due.

    Keep one per actor (built in ``on_start``: it continues the ``seq`` from the state)
    and call :meth:`record` after every mutation, before the caller hears back (the
    emit-before-return contract); call :meth:`close` from ``on_stop``. The actor's
    state must be a :class:`DeltaState` that serializes (:func:`check_persistable`),
    so a state holding a lock or a client fails when the actor starts, naming the
    field, rather than at its first mutation.
    """

    def __init__(
        self,
        actor: Akgent[Any, Any],
        *,
        tool_id: str | None = None,
        policy: SnapshotPolicy | None = None,
    ) -> None:
        state = actor.state
        if not isinstance(state, DeltaState):
            raise TypeError(
                f"{type(actor).__name__}'s state is a {type(state).__name__}: a StateJournal "
                f"persists a DeltaState (one that can apply its own deltas)"
            )
        check_persistable(state, tool_id or actor.myAddress.name)
        self._actor = actor
        self._emitter = ToolStateEmitter(tool_id or actor.myAddress.name, seq=state.event_seq)
        self._policy = policy or SnapshotPolicy()
        self._changed_rows = 0
        self._snapshot_rows = 0
        self._based = False  # a snapshot has been published in this actor's life
        settlement = state.take_settlement()  # a restore's: see DeltaState.sent_in_log
        if settlement is not None:
            state.apply_delta(settlement)
            self.record(settlement)

    @property
    def seq(self) -> int:
        """The ``seq`` of the last delta emitted."""
        return self._emitter.seq

    def record(
        self, delta: SerializableModel, *, empty: bool | None = None
    ) -> ToolStateEvent | None:
        """Emit ``delta`` (nothing when it is empty: no event, no ``seq``), advance the
        state's ``event_seq``, and publish a snapshot when one is due. The state must
        already hold the change."""
        event = self._emitter.emit(self._actor, delta, empty=empty)
        if event is None:
            return None
        self._actor.state.event_seq = event.seq
        self._changed_rows += rows_of(delta)
        if not self._based or self._policy.due(self._changed_rows, self._snapshot_rows):
            self.snapshot()
        return event

    def snapshot(self) -> None:
        """Publish the whole state now (a ``StateChangedMessage``: a base for restore)."""
        self._actor.notify_state_change()
        self._changed_rows = 0
        self._snapshot_rows = self._actor.state.rows()
        self._based = True

    def close(self) -> None:
        """Publish a last snapshot if anything changed since the previous one."""
        if self._changed_rows:
            self.snapshot()
