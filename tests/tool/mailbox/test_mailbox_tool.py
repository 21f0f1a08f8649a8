"""MailboxTool: one capability per channel, the acknowledgement-only signal, the idle /stop,
the MailboxMessage base and the observer protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import pytest

from akgentic.core import Message
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import COMMAND, TOOL_CALL, ToolFactory, ToolObserver
from akgentic.tool.mailbox import (
    NO_RUN_TO_CANCEL,
    MailboxMessage,
    MailboxTool,
    MailboxToolObserver,
    ReadMailbox,
    Stop,
)

from ..conftest import EventObserver


class Note(MailboxMessage):
    text: str

    def rendering(self) -> str:
        return f"Note: {self.text}"

    def rendering_preview(self) -> str:
        return self.text[:12]


class Inbox(EventObserver):
    """A MailboxToolObserver over a plain list."""

    def __init__(self, *messages: Message) -> None:
        super().__init__()
        self.mailbox: list[Message] = list(messages)
        self.consumed: list[list[UUID]] = []

    def get_mailbox(self) -> Sequence[Message]:
        return list(self.mailbox)

    def consume_mailbox(self, ids: Sequence[UUID]) -> list[Message]:
        self.consumed.append(list(ids))
        taken = [m for m in self.mailbox if m.id in ids]
        self.mailbox = [m for m in self.mailbox if m.id not in ids]
        return taken


def names(fns: list[Any]) -> list[str]:
    return [fn.__name__ for fn in fns]


# -- routing -------------------------------------------------------------------------------


def test_default_serves_one_capability_per_channel() -> None:
    factory = ToolFactory([MailboxTool()], observer=Inbox())
    assert names(factory.get_tools()) == ["read_mailbox"]
    assert list(factory.get_commands()) == [Stop]
    assert factory.get_command_registry().names() == ["stop"]
    assert factory.get_system_prompts() == []
    assert factory.get_context_states() == []


def test_each_capability_can_be_removed() -> None:
    only_stop = ToolFactory([MailboxTool(read_mailbox=False)], observer=Inbox())
    assert only_stop.get_tools() == []
    assert list(only_stop.get_commands()) == [Stop]
    no_stop = ToolFactory([MailboxTool(stop=False)], observer=Inbox())
    assert names(no_stop.get_tools()) == ["read_mailbox"]
    assert no_stop.get_commands() == {}


def test_a_capability_on_a_channel_the_card_cannot_serve_is_dropped_silently() -> None:
    card = MailboxTool(read_mailbox=ReadMailbox(expose={COMMAND}), stop=Stop(expose={TOOL_CALL}))
    factory = ToolFactory([card], observer=Inbox())
    assert factory.get_tools() == []
    assert factory.get_commands() == {}
    assert not card.announces_arrivals()


def test_the_card_needs_no_observer() -> None:
    (read_mailbox,) = MailboxTool().get_tools()  # never wired
    assert "abc" in read_mailbox("abc")


# -- the signal ----------------------------------------------------------------------------


def test_read_mailbox_acknowledges_and_touches_nothing() -> None:
    waiting = Note(text="hello")
    inbox = Inbox(waiting)
    (read_mailbox,) = ToolFactory([MailboxTool()], observer=inbox).get_tools()
    reply = read_mailbox(str(waiting.id))
    assert str(waiting.id) in reply and "will not arrive again" in reply
    assert "hello" not in reply  # no content: delivery is the capability's
    assert inbox.mailbox == [waiting] and inbox.consumed == []


def test_read_mailbox_does_not_validate_the_id() -> None:
    (read_mailbox,) = ToolFactory([MailboxTool()], observer=Inbox()).get_tools()
    assert "not-a-uuid" in read_mailbox("not-a-uuid")


def test_the_docstring_teaches_the_absorb_contract() -> None:
    (read_mailbox,) = MailboxTool().get_tools()
    doc = " ".join((read_mailbox.__doc__ or "").split())
    assert "absorbs it" in doc
    assert "will NOT arrive again later as a turn of its own" in doc
    assert "Messages you do not name stay queued" in doc


def test_instructions_reach_the_docstring() -> None:
    card = MailboxTool(read_mailbox=ReadMailbox(instructions="Only absorb replies."))
    (read_mailbox,) = ToolFactory([card], observer=Inbox()).get_tools()
    assert (read_mailbox.__doc__ or "").endswith("Only absorb replies.")


# -- /stop ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["/stop", "stop", "  /stop  "])
def test_stop_dispatched_while_idle_answers_exactly(text: str) -> None:
    registry = ToolFactory([MailboxTool()], observer=Inbox()).get_command_registry()
    assert registry.dispatch(text) == "There is no run to cancel." == NO_RUN_TO_CANCEL


def test_stop_is_announced_with_no_arguments() -> None:
    registry = ToolFactory([MailboxTool()], observer=Inbox()).get_command_registry()
    (descriptor,) = registry.announcement().commands
    assert descriptor.name == "stop" and descriptor.args == []
    assert descriptor.description == "Cancel the agent's current run."


# -- MailboxMessage ------------------------------------------------------------------------


def test_mailbox_message_requires_both_renderings() -> None:
    class PreviewOnly(MailboxMessage):
        def rendering_preview(self) -> str:
            return "p"

    class FullOnly(MailboxMessage):
        def rendering(self) -> str:
            return "f"

    with pytest.raises(TypeError, match="rendering"):
        PreviewOnly()  # type: ignore[abstract]
    with pytest.raises(TypeError, match="rendering_preview"):
        FullOnly()  # type: ignore[abstract]


def test_a_mailbox_message_is_a_message_and_round_trips() -> None:
    note = Note(text="hello")
    assert isinstance(note, Message)
    back = deserialize(serialize(note))
    assert isinstance(back, Note) and back == note


# -- the observer contract -----------------------------------------------------------------


def test_inbox_satisfies_the_protocol() -> None:
    assert isinstance(Inbox(), MailboxToolObserver)


@pytest.mark.parametrize("missing", ["get_mailbox", "consume_mailbox"])
def test_a_missing_member_fails_the_protocol_check(missing: str) -> None:
    """The conformance guard, proven by removing one member (never the decorator)."""

    class Partial(EventObserver):
        def get_mailbox(self) -> Sequence[Message]:
            return []

        def consume_mailbox(self, ids: Sequence[UUID]) -> list[Message]:
            return []

    delattr(Partial, missing)
    assert isinstance(Partial(), ToolObserver)  # it extends ToolObserver, nothing wider
    assert not isinstance(Partial(), MailboxToolObserver)


def test_card_round_trips() -> None:
    card = MailboxTool(read_mailbox=False, stop=Stop(instructions="x"))
    assert deserialize(serialize(card)) == card
