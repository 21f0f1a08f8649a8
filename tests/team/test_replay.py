"""Replay rebuilds a ``DeltaState`` tool actor's state with no registered reducer: from
the latest snapshot of its state in the log, with the deltas after it folded on by the
state's own ``apply_delta`` — exactly, stopping before a missing delta (reported as a
gap); a snapshot of a class this process does not know is skipped like a corrupt row
(the one before it serves, else the tool is unknown), and nothing the data names is
imported; a registered reducer still comes first."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic import Field

from akgentic.core import ActorAddress, EventMessage, Message, StateChangedMessage
from akgentic.core.serialization import SerializableModel, model_path
from akgentic.storage import EventRecord, StorageBundle, encode_event, open_storage, sqlite_url
from akgentic.team import (
    Gap,
    TeamCard,
    initial_state,
    plan_restore,
    replay_tool_states,
    unreadable_log,
)
from akgentic.team.restorer import skipped_summary
from akgentic.tool.core import DeltaState, ToolStateEvent
from akgentic.tool.knowledge_graph import GraphState
from akgentic.tool.planning import (
    PLANNING_ACTOR_NAME,
    Plan,
    PlanningStateEvent,
    Task,
    reduce_planning,
)

SHELF = "#Shelf"
OWNER = ActorAddress(agent_id=uuid4(), name=SHELF)


class Shelved(SerializableModel):
    items: list[str]


class Shelf(DeltaState):
    items: list[str] = Field(default_factory=list)

    def apply_delta(self, delta: Any) -> None:
        if not isinstance(delta, Shelved):
            raise ValueError(f"a Shelf applies Shelved, not {type(delta).__name__}")
        self.items.extend(delta.items)


def delta(seq: int, *items: str, sender: ActorAddress = OWNER) -> EventMessage:
    event = ToolStateEvent(tool_id=SHELF, seq=seq, payload=Shelved(items=list(items)))
    return EventMessage(event=event, sender=sender)


def snapshot(event_seq: int, *items: str, sender: ActorAddress = OWNER) -> StateChangedMessage:
    return StateChangedMessage(state=Shelf(items=list(items), event_seq=event_seq), sender=sender)


def test_the_last_snapshot_and_the_deltas_after_it_fold_exactly_with_no_reducer() -> None:
    other = ActorAddress(agent_id=uuid4(), name="#Elsewhere")
    log: list[Message] = [
        delta(1, "a"), snapshot(1, "a"),
        delta(2, "b"), delta(3, "c"),
        snapshot(3, "a", "b", "c"),  # the latest: deltas 1-3 are in it, not folded again
        snapshot(9, "not", "mine", sender=other),  # another actor's state
        delta(4, "d"), delta(5, "e"),
    ]  # fmt: skip
    result = replay_tool_states(log)
    assert result.states == {SHELF: Shelf(items=["a", "b", "c", "d", "e"], event_seq=5)}
    assert result.last_seq == {SHELF: 5}
    assert result.gaps == []
    assert result.unknown_tools == set()
    assert log[4].state == Shelf(items=["a", "b", "c"], event_seq=3)  # type: ignore[attr-defined]


def test_deltas_with_no_snapshot_and_no_reducer_stay_unknown() -> None:
    result = replay_tool_states([delta(1, "a"), delta(2, "b")])
    assert result.unknown_tools == {SHELF}
    assert result.states == {}
    assert result.last_seq == {SHELF: 2}


def test_a_shipped_tool_starts_from_the_state_its_first_delta_folds_onto() -> None:
    """``initial_state``: what a tool with no delta yet is (the state endpoint answers it);
    replaying the first delta gives that state with the delta folded on. A tool this
    package does not ship has none to tell."""
    empty = initial_state(PLANNING_ACTOR_NAME)
    assert empty == Plan() and empty.event_seq == 0
    assert initial_state("#KnowledgeGraphTool") == GraphState()
    created = PlanningStateEvent(tasks_created=[Task(id=1, title="first")])
    first = ToolStateEvent(tool_id=PLANNING_ACTOR_NAME, seq=1, payload=created)
    replayed = replay_tool_states([EventMessage(event=first, sender=OWNER)])
    assert replayed.states[PLANNING_ACTOR_NAME] == reduce_planning(empty, created)
    assert initial_state(SHELF) is None


def test_a_registered_reducer_comes_before_the_snapshot() -> None:
    def count(state: int | None, event: ToolStateEvent) -> int:
        return (state or 0) + 1

    result = replay_tool_states([delta(1, "a"), snapshot(1, "a"), delta(2, "b")], {SHELF: count})
    assert result.states == {SHELF: 2}


def test_a_gap_is_reported_and_the_state_stops_before_it_until_a_later_snapshot() -> None:
    log: list[Message] = [delta(1, "a"), snapshot(1, "a"), delta(2, "b"), delta(4, "d")]
    result = replay_tool_states(log)
    assert result.gaps == [Gap(SHELF, 3, 4, 4)]
    assert result.last_seq == {SHELF: 4}
    # delta 3 is missing: the state is the one after delta 2, and says so
    assert result.states == {SHELF: Shelf(items=["a", "b"], event_seq=2)}

    log += [snapshot(4, "a", "b", "c", "d"), delta(5, "e")]  # a snapshot past the gap
    result = replay_tool_states(log)
    assert result.gaps == [Gap(SHELF, 3, 4, 4)]  # the log still misses delta 3
    assert result.states == {SHELF: Shelf(items=["a", "b", "c", "d", "e"], event_seq=5)}


MODULE = "replayauto_never_imported"
"""A module that defines a ``Shelf``, on ``sys.path`` in these tests: importing it would work."""


def unregistered(message: StateChangedMessage) -> tuple[datetime, str]:
    """``message`` as stored, its state's class renamed to ``MODULE``'s (never imported)."""
    when, raw = encode_event(message)
    raw = raw.replace(model_path(Shelf), f"{MODULE}.Shelf")
    assert f'"{MODULE}.Shelf"' in raw
    return when, raw


@pytest.fixture
def storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> StorageBundle:
    (tmp_path / f"{MODULE}.py").write_text(
        "from akgentic.tool.core import DeltaState\n\n\nclass Shelf(DeltaState):\n"
        "    def apply_delta(self, delta: object) -> None:\n        pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return open_storage(sqlite_url(tmp_path / "team.db"))


def test_a_snapshot_of_an_unregistered_class_leaves_the_tool_unknown_and_imports_nothing(
    storage: StorageBundle,
) -> None:
    team = uuid4()
    storage.events.append(team, delta(1, "a"))
    storage.events.append_encoded(team, [unregistered(snapshot(1, "a"))])
    storage.events.append(team, delta(2, "b"))

    records = storage.events.read(team)
    assert records[1].message is None  # the store refused to decode it
    result = replay_tool_states(records)
    assert result.unknown_tools == {SHELF}
    assert result.states == {}
    assert result.last_seq == {SHELF: 2}
    assert MODULE not in sys.modules


def test_an_unreadable_latest_snapshot_falls_back_to_the_one_before(
    storage: StorageBundle,
) -> None:
    team = uuid4()
    storage.events.append_many(team, [delta(1, "a"), snapshot(1, "a"), delta(2, "b")])
    storage.events.append_encoded(team, [unregistered(snapshot(2, "a", "b"))])
    storage.events.append(team, delta(3, "c"))

    result = replay_tool_states(storage.events.read(team))
    assert result.states == {SHELF: Shelf(items=["a", "b", "c"], event_seq=3)}
    assert result.unknown_tools == set()
    assert MODULE not in sys.modules


def test_an_empty_log_restores_and_one_none_of_whose_events_reads_is_refused() -> None:
    """A team created and never used has an empty log: nothing hides it. A log with
    events none of which reads hides who ran: a resume would start the card anew."""
    card = TeamCard.from_yaml(Path(__file__).parents[2] / "examples" / "teams" / "research.yaml")
    assert unreadable_log(plan_restore([]), card) is None
    team_id = uuid4()
    torn = [
        EventRecord(team_id=team_id, seq=seq, timestamp=None, message=None, error="torn", raw="{")
        for seq in (1, 2, 3)
    ]
    assert unreadable_log(plan_restore(torn), card) == "none of its 3 events can be read (seq 1-3)"


def torn(team_id: UUID, seq: int, through: int | None = None) -> EventRecord:
    """An event record the store could not read (``through``: a damaged run of numbers)."""
    return EventRecord(
        team_id=team_id,
        seq=seq,
        timestamp=None,
        message=None,
        error="torn",
        raw="{",
        through=through,
    )


def test_why_a_log_is_unreadable_counts_in_words_that_agree() -> None:
    """One unreadable event, one more damaged run: said in the singular."""
    card = TeamCard.from_yaml(Path(__file__).parents[2] / "examples" / "teams" / "research.yaml")
    team_id = uuid4()
    assert unreadable_log(plan_restore([torn(team_id, 1)]), card) == (
        "its one event cannot be read (seq 1)"
    )
    runs = [torn(team_id, 1, 3), torn(team_id, 5, 6)]
    assert unreadable_log(plan_restore(runs), card) == (
        "its numbering cannot be vouched for: torn (and 1 more run of numbers like it)"
    )
    three = [*runs, torn(team_id, 8, 9)]
    assert unreadable_log(plan_restore(three), card) == (
        "its numbering cannot be vouched for: torn (and 2 more runs of numbers like it)"
    )


def test_the_skipped_events_line_counts_in_words_that_agree() -> None:
    team_id = uuid4()
    one = skipped_summary(team_id, plan_restore([torn(team_id, 4)]))
    assert one == f"team {team_id}: 1 unreadable event skipped on restore (seq 4); the first: torn"
    two = skipped_summary(team_id, plan_restore([torn(team_id, 4), torn(team_id, 7)]))
    assert two == (
        f"team {team_id}: 2 unreadable events skipped on restore (seq 4-7); the first: torn"
    )
