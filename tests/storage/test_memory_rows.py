"""Working-memory changes handed to an append with its events (``MemoryRow``): they are
applied in order, in the events' own transaction, and agree with what
``WorkingMemoryStore.append``/``replace`` write and read.

The ``backend`` fixture (conftest) runs these on memory, SQLite and — when
``AKGENTIC_TEST_POSTGRES_URL`` is set — Postgres.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core import ActorAddressProxy, BaseState, UserMessage
from akgentic.storage import (
    EncodedEvent,
    MemoryRow,
    StateRow,
    StorageBundle,
    encode_event,
    encode_state,
    encode_value,
    pack_encoded,
)
from tests.storage.conftest import Backend


class Tally(BaseState):
    count: int = 0


def item(text: str) -> str:
    """One working-memory item as the recorder hands it: a JSON object's text."""
    return json.dumps({"kind": "request", "content": text}, separators=(",", ":"))


def events(team: UUID, count: int = 2) -> list[EncodedEvent]:
    return [encode_event(UserMessage(content=f"m{i}", team_id=team)) for i in range(count)]


Append = Callable[
    [StorageBundle, UUID, list[EncodedEvent], Sequence[StateRow], Sequence[MemoryRow]], list[int]
]


def as_rows(
    store: StorageBundle,
    team: UUID,
    rows: list[EncodedEvent],
    states: Sequence[StateRow],
    memory: Sequence[MemoryRow],
) -> list[int]:
    return store.events.append_encoded(team, rows, states, memory)


def as_pack(
    store: StorageBundle,
    team: UUID,
    rows: list[EncodedEvent],
    states: Sequence[StateRow],
    memory: Sequence[MemoryRow],
) -> list[int]:
    return store.events.append_packs(team, [pack_encoded(rows, encode_value(team))], states, memory)


APPENDS = pytest.mark.parametrize("append", [as_rows, as_pack], ids=["rows", "pack"])


def contents(store: StorageBundle, team: UUID, agent: UUID) -> list[str]:
    return [entry["content"] for entry in store.working_memory.get(team, agent)]


@APPENDS
def test_memory_rows_are_applied_in_order_with_their_events(
    store: StorageBundle, append: Append
) -> None:
    """Per agent, in order: a replacement drops what came before it (in the group and
    in the store), an addition goes after the last item."""
    team, a, b = uuid4(), uuid4(), uuid4()
    store.working_memory.append(team, a, [{"kind": "request", "content": "old"}])
    memory = [
        MemoryRow(a, [item("a1"), item("a2")]),
        MemoryRow(b, [item("b1")]),
        MemoryRow(b, [item("b2")], replace=True),
        MemoryRow(a, [item("a3")]),
        MemoryRow(b, [item("b3")]),
    ]
    assert append(store, team, events(team), [], memory) == [1, 2]
    assert contents(store, team, a) == ["old", "a1", "a2", "a3"]
    assert contents(store, team, b) == ["b2", "b3"]
    # the store's own calls go on from there
    store.working_memory.append(team, b, [{"kind": "response", "content": "b4"}])
    assert contents(store, team, b) == ["b2", "b3", "b4"]
    append(store, team, events(team, 1), [], [MemoryRow(a, [], replace=True)])
    assert contents(store, team, a) == [] and store.events.last_seq(team) == 3


@APPENDS
def test_events_states_and_memory_are_one_transaction(backend: Backend, append: Append) -> None:
    """A memory row the store cannot take (an item that is not text) fails the append
    whole — after the events are inserted, on the SQL stores — and leaves no event, no
    state, no memory change and no gap; what was committed is seen by another handle."""
    store = backend.store
    team, agent = uuid4(), uuid4()
    store.working_memory.append(team, agent, [{"kind": "request", "content": "kept"}])
    state = [(agent, "@A", encode_state(Tally(count=1)))]
    good = MemoryRow(agent, [item("new")], replace=True)
    broken = MemoryRow(agent, [item("x"), 42])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        append(store, team, events(team), state, [good, broken])
    assert store.events.last_seq(team) == 0 and store.states.load_states(team) == {}
    assert contents(store, team, agent) == ["kept"]
    assert append(store, team, events(team), state, [good]) == [1, 2]
    other = backend.another()
    assert other.events.last_seq(team) == 2
    assert other.states.load_states(team)[agent].require() == Tally(count=1)
    assert contents(other, team, agent) == ["new"]


def test_memory_rows_need_events_to_ride_with(store: StorageBundle) -> None:
    """Nothing is stored by an append of no events, the memory rows included."""
    team, agent = uuid4(), uuid4()
    assert store.events.append_encoded(team, [], [], [MemoryRow(agent, [item("x")])]) == []
    assert store.working_memory.get(team, agent) == []


def test_a_memory_row_is_checked(store: StorageBundle) -> None:
    team, agent = uuid4(), uuid4()
    for bad in ([("not", "a row")], [MemoryRow(agent, item("one text, not a list"))]):
        with pytest.raises(TypeError):
            store.events.append_encoded(team, events(team), [], bad)  # type: ignore[arg-type]
    assert store.events.last_seq(team) == 0


def test_groups_and_direct_appends_share_one_order_per_agent(backend: Backend) -> None:
    """Appends with events on one handle and ``WorkingMemoryStore.append`` on another,
    concurrently, for the same agents: every item lands once, at its own position, each
    writer's items in its order (the per-agent lock serializes them)."""
    store, other = backend.store, backend.another()
    team, a, b = uuid4(), uuid4(), uuid4()
    rounds = 30
    failures: list[BaseException] = []
    who = ActorAddressProxy(agent_id=a, name="@A", role="A", team_id=team)

    def grouped() -> None:
        try:
            for i in range(rounds):
                rows = [encode_event(UserMessage(content=f"g{i}", sender=who, team_id=team))]
                memory = [MemoryRow(b, [item(f"g{i}")]), MemoryRow(a, [item(f"g{i}")])]
                store.events.append_encoded(team, rows, [], memory)
        except BaseException as exc:  # reported to the test
            failures.append(exc)

    def direct() -> None:
        try:
            for i in range(rounds):
                for agent in (a, b):
                    other.working_memory.append(team, agent, [{"content": f"d{i}"}])
        except BaseException as exc:  # reported to the test
            failures.append(exc)

    threads = [threading.Thread(target=grouped), threading.Thread(target=direct)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures and not any(t.is_alive() for t in threads)
    for agent in (a, b):
        got = contents(store, team, agent)
        assert len(got) == 2 * rounds
        assert [c for c in got if c.startswith("g")] == [f"g{i}" for i in range(rounds)]
        assert [c for c in got if c.startswith("d")] == [f"d{i}" for i in range(rounds)]


def test_items_are_stored_as_given_and_read_back_as_objects(store: StorageBundle) -> None:
    """The texts are stored as handed over (not parsed and re-encoded): non-ASCII, escapes
    and nesting come back as the objects they encode."""
    team, agent = uuid4(), uuid4()
    objects: list[dict[str, Any]] = [
        {"content": "héllo ✓ \u2028", "nested": {"list": [1, 2.5, None, True]}},
        {"content": 'quote " and \\ backslash', "empty": {}},
    ]
    texts = [json.dumps(o, ensure_ascii=False) for o in objects]
    store.events.append_encoded(team, events(team, 1), [], [MemoryRow(agent, texts)])
    assert store.working_memory.get(team, agent) == objects
