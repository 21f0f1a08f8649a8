"""MailboxCapability in a real pydantic-ai run (FunctionModel) over a fake inbox:
arrival notices, absorption, the wording parameters and the inert cases."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.core import Message, UserMessage
from akgentic.tool import ToolFactory
from akgentic.tool.mailbox import (
    ABSORBED_PREFIX,
    ARRIVAL_CLOSING,
    ARRIVAL_HEADER,
    MailboxCapability,
    MailboxTool,
)

from .test_mailbox_tool import Inbox, Note

Step = Callable[[list[ModelMessage]], ModelResponse]


class Script:
    """A FunctionModel body: one step per model request, recording what each request held."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        return self.steps[len(self.requests) - 1](messages)


def call(tool: str, **args: Any) -> Step:
    return lambda _: ModelResponse(parts=[ToolCallPart(tool, args)])


def answer(text: str = "done") -> Step:
    return lambda _: ModelResponse(parts=[TextPart(text)])


def _texts(messages: list[ModelMessage]) -> list[tuple[bool, str]]:
    """(is_system, text) per prompt part, as the model saw it.

    A system part after the head reaches a FunctionModel framed as ``<system>…</system>``
    inside a user part; both forms count as system text.
    """
    out: list[tuple[bool, str]] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                out.append((True, part.content))
            elif isinstance(part, UserPromptPart) and isinstance(part.content, str):
                text = part.content
                framed = text.startswith("<system>") and text.endswith("</system>")
                out.append((framed, text[len("<system>") : -len("</system>")] if framed else text))
    return out


def system_texts(messages: list[ModelMessage]) -> list[str]:
    return [text for is_system, text in _texts(messages) if is_system]


def user_texts(messages: list[ModelMessage]) -> list[str]:
    return [text for is_system, text in _texts(messages) if not is_system]


def run(inbox: Inbox, script: Script, card: MailboxTool | None = None, **kwargs: Any) -> Agent:
    card = card if card is not None else MailboxTool()

    def work() -> str:
        """Do some work."""
        return "worked"

    tools = [work, *ToolFactory([card], observer=inbox).get_tools()]
    capability = MailboxCapability(inbox, card, **kwargs)
    agent: Agent = Agent(FunctionModel(script), tools=tools, capabilities=[capability])
    agent.run_sync("start")
    return agent


def test_mid_run_arrivals_are_announced_once_and_the_named_one_absorbed() -> None:
    inbox = Inbox()
    first, second = Note(text="first arrival, long text"), Note(text="second")

    def arrive(_: list[ModelMessage]) -> ModelResponse:
        inbox.mailbox += [first, second]  # delivered while the model works
        return ModelResponse(parts=[ToolCallPart("work", {})])

    script = Script(arrive, call("read_mailbox", message_id=str(first.id)), answer())
    run(inbox, script)

    assert system_texts(script.requests[0]) == []  # nothing waiting yet
    notice = (
        f"{ARRIVAL_HEADER}\n- {first.id}: first arriva\n- {second.id}: second\n{ARRIVAL_CLOSING}"
    )
    assert system_texts(script.requests[1]) == [notice]
    # The third request: the absorbed content, right after the call's result; no new notice.
    assert system_texts(script.requests[2]) == [notice]
    absorbed = f"{ABSORBED_PREFIX}\n\nMessage {first.id}:\nNote: first arrival, long text"
    assert user_texts(script.requests[2]) == ["start", absorbed]
    last = script.requests[2][-1]
    assert isinstance(last, ModelRequest) and "tool-return" in [p.part_kind for p in last.parts]
    assert inbox.consumed == [[first.id]]
    assert inbox.mailbox == [second]  # unnamed: stays queued, arrives later as its own turn


def test_a_message_waiting_at_the_start_is_announced_on_the_first_request() -> None:
    waiting = Note(text="early")
    script = Script(answer())
    run(Inbox(waiting), script)
    (notice,) = system_texts(script.requests[0])
    assert f"- {waiting.id}: early" in notice


def test_an_announcement_raises_no_warning_a_user_would_see() -> None:
    """pydantic-ai's advice to define a CapabilityPart kind is the framework's to follow,
    not a user's: a run with a mid-run announcement and an absorption warns nothing."""
    note = Note(text="hello")
    script = Script(call("read_mailbox", message_id=str(note.id)), answer())
    with warnings.catch_warnings(record=True) as seen:  # the filters as a program has them
        run(Inbox(note), script)
    assert [str(w.message) for w in seen if issubclass(w.category, UserWarning)] == []
    assert system_texts(script.requests[0]) != []  # it did announce


def test_only_mailbox_messages_are_announced_or_absorbed() -> None:
    plain = UserMessage(content="not for mid-run")
    inbox = Inbox(plain)
    script = Script(call("read_mailbox", message_id=str(plain.id)), answer())
    run(inbox, script)
    assert system_texts(script.requests[0]) == []
    (refusal,) = system_texts(script.requests[1])
    assert refusal.startswith(f"Nothing was absorbed for '{plain.id}'")
    assert inbox.mailbox == [plain] and inbox.consumed == []


@pytest.mark.parametrize("named", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_an_id_naming_nothing_is_told_not_swallowed(named: str) -> None:
    inbox = Inbox()
    script = Script(call("read_mailbox", message_id=named), answer())
    run(inbox, script)
    (refusal,) = system_texts(script.requests[1])
    assert refusal.startswith(f"Nothing was absorbed for {named!r}")
    assert user_texts(script.requests[1]) == ["start"]


def test_a_message_is_absorbed_once_even_if_named_twice() -> None:
    note = Note(text="once")
    inbox = Inbox(note)
    script = Script(
        lambda _: ModelResponse(
            parts=[
                ToolCallPart("read_mailbox", {"message_id": str(note.id)}, tool_call_id="a"),
                ToolCallPart("read_mailbox", {"message_id": str(note.id)}, tool_call_id="b"),
            ]
        ),
        answer(),
    )
    run(inbox, script)
    assert inbox.consumed == [[note.id]]
    assert (
        user_texts(script.requests[1]).count(f"{ABSORBED_PREFIX}\n\nMessage {note.id}:\nNote: once")
        == 1
    )


def test_wording_is_two_keyword_only_parameters() -> None:
    note = Note(text="hi")
    inbox = Inbox(note)
    closing = ARRIVAL_CLOSING + " Prefer replies from your manager."
    script = Script(call("read_mailbox", message_id=str(note.id)), answer())
    run(inbox, script, absorbed_prefix="ABSORBED:", arrival_closing=closing)
    assert system_texts(script.requests[0])[0].endswith(closing)
    assert f"ABSORBED:\n\nMessage {note.id}:\nNote: hi" in user_texts(script.requests[1])
    with pytest.raises(TypeError):
        MailboxCapability(inbox, MailboxTool(), "positional prefix")  # type: ignore[call-arg]


def test_a_closing_that_drops_the_read_mailbox_clause_is_refused() -> None:
    with pytest.raises(ValueError, match="arrival_closing must tell the model"):
        MailboxCapability(Inbox(), MailboxTool(), arrival_closing="New mail. Deal with it.")


@pytest.mark.parametrize("card", [None, MailboxTool(read_mailbox=False)])
def test_without_the_signal_the_doorbell_does_not_ring(card: MailboxTool | None) -> None:
    note = Note(text="waiting")
    inbox = Inbox(note)
    script = Script(answer())
    capability = MailboxCapability(inbox, card)
    assert not capability.enabled
    Agent(FunctionModel(script), capabilities=[capability]).run_sync("start")
    assert system_texts(script.requests[0]) == []
    assert inbox.mailbox == [note]


def test_the_observer_is_held_weakly_and_its_loss_makes_the_capability_inert() -> None:
    inbox = Inbox(Note(text="waiting"))
    capability = MailboxCapability(inbox, MailboxTool())
    del inbox
    gc.collect()
    script = Script(answer())
    Agent(FunctionModel(script), capabilities=[capability]).run_sync("start")
    assert system_texts(script.requests[0]) == []


def test_a_failing_inbox_never_breaks_the_run() -> None:
    class Broken(Inbox):
        def get_mailbox(self) -> Sequence[Message]:
            raise RuntimeError("inbox on fire")

    inbox = Broken()
    script = Script(call("read_mailbox", message_id="x"), answer("still fine"))
    capability = MailboxCapability(inbox, MailboxTool())
    tools = ToolFactory([MailboxTool()], observer=inbox).get_tools()
    result = Agent(FunctionModel(script), tools=tools, capabilities=[capability]).run_sync("go")
    assert result.output == "still fine"


def test_a_non_observer_is_refused() -> None:
    with pytest.raises(TypeError, match="MailboxToolObserver"):
        MailboxCapability(object(), MailboxTool())  # type: ignore[arg-type]


def test_the_announced_memory_is_pruned_to_what_still_waits() -> None:
    note = Note(text="x")
    inbox = Inbox(note)
    capability = MailboxCapability(inbox, MailboxTool())
    Agent(FunctionModel(Script(answer())), capabilities=[capability]).run_sync("one")
    inbox.mailbox = []  # handled as its own turn
    script = Script(answer())
    Agent(FunctionModel(script), capabilities=[capability]).run_sync("two")
    assert system_texts(script.requests[0]) == []
    assert capability._announced == set()


def test_capabilities_compare_by_identity() -> None:
    inbox = Inbox()
    one, two = MailboxCapability(inbox, MailboxTool()), MailboxCapability(inbox, MailboxTool())
    assert one != two
