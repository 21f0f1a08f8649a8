"""The models: entries, config, the message_class contract, and the pure reducer."""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import uuid4

import pytest
from pydantic import ValidationError

from akgentic.core import ActorAddress, Message, UserMessage
from akgentic.core import serialization as registry
from akgentic.core.serialization import SerializableModel, deserialize, model_path, serialize
from akgentic.tool import ToolStateEvent
from akgentic.tool.notification import (
    AGENT_MESSAGE_CLASS,
    FALLBACK_MESSAGE_CLASS,
    NotificationConfig,
    NotificationDelta,
    NotificationState,
    PendingNotification,
    apply_notification_event,
    default_message_class,
    replay_notification_state,
    resolve_message_class,
)

from .conftest import START, Reminder


class NeedsPriority(Message):
    content: str
    priority: int


class Echo(Message):
    """Accepts content= but keeps no such attribute (extra fields are ignored)."""


def entry(id: str, owner: ActorAddress | None = None, due_in: float = 10) -> PendingNotification:
    return PendingNotification(
        id=id,
        owner=owner or ActorAddress(agent_id=uuid4(), name="@A"),
        due_at=START + timedelta(seconds=due_in),
        content=f"note {id}",
        message_class=FALLBACK_MESSAGE_CLASS,
        created_at=START,
    )


def event(seq: int, delta: SerializableModel, tool_id: str = "#NotificationTool") -> ToolStateEvent:
    return ToolStateEvent(tool_id=tool_id, seq=seq, payload=delta)


# -- entries and state ----------------------------------------------------------------------


def test_entries_and_state_round_trip_through_serialization() -> None:
    state = NotificationState(pending=[entry("a"), entry("b")], event_seq=4)
    back = deserialize(serialize(state))
    assert isinstance(back, NotificationState)
    assert back == state
    assert back.pending[0].owner_name == "@A"
    assert back.pending[0].owner_id == str(state.pending[0].owner.agent_id)


def test_times_must_be_aware_and_are_kept_in_utc() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        PendingNotification.model_validate(
            {**entry("a").model_dump(), "due_at": datetime(2030, 1, 1)}
        )
    shifted = datetime.fromisoformat("2030-01-01T14:00:00+02:00")
    data = {**entry("a").model_dump(), "due_at": shifted}
    assert PendingNotification.model_validate(data).due_at.utcoffset() == timedelta(0)


def test_entries_are_immutable() -> None:
    with pytest.raises(ValidationError):
        entry("a").content = "changed"  # type: ignore[misc]


def test_config_requires_the_tool_prefix_and_refuses_unknown_fields() -> None:
    assert NotificationConfig().name == "#NotificationTool"
    with pytest.raises(ValidationError, match="must start with '#'"):
        NotificationConfig(name="Notifications")
    with pytest.raises(ValidationError, match="tick_every"):
        NotificationConfig(tick_every=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        NotificationConfig(tick_interval_seconds=0)


# -- the message_class contract -----------------------------------------------------------


def test_a_registered_message_class_with_content_resolves() -> None:
    assert resolve_message_class(model_path(Reminder)) is Reminder
    assert resolve_message_class(FALLBACK_MESSAGE_CLASS) is UserMessage


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("akgentic.core.messages.UserMessage", "names no class defined"),  # a re-export path
        ("acme.messages.Nowhere", "names no class defined"),
        ("akgentic.core.address.ActorAddress", "not a subclass of akgentic.core.Message"),
        (model_path(NeedsPriority), "cannot be built from content"),
        (model_path(Echo), "does not keep the text"),
    ],
)
def test_a_bad_message_class_is_a_clear_error(path: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as info:
        resolve_message_class(path)
    assert path in str(info.value)


def test_default_is_user_message_without_the_agent_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(registry._registry, AGENT_MESSAGE_CLASS, raising=False)
    assert default_message_class() is UserMessage


def test_default_is_the_agent_message_once_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._registry, AGENT_MESSAGE_CLASS, Reminder)
    assert default_message_class() is Reminder
    monkeypatch.setitem(registry._registry, AGENT_MESSAGE_CLASS, NeedsPriority)
    with pytest.raises(ValueError, match="cannot be built"):  # a broken contract is loud
        default_message_class()


# -- the reducer --------------------------------------------------------------------------


def test_reducer_applies_removals_then_additions_and_is_pure() -> None:
    a, b, c = entry("a"), entry("b"), entry("c")
    start = NotificationState()
    one = apply_notification_event(start, event(1, NotificationDelta(added=[a, b])))
    two = apply_notification_event(one, event(2, NotificationDelta(delivered=["a"], added=[c])))
    three = apply_notification_event(two, event(3, NotificationDelta(cancelled=["c"])))
    assert start == NotificationState()  # untouched
    assert [e.id for e in one.pending] == ["a", "b"]
    assert [e.id for e in two.pending] == ["b", "c"]
    assert three == NotificationState(pending=[b], event_seq=3)


def test_reducer_skips_what_the_state_already_reflects() -> None:
    restored = NotificationState(pending=[entry("b")], event_seq=2)
    old = event(2, NotificationDelta(added=[entry("zzz")]))
    assert apply_notification_event(restored, old) is restored


def test_reducer_refuses_a_gap_and_a_foreign_payload() -> None:
    with pytest.raises(ValueError, match="expected seq 1, got 2"):
        apply_notification_event(NotificationState(), event(2, NotificationDelta(dropped=["x"])))

    class Other(SerializableModel):
        n: int = 1

    with pytest.raises(ValueError, match="not a NotificationDelta"):
        apply_notification_event(NotificationState(), event(1, Other()))


def test_replay_folds_only_its_own_tool_stream() -> None:
    class Other(SerializableModel):
        n: int = 1

    events = [
        event(1, NotificationDelta(added=[entry("a")])),
        event(1, Other(), tool_id="#PlanningTool"),
        event(2, NotificationDelta(dropped=["a"], added=[entry("b")])),
    ]
    state = replay_notification_state(events)
    assert [e.id for e in state.pending] == ["b"] and state.event_seq == 2


def test_entries_the_log_shows_sent_are_settled_as_delivered() -> None:
    a, b = entry("a"), entry("b")
    state = NotificationState(pending=[a, b], event_seq=3)
    assert state.sent_in_log({uuid4()}) is None  # nothing of it was sent
    assert state.sent_in_log({b.message_id, uuid4()}) == NotificationDelta(delivered=["b"])
    assert state.pending == [a, b]  # asking changes nothing: the actor's journal applies it


def test_an_entry_stored_before_message_ids_still_loads() -> None:
    stored = serialize(entry("old"))
    del stored["message_id"]
    loaded = deserialize(stored)
    assert isinstance(loaded, PendingNotification) and loaded.id == "old"
