"""Deferred results: never block a tool actor.

A tool actor is a team singleton with one thread; slow external work done inside a
method callers reach through ``proxy_ask`` blocks every member queued behind it, and a
timeout on the ask abandons the future without cancelling the work. The pattern:

- a cache actor (:class:`DeferredResultActor`) that never performs the slow call — it
  answers ``get`` from a dict, and ``request`` spawns a worker;
- short-lived workers (:class:`DeferredWorker`), one per key, that do the slow call
  under an explicit timeout, deliver the outcome and stop themselves;
- a bounded caller-side poll (:func:`poll_deferred`) with a degraded answer always
  ready on the caller's side.

Seven rules — all of them, or none:

1. The cache actor never performs the slow call. It spawns, caches, and answers ``get``.
2. One worker per key, short-lived, self-stopping. Never reused, never accumulates state.
3. The worker's actor name starts with ``#`` (a tool actor): the orchestrator's
   phase-two teardown then releases unrelated tool actors in parallel instead of
   serialising them behind a worker.
4. De-duplicate through the in-flight set: three callers, one key, one external call.
5. Failures are cached negatively; the retry policy is a TTL on the negative entry,
   never an uncapped respawn.
6. The cache is capped (LRU): an uncapped cache on a team singleton leaks for the life
   of the team.
7. Callers poll with a bounded budget and always have a degraded answer. An unbounded
   ask — with or without a timeout — is forbidden.

A parent's stop waits for its children, so a worker mid-call holds its cache actor's
stop open: every worker bounds its external call with :attr:`DeferredWorker.timeout`,
kept below the team's stop grace, and *hands that budget to its I/O client* — a Python
thread cannot be cancelled, so a timeout that never reaches the client is decoration.

Not on the ``akgentic.tool.core`` façade: import ``akgentic.tool.core.deferred``.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar
from uuid import uuid4

from akgentic.core import ActorAddress, AddressError, Akgent, BaseConfig, BaseState
from akgentic.tool.core.team_actor import require_tool_actor_name

__all__ = ["DeferredResultActor", "DeferredWorker", "poll_deferred"]

logger = logging.getLogger("akgentic.tool")

ConfigType = TypeVar("ConfigType", bound=BaseConfig)
StateType = TypeVar("StateType", bound=BaseState)
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def poll_deferred(fn: Callable[[], V | None], attempts: int, delay: float) -> V | None:
    """Look ``attempts`` times, ``delay`` seconds apart; the first non-None answer, or None.

    Runs on the caller's own thread — the cache actor is never held while it waits.
    ``fn`` is normally ``lambda: cache.get(key)`` over an ask proxy. None at the end
    means "use the degraded answer", which the caller must always have.
    """
    if attempts < 0 or delay < 0:
        raise ValueError("poll_deferred needs attempts >= 0 and delay >= 0: the budget is bounded")
    for _ in range(attempts):
        time.sleep(delay)
        value = fn()
        if value is not None:
            return value
    return None


@dataclass(slots=True)
class _Entry(Generic[V]):
    value: V | None
    error: str | None = None
    expires_at: float | None = None  # set on negative entries only


class DeferredWorker(Akgent[BaseConfig, BaseState], Generic[K, V]):
    """Produces one value for one key, delivers it to its cache actor, and stops.

    Subclasses implement :meth:`produce` and pass ``timeout`` to their I/O client.
    """

    transient: ClassVar[bool] = True

    timeout: ClassVar[float] = 20.0
    """The budget of one external call, in seconds. Keep it below the team's stop grace
    (``OrchestratorConfig.stop_grace_timeout``, 30 s by default)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.timeout > 0:
            raise TypeError(f"{cls.__name__}.timeout must be a positive number of seconds")

    def produce(self, key: K, payload: Any, timeout: float) -> V:
        """The slow call. Hand ``timeout`` to the client; raise on failure."""
        raise NotImplementedError(f"{type(self).__name__} must implement produce()")

    def work(self, key: K, payload: Any, cache: ActorAddress) -> None:
        """Produce, deliver (or report the failure) to ``cache``, then stop. Told, once."""
        try:
            try:
                value = self.produce(key, payload, self.timeout)
            except Exception as exc:
                logger.warning("%s: producing %r failed: %r", self.myAddress.name, key, exc)
                self.proxy_tell(cache, DeferredResultActor).fail(
                    key, f"{type(exc).__name__}: {exc}"
                )
            else:
                self.proxy_tell(cache, DeferredResultActor).deliver(key, value)
        except AddressError:  # the cache actor stopped meanwhile: nobody wants the value
            logger.info("%s: cache gone, dropping %r", self.myAddress.name, key)
        finally:
            self.stop()


class DeferredResultActor(Akgent[ConfigType, StateType], Generic[ConfigType, StateType, K, V]):
    """A cache actor whose every method is O(1) on its own thread.

    Subclasses name their worker in :meth:`worker_class`. ``request`` is tell-shaped —
    it returns nothing and never waits on external work — so calling it on the ask
    proxy is fine.
    """

    max_entries: ClassVar[int] = 1024
    """LRU cap over positive and negative entries together."""

    negative_ttl: ClassVar[float] = 30.0
    """Seconds a failed key stays failed before a request may spawn a worker again."""

    def worker_class(self) -> type[DeferredWorker[K, V]]:
        """The worker that produces values for this cache."""
        raise NotImplementedError(f"{type(self).__name__} must implement worker_class()")

    def worker_config(self, key: K) -> BaseConfig:
        """The config of a new worker: a fresh ``#defer-…`` name, never reused. An override
        must keep the ``#`` prefix (:meth:`request` refuses a name without it)."""
        return BaseConfig(
            name=f"#defer-{type(self).__name__}-{str(key)[:40]}-{uuid4().hex[:8]}",
            role="DeferredWorker",
        )

    def now(self) -> float:
        """The clock negative entries expire on (monotonic seconds)."""
        return time.monotonic()

    # -- the book, created on first use on the actor's thread -----------------------
    @property
    def _entries(self) -> OrderedDict[K, _Entry[V]]:
        entries: OrderedDict[K, _Entry[V]] | None = self.__dict__.get("_deferred_entries")
        if entries is None:
            entries = self.__dict__["_deferred_entries"] = OrderedDict()
        return entries

    @property
    def _in_flight(self) -> set[K]:
        in_flight: set[K] | None = self.__dict__.get("_deferred_in_flight")
        if in_flight is None:
            in_flight = self.__dict__["_deferred_in_flight"] = set()
        return in_flight

    def _fresh(self, key: K) -> _Entry[V] | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires_at is not None and self.now() >= entry.expires_at:
            del self._entries[key]  # the negative entry's TTL ran out: retry allowed
            return None
        return entry

    def _store(self, key: K, entry: _Entry[V]) -> None:
        entries = self._entries
        entries[key] = entry
        entries.move_to_end(key)
        while len(entries) > self.max_entries:
            entries.popitem(last=False)

    # -- the surface ----------------------------------------------------------------
    def get(self, key: K) -> V | None:
        """The cached value, or None (not produced yet, in flight, or failed)."""
        entry = self._fresh(key)
        if entry is None or entry.error is not None:
            return None
        self._entries.move_to_end(key)
        return entry.value

    def failure(self, key: K) -> str | None:
        """Why ``key`` failed, while its negative entry lasts; None otherwise."""
        entry = self._fresh(key)
        return entry.error if entry is not None else None

    def request(self, key: K, payload: Any = None) -> None:
        """Have ``key`` produced, unless it is cached, failed recently, or in flight.

        A :meth:`worker_config` whose name lacks the ``#`` prefix is a ValueError (rule 3):
        nothing is spawned and the key is not left in flight."""
        if key in self._in_flight or self._fresh(key) is not None:
            return
        worker = self.worker_class()
        config = self.worker_config(key)
        require_tool_actor_name(config.name, "a deferred worker")  # rule 3, before spawning
        self._in_flight.add(key)
        try:
            address = self.createActor(worker, config=config)
            self.proxy_tell(address, worker).work(key, payload, self.myAddress)
        except Exception:
            self._in_flight.discard(key)
            raise

    def deliver(self, key: K, value: V) -> None:
        """A worker's result (told by the worker)."""
        self._in_flight.discard(key)
        self._store(key, _Entry(value=value))

    def fail(self, key: K, error: str) -> None:
        """A worker's failure (told by the worker): cached negatively for the TTL."""
        self._in_flight.discard(key)
        self._store(key, _Entry(value=None, error=error, expires_at=self.now() + self.negative_ttl))

    def pending(self) -> int:
        """How many keys are in flight."""
        return len(self._in_flight)

    def size(self) -> int:
        """How many entries the cache holds (negative ones included)."""
        return len(self._entries)
