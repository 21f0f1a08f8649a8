"""A fenced append (``Fence``): stored only while its owner holds the lease, checked in
the append's own transaction, on every backend.

The take-over is arranged before the append, as a holder paused between deciding to
write and writing would meet it; on Postgres, also while the append runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from uuid import UUID, uuid4

import pytest

from akgentic.core import BaseState, UserMessage
from akgentic.storage import (
    EncodedEvent,
    Fence,
    LeaseHolder,
    LeaseLostError,
    MemoryRow,
    StateRow,
    StorageBundle,
    encode_event,
    encode_state,
    encode_value,
    pack_encoded,
)
from tests.storage.conftest import Backend

TTL = 60.0


class Tally(BaseState):
    count: int = 0


def holder(owner: str) -> LeaseHolder:
    return LeaseHolder(owner=owner, host="box", pid=4242)


def events(team: UUID, count: int = 2) -> list[EncodedEvent]:
    return [encode_event(UserMessage(content=f"m{i}", team_id=team)) for i in range(count)]


def append(
    store: StorageBundle,
    team: UUID,
    fence: Fence,
    states: Sequence[StateRow] = (),
    memory: Sequence[MemoryRow] = (),
    *,
    packed: bool,
) -> list[int]:
    """Two events, as rows (``append_encoded``) or as one pack (``append_packs``)."""
    if packed:
        pack = pack_encoded(events(team), encode_value(team))
        return store.events.append_packs(team, [pack], states, memory, fence=fence)
    return store.events.append_encoded(team, events(team), states, memory, fence=fence)


# with tables beside the log, or without (the SQL stores' one-statement way)
APPENDS = pytest.mark.parametrize("packed", [False, True], ids=["rows", "pack"])
TABLES = pytest.mark.parametrize("tables", [False, True], ids=["log-only", "with-tables"])


def tables_of(agent: UUID, on: bool) -> tuple[list[StateRow], list[MemoryRow]]:
    if not on:
        return [], []
    return [(agent, "@A", encode_state(Tally(count=1)))], [MemoryRow(agent, ['{"k":1}'])]


@APPENDS
@TABLES
def test_a_fenced_append_is_refused_once_another_owner_took_the_lease(
    store: StorageBundle, packed: bool, tables: bool
) -> None:
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    states, memory = tables_of(agent, tables)
    store.leases.acquire(resource, holder("one"), ttl=0)  # expired at once
    mine = Fence(resource=resource, owner="one")
    assert append(store, team, mine, packed=packed) == [1, 2]  # expired, nobody took it: still mine
    store.leases.acquire(resource, holder("two"), TTL)  # taken over (as after a pause)

    with pytest.raises(LeaseLostError) as info:
        append(store, team, mine, states, memory, packed=packed)
    assert info.value.resource == resource and info.value.owner == "one"
    assert info.value.lease is not None and info.value.lease.holder.owner == "two"
    assert store.events.last_seq(team) == 2  # nothing of the group: no event, state, memory
    assert store.states.load_states(team) == {}
    assert store.working_memory.get(team, agent) == []
    # the new holder appends on, with no gap
    two = Fence(resource=resource, owner="two")
    assert append(store, team, two, states, memory, packed=packed) == [3, 4]
    assert store.working_memory.get(team, agent) == ([{"k": 1}] if tables else [])


@APPENDS
def test_a_fenced_append_of_a_released_lease_is_refused(store: StorageBundle, packed: bool) -> None:
    team = uuid4()
    resource = f"team/{team}"
    store.leases.acquire(resource, holder("one"), TTL)
    store.leases.release(resource, "one")
    with pytest.raises(LeaseLostError, match="released") as info:
        append(store, team, Fence(resource=resource, owner="one"), packed=packed)
    assert info.value.lease is None
    assert store.events.last_seq(team) == 0


def _waiting_on_a_lock(backend: Backend) -> int:
    """How many sessions of the test database wait for a row lock now."""
    watcher = backend.another()
    with watcher._driver.read() as cur:  # type: ignore[attr-defined]
        row = cur.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND datname = current_database()"
        ).fetchone()
    return int(row[0])


@pytest.mark.parametrize("tables", [False, True], ids=["log-only", "with-tables"])
def test_a_take_over_committing_while_a_fenced_append_runs_refuses_it(
    backend: Backend, tables: bool
) -> None:
    """Postgres, where processes share the store: the append locks the lease row
    (``FOR SHARE``), so a take-over in flight makes it wait, and once the take-over
    commits the append sees the new owner and stores nothing."""
    if not backend.name.startswith("postgres"):
        pytest.skip("concurrent transactions: Postgres (SQLite's write lock serializes them)")
    store, taker = backend.store, backend.another()
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    states, memory = tables_of(agent, tables)
    store.leases.acquire(resource, holder("one"), TTL)
    outcome: list[BaseException | list[int]] = []

    def write() -> None:
        try:
            outcome.append(
                append(
                    store, team, Fence(resource=resource, owner="one"), states, memory, packed=True
                )
            )
        except BaseException as exc:
            outcome.append(exc)

    writer = threading.Thread(target=write)
    with taker._driver.write() as cur:  # type: ignore[attr-defined]
        # a take-over, not committed yet (acquire's own update, as take_over does it)
        cur.execute("UPDATE akgentic_leases SET owner = ? WHERE resource = ?", ("two", resource))
        writer.start()
        deadline = time.monotonic() + 30
        while not outcome and _waiting_on_a_lock(backend) == 0:  # blocked, or (wrongly) done
            assert time.monotonic() < deadline, "the fenced append neither waited nor ended"
            time.sleep(0.01)
    writer.join(30)
    [result] = outcome
    assert isinstance(result, LeaseLostError), result
    assert result.lease is not None and result.lease.holder.owner == "two"
    assert store.events.last_seq(team) == 0 and store.states.load_states(team) == {}
