"""Akgent: dispatch, sending, children, proxies, publishing, failures, stopping."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core import (
    ActorAddress,
    ActorAddressImpl,
    ActorSystem,
    AddressError,
    Akgent,
    AskTimeoutError,
    BaseConfig,
    BaseState,
    DeadlockError,
    ErrorMessage,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    UserMessage,
    WarningError,
    WarningMessage,
)

from .conftest import Team, collected, hand_on


class Ping(Message):
    n: int = 0


class LoudPing(Ping):
    pass


class Pong(Message):
    n: int = 0


class Boom(Message):
    warning: bool = False


class Unknown(Message):
    pass


class CounterState(BaseState):
    count: int = 0
    label: str = ""


class EchoConfig(BaseConfig):
    prefix: str = ""


class Echo(Akgent[EchoConfig, CounterState]):
    """Answers Ping with Pong, counts, fails on demand."""

    def receiveMsg_Ping(self, msg: Ping, sender: ActorAddress | None) -> None:
        self.state.count += 1
        assert sender is not None
        self.send(sender, Pong(n=msg.n))

    def receiveMsg_Boom(self, msg: Boom, sender: ActorAddress | None) -> None:
        if msg.warning:
            raise WarningError("careful")
        raise ValueError("kaboom")

    def count(self) -> int:
        return self.state.count

    def fail(self) -> None:
        raise RuntimeError("failed through a proxy")

    def slow(self, gate: threading.Event) -> str:
        gate.wait(30)
        return "done"

    def ask_myself(self) -> int:
        return self.proxy_ask(self.myAddress, Echo).count()

    def spawn(self, name: str) -> ActorAddress:
        return self.createActor(Echo, config=EchoConfig(name=name))

    def children(self) -> list[ActorAddress]:
        return self.get_children()

    def publish_later(self, build: Any, label: str) -> None:
        """An event built later, between two events built now."""
        self.notify_event(Pong(n=1))
        self.notify_event_later(build)
        self.state.label = label
        self.notify_event(Pong(n=3))

    def publish(self, label: str) -> None:
        self.state.label = label
        self.state.notify_state_change()
        self.notify_event(Pong(n=7))


def test_a_handler_gets_the_message_and_its_sender(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    reply = system.ask(echo, Ping(n=4), timeout=30)
    assert isinstance(reply, Pong) and reply.n == 4
    assert reply.sender == echo and reply.team_id == team.team_id


def test_dispatch_walks_the_message_class_hierarchy(system: ActorSystem) -> None:
    echo = system.createActor(Echo)
    reply = system.ask(echo, LoudPing(n=2), timeout=30)
    assert isinstance(reply, Pong) and reply.n == 2


def test_send_stamps_sender_team_and_parent(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    ping = Ping(n=1)
    reply = system.ask(echo, ping, timeout=30)
    assert reply.parent_id == ping.id
    assert ping.team_id == team.team_id and ping.recipient == echo
    sent = team.recorder.wait_for_type(SentMessage, 2)
    assert [s.message.id for s in sent] == [ping.id, reply.id]


def test_a_raising_handler_is_reported_and_the_actor_goes_on(
    system: ActorSystem, team: Team
) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    system.tell(echo, Boom())
    error = team.recorder.wait_for_type(ErrorMessage)[0]
    assert "kaboom" in error.content and "ValueError" in error.traceback
    assert isinstance(error.current_message, Boom)
    assert error.sender == echo
    assert isinstance(system.ask(echo, Ping(n=9), timeout=30), Pong)


def test_a_warning_error_is_reported_as_a_warning(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    system.tell(echo, Boom(warning=True))
    warning = team.recorder.wait_for_type(WarningMessage)[0]
    assert warning.content == "careful"
    hand_on(system, team.orchestrator, echo)  # an error from that handler would be here now
    assert not team.recorder.of_type(ErrorMessage)


def test_a_message_without_handler_is_reported_not_dropped(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, config=EchoConfig(name="@Echo"), team_id=team.team_id)
    system.tell(echo, Unknown())
    warning = team.recorder.wait_for_type(WarningMessage)[0]
    assert "no handler for Unknown" in warning.content
    assert "receiveMsg_Unknown" in warning.content
    assert echo.is_alive()


def test_every_message_is_reported_received_and_processed(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    ping = Ping()
    system.ask(echo, ping, timeout=30)
    team.recorder.wait_for_type(ProcessedMessage, where=lambda m: m.message_id == ping.id)
    received = team.recorder.of_type(ReceivedMessage)
    assert [r.message_id for r in received] == [ping.id]


def test_create_actor_refuses_a_class_that_is_not_an_akgent(system: ActorSystem) -> None:
    with pytest.raises(TypeError, match="not an Akgent subclass"):
        system.createActor(dict)  # type: ignore[arg-type]


def test_configs_forbid_unknown_fields_and_are_copied_per_instance(
    system: ActorSystem,
) -> None:
    with pytest.raises(ValidationError, match="prefx"):
        EchoConfig(prefx="x")  # type: ignore[call-arg]
    config = EchoConfig(name="@One", prefix="p")
    first = system.createActor(Echo, config=config)
    second = system.createActor(Echo, config=config)
    a, b = system.get_actor(first), system.get_actor(second)
    assert a.config == config and a.config is not config and a.config is not b.config


def test_a_config_of_the_wrong_class_is_refused(system: ActorSystem) -> None:
    with pytest.raises(TypeError, match="configured by EchoConfig"):
        system.createActor(Echo, config=BaseConfig(name="@X"))


def test_default_name_state_and_config_come_from_the_generic_arguments(
    system: ActorSystem,
) -> None:
    echo = system.createActor(Echo)
    actor = system.get_actor(echo)
    assert echo.name == "@Echo"
    assert isinstance(actor.config, EchoConfig) and isinstance(actor.state, CounterState)


def test_children_inherit_team_orchestrator_and_parent(system: ActorSystem, team: Team) -> None:
    parent = system.createActor(Echo, config=EchoConfig(name="@Parent"), team_id=team.team_id)
    child = system.proxy_ask(parent, Echo, timeout=30).spawn("@Child")
    actor = system.get_actor(child)
    assert child.team_id == team.team_id
    assert actor.orchestrator == team.orchestrator and actor.parent == parent
    start = team.recorder.wait_for_type(StartMessage, where=lambda m: m.sender == child)[0]
    assert start.parent == parent
    assert team.proxy.get_team_member("@Child") == child


def test_proxy_ask_returns_values_and_raises_the_targets_exception(
    system: ActorSystem,
) -> None:
    echo = system.createActor(Echo)
    proxy = system.proxy_ask(echo, Echo, timeout=30)
    system.ask(echo, Ping(), timeout=30)
    assert proxy.count() == 1
    with pytest.raises(RuntimeError, match="failed through a proxy"):
        proxy.fail()
    assert proxy.count() == 1  # still alive and answering


def test_proxy_tell_never_blocks_and_reports_failures(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    gate = threading.Event()
    tell = system.proxy_tell(echo, Echo)
    assert tell.slow(gate) is None  # returned while the actor waits on the gate
    tell.fail()
    gate.set()
    error = team.recorder.wait_for_type(ErrorMessage)[0]
    assert "failed through a proxy" in error.content and "proxy_tell" in error.content
    assert system.proxy_ask(echo, Echo, timeout=30).count() == 0


def test_proxies_refuse_private_missing_and_mistyped_targets(system: ActorSystem) -> None:
    echo = system.createActor(Echo)
    proxy = system.proxy_ask(echo, Echo, timeout=30)
    with pytest.raises(AttributeError, match="private"):
        proxy._handle_call  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        proxy.nope  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError, match="tell proxy cannot read"):
        system.proxy_tell(echo, Echo).state  # noqa: B018

    class Other(Akgent[BaseConfig, BaseState]):
        pass

    with pytest.raises(TypeError, match="is a Echo, not a Other"):
        system.proxy_ask(echo, Other)


def test_proxy_ask_reads_attributes(system: ActorSystem) -> None:
    echo = system.createActor(Echo, config=EchoConfig(name="@Echo", prefix="p"))
    config = system.proxy_ask(echo, Echo, timeout=30).config
    assert isinstance(config, EchoConfig) and config.prefix == "p"


def test_asking_oneself_is_a_clear_error(system: ActorSystem) -> None:
    echo = system.createActor(Echo)
    with pytest.raises(DeadlockError, match="asked itself"):
        system.proxy_ask(echo, Echo, timeout=30).ask_myself()


def test_an_ask_that_times_out_says_so(system: ActorSystem) -> None:
    echo = system.createActor(Echo, config=EchoConfig(name="@Slow"))
    gate = threading.Event()
    system.proxy_tell(echo, Echo).slow(gate)
    with pytest.raises(AskTimeoutError, match="@Slow did not answer count"):
        system.proxy_ask(echo, Echo, timeout=0.05).count()
    gate.set()


def test_state_changes_and_events_are_published(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    system.proxy_ask(echo, Echo, timeout=30).publish("hello")
    changed = team.recorder.wait_for_type(StateChangedMessage)[0]
    assert isinstance(changed.state, CounterState) and changed.state.label == "hello"
    event = team.recorder.wait_for_type(EventMessage)[0]
    assert isinstance(event.event, Pong) and event.event.sender == echo
    assert event.event.team_id == team.team_id
    assert team.proxy.get_states()[echo.agent_id] == CounterState(label="hello")


def test_an_event_built_later_is_built_on_the_orchestrators_thread_in_its_place(
    system: ActorSystem, team: Team
) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    built_on: list[str] = []

    def build() -> Pong:
        built_on.append(threading.current_thread().name)
        return Pong(n=2)

    before = datetime.now(UTC)
    system.proxy_ask(echo, Echo, timeout=30).publish_later(build, "changed after")
    after = datetime.now(UTC)
    hand_on(system, team.orchestrator, echo)
    events = team.recorder.wait_for_type(EventMessage, 3)
    assert [e.event.n for e in events] == [1, 2, 3]  # its place: the order of the calls
    later = events[1]
    assert len(built_on) == 1  # once, though a subscriber and a query both read it
    assert built_on[0].startswith("Orchestrator"), built_on  # not the actor's thread
    assert later.sender == echo and later.team_id == team.team_id
    assert later.event.sender == echo and later.event.team_id == team.team_id
    assert before <= later.timestamp <= after  # stamped when it was reported
    assert later.event.timestamp == later.timestamp  # the event's own too
    assert later.timestamp <= events[2].timestamp


def test_an_event_that_cannot_be_built_leaves_an_error_in_its_place(
    system: ActorSystem, team: Team, caplog: pytest.LogCaptureFixture
) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)

    def build() -> Pong:
        raise RuntimeError("no encoder today")

    system.proxy_ask(echo, Echo, timeout=30).publish_later(build, "x")
    hand_on(system, team.orchestrator, echo)
    events = team.recorder.wait_for_type(EventMessage, 2)
    assert [e.event.n for e in events] == [1, 3]  # the others are there
    error = team.recorder.wait_for_type(ErrorMessage)[0]
    assert error.sender == echo
    assert "an event could not be built (RuntimeError: no encoder today)" in error.content
    assert "missing from the team's stream" in error.content
    assert "RuntimeError: no encoder today" in error.traceback
    assert "no encoder today" in caplog.text


def test_a_published_state_is_a_snapshot(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    proxy = system.proxy_ask(echo, Echo, timeout=30)
    proxy.publish("first")
    proxy.publish("second")
    states = team.recorder.wait_for_type(StateChangedMessage, 2)
    assert [s.state.label for s in states] == ["first", "second"]  # type: ignore[attr-defined]


def test_update_state_merges_validates_and_publishes(system: ActorSystem, team: Team) -> None:
    echo = system.createActor(Echo, team_id=team.team_id)
    actor: Any = system.get_actor(echo)
    proxy = system.proxy_ask(echo, Akgent)
    proxy.update_state({"count": 5})
    assert actor.state == CounterState(count=5)
    assert team.recorder.wait_for_type(StateChangedMessage)[0].state == CounterState(count=5)
    with pytest.raises(ValidationError, match="bogus"):
        proxy.update_state({"bogus": 1})
    with pytest.raises(ValidationError, match="count"):
        proxy.update_state({"count": "many"})
    assert actor.state.count == 5


stop_order: list[str] = []


class Tracked(Akgent[BaseConfig, BaseState]):
    def on_stop(self) -> None:
        stop_order.append(self.config.name)

    def spawn(self, name: str) -> ActorAddress:
        return self.createActor(Tracked, config=BaseConfig(name=name))


def test_stop_stops_children_first(system: ActorSystem, team: Team) -> None:
    stop_order.clear()
    root = system.createActor(Tracked, config=BaseConfig(name="@Root"), team_id=team.team_id)
    child = system.proxy_ask(root, Tracked, timeout=30).spawn("@Child")
    grandchild = system.proxy_ask(child, Tracked, timeout=30).spawn("@Grandchild")
    system.proxy_tell(root, Tracked).stop()
    assert system.wait_stopped(root, 30)
    assert stop_order == ["@Grandchild", "@Child", "@Root"]
    assert not child.is_alive() and not grandchild.is_alive()
    stops = team.recorder.wait_for_type(StopMessage, 3)
    assert [s.sender.name for s in stops if s.sender] == ["@Grandchild", "@Child", "@Root"]


def test_a_stopped_address_keeps_its_metadata_and_refuses_to_deliver(
    system: ActorSystem, team: Team
) -> None:
    echo = system.createActor(Echo, config=EchoConfig(name="@Gone", role="R"), team_id=team.team_id)
    system.proxy_tell(echo, Echo).stop()
    assert system.wait_stopped(echo, 30)
    assert isinstance(echo, ActorAddressImpl) and not echo.is_alive()
    assert (echo.name, echo.role, echo.team_id) == ("@Gone", "R", team.team_id)
    assert "stopped" in repr(echo)
    with pytest.raises(AddressError, match="the actor has stopped"):
        system.tell(echo, Ping())
    with pytest.raises(AddressError, match="stopped"):
        system.proxy_ask(echo, Echo)
    snapshot = echo.snapshot()
    assert snapshot == echo and snapshot.name == "@Gone"


def test_sending_to_a_stopped_member_from_a_handler_is_reported(
    system: ActorSystem, team: Team
) -> None:
    class Forwarder(Akgent[BaseConfig, BaseState]):
        target: ActorAddress

        def aim(self, target: ActorAddress) -> None:
            self.target = target

        def receiveMsg_Ping(self, msg: Ping, sender: ActorAddress | None) -> None:
            self.send(self.target, Ping())

    gone = system.createActor(Echo, config=EchoConfig(name="@Gone"), team_id=team.team_id)
    forwarder = system.createActor(Forwarder, team_id=team.team_id)
    system.proxy_ask(forwarder, Forwarder, timeout=30).aim(gone)
    system.proxy_tell(gone, Echo).stop()
    assert system.wait_stopped(gone, 30)
    system.tell(forwarder, Ping())
    error = team.recorder.wait_for_type(ErrorMessage)[0]
    assert "AddressError" in error.content and "@Gone" in error.content
    assert forwarder.is_alive()


def test_a_failing_on_start_is_reported_and_stops_the_actor(
    system: ActorSystem, team: Team
) -> None:
    class Broken(Akgent[BaseConfig, BaseState]):
        def on_start(self) -> None:
            raise RuntimeError("cannot start")

    broken = system.createActor(Broken, team_id=team.team_id)
    assert system.wait_stopped(broken, 30)
    error = team.recorder.wait_for_type(ErrorMessage)[0]
    assert "on_start failed" in error.content and "cannot start" in error.content
    team.recorder.wait_for_type(StopMessage, where=lambda m: m.sender == broken)


def test_user_messages_default_to_human_display() -> None:
    assert UserMessage(content="hi").display_type == "human"


def test_holding_an_address_does_not_keep_a_stopped_actor_alive(system: ActorSystem) -> None:
    import weakref

    echo = system.createActor(Echo)
    actor = weakref.ref(system.get_actor(echo))
    system.proxy_tell(echo, Echo).stop()
    assert system.wait_stopped(echo, 30)
    collected(actor)  # nothing keeps it: its thread lets go of it just after the stop
    assert echo.name == "@Echo"  # the metadata outlives the actor
    with pytest.raises(AddressError, match="stopped"):
        echo.send(echo, Ping())


def test_a_deep_copy_of_a_live_state_leaves_the_actor_behind(system: ActorSystem) -> None:
    echo = system.createActor(Echo)
    actor: Any = system.get_actor(echo)
    actor.state.count = 3
    copied = actor.state.model_copy(deep=True)
    assert copied == actor.state and copied is not actor.state
    assert copied._observer is None and actor.state._observer is actor
