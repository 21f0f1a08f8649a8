"""A lone surrogate the model itself produced (in its text or in a tool call's arguments),
or one in a retry fed back to it, never breaks the turn: it becomes U+FFFD."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentMessage, BaseAgent
from akgentic.core import ActorSystem, ErrorMessage, EventMessage, UserMessage
from akgentic.llm import (
    LlmMessageEvent,
    LlmTextDeltaEvent,
    ToolCallEvent,
    ToolReturnEvent,
    register_model,
    sound_message,
)
from akgentic.llm.events import _MessageAdapter
from akgentic.tool.core import ToolCard
from akgentic.tool.errors import RetriableError

from ..core.conftest import Team
from .conftest import Script
from .test_base_agent import text
from .test_run_events import run_events, scripted, start


class Echo(ToolCard):
    """Echoes its argument; ``fetch`` refuses, quoting what a server answered (decoded
    loosely: ``"\\udce9"`` in its JSON), as a tool's words about a refusal do."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def echo(word: str) -> str:
            """Echo ``word``."""
            return f"echo {word}"

        def fetch(url: str) -> str:
            """Fetch ``url``."""
            answer = json.loads('{"error": "caf\\udce9 is not a page"}')
            raise RetriableError(f"the server refused {url}: {answer['error']}; try another")

        return [echo, fetch]


def settled(team: Team) -> None:
    """The run's messages were built for the stream (and for the log a resume reads)."""
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, LlmMessageEvent))
    assert team.recorder.of_type(ErrorMessage) == []


def test_a_model_reply_with_a_lone_surrogate_is_answered(system: ActorSystem, team: Team) -> None:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("caf\ud800")])

    agent = start(system, team, scripted(Script(reply)))
    answer = system.ask(agent, UserMessage(content="hi"), timeout=30)
    assert isinstance(answer, AgentMessage) and answer.content == "caf\ufffd"
    streamed = [e.delta for e in run_events(team) if isinstance(e, LlmTextDeltaEvent)]
    assert streamed == ["caf\ufffd"]  # as it streamed, before the response was complete
    settled(team)


def test_tool_arguments_with_a_lone_surrogate_are_called_with_it_replaced(
    system: ActorSystem, team: Team
) -> None:
    """The arguments as JSON text, as a provider sends them: the lone surrogate escaped
    (pydantic refuses it as invalid JSON). A model that does not stream: the agent tests'
    streaming harness re-encodes the arguments through pydantic first."""

    def call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = '{"word": "caf\\ud800"}'
        return ModelResponse(parts=[ToolCallPart("echo", args, tool_call_id="c")])

    with register_model("plain", FunctionModel(Script(call, text("done")))) as plain:
        agent = start(system, team, BaseAgent, tools=[Echo()], models=plain.key)
        answer = system.ask(agent, UserMessage(content="echo"), timeout=30)
    assert isinstance(answer, AgentMessage) and answer.content == "done"
    events = run_events(team)
    (called,) = [e for e in events if isinstance(e, ToolCallEvent)]
    (returned,) = [e for e in events if isinstance(e, ToolReturnEvent)]
    assert called.arguments == {"word": "caf\ufffd"}
    assert (returned.success, returned.content) == (True, "echo caf\ufffd")
    settled(team)


def test_a_retry_quoting_a_lone_surrogate_reaches_the_model(
    system: ActorSystem, team: Team
) -> None:
    def call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("fetch", {"url": "/menu"}, tool_call_id="c")])

    agent = start(system, team, scripted(Script(call, text("gave up"))), tools=[Echo()])
    answer = system.ask(agent, UserMessage(content="open"), timeout=30)
    assert isinstance(answer, AgentMessage) and answer.content == "gave up"
    (returned,) = [e for e in run_events(team) if isinstance(e, ToolReturnEvent)]
    assert not returned.success and "caf\ufffd is not a page" in returned.content
    settled(team)


def test_call_arguments_as_data_with_a_lone_surrogate_are_made_sound() -> None:
    """As a provider whose client decodes the arguments (``json.loads``) hands them; a
    FunctionModel cannot (it encodes them to count tokens), so the hook's function alone."""
    call = ToolCallPart("echo", {"word": "caf\ud800", "pair": "\U0001f600"}, tool_call_id="c")
    fine = ToolCallPart("echo", '{"word": "\\ud83d\\ude00 or \\\\ud800"}', tool_call_id="d")
    sound = sound_message(ModelResponse(parts=[call, fine, TextPart("ok")]))
    assert isinstance(sound, ModelResponse)
    made, kept, said = sound.parts
    assert isinstance(made, ToolCallPart) and made.args == {
        "word": "caf\ufffd",
        "pair": "\U0001f600",
    }
    assert kept == fine  # a pair, and a backslash written before "ud800": nothing lone
    assert said == TextPart("ok")


@pytest.mark.parametrize(
    "part",
    [
        ToolCallPart("echo", {"outer": {"items": [1, {"word": "caf\ud800"}]}}, tool_call_id="c"),
        ToolCallPart("echo", {"outer": {"caf\ud800": "key"}}, tool_call_id="c"),
        ThinkingPart("caf\ud800"),
        TextPart("ok", provider_details={"notes": ["caf\ud800"]}),
    ],
    ids=["deep-in-an-argument", "a-key-in-an-argument", "thinking", "provider-details"],
)
def test_a_lone_surrogate_deep_in_a_response_is_made_sound(part: ModelResponsePart) -> None:
    """The check walks every string of the response, however deep (not only the top
    level of a call's arguments), and the rebuilt response holds U+FFFD there."""
    response = ModelResponse(parts=[TextPart("fine"), part])
    sound = sound_message(response)
    assert sound is not response
    text = json.dumps(_MessageAdapter.dump_python(sound, mode="json"), ensure_ascii=False)
    assert "caf\ufffd" in text and "\ud800" not in text
    assert sound.parts[0] == TextPart("fine")


def test_a_response_without_a_lone_surrogate_is_kept_as_it_is() -> None:
    """Non-ASCII text, an emoji (a pair once encoded, one character here) and data of
    every kind a response holds: nothing to replace, the very same response back."""
    response = ModelResponse(
        parts=[
            TextPart("café \U0001f600", provider_details={"score": 0.5, "n": [1, None]}),
            ThinkingPart("überlegt", signature="sig"),
            ToolCallPart("echo", {"word": "naïve", "n": (1, 2.5, True)}, tool_call_id="c"),
        ],
        model_name="m",
        finish_reason="stop",
    )
    assert sound_message(response) is response
