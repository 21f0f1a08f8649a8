"""Fixtures for the actor core: a system per test, a team with a recording subscriber."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from uuid import UUID

import pytest

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    Akgent,
    Message,
    Orchestrator,
    OrchestratorConfig,
)

M = TypeVar("M", bound=Message)


class BatchedSubscriber:
    """The hooks a batched subscriber of these tests leaves empty (``on_batch`` is the
    test's own)."""

    batched = True

    def on_message(self, msg: Message) -> None:  # pragma: no cover - never called
        raise AssertionError("a subscriber with on_batch gets no message one by one")

    def set_restoring(self, team_id: Any, restoring: bool) -> None:
        pass

    def on_stop_request(self, team_id: Any) -> None:
        pass

    def on_stop(self, team_id: Any) -> None:
        pass


class Recorder:
    """An EventSubscriber that keeps everything and lets a test wait for a condition."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.calls: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def on_message(self, msg: Message) -> None:
        with self._cond:
            self.messages.append(msg)
            self._cond.notify_all()

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        with self._cond:
            self.calls.append(("set_restoring", restoring))
            self._cond.notify_all()

    def on_stop_request(self, team_id: UUID) -> None:
        with self._cond:
            self.calls.append(("on_stop_request", team_id))
            self._cond.notify_all()

    def on_stop(self, team_id: UUID) -> None:
        with self._cond:
            self.calls.append(("on_stop", team_id))
            self._cond.notify_all()

    def of_type(self, cls: type[M]) -> list[M]:
        with self._cond:
            return [m for m in self.messages if isinstance(m, cls)]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        with self._cond:
            if not self._cond.wait_for(predicate, timeout):
                raise AssertionError(f"condition not met within {timeout}s")

    def wait_for_type(
        self, cls: type[M], count: int = 1, where: Callable[[M], bool] = lambda m: True
    ) -> list[M]:
        def found() -> list[M]:
            return [m for m in self.messages if isinstance(m, cls) and where(m)]

        self.wait_for(lambda: len(found()) >= count)
        with self._cond:
            return found()


def eventually(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait until ``predicate`` holds (re-checked every 20 ms), or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        pause.wait(0.02)


def collected(ref: weakref.ref[Any], timeout: float = 30.0) -> None:
    """Wait until the object behind ``ref`` is garbage collected.

    A stopped actor is still referenced by its thread for a moment after the stopped flag
    is set (the actor loop's frames, the thread's current-actor slot): a single
    ``gc.collect()`` right after ``wait_stopped`` may find it alive.
    """

    def gone() -> bool:
        gc.collect()
        return ref() is None

    eventually(gone, timeout)


def hand_on(system: ActorSystem, orchestrator: ActorAddress, *members: ActorAddress) -> None:
    """Return once the subscribers hold every record ``members`` emitted so far.

    A member reports a message processed after its handler returned, so a reply the test
    already holds may overtake it. A round trip to each member first (its inbox is FIFO:
    the earlier handlers have finished, their records are queued), then an orchestrator
    query, which drains the team's queue before it answers.
    """
    for member in members:
        system.proxy_ask(member, Akgent, timeout=60).config  # noqa: B018  (the round trip)
    system.proxy_ask(orchestrator, Orchestrator, timeout=60).get_team()


@dataclass
class Team:
    system: ActorSystem
    orchestrator: ActorAddress
    recorder: Recorder

    @property
    def team_id(self) -> UUID:
        assert self.orchestrator.team_id is not None
        return self.orchestrator.team_id

    @property
    def proxy(self) -> Orchestrator:
        return self.system.proxy_ask(self.orchestrator, Orchestrator, timeout=30)


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=5)


def make_team(system: ActorSystem, **config: Any) -> Team:
    orchestrator = system.createActor(Orchestrator, config=OrchestratorConfig(**config))
    recorder = Recorder()
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(recorder)
    return Team(system, orchestrator, recorder)


@pytest.fixture
def team(system: ActorSystem) -> Team:
    return make_team(system)
