"""ToolCard: serializable configuration, forbidden fields, and the weakly held observer."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ConfigDict, PrivateAttr, ValidationError

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import (
    ActorToolObserver,
    BaseToolParam,
    RetriableError,
    ToolCard,
    ToolFactory,
    ToolObserver,
    ToolObserverGone,
)

from .conftest import EventObserver, FakeAgent


class Handle:
    """A runtime handle: not serializable, so it may only live in a PrivateAttr."""

    def process(self, text: str) -> str:
        if not text:
            raise ValueError("empty")
        return text.upper()


def setup_handle() -> Handle:
    return Handle()


# Seed 004's example, character for character in its body.
class MyTool(ToolCard):
    config_value: str = "default"
    _runtime_handle: Handle | None = PrivateAttr(default=None)  # not serialized

    def observer(self, observer: ActorToolObserver) -> MyTool:  # type: ignore[override]
        self._observer = observer
        self._runtime_handle = setup_handle()
        return self

    def get_tools(self) -> list[Callable[..., Any]]:
        handle = self._runtime_handle

        def my_tool(input: str) -> str:
            """Do something with input."""
            try:
                return handle.process(input)  # type: ignore[union-attr]
            except ValueError as e:
                raise RetriableError(f"Invalid input: {e}") from e

        return [my_tool]


class RetryError(Exception):
    pass


def test_the_seed_example_card_works_unchanged(agent: FakeAgent) -> None:
    card = MyTool(config_value="x")
    factory = ToolFactory([card], observer=agent, retry_exception=RetryError)
    (tool,) = factory.get_tools()
    assert tool("abc") == "ABC"
    with pytest.raises(RetryError, match="Invalid input: empty"):
        tool("")
    assert card.get_observer() is agent
    assert card.model_dump() == {"config_value": "x"}  # the handle is not serialized


def test_card_round_trips_and_keeps_runtime_state_out() -> None:
    card = MyTool(config_value="y").observer(FakeAgent())  # type: ignore[arg-type]
    data = serialize(card)
    assert data == {"__model__": f"{MyTool.__module__}.MyTool", "config_value": "y"}
    back = deserialize(data)
    assert back == MyTool(config_value="y")
    assert back.observer_or_none() is None
    assert MyTool.model_validate(card.model_dump()).config_value == "y"


def test_unknown_field_is_an_error_naming_it() -> None:
    with pytest.raises(ValidationError, match="skillz"):
        MyTool(skillz=["x"])  # type: ignore[call-arg]


def test_arbitrary_types_allowed_is_refused_at_class_definition() -> None:
    with pytest.raises(TypeError, match=r"BadCard.*arbitrary_types_allowed=True.*PrivateAttr"):

        class BadCard(ToolCard):
            model_config = ConfigDict(arbitrary_types_allowed=True)
            handle: Handle


def test_redeclaring_the_observer_slot_is_refused() -> None:
    with pytest.raises(TypeError, match="holds the observer weakly"):

        class Strong(ToolCard):
            _observer: Any = PrivateAttr(default=None)


def test_observer_attaches_and_returns_self() -> None:
    card = ToolCard()
    observer = EventObserver()
    assert card.observer(observer) is card
    assert card.get_observer() is observer
    assert card.observer_or_none() is observer


def test_observer_is_held_weakly_and_gone_is_a_defined_outcome() -> None:
    card = ToolCard()
    observer = EventObserver()
    card.observer(observer)
    del observer
    gc.collect()
    assert card.observer_or_none() is None
    with pytest.raises(ToolObserverGone, match="ToolCard is gone"):
        card.get_observer()


def test_assigning_self_observer_is_weak_too() -> None:
    card = MyTool()
    agent = FakeAgent()
    card.observer(agent)  # type: ignore[arg-type]  # the seed's `self._observer = observer`
    assert card._observer is agent
    del agent
    gc.collect()
    assert card._observer is None
    with pytest.raises(ToolObserverGone):
        card.get_observer()


def test_closures_capturing_the_accessor_do_not_keep_the_agent_alive() -> None:
    class Emitting(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def ping() -> str:
                """Emit a ping."""
                self.get_observer().notify_event("ping")
                return "ok"

            return [ping]

    card = Emitting()
    agent = FakeAgent()
    factory = ToolFactory([card], observer=agent)
    (ping,) = factory.get_tools()
    assert ping() == "ok" and agent.events == ["ping"]
    del agent
    gc.collect()
    with pytest.raises(ToolObserverGone):
        ping()


def test_get_observer_before_wiring_is_a_wiring_error() -> None:
    with pytest.raises(RuntimeError, match="no observer"):
        ToolCard().get_observer()


def test_an_observer_that_cannot_be_weakly_referenced_is_refused() -> None:
    class Slotted:
        __slots__ = ()

        def notify_event(self, event: Any) -> None: ...

    with pytest.raises(TypeError, match="weak references"):
        ToolCard().observer(Slotted())


def test_default_hooks_serve_nothing() -> None:
    card = ToolCard()
    assert card.get_tools() == []
    assert card.get_system_prompts() == []
    assert card.get_context_states() == []
    assert card.get_commands() == {}
    assert card.get_toolsets() == []
    assert card.depends_on() == []


def test_observer_protocols_are_runtime_checkable(agent: FakeAgent) -> None:
    events_only = EventObserver()
    assert isinstance(events_only, ToolObserver)
    assert not isinstance(events_only, ActorToolObserver)
    assert isinstance(agent, ActorToolObserver)
    assert not isinstance(BaseToolParam(), ToolObserver)


def test_what_docs_custom_cards_teaches_is_on_the_core_facade() -> None:
    """A card author binds and calls its ``#`` actor with these three; the page teaching
    it names no private module, so the façade carries them."""
    import akgentic.tool.core as core
    from akgentic.tool.core import team_actor

    for name in ("bind_team_actor", "ask_tool_actor", "require_team_observer"):
        assert name in core.__all__
        assert getattr(core, name) is getattr(team_actor, name)
