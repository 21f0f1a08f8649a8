"""Fixtures: a manual clock, a clocked #NotificationTool, and owners that record their mail."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest

from akgentic.core import (
    ActorAddress,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    Message,
    Orchestrator,
)
from akgentic.tool import ToolFactory, ToolStateEvent
from akgentic.tool.notification import (
    NOTIFICATION_TOOL_NAME,
    NotificationActor,
    NotificationConfig,
    NotificationTool,
)

from ..conftest import Team, Waiter

START = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


class Reminder(Message):
    """A custom delivery class meeting the message_class contract."""

    content: str


class ManualClock:
    """A clock that moves only when the test says so."""

    def __init__(self, start: datetime = START) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now


class ClockedNotificationActor(NotificationActor):
    """The singleton on the test's clock."""

    clock: ClassVar[ManualClock] = ManualClock()

    def now(self) -> datetime:
        return self.clock.now()


class Owner(Akgent[BaseConfig, BaseState]):
    """A small agent that records everything it receives into the shared inbox."""

    inbox: ClassVar[Waiter] = Waiter()

    def receiveMsg_Message(self, msg: Message, sender: ActorAddress | None) -> None:
        Owner.inbox.add((self.myAddress.name, msg))


def wait_until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll ``predicate`` until true; fail after ``timeout``. For conditions nobody signals."""
    done = threading.Event()
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        done.wait(0.01)


def collected(ref: Callable[[], Any]) -> bool:
    gc.collect()
    return ref() is None


@dataclass
class Harness:
    """A team with a clocked #NotificationTool and helpers to add owners and read events."""

    team: Team
    clock: ManualClock
    actor_address: ActorAddress

    @property
    def actor(self) -> NotificationActor:
        return self.team.system.proxy_ask(self.actor_address, NotificationActor, timeout=30)

    def owner(self, name: str) -> ActorAddress:
        return self.team.system.createActor(
            Owner, config=BaseConfig(name=name), team_id=self.team.orchestrator.team_id
        )

    def wire(self, owner: ActorAddress, card: NotificationTool | None = None) -> ToolFactory:
        agent = self.team.system.get_actor(owner)
        return ToolFactory([card or NotificationTool()], observer=agent)

    def tools(self, owner: ActorAddress, card: NotificationTool | None = None) -> dict[str, Any]:
        return {fn.__name__: fn for fn in self.wire(owner, card).get_tools()}

    def mail(self, name: str) -> list[Message]:
        with Owner.inbox.cond:
            return [m for who, m in Owner.inbox.log if who == name]

    def wait_mail(self, name: str, count: int = 1) -> list[Message]:
        Owner.inbox.wait_for(lambda: len([1 for who, _ in Owner.inbox.log if who == name]) >= count)
        return self.mail(name)

    def events(self) -> list[ToolStateEvent]:
        with self.team.recorder.cond:
            return [
                m.event
                for m in self.team.recorder.log
                if isinstance(m, EventMessage)
                and isinstance(m.event, ToolStateEvent)
                and m.event.tool_id == NOTIFICATION_TOOL_NAME
            ]

    def wait_events(self, count: int) -> list[ToolStateEvent]:
        """At least ``count`` events, then every one emitted so far (after a drain), so
        an exact count holds — not only "at least"."""
        self.team.recorder.wait_for(lambda: len(self.events()) >= count, timeout=60)
        self.team.drain()
        return self.events()


@pytest.fixture
def clock() -> Iterator[ManualClock]:
    ClockedNotificationActor.clock = ManualClock()
    Owner.inbox = Waiter()
    yield ClockedNotificationActor.clock


def bind(team: Team, **config: Any) -> ActorAddress:
    """Create the team's #NotificationTool as the clocked class, as a card would bind it."""
    orchestrator: Orchestrator = team.proxy
    return orchestrator.getChildrenOrCreate(ClockedNotificationActor, NotificationConfig(**config))


@pytest.fixture
def harness(team: Team, clock: ManualClock) -> Harness:
    """Ticking fast on the manual clock: due times move only when the test advances it."""
    return Harness(team, clock, bind(team, tick_interval_seconds=0.01))


@pytest.fixture
def quiet(team: Team, clock: ManualClock) -> Harness:
    """No tick within the test: delivery happens only when the test calls deliver_due()."""
    return Harness(team, clock, bind(team, tick_interval_seconds=3600))
