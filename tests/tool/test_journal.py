"""StateJournal: a tool actor's state persisted as its deltas and a snapshot now and then."""

from __future__ import annotations

from typing import Any

import pytest

from akgentic.core import Akgent, BaseConfig, EventMessage, StateChangedMessage
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core import (
    DeltaGapError,
    DeltaState,
    SnapshotPolicy,
    StateJournal,
    ToolStateEvent,
    fold_deltas,
)

from .conftest import Team


class Added(SerializableModel):
    items: list[str]


class Bag(DeltaState):
    items: list[str] = []

    def apply_delta(self, delta: Added) -> None:
        self.items.extend(delta.items)


class BagActor(Akgent[BaseConfig, Bag]):
    def on_start(self) -> None:
        self.journal = StateJournal(self, policy=SnapshotPolicy(min_rows=4))

    def add(self, *items: str) -> None:
        self.state.items.extend(items)
        self.journal.record(Added(items=list(items)))

    def on_stop(self) -> None:
        self.journal.close()


def records(team: Team) -> tuple[list[Bag], list[ToolStateEvent]]:
    snapshots: list[Bag] = []
    deltas: list[ToolStateEvent] = []
    for m in list(team.recorder.log):
        if m.sender is None or m.sender.name != "#Bag":
            continue
        if isinstance(m, StateChangedMessage) and isinstance(m.state, Bag):
            snapshots.append(m.state)
        elif isinstance(m, EventMessage) and isinstance(m.event, ToolStateEvent):
            deltas.append(m.event)
    return snapshots, deltas


def test_snapshots_come_at_the_first_change_then_once_the_changes_outweigh_the_last(
    team: Team,
) -> None:
    address = team.proxy.getChildrenOrCreate(BagActor, BaseConfig(name="#Bag"))
    bag: Any = team.system.proxy_ask(address, BagActor, timeout=30)
    for n in range(40):  # a state that only grows: 40 rows, one per change
        bag.add(f"i{n}")
    # Each snapshot is published after its delta: once delta 40 is delivered, snapshot 40
    # may still be queued. The adds have all answered, so a drain delivers everything.
    team.drain()
    snapshots, deltas = records(team)
    assert len(deltas) == 40
    # at change 1; then when the changes since reach max(4, rows of the last snapshot)
    assert [s.event_seq for s in snapshots] == [1, 5, 10, 20, 40]
    assert sum(len(s.items) for s in snapshots) <= 2 * 40 + 4  # amortised: O(change)
    assert fold_deltas(snapshots[2], deltas) == team.system.get_actor(address).state
    team.system.proxy_tell(address, BagActor).add("last")
    address.request_stop()  # type: ignore[attr-defined]
    assert address.wait_stopped(10)  # type: ignore[attr-defined]
    team.recorder.wait_for(lambda: records(team)[0][-1].event_seq == 41)  # the stop's


def test_fold_skips_what_the_snapshot_holds_and_refuses_a_gap() -> None:
    def event(seq: int, item: str) -> ToolStateEvent:
        return ToolStateEvent(tool_id="#Bag", seq=seq, payload=Added(items=[item]))

    snapshot = Bag(items=["a", "b"], event_seq=2)
    folded = fold_deltas(snapshot, [event(1, "a"), event(2, "b"), event(3, "c")])
    assert folded == Bag(items=["a", "b", "c"], event_seq=3)
    assert snapshot.items == ["a", "b"]  # not modified
    with pytest.raises(DeltaGapError, match="delta 3 is missing"):
        fold_deltas(snapshot, [event(4, "d")])


def test_a_journal_needs_a_delta_state(team: Team) -> None:
    class Plain(Akgent[BaseConfig, Any]):
        def make(self) -> None:
            StateJournal(self)

    address = team.system.createActor(Plain, config=BaseConfig(name="#Plain"))
    with pytest.raises(TypeError, match="persists a DeltaState"):
        team.system.proxy_ask(address, Plain, timeout=30).make()


class Handle:
    """A runtime handle: nothing a state may hold."""


class Leaky(DeltaState):
    items: list[str] = []
    handle: Any = None

    def apply_delta(self, delta: Added) -> None:
        self.items.extend(delta.items)


class LeakyActor(Akgent[BaseConfig, Leaky]):
    def on_start(self) -> None:
        self.state.handle = Handle()
        self.journal = StateJournal(self)


def test_a_state_that_cannot_be_persisted_fails_the_start_naming_its_field(team: Team) -> None:
    from akgentic.core import ErrorMessage

    address = team.proxy.getChildrenOrCreate(LeakyActor, BaseConfig(name="#Leaky"))

    def errors() -> list[ErrorMessage]:
        return [m for m in team.recorder.log if isinstance(m, ErrorMessage)]

    team.recorder.wait_for(lambda: bool(errors()))
    [error] = errors()
    assert "on_start failed" in error.content
    assert "#Leaky: Leaky.handle cannot be persisted (cannot serialize a value of type " in (
        error.content
    )
    assert "keep runtime handles (locks, clients, open files) on the actor" in error.content
    team.drain()
    assert not address.is_alive()


def test_a_card_calling_an_actor_that_failed_to_start_is_not_told_the_team_is_stopping(
    team: Team,
) -> None:
    from akgentic.core import ErrorMessage
    from akgentic.tool import RetriableError
    from akgentic.tool.core.team_actor import ask_tool_actor

    from .conftest import FakeAgent

    class Caller(FakeAgent):
        def proxy_ask(self, addr: Any, actor_type: type[Any], timeout: float | None = None) -> Any:
            return team.system.proxy_ask(addr, actor_type, timeout)

    address = team.proxy.getChildrenOrCreate(LeakyActor, BaseConfig(name="#Leaky"))
    team.recorder.wait_for(lambda: any(isinstance(m, ErrorMessage) for m in team.recorder.log))
    team.drain()
    caller: Any = Caller()
    with pytest.raises(RetriableError, match=r"has stopped \(the team is shutting down, or it "):
        ask_tool_actor(
            caller, address, LeakyActor, lambda a: a.on_start(), what="x", label="#Leaky",
            timeout=5,
        )  # fmt: skip
