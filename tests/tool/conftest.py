"""Fixtures: plain-object observers for unit tests, and a real team for the actor tests."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic import Field

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    BaseState,
    Message,
    Orchestrator,
    OrchestratorConfig,
)
from akgentic.core.address import AddressError
from akgentic.tool import ToolState


class AgentStateWithTools(BaseState):
    """An agent state carrying the tool-layer slot, as the agent layer's will."""

    tool_state: ToolState = Field(default_factory=ToolState)


class EventObserver:
    """A ToolObserver: records the events it is asked to publish."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def notify_event(self, event: Any) -> None:
        self.events.append(event)


class FakeAgent(EventObserver):
    """An ActorToolObserver without an actor behind it."""

    def __init__(self) -> None:
        super().__init__()
        self.myAddress = ActorAddress(agent_id=uuid4(), name="@Fake")
        self.orchestrator: ActorAddress | None = None
        self.team_id = None
        self.state: Any = AgentStateWithTools()

    def proxy_ask(
        self, addr: ActorAddress, actor_type: type[Any], timeout: float | None = None
    ) -> Any:
        raise NotImplementedError

    def proxy_tell(self, addr: ActorAddress, actor_type: type[Any]) -> Any:
        raise NotImplementedError


@pytest.fixture
def agent() -> FakeAgent:
    return FakeAgent()


# -- actors ------------------------------------------------------------------------------


class Waiter:
    """Shared test state that threads update and the test waits on (no sleeps)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.log: list[Any] = []

    def add(self, item: Any) -> None:
        with self.cond:
            self.log.append(item)
            self.cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 30.0) -> None:
        with self.cond:
            if not self.cond.wait_for(predicate, timeout):
                raise AssertionError(f"condition not met within {timeout}s: log={self.log}")


class EventRecorder(Waiter):
    """An EventSubscriber keeping every telemetry message the orchestrator hands out."""

    def on_message(self, msg: Message) -> None:
        self.add(msg)

    def set_restoring(self, team_id: UUID, restoring: bool) -> None: ...

    def on_stop_request(self, team_id: UUID) -> None: ...

    def on_stop(self, team_id: UUID) -> None: ...


@dataclass
class Team:
    system: ActorSystem
    orchestrator: ActorAddress
    recorder: EventRecorder

    @property
    def proxy(self) -> Orchestrator:
        return self.system.proxy_ask(self.orchestrator, Orchestrator, timeout=30)

    def drain(self) -> None:
        """Hand the recorder every record emitted before this call.

        Telemetry reaches subscribers asynchronously (the orchestrator's thread drains the
        team's queue); every orchestrator query drains it first, so on return the recorder
        holds everything emitted before the call. A stopped orchestrator drained everything
        when it stopped. Never call it while holding ``recorder.cond``: the drain delivers
        under it."""
        with contextlib.suppress(AddressError):
            self.proxy.get_team()


@pytest.fixture
def team() -> Iterator[Team]:
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator, config=OrchestratorConfig())
    recorder = EventRecorder()
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(recorder)
    yield Team(system, orchestrator, recorder)
    system.shutdown(timeout=5)
