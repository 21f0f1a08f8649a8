"""The NotificationTool card: wiring, channel routing, caps, ownership, and commands."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from akgentic.core import BaseConfig
from akgentic.core.serialization import deserialize, model_path, serialize
from akgentic.tool import (
    COMMAND,
    TOOL_CALL,
    CommandNotRecognized,
    RetriableError,
    ToolCard,
    ToolFactory,
)
from akgentic.tool.notification import (
    CancelNotification,
    NotificationActor,
    NotificationTool,
    PendingNotifications,
    RegisterNotification,
)
from akgentic.tool.notification.tool import MAX_DELAY_SECONDS

from ..conftest import EventObserver, FakeAgent, Team
from .conftest import Harness, Owner, Reminder


def names(fns: Any) -> list[str]:
    return [fn.__name__ for fn in fns]


# -- the card as configuration ------------------------------------------------------------


def test_the_card_round_trips_and_refuses_unknown_fields() -> None:
    card = NotificationTool(
        max_delay_seconds=60,
        message_class=model_path(Reminder),
        cancel_notification=CancelNotification(expose={COMMAND}),
    )
    assert deserialize(serialize(card)) == card
    with pytest.raises(ValidationError, match="max_delay"):
        NotificationTool(max_delay=60)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        NotificationTool(max_delay_seconds=0)


@pytest.mark.parametrize("cap", [math.inf, 1e300, MAX_DELAY_SECONDS + 1])
def test_a_cap_past_a_year_is_refused_when_the_card_is_read(cap: float) -> None:
    """An unbounded cap let ``notify_me_in`` take a delay past ``datetime``'s range: an
    OverflowError in the call instead of the card's refusal."""
    with pytest.raises(ValidationError, match="max_delay_seconds"):
        NotificationTool(max_delay_seconds=cap)
    assert NotificationTool(max_delay_seconds=MAX_DELAY_SECONDS).max_delay_seconds > 0


# -- channel routing ----------------------------------------------------------------------


def test_default_routing_three_tools_two_commands() -> None:
    card = NotificationTool()
    assert names(card.get_tools()) == [
        "notify_me_in",
        "pending_notification",
        "cancel_notification",
    ]
    commands = card.get_commands()
    assert list(commands) == [PendingNotifications, CancelNotification]
    assert names(commands.values()) == ["pending_notification", "cancel_notification"]


def test_each_param_routes_on_its_own_expose_and_false_removes_it() -> None:
    card = NotificationTool(
        register_notification=RegisterNotification(expose={TOOL_CALL, COMMAND}),
        pending_notification=False,
        cancel_notification=CancelNotification(expose={COMMAND}),
    )
    assert names(card.get_tools()) == ["notify_me_in"]
    assert list(card.get_commands()) == [RegisterNotification, CancelNotification]
    registry = ToolFactory([card]).get_command_registry()
    assert registry.names() == ["notify_me_in", "cancel_notification"]


def test_a_params_instructions_reach_the_tool_docstring() -> None:
    card = NotificationTool(register_notification=RegisterNotification(instructions="Max 1/turn."))
    (notify, _, _) = ToolFactory([card]).get_tools()
    assert notify.__doc__ is not None and notify.__doc__.endswith("Max 1/turn.")


def test_the_docstring_teaches_the_cap() -> None:
    (notify, _, _) = NotificationTool(max_delay_seconds=90).get_tools()
    assert "The longest delay accepted is 90 seconds." in (notify.__doc__ or "")


# -- wiring -------------------------------------------------------------------------------


def test_every_agent_binds_the_same_singleton(team: Team) -> None:
    system, team_id = team.system, team.orchestrator.team_id
    cards = [NotificationTool(), NotificationTool()]
    for name, card in zip(["@A", "@B"], cards, strict=True):
        owner = system.createActor(Owner, config=BaseConfig(name=name), team_id=team_id)
        ToolFactory([card], observer=system.get_actor(owner))
    first, second = (card._actor_address for card in cards)
    assert first is not None and first == second and first.name == "#NotificationTool"
    assert isinstance(system.get_actor(first), NotificationActor)
    assert team.proxy.get_team_member("#NotificationTool") == first


def test_a_bad_message_class_is_refused_as_the_card_is_built() -> None:
    """Not first when an agent wires the card (its team starting): the field, the value
    and what to do."""
    with pytest.raises(ValidationError) as info:
        NotificationTool(message_class="acme.Nowhere")
    (error,) = info.value.errors()
    assert error["loc"] == ("message_class",)
    assert error["msg"] == (
        "Value error, NotificationTool message_class 'acme.Nowhere' names no class defined in "
        "this process: import the module that defines it first (a YAML card lists it under "
        "imports) and name that module (module.QualName, not a re-export), or leave "
        "message_class out for the default"
    )
    with pytest.raises(ValidationError, match="not a subclass of akgentic.core.Message"):
        NotificationTool(message_class="akgentic.core.address.ActorAddress")


def test_wiring_needs_an_actor_in_a_team() -> None:
    with pytest.raises(TypeError, match="ActorToolObserver"):
        ToolFactory([NotificationTool()], observer=EventObserver())
    with pytest.raises(ValueError, match="in a team"):
        ToolFactory([NotificationTool()], observer=FakeAgent())


def test_an_unwired_card_says_so() -> None:
    (notify, _, _) = NotificationTool().get_tools()
    with pytest.raises(RuntimeError, match="is not wired"):
        notify(10, "x")
    card, agent = NotificationTool(), FakeAgent()
    ToolCard.observer(card, agent)  # attached, never bound
    (_, pending, _) = card.get_tools()
    with pytest.raises(RuntimeError, match="is not wired"):
        pending()


# -- the cap and the other refusals -------------------------------------------------------


def test_a_delay_over_the_cap_is_refused_naming_the_cap(harness: Harness) -> None:
    alice = harness.owner("@Alice")
    tools = harness.tools(alice)
    with pytest.raises(RetriableError, match="max_delay_seconds=300"):
        tools["notify_me_in"](301, "too far")
    assert "Scheduled" in tools["notify_me_in"](300, "just right")
    tight = harness.tools(harness.owner("@Bob"), NotificationTool(max_delay_seconds=60))
    with pytest.raises(RetriableError, match="cap of max_delay_seconds=60"):
        tight["notify_me_in"](61, "too far")
    assert len(harness.actor.pending()) == 1


@pytest.mark.parametrize(
    ("delay", "content", "problem"),
    [
        (-1, "x", "zero or more"),
        (math.nan, "x", "zero or more"),
        (math.inf, "x", "zero or more"),
        (10, "   ", "must not be empty"),
    ],
)
def test_bad_arguments_are_retriable(
    harness: Harness, delay: float, content: str, problem: str
) -> None:
    tools = harness.tools(harness.owner("@Alice"))
    with pytest.raises(RetriableError, match=problem):
        tools["notify_me_in"](delay, content)
    assert harness.actor.pending() == []


def test_the_per_agent_pending_cap(harness: Harness) -> None:
    card = NotificationTool(max_pending=2)
    alice = harness.tools(harness.owner("@Alice"), card.model_copy())
    bob = harness.tools(harness.owner("@Bob"), card.model_copy())
    alice["notify_me_in"](10, "one")
    alice["notify_me_in"](10, "two")
    with pytest.raises(RetriableError, match="2 pending notifications"):
        alice["notify_me_in"](10, "three")
    assert "Scheduled" in bob["notify_me_in"](10, "bob's own budget")


def test_a_stopped_service_is_retriable(harness: Harness) -> None:
    tools = harness.tools(harness.owner("@Alice"))
    harness.actor_address.request_stop()  # type: ignore[attr-defined]
    assert harness.actor_address.wait_stopped(30)  # type: ignore[attr-defined]
    with pytest.raises(RetriableError, match="not running"):
        tools["pending_notification"]()


def test_the_factory_translates_refusals_to_the_retry_exception(harness: Harness) -> None:
    class RetryError(Exception):
        pass

    alice = harness.team.system.get_actor(harness.owner("@Alice"))
    factory = ToolFactory([NotificationTool()], observer=alice, retry_exception=RetryError)
    notify = {fn.__name__: fn for fn in factory.get_tools()}["notify_me_in"]
    with pytest.raises(RetryError, match="max_delay_seconds"):
        notify(1000, "x")


# -- ownership: listing widens, cancel authority never does --------------------------------


def test_listing_own_by_default_and_the_team_with_all(harness: Harness) -> None:
    alice = harness.tools(harness.owner("@Alice"))
    bob = harness.tools(harness.owner("@Bob"))
    assert alice["pending_notification"]() == "No pending notifications."
    alice["notify_me_in"](20, "alice later")
    bob["notify_me_in"](10, "bob sooner")
    bob["notify_me_in"](30, "bob last")

    own = alice["pending_notification"]()
    assert "alice later" in own and "bob" not in own
    team_wide = alice["pending_notification"](all=True)
    lines = team_wide.splitlines()[1:]
    assert [line.split(": ", 1)[1] for line in lines] == ["bob sooner", "alice later", "bob last"]
    assert "for @Bob" in lines[0] and "for @Alice" in lines[1]


def test_only_the_owner_may_cancel(harness: Harness) -> None:
    alice = harness.tools(harness.owner("@Alice"))
    bob = harness.tools(harness.owner("@Bob"))
    alice["notify_me_in"](20, "alice's")
    (entry,) = harness.actor.pending()
    assert entry.id in bob["pending_notification"](all=True)  # bob can see it...
    with pytest.raises(RetriableError, match="belongs to @Alice"):
        bob["cancel_notification"](entry.id)  # ...but not cancel it
    with pytest.raises(RetriableError, match="no pending notification 'nope'") as unknown:
        alice["cancel_notification"]("nope")
    assert str(unknown.value).endswith(" pending_notification lists your ids.")
    assert harness.actor.pending() == [entry]
    assert alice["cancel_notification"](entry.id).startswith(f"Cancelled notification {entry.id}")
    assert harness.actor.pending() == []
    with pytest.raises(RetriableError, match="no pending notification"):
        alice["cancel_notification"](entry.id)  # gone: cancelled once only


# -- the /-command surface ----------------------------------------------------------------


def test_people_list_and_cancel_through_commands(harness: Harness) -> None:
    alice_address = harness.owner("@Alice")
    alice = harness.tools(alice_address)
    bob = harness.tools(harness.owner("@Bob"))
    alice["notify_me_in"](20, "alice's")
    bob["notify_me_in"](20, "bob's")
    registry = harness.wire(alice_address).get_command_registry()
    assert registry.names() == ["pending_notification", "cancel_notification"]

    mine = registry.dispatch("/pending_notification")
    assert "alice's" in mine and "bob's" not in mine
    assert "bob's" in registry.dispatch("/pending_notification all=true")
    bobs = next(e for e in harness.actor.pending() if e.content == "bob's")
    with pytest.raises(RetriableError, match="belongs to @Bob"):
        registry.dispatch(f"/cancel_notification {bobs.id}")  # a person acts as the agent
    alices = next(e for e in harness.actor.pending() if e.content == "alice's")
    assert "Cancelled" in registry.dispatch(f"/cancel_notification {alices.id}")
    with pytest.raises(CommandNotRecognized):
        registry.dispatch("/notify_me_in 10 hello")  # TOOL_CALL only by default


def test_a_person_is_told_the_commands_to_type_not_the_model_s_calls(harness: Harness) -> None:
    """``/cancel_notification nosuch`` told a person to "Call pending_notification()"."""
    alice = harness.owner("@Alice")
    card = NotificationTool(
        max_pending=1, register_notification=RegisterNotification(expose={TOOL_CALL, COMMAND})
    )
    registry = harness.wire(alice, card).get_command_registry()
    with pytest.raises(RetriableError) as unknown:
        registry.dispatch("/cancel_notification nosuch")
    assert str(unknown.value).endswith(
        "it was delivered, cancelled, or never scheduled. /pending_notification lists your ids."
    )
    scheduled = registry.dispatch("/notify_me_in 60 check the build")
    (entry,) = harness.actor.pending()
    assert scheduled.endswith(f"Cancel it with /cancel_notification {entry.id}.")
    with pytest.raises(RetriableError, match="cancel one with /cancel_notification, or wait"):
        registry.dispatch("/notify_me_in 60 another")
    tools = harness.tools(harness.owner("@Bob"), card.model_copy())
    assert tools["notify_me_in"](60, "bob's").endswith(
        f"Cancel it with cancel_notification({harness.actor.pending()[-1].id!r})."
    )
    with pytest.raises(RetriableError, match="cancel one with cancel_notification, or wait"):
        tools["notify_me_in"](60, "bob's second")


def test_a_person_schedules_a_note_typed_without_quotes(harness: Harness) -> None:
    """``/notify_me_in 60 check the build`` said "too many positional arguments"."""
    alice = harness.owner("@Alice")
    card = NotificationTool(register_notification=RegisterNotification(expose={COMMAND}))
    registry = harness.wire(alice, card).get_command_registry()
    registry.dispatch("/notify_me_in 60 check the build")
    registry.dispatch("/notify_me_in 60 don't forget  the tests")
    registry.dispatch('/notify_me_in 60 "quoted, as before"')
    assert sorted(e.content for e in harness.actor.pending()) == [
        "check the build",
        "don't forget  the tests",
        "quoted, as before",
    ]
    assert registry.describe("notify_me_in").splitlines()[0] == (
        "/notify_me_in delay_seconds content..."
    )
    with pytest.raises(RetriableError, match="missing a required argument: 'content'"):
        registry.dispatch("/notify_me_in 60")


def test_a_custom_class_is_recorded_on_the_entry(harness: Harness) -> None:
    tools = harness.tools(
        harness.owner("@Alice"), NotificationTool(message_class=model_path(Reminder))
    )
    tools["notify_me_in"](5, "x")
    (entry,) = harness.actor.pending()
    assert entry.message_class == model_path(Reminder)
