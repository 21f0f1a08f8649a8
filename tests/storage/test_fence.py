"""A fenced append (``Fence``), and a fenced working-memory change: stored only while its
owner holds the lease, checked in the write's own transaction, on every backend.

The take-over is arranged before the append, as a holder paused between deciding to
write and writing would meet it; on Postgres, also while the append runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
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
    TeamStatus,
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


def _backend_pid(store: StorageBundle) -> int:
    """The Postgres session of ``store``'s connection."""
    return int(store._driver._live().info.backend_pid)  # type: ignore[attr-defined]


def _waits_for(watcher: StorageBundle, session: int, holder: int) -> bool:
    """Whether Postgres session ``session`` waits for a lock session ``holder`` holds: no
    other session, of this test or any other client, counts."""
    with watcher._driver.read() as cur:  # type: ignore[attr-defined]
        row = cur.execute("SELECT ?::int = ANY(pg_blocking_pids(?::int))", (holder, session))
        return bool(row.fetchone()[0])


def _during_a_take_over(backend: Backend, resource: str, write: Callable[[], object]) -> object:
    """What ``write`` (owner "one"'s fenced write on ``backend.store``) returned or
    raised, run while another connection's take-over of ``resource`` by "two" is in
    flight, not committed yet: it waits for that take-over (the lease row's lock), which
    then commits."""
    taker, watcher = backend.another(), backend.another()
    writer_session, taker_session = _backend_pid(backend.store), _backend_pid(taker)
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(write())
        except BaseException as exc:
            outcome.append(exc)

    writer = threading.Thread(target=run)
    with taker._driver.write() as cur:  # type: ignore[attr-defined]
        # a take-over, not committed yet (acquire's own update, as take_over does it)
        cur.execute("UPDATE akgentic_leases SET owner = ? WHERE resource = ?", ("two", resource))
        writer.start()
        deadline = time.monotonic() + 30
        # blocked by the take-over, or (wrongly) done
        while not outcome and not _waits_for(watcher, writer_session, taker_session):
            assert time.monotonic() < deadline, "the fenced write neither waited nor ended"
            time.sleep(0.01)
    writer.join(30)
    [result] = outcome
    return result


def _skip_unless_postgres(backend: Backend) -> None:
    if not backend.name.startswith("postgres"):
        pytest.skip("concurrent transactions: Postgres (SQLite's write lock serializes them)")


@pytest.mark.parametrize("tables", [False, True], ids=["log-only", "with-tables"])
def test_a_take_over_committing_while_a_fenced_append_runs_refuses_it(
    backend: Backend, tables: bool
) -> None:
    """Postgres, where processes share the store: the append locks the lease row
    (``FOR SHARE``), so a take-over in flight makes it wait, and once the take-over
    commits the append sees the new owner and stores nothing."""
    _skip_unless_postgres(backend)
    store = backend.store
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    states, memory = tables_of(agent, tables)
    store.leases.acquire(resource, holder("one"), TTL)
    mine = Fence(resource=resource, owner="one")
    result = _during_a_take_over(
        backend, resource, lambda: append(store, team, mine, states, memory, packed=True)
    )
    assert isinstance(result, LeaseLostError), result
    assert result.lease is not None and result.lease.holder.owner == "two"
    assert store.events.last_seq(team) == 0 and store.states.load_states(team) == {}


# -- the working memory, written apart from the log, under the same fence ---------------------

MEMORY_WRITES = pytest.mark.parametrize("replace", [False, True], ids=["append", "replace"])


def write_memory(
    store: StorageBundle,
    team: UUID,
    agent: UUID,
    items: list[dict[str, int]],
    fence: Fence,
    *,
    replace: bool,
) -> None:
    if replace:
        store.working_memory.replace(team, agent, items, fence=fence)
    else:
        store.working_memory.append(team, agent, items, fence=fence)


@MEMORY_WRITES
def test_a_fenced_working_memory_change_is_refused_once_another_owner_took_the_lease(
    store: StorageBundle, replace: bool
) -> None:
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    store.leases.acquire(resource, holder("one"), ttl=0)  # expired at once
    mine = Fence(resource=resource, owner="one")
    write_memory(store, team, agent, [{"k": 1}], mine, replace=replace)  # nobody took it: mine
    assert store.working_memory.get(team, agent) == [{"k": 1}]
    store.leases.acquire(resource, holder("two"), TTL)  # taken over (as after a pause)

    with pytest.raises(LeaseLostError) as info:
        write_memory(store, team, agent, [{"k": 2}], mine, replace=replace)
    assert info.value.resource == resource and info.value.owner == "one"
    assert info.value.lease is not None and info.value.lease.holder.owner == "two"
    assert store.working_memory.get(team, agent) == [{"k": 1}]  # unchanged
    two = Fence(resource=resource, owner="two")
    write_memory(store, team, agent, [{"k": 3}], two, replace=replace)  # the new holder's
    assert store.working_memory.get(team, agent) == (
        [{"k": 3}] if replace else [{"k": 1}, {"k": 3}]
    )


@MEMORY_WRITES
def test_a_fenced_working_memory_change_of_a_released_lease_is_refused(
    store: StorageBundle, replace: bool
) -> None:
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    store.leases.acquire(resource, holder("one"), TTL)
    store.leases.release(resource, "one")
    with pytest.raises(LeaseLostError, match="released") as info:
        write_memory(
            store, team, agent, [{"k": 1}], Fence(resource=resource, owner="one"), replace=replace
        )
    assert info.value.lease is None
    assert store.working_memory.get(team, agent) == []


@MEMORY_WRITES
def test_a_take_over_committing_while_a_fenced_memory_change_runs_refuses_it(
    backend: Backend, replace: bool
) -> None:
    """Postgres: the change reads the lease row ``FOR SHARE`` first in its transaction,
    so a take-over in flight makes it wait, and once the take-over commits it changes
    nothing."""
    _skip_unless_postgres(backend)
    store = backend.store
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    store.leases.acquire(resource, holder("one"), TTL)
    mine = Fence(resource=resource, owner="one")
    write_memory(store, team, agent, [{"k": 1}], mine, replace=False)
    result = _during_a_take_over(
        backend,
        resource,
        lambda: write_memory(store, team, agent, [{"k": 2}], mine, replace=replace),
    )
    assert isinstance(result, LeaseLostError), result
    assert result.lease is not None and result.lease.holder.owner == "two"
    assert store.working_memory.get(team, agent) == [{"k": 1}]


# -- a team's status, marked by the process that runs it, under the same fence -----------------


def test_a_fenced_status_change_is_refused_once_another_owner_took_the_lease(
    store: StorageBundle,
) -> None:
    team = store.teams.create("fenced").team_id
    resource = f"team/{team}"
    store.leases.acquire(resource, holder("one"), ttl=0)  # expired at once
    mine = Fence(resource=resource, owner="one")
    store.teams.set_status(team, TeamStatus.STOPPED, fence=mine)  # nobody took it: mine
    store.leases.acquire(resource, holder("two"), TTL)  # taken over, and run again there
    store.teams.set_status(team, TeamStatus.RUNNING, fence=Fence(resource=resource, owner="two"))

    with pytest.raises(LeaseLostError) as info:
        store.teams.set_status(team, TeamStatus.STOPPED, fence=mine)
    assert info.value.lease is not None and info.value.lease.holder.owner == "two"
    assert store.teams.get(team).status == TeamStatus.RUNNING  # type: ignore[union-attr]


def test_a_take_over_committing_while_a_fenced_status_change_runs_refuses_it(
    backend: Backend,
) -> None:
    """Postgres: the status change reads the lease row ``FOR SHARE`` first in its
    transaction, as the working memory's does."""
    _skip_unless_postgres(backend)
    store = backend.store
    team = store.teams.create("fenced").team_id
    resource = f"team/{team}"
    store.leases.acquire(resource, holder("one"), TTL)
    mine = Fence(resource=resource, owner="one")
    result = _during_a_take_over(
        backend, resource, lambda: store.teams.set_status(team, TeamStatus.STOPPED, fence=mine)
    )
    assert isinstance(result, LeaseLostError), result
    assert store.teams.get(team).status == TeamStatus.RUNNING  # type: ignore[union-attr]
