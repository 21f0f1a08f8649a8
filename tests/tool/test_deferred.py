"""Deferred results under a real orchestrator: the seven rules, each with a failing case."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from akgentic.core import ActorAddress, BaseConfig, BaseState
from akgentic.tool.core.deferred import DeferredResultActor, DeferredWorker, poll_deferred

from .conftest import Team, Waiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0


class Shared:
    """What the test and the actors both see: a gate, a clock, and what happened."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.clock = Clock()
        self.spawned = Waiter()  # keys the cache spawned a worker for (on its thread)
        self.produced = Waiter()  # (key, timeout, worker address) per external call
        self.finished = Waiter()  # keys whose outcome the worker has told the cache


shared = Shared()


class SummarizerWorker(DeferredWorker[str, str]):
    timeout = 1.5

    def produce(self, key: str, payload: Any, timeout: float) -> str:
        shared.produced.add((key, timeout, self.myAddress))
        if not shared.gate.wait(30):
            raise TimeoutError("gate never opened")
        if payload == "fail":
            raise RuntimeError("backend down")
        return f"summary of {payload}"

    def work(self, key: str, payload: Any, cache: ActorAddress) -> None:
        super().work(key, payload, cache)
        shared.finished.add(key)  # after the tell: the cache's inbox already has it


class SummaryCache(DeferredResultActor[BaseConfig, BaseState, str, str]):
    max_entries = 2
    negative_ttl = 30.0

    def worker_class(self) -> type[DeferredWorker[str, str]]:
        return SummarizerWorker

    def worker_config(self, key: str) -> BaseConfig:
        shared.spawned.add(key)
        return super().worker_config(key)

    def now(self) -> float:
        return shared.clock.now


@pytest.fixture
def cache(team: Team) -> SummaryCache:
    global shared
    shared = Shared()
    address = team.proxy.getChildrenOrCreate(SummaryCache, BaseConfig(name="#SummaryCache"))
    proxy: SummaryCache = team.system.proxy_ask(address, SummaryCache, timeout=30)
    return proxy


def test_three_callers_one_key_one_worker(team: Team, cache: SummaryCache) -> None:
    barrier = threading.Barrier(3)
    requested = Waiter()
    results: list[str | None] = []
    lock = threading.Lock()

    def caller() -> None:
        barrier.wait(30)
        summary = cache.get("m1")
        if summary is None:
            cache.request("m1", "the message")
            requested.add("m1")
            # 60 s: the poll runs while the test holds the worker at its gate
            summary = poll_deferred(lambda: cache.get("m1"), attempts=3000, delay=0.02)
        with lock:
            results.append(summary)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for thread in threads:
        thread.start()
    # All three requests land while the one worker is held mid-call: de-duplication
    # goes through the in-flight set, not through a value already cached.
    requested.wait_for(lambda: len(requested.log) == 3)
    shared.produced.wait_for(lambda: len(shared.produced.log) == 1)
    # The worker is mid-call: the cache actor is free and answers at once (rule 1).
    assert cache.get("other") is None
    assert cache.pending() == 1
    shared.gate.set()
    for thread in threads:
        thread.join(60)
    assert results == ["summary of the message"] * 3
    assert shared.spawned.log == ["m1"]  # rule 4: one worker for three callers
    ((key, timeout, worker),) = shared.produced.log
    assert key == "m1"
    assert timeout == 1.5  # the budget handed to the client
    assert worker.name.startswith("#defer-")  # rule 3
    assert team.system.wait_stopped(worker, timeout=30)  # rule 2: it stopped itself
    assert cache.pending() == 0


class UnprefixedCache(SummaryCache):
    """A cache whose override drops the ``#``: its workers would count as members."""

    def worker_config(self, key: str) -> BaseConfig:
        return BaseConfig(name=f"summarize-{key}", role="DeferredWorker")


def test_a_worker_named_without_the_prefix_is_refused_before_it_exists(team: Team) -> None:
    global shared
    shared = Shared()
    address = team.proxy.getChildrenOrCreate(UnprefixedCache, BaseConfig(name="#Unprefixed"))
    cache: UnprefixedCache = team.system.proxy_ask(address, UnprefixedCache, timeout=30)
    with pytest.raises(ValueError, match="'summarize-m1' must be named with a leading '#'"):
        cache.request("m1", "the message")  # rule 3
    assert cache.pending() == 0  # the key is not left in flight
    assert cache.get("m1") is None
    assert [m.name for m in team.proxy.get_team() if m.name == "summarize-m1"] == []
    assert shared.produced.log == []


def test_a_second_request_after_delivery_spawns_nothing(cache: SummaryCache) -> None:
    shared.gate.set()
    cache.request("m1", "x")
    shared.finished.wait_for(lambda: shared.finished.log == ["m1"])
    assert cache.get("m1") == "summary of x"
    cache.request("m1", "x")
    assert shared.spawned.log == ["m1"]


def test_each_key_gets_its_own_fresh_worker(team: Team, cache: SummaryCache) -> None:
    shared.gate.set()
    cache.request("a", "1")
    cache.request("b", "2")
    shared.finished.wait_for(lambda: sorted(shared.finished.log) == ["a", "b"])
    workers = [entry[2] for entry in shared.produced.log]
    assert len({w.agent_id for w in workers}) == 2
    assert len({w.name for w in workers}) == 2  # never reused


def test_failures_are_cached_negatively_until_the_ttl(cache: SummaryCache) -> None:
    shared.gate.set()
    cache.request("bad", "fail")
    shared.finished.wait_for(lambda: shared.finished.log == ["bad"])
    assert cache.get("bad") is None
    assert cache.failure("bad") == "RuntimeError: backend down"
    cache.request("bad", "fail")  # polled again: no respawn while the entry lasts
    shared.clock.now += 29.0
    cache.request("bad", "fail")
    assert shared.spawned.log == ["bad"]

    shared.clock.now += 2.0  # the TTL ran out: the next request retries, once
    assert cache.failure("bad") is None
    cache.request("bad", "now fine")
    cache.request("bad", "now fine")
    shared.finished.wait_for(lambda: shared.finished.log == ["bad", "bad"])
    assert shared.spawned.log == ["bad", "bad"]
    assert cache.get("bad") == "summary of now fine"


def test_the_cache_is_capped_lru(cache: SummaryCache) -> None:
    cache.deliver("k1", "v1")
    cache.deliver("k2", "v2")
    assert cache.get("k1") == "v1"  # k1 is now the most recently used
    cache.deliver("k3", "v3")
    assert cache.size() == 2
    assert cache.get("k2") is None  # evicted: least recently used
    assert (cache.get("k1"), cache.get("k3")) == ("v1", "v3")
    cache.fail("k4", "boom")  # negative entries count against the cap too
    assert cache.size() == 2 and cache.get("k1") is None


def test_bounded_poll_gives_way_to_the_degraded_answer(cache: SummaryCache) -> None:
    text = "a long message " * 40
    summary = cache.get("slow")
    if summary is None:
        cache.request("slow", text)
        summary = poll_deferred(lambda: cache.get("slow"), attempts=3, delay=0.01)
    if summary is None:
        summary = text[:200] + "…"
    assert summary == text[:200] + "…"
    shared.gate.set()  # let the worker finish; the value arrives for the next caller
    shared.finished.wait_for(lambda: shared.finished.log == ["slow"])
    assert cache.get("slow") == f"summary of {text}"


def test_poll_deferred_is_bounded() -> None:
    calls: list[int] = []

    def never() -> str | None:
        calls.append(1)
        return None

    assert poll_deferred(never, attempts=4, delay=0) is None
    assert len(calls) == 4
    answers = iter([None, "ready"])
    assert poll_deferred(lambda: next(answers), attempts=5, delay=0) == "ready"
    with pytest.raises(ValueError, match="bounded"):
        poll_deferred(never, attempts=-1, delay=0)


def test_a_worker_without_a_positive_timeout_is_refused() -> None:
    with pytest.raises(TypeError, match="timeout must be a positive"):

        class Unbounded(DeferredWorker[str, str]):
            timeout = 0


def test_deferred_is_not_on_the_core_facade() -> None:
    import akgentic.tool.core as core

    assert not hasattr(core, "DeferredResultActor")
    assert "poll_deferred" not in core.__all__
