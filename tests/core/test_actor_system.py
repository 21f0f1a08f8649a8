"""ActorSystem: the door from outside — tell, ask, listen, private inboxes, lookup, shutdown."""

from __future__ import annotations

import threading
from uuid import uuid4

import pytest

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    AddressError,
    Akgent,
    BaseConfig,
    BaseState,
    Message,
    Orchestrator,
    ResultMessage,
    UserMessage,
)


class Shout(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        assert sender is not None
        self.send(sender, ResultMessage(content=msg.content.upper()))


_entered = threading.Semaphore(0)
_release = threading.Event()


class Stuck(Akgent[BaseConfig, BaseState]):
    """Its handler does not return until the test releases it (a tool call that hangs)."""

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        _entered.release()
        _release.wait()


class Silent(Akgent[BaseConfig, BaseState]):
    def receiveMsg_Message(self, msg: Message, sender: ActorAddress | None) -> None:
        pass


def test_tell_then_listen_gets_the_reply(system: ActorSystem) -> None:
    shout = system.createActor(Shout)
    system.tell(shout, UserMessage(content="hi"))
    reply = system.listen(timeout=30)
    assert isinstance(reply, ResultMessage) and reply.content == "HI"


def test_listen_returns_none_when_nothing_comes(system: ActorSystem) -> None:
    assert system.listen(timeout=0.01) is None


def test_ask_raises_a_clear_timeout(system: ActorSystem) -> None:
    silent = system.createActor(Silent, config=BaseConfig(name="@Silent"))
    with pytest.raises(TimeoutError, match="no reply from @Silent to UserMessage"):
        system.ask(silent, UserMessage(content="hello?"), timeout=0.05)


class Quitter(Akgent[BaseConfig, BaseState]):
    """Stops itself on a message, without replying (an agent whose start failed)."""

    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        self.stop()


def test_ask_of_an_actor_that_stops_without_replying_fails_at_once(system: ActorSystem) -> None:
    quitter = system.createActor(Quitter, config=BaseConfig(name="@Quitter"))
    with pytest.raises(AddressError, match="@Quitter stopped before replying to UserMessage"):
        system.ask(quitter, UserMessage(content="bye"))  # no timeout: it used to wait for ever


def test_private_contexts_do_not_share_replies(system: ActorSystem) -> None:
    shout = system.createActor(Shout)
    with system.private() as first, system.private() as second:
        first.tell(shout, UserMessage(content="one"))
        second.tell(shout, UserMessage(content="two"))
        a, b = first.listen(30), second.listen(30)
        assert isinstance(a, ResultMessage) and a.content == "ONE"
        assert isinstance(b, ResultMessage) and b.content == "TWO"
        assert system.listen(timeout=0.01) is None
    assert not first.address.is_alive()
    with pytest.raises(AddressError, match="was closed"):
        first.address.deliver(UserMessage(content="late"))


def test_a_deserialized_address_cannot_be_told(system: ActorSystem) -> None:
    shout = system.createActor(Shout)
    snapshot = ActorAddress.deserialize(shout.serialize())
    with pytest.raises(AddressError, match="deserialized snapshot"):
        system.tell(snapshot, UserMessage(content="x"))
    assert system.get_address(snapshot.agent_id) == shout
    assert system.get_actor(snapshot) is system.get_actor(shout)


def test_lookups_of_unknown_actors(system: ActorSystem) -> None:
    assert system.get_address(uuid4()) is None
    ghost = ActorAddress(agent_id=uuid4(), name="@Ghost")
    with pytest.raises(LookupError, match="@Ghost"):
        system.get_actor(ghost)


def test_one_orchestrator_per_team(system: ActorSystem) -> None:
    orchestrator = system.createActor(Orchestrator)
    assert orchestrator.team_id is not None
    assert system.get_orchestrator(orchestrator.team_id) == orchestrator
    with pytest.raises(ValueError, match="already has a running orchestrator"):
        system.createActor(Orchestrator, team_id=orchestrator.team_id)


def test_shutdown_stops_every_actor() -> None:
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    member = system.createActor(Shout, team_id=orchestrator.team_id)
    loner = system.createActor(Shout)
    system.shutdown(timeout=5)
    assert not orchestrator.is_alive() and not member.is_alive() and not loner.is_alive()


def test_shutdown_waits_once_for_all_and_returns_the_actors_still_running() -> None:
    system = ActorSystem()
    stuck = [system.createActor(Stuck, config=BaseConfig(name=f"@S{i}")) for i in range(3)]
    done = system.createActor(Shout)
    for actor in stuck:
        system.tell(actor, UserMessage(content="hang"))
    for _ in stuck:
        assert _entered.acquire(timeout=30)
    try:
        left = system.shutdown(timeout=1.0)
        assert set(stuck) <= set(left)  # who is still running, for the caller to say
        assert done.wait_stopped(30)  # asked to stop with the rest (a busy machine may lag)
    finally:
        _release.set()
    assert all(actor.wait_stopped(30) for actor in stuck)  # the stop asked for still holds
