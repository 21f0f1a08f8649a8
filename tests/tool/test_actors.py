"""The tool layer on real actors: Akgent is an ActorToolObserver, and everything wired to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from akgentic.core import ActorNameTakenError, Akgent, BaseConfig, BaseState, EventMessage
from akgentic.core.address import ActorAddress
from akgentic.core.serialization import SerializableModel, deserialize, serialize
from akgentic.tool import (
    ActorToolObserver,
    ContextState,
    ToolCard,
    ToolFactory,
    ToolObserver,
    ToolStateCarrier,
    ToolStateEmitter,
    ToolStateEvent,
)
from akgentic.tool.core import bind_team_actor, require_team_observer
from akgentic.tool.errors import ToolActorStartError

from .conftest import AgentStateWithTools, Team


class Worker(Akgent[BaseConfig, AgentStateWithTools]):
    """An agent whose state carries the tool-layer slot."""


class Count(ContextState):
    n: int = 0

    def render_full(self) -> str:
        return f"count={self.n}"

    def render_delta(self, previous: Count) -> str | None:
        return None if previous.n == self.n else f"count {previous.n} -> {self.n}"


class CounterCard(ToolCard):
    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def counter() -> Count | None:
            observer = self.observer_or_none()  # may outlive its agent: the None form
            if observer is None:
                return None
            return Count(n=len(observer.state.tool_state.context_baselines))  # type: ignore[attr-defined]

        return [counter]


class Delta(SerializableModel):
    added: list[str] = []


def test_akgent_satisfies_the_actor_observer_protocol(team: Team) -> None:
    address = team.system.createActor(
        Worker, config=BaseConfig(name="@W"), team_id=team.orchestrator.team_id
    )
    actor = team.system.get_actor(address)
    assert isinstance(actor, ToolObserver)
    assert isinstance(actor, ActorToolObserver)
    assert isinstance(actor.state, ToolStateCarrier)
    assert actor.orchestrator == team.orchestrator


def test_a_missing_member_fails_the_protocol_check() -> None:
    """The conformance guard, proven by removing a member rather than the decorator."""

    class NoTell:
        myAddress: ActorAddress | None = None
        orchestrator = None
        team_id = None
        state = None

        def notify_event(self, event: Any) -> None: ...

        def proxy_ask(self, addr: Any, actor_type: Any, timeout: Any = None) -> Any: ...

    assert isinstance(NoTell(), ToolObserver)
    assert not isinstance(NoTell(), ActorToolObserver)


def test_context_updater_over_a_real_agent(team: Team) -> None:
    address = team.system.createActor(
        Worker, config=BaseConfig(name="@W"), team_id=team.orchestrator.team_id
    )
    actor = team.system.get_actor(address)
    updater = ToolFactory([CounterCard()], observer=actor).get_context_updater()
    first = updater.compose_update([])
    assert first == "**Context update 1**\n\ncount=0"
    assert actor.state.tool_state.context_update_seq == 1
    assert updater.compose_update([first]) == "**Context update 2**\n\ncount 0 -> 1"


def test_tool_state_events_reach_the_team_stream_with_their_payload_class(team: Team) -> None:
    address = team.system.createActor(
        Worker, config=BaseConfig(name="#Graph"), team_id=team.orchestrator.team_id
    )
    actor = team.system.get_actor(address)
    emitter = ToolStateEmitter("#Graph")
    emitter.emit(actor, Delta())  # empty: not emitted
    emitter.emit(actor, Delta(added=["a"]))

    def events() -> list[ToolStateEvent]:
        return [
            m.event
            for m in team.recorder.log
            if isinstance(m, EventMessage) and isinstance(m.event, ToolStateEvent)
        ]

    team.recorder.wait_for(lambda: len(events()) == 1)
    (event,) = events()
    assert event.seq == 1 and event.tool_id == "#Graph"
    stored = deserialize(serialize(event))
    assert isinstance(stored.payload, Delta) and stored.payload.added == ["a"]
    assert stored.sender.name == "#Graph"


class Shelf(Akgent[BaseConfig, BaseState]):
    """One ``#`` actor class."""


class Drawer(Akgent[BaseConfig, BaseState]):
    """Another, wrongly bound under the same name."""


def binding(actor_class: type[Akgent[Any, Any]], label: str) -> ToolCard:
    def observer(self: ToolCard, observer: ToolObserver) -> ToolCard:
        ToolCard.observer(self, observer)
        team = require_team_observer(observer, label, "#Store")
        bind_team_actor(team, actor_class, BaseConfig(name="#Store"), 30.0)
        return self

    return type(label, (ToolCard,), {"observer": observer})()


def test_two_cards_binding_one_name_to_two_classes_fail_naming_the_card(team: Team) -> None:
    address = team.system.createActor(
        Worker, config=BaseConfig(name="@W"), team_id=team.orchestrator.team_id
    )
    actor = team.system.get_actor(address)
    ToolFactory([binding(Shelf, "ShelfCard")], observer=actor)
    with pytest.raises(ToolActorStartError) as caught:
        ToolFactory([binding(Drawer, "DrawerCard")], observer=actor)
    assert isinstance(caught.value.__cause__, ActorNameTakenError)  # a TypeError too
    assert str(caught.value) == (
        "DrawerCard: its tool actor #Store could not start: #Store is already a Shelf, not "
        "a Drawer: one '#' name is one actor class; give one of the two actors another name"
    )


def test_a_tool_actor_named_without_the_prefix_is_refused_before_it_exists(team: Team) -> None:
    address = team.system.createActor(
        Worker, config=BaseConfig(name="@W"), team_id=team.orchestrator.team_id
    )
    actor = team.system.get_actor(address)
    with pytest.raises(ValueError, match="'Store' must be named with a leading '#'"):
        bind_team_actor(actor, Shelf, BaseConfig(name="Store"), 30.0)
    assert [m.name for m in team.proxy.get_team() if m.name == "Store"] == []
