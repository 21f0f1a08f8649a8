"""An address tells when its actor's ``on_start`` has run and why it failed: what a card
waits for before it wires its ``#`` tool actor (``bind_team_actor``)."""

from __future__ import annotations

import sys
import threading

import pytest
from pydantic import BaseModel

from akgentic.core import (
    ActorAddressImpl,
    ActorStartError,
    Akgent,
    BaseConfig,
    BaseState,
    StopMessage,
)

from .conftest import Team

GATE = threading.Event()


class Strict(BaseModel):
    count: int
    label: str


class Refusing(Akgent[BaseConfig, BaseState]):
    """Its on_start raises a ValidationError, whose text spans several lines."""

    def on_start(self) -> None:
        Strict.model_validate({"count": "many"})


class Gated(Akgent[BaseConfig, BaseState]):
    """Its on_start waits for GATE."""

    def on_start(self) -> None:
        GATE.wait(60)


def live(address: object) -> ActorAddressImpl:
    assert isinstance(address, ActorAddressImpl)
    return address


def test_a_failed_on_start_is_one_line_and_the_actor_has_stopped(team: Team) -> None:
    address = live(team.proxy.getChildrenOrCreate(Refusing, BaseConfig(name="#Refusing")))

    with pytest.raises(ActorStartError) as info:
        address.wait_started(30)

    assert not address.is_alive()  # stopped before the waiter was woken
    assert info.value.actor == "#Refusing"
    assert info.value.reason == address.start_failure
    message = str(info.value)
    assert message.startswith(
        "#Refusing could not start: ValidationError for Strict: count: Input should be a "
        "valid integer"
    )
    assert "\n" not in message and len(message) < 450  # clipped at START_FAILURE_CHARS


class BoardConfig(BaseConfig):
    directory: str = "."


class Board(Akgent[BoardConfig, BaseState]):
    pass


def test_a_construction_that_raises_is_an_actor_start_error(team: Team) -> None:
    with pytest.raises(ActorStartError) as info:  # a config of the wrong class
        team.proxy.getChildrenOrCreate(Board, BaseConfig(name="#Board"))

    assert str(info.value) == (
        "#Board could not start: TypeError: Board is configured by BoardConfig, got a BaseConfig"
    )


def test_wait_started_waits_for_on_start_and_is_bounded(team: Team) -> None:
    GATE.clear()
    address = live(team.proxy.getChildrenOrCreate(Gated, BaseConfig(name="#Gated")))

    with pytest.raises(ActorStartError, match=r"^#Gated could not start: its on_start did not "):
        address.wait_started(0.05)
    GATE.set()
    address.wait_started(30)  # started: returns
    assert address.start_failure is None and address.is_alive()


class SelfWaiting(Akgent[BaseConfig, BaseState]):
    """Its on_start waits for its own start (what binding itself would do)."""

    def on_start(self) -> None:
        try:
            live(self.myAddress).wait_started(60)
        except ActorStartError as exc:
            self.refused = str(exc)


def test_waiting_for_its_own_start_is_refused_at_once(team: Team) -> None:
    address = live(team.proxy.getChildrenOrCreate(SelfWaiting, BaseConfig(name="#Self")))
    address.wait_started(30)  # it did not wait its 60 s for itself
    assert team.system.get_actor(address).refused == (  # type: ignore[attr-defined]
        "#Self could not start: its on_start waits for its own start: bind it after on_start"
    )


class Calm(Akgent[BaseConfig, BaseState]):
    """Starts as any actor does."""


class Interrupt(BaseException):
    """A BaseException of the test's own, not an Exception."""


class Exiting(Akgent[BaseConfig, BaseState]):
    """Its on_start ends with a BaseException: ``sys.exit`` (what a library parsing its
    arguments does on bad ones), an interrupt, or one of the test's own."""

    def on_start(self) -> None:
        if self.config.name == "#Exit":
            sys.exit(3)
        if self.config.name == "#Interrupt":
            raise KeyboardInterrupt
        raise Interrupt("cut short")


@pytest.mark.parametrize(
    ("name", "cause"),
    [
        ("#Exit", "SystemExit: 3"),
        ("#Interrupt", "KeyboardInterrupt"),
        ("#Own", "Interrupt: cut short"),
    ],
)
def test_an_on_start_ended_by_a_base_exception_stops_that_actor_only(
    team: Team, name: str, cause: str
) -> None:
    """The actor stops (reported, unregistered) and a waiter gets the cause; the rest of
    the process goes on (a server's other teams must not stop because one tool exited
    while it started)."""
    address = live(team.proxy.getChildrenOrCreate(Exiting, BaseConfig(name=name)))

    with pytest.raises(ActorStartError) as info:
        address.wait_started(30)

    assert not address.is_alive()  # stopped before the waiter was woken
    assert team.system.get_address(address.agent_id) is None  # unregistered
    assert str(info.value) == f"{name} could not start: {cause}"
    stops = team.recorder.wait_for_type(StopMessage, where=lambda m: m.sender == address)
    assert len(stops) == 1
    assert team.orchestrator.is_alive()  # the team goes on
    sibling = live(team.proxy.getChildrenOrCreate(Calm, BaseConfig(name="#Sibling")))
    sibling.wait_started(30)
    assert sibling.is_alive()
    team.system.shutdown(timeout=5)  # and the system shuts down cleanly
