"""The lease contract (``akgentic.storage.lease``), on every backend.

Expiry is exercised with ``ttl=0`` (a lease expired at once) rather than by waiting:
no test here depends on how fast the machine is.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from uuid import uuid4

import pytest

from akgentic.core import UserMessage
from akgentic.storage import (
    Fence,
    Heartbeat,
    LeaseHeldError,
    LeaseHolder,
    LeaseLostError,
    LeaseStore,
    StorageBundle,
    encode_event,
    holder_is_gone,
    live_lease,
)
from tests.processes import a_dead_pid
from tests.storage.conftest import Backend

TTL = 60.0


def holder(name: str, pid: int = 4242, host: str = "box") -> LeaseHolder:
    return LeaseHolder(owner=name, host=host, pid=pid)


def test_the_bundle_has_a_lease_store(store: StorageBundle) -> None:
    assert isinstance(store.leases, LeaseStore)


def test_a_free_resource_is_acquired_and_inspected(store: StorageBundle) -> None:
    assert store.leases.inspect("team/a") is None
    lease = store.leases.acquire("team/a", holder("one"), TTL)
    assert lease.resource == "team/a" and lease.holder == holder("one")
    assert not lease.expired and lease.expires_at > lease.renewed_at >= lease.since
    assert store.leases.inspect("team/a") == lease
    assert lease.describe().startswith("pid 4242 on host box since ")


def test_a_held_lease_is_refused_naming_its_holder(store: StorageBundle) -> None:
    first = store.leases.acquire("team/a", holder("one", pid=11, host="north"), TTL)
    with pytest.raises(LeaseHeldError) as info:
        store.leases.acquire("team/a", holder("two"), TTL)
    assert info.value.lease == first  # host, pid and since: who to go and see
    assert "held by pid 11 on host north since" in str(info.value)
    assert store.leases.inspect("team/a") == first  # the refusal changed nothing


def test_the_holder_reacquires_and_keeps_its_since(store: StorageBundle) -> None:
    first = store.leases.acquire("team/a", holder("one"), TTL)
    again = store.leases.acquire("team/a", holder("one"), TTL)
    assert again.since == first.since and again.expires_at >= first.expires_at


def test_an_expired_lease_is_taken_over_with_a_new_since(store: StorageBundle) -> None:
    dead = store.leases.acquire("team/a", holder("one"), ttl=0)
    assert dead.expired and store.leases.inspect("team/a").expired  # type: ignore[union-attr]
    taken = store.leases.acquire("team/a", holder("two", pid=7), TTL)
    assert taken.holder.owner == "two" and not taken.expired
    assert taken.since >= dead.since
    with pytest.raises(LeaseLostError, match="now held by pid 7"):
        store.leases.renew("team/a", "one", TTL)  # the old holder learns it lost it


def test_take_over_only_from_the_named_holder(store: StorageBundle) -> None:
    store.leases.acquire("team/a", holder("one"), TTL)
    with pytest.raises(LeaseHeldError):
        store.leases.acquire("team/a", holder("two"), TTL, take_over="someone-else")
    taken = store.leases.acquire("team/a", holder("two"), TTL, take_over="one")
    assert taken.holder.owner == "two"


def test_renew_extends_and_survives_expiry_if_nobody_took_it(store: StorageBundle) -> None:
    store.leases.acquire("team/a", holder("one"), ttl=0)
    renewed = store.leases.renew("team/a", "one", TTL)
    assert not renewed.expired and renewed.holder.owner == "one"
    with pytest.raises(LeaseLostError, match="released"):
        store.leases.renew("team/b", "one", TTL)


def test_release_only_by_the_holder(store: StorageBundle) -> None:
    store.leases.acquire("team/a", holder("one"), TTL)
    assert store.leases.release("team/a", "two") is False
    assert store.leases.inspect("team/a") is not None
    assert store.leases.release("team/a", "one") is True
    assert store.leases.inspect("team/a") is None
    assert store.leases.release("team/a", "one") is False
    store.leases.acquire("team/a", holder("two"), TTL)  # free again


def test_list_by_prefix_in_resource_order(store: StorageBundle) -> None:
    for resource in ("team/b", "worker/1", "team/a"):
        store.leases.acquire(resource, holder("one"), TTL)
    assert [lease.resource for lease in store.leases.list("team/")] == ["team/a", "team/b"]
    assert [lease.resource for lease in store.leases.list()] == ["team/a", "team/b", "worker/1"]
    assert store.leases.list("nothing/") == []


def test_a_negative_ttl_and_an_empty_owner_are_refused(store: StorageBundle) -> None:
    with pytest.raises(ValueError, match="ttl"):
        store.leases.acquire("team/a", holder("one"), -1)
    with pytest.raises(ValueError):
        LeaseHolder(owner="", host="box", pid=1)


def test_racing_acquirers_one_winner(backend: Backend) -> None:
    """Never check-then-create: of many threads on several connections, one wins."""
    stores = [backend.store, backend.another(), backend.another()]
    barrier = threading.Barrier(9)
    won: list[str] = []
    refused: list[str] = []
    errors: list[BaseException] = []

    def contender(n: int) -> None:
        leases = stores[n % len(stores)].leases
        try:
            barrier.wait(timeout=30)
            leases.acquire("team/race", holder(f"c{n}"), TTL)
            won.append(f"c{n}")
        except LeaseHeldError as held:
            refused.append(held.lease.holder.owner)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=contender, args=(n,)) for n in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert len(won) == 1 and len(refused) == 8
    assert set(refused) == set(won)  # every loser was told who won
    assert backend.store.leases.inspect("team/race").holder.owner == won[0]  # type: ignore[union-attr]


def test_racing_processes_one_winner(backend: Backend) -> None:
    if backend.open_again is None:
        pytest.skip("the memory backend lives in one process")
    script = (
        "import sys\n"
        "from akgentic.storage import LeaseHeldError, LeaseHolder, open_storage\n"
        "store = open_storage(sys.argv[1])\n"
        "try:\n"
        "    store.leases.acquire('team/race', LeaseHolder.here(sys.argv[2]), 60)\n"
        "    print('won')\n"
        "except LeaseHeldError as held:\n"
        "    print('refused', held.lease.holder.owner)\n"
        "store.close()\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, backend.url, f"p{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        outcomes.append(out.split())
    winners = [n for n, out in enumerate(outcomes) if out == ["won"]]
    assert len(winners) == 1, outcomes
    assert all(out == ["refused", f"p{winners[0]}"] for out in outcomes if out != ["won"])


def test_heartbeat_renews_and_reports_a_lost_lease(store: StorageBundle) -> None:
    lost: list[tuple[str, LeaseLostError]] = []
    beat = Heartbeat(store.leases, ttl=TTL, on_lost=lambda r, e: lost.append((r, e)))
    try:
        first = store.leases.acquire("team/a", holder("one"), ttl=0)
        store.leases.acquire("team/b", holder("one"), ttl=0)
        beat.keep("team/a", "one")
        beat.keep("team/b", "one")
        store.leases.acquire("team/b", holder("two"), TTL)  # b expired: taken over
        beat.beat()
        renewed = store.leases.inspect("team/a")
        assert renewed is not None and not renewed.expired and renewed.since == first.since
        assert [resource for resource, _ in lost] == ["team/b"]
        assert lost[0][1].lease is not None and lost[0][1].lease.holder.owner == "two"
        assert beat.kept() == {"team/a": "one"}  # a lost lease is no longer renewed
        beat.drop("team/a")
        assert beat.kept() == {}
    finally:
        beat.close()


def test_a_lease_a_writer_found_lost_is_dropped_and_reported_once(store: StorageBundle) -> None:
    """A writer whose fenced append was refused tells ``lost``: the lease is no longer
    renewed, ``on_lost`` hears it once — from a thread of its own, as the writer may be
    what it stops — and neither a second ``lost`` nor the next beat reports it again."""
    reported: list[tuple[str, LeaseLostError, threading.Thread]] = []
    heard = threading.Event()

    def on_lost(resource: str, error: LeaseLostError) -> None:
        reported.append((resource, error, threading.current_thread()))
        heard.set()

    beat = Heartbeat(store.leases, ttl=TTL, on_lost=on_lost)
    try:
        store.leases.acquire("team/b", holder("one"), ttl=0)
        beat.keep("team/b", "one")
        store.leases.acquire("team/b", holder("two"), TTL)  # expired: taken over
        team, fence = uuid4(), Fence(resource="team/b", owner="one")
        late = encode_event(UserMessage(content="late", team_id=team))
        with pytest.raises(LeaseLostError) as refused:
            store.events.append_encoded(team, [late], fence=fence)
        beat.lost(refused.value)
        assert heard.wait(30)
        assert beat.kept() == {}
        beat.lost(refused.value)
        beat.beat()
        [(resource, error, thread)] = reported
        assert resource == "team/b" and error is refused.value
        assert thread is not threading.current_thread()
    finally:
        beat.close()


def test_a_holder_on_this_host_whose_pid_is_gone_is_known_dead() -> None:
    gone = LeaseHolder.here("x").model_copy(update={"pid": a_dead_pid()})
    assert holder_is_gone(gone)
    assert not holder_is_gone(LeaseHolder.here("me"))  # this very process
    assert not holder_is_gone(gone.model_copy(update={"host": "elsewhere"}))  # only expiry tells


def test_a_live_lease_is_one_whose_holder_still_counts(store: StorageBundle) -> None:
    """``live_lease``: held by a live process, the lease; free, expired, or held by a
    process on this host that is gone, None (a marker a killed process left is none)."""
    leases = store.leases
    assert live_lease(leases, "stopping/a") is None  # nobody holds it
    me = LeaseHolder.here("me")
    held = leases.acquire("stopping/a", me, TTL)
    assert live_lease(leases, "stopping/a") == held
    leases.acquire("stopping/b", me, 0)
    assert leases.inspect("stopping/b") is not None
    assert live_lease(leases, "stopping/b") is None  # expired
    dead = LeaseHolder.here("dead").model_copy(update={"pid": a_dead_pid()})
    leases.acquire("stopping/c", dead, TTL)
    assert live_lease(leases, "stopping/c") is None  # its process is gone
