"""LLM events: round trips through akgentic.core serialization, and the stream mapping."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    BinaryContent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage, RunUsage

from akgentic.core import SerializableModel, deserialize, serialize
from akgentic.llm import (
    ContextReplacedEvent,
    LlmMessageEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ScriptedModel,
    ToolCallEvent,
    ToolReturnEvent,
    from_stream_event,
)


def _run() -> Any:
    model = ScriptedModel.from_dict(
        {
            "rules": [
                {
                    "when": "go",
                    "steps": [
                        {"tool_calls": [{"tool": "echo", "args": {"x": "{message}"}}]},
                        {"text": "[scripted] {result}"},
                    ],
                }
            ]
        }
    )
    agent: Agent[None, str] = Agent(model, system_prompt="sys")

    @agent.tool_plain
    def echo(x: str) -> dict[str, Any]:
        # content that looks like a framework object must survive as plain data
        return {"__model__": "not.a.Class", "x": x}

    return agent.run_sync("go")


EVENTS: list[SerializableModel] = [
    ToolCallEvent(run_id="r1", tool_name="search", tool_call_id="c1", arguments={"q": "x", "n": 3}),
    ToolReturnEvent(
        run_id="r1", tool_name="search", tool_call_id="c1", success=False, outcome="failed"
    ),
    LlmUsageEvent(
        run_id="r1",
        model="openai:gpt-5.2",
        input_tokens=10,
        output_tokens=5,
        cache_read_tokens=2,
        cache_write_tokens=1,
        requests=1,
    ),
    LlmTextDeltaEvent(run_id="r1", delta="Hel", index=0),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_events_round_trip(event: SerializableModel) -> None:
    data = serialize(event)
    assert data["__model__"] == f"akgentic.llm.events.{type(event).__name__}"
    restored = deserialize(json.loads(json.dumps(data)))
    assert type(restored) is type(event)
    assert restored == event


def test_message_event_rebuilds_the_model_context() -> None:
    result = _run()
    event = LlmMessageEvent.from_messages(result.all_messages(), run_id=result.run_id, agent="bot")
    restored = deserialize(json.loads(json.dumps(serialize(event))))
    assert isinstance(restored, LlmMessageEvent)
    assert restored == event
    messages = restored.to_messages()
    assert messages == result.all_messages()
    ret = messages[2].parts[0]
    assert isinstance(ret, ToolReturnPart)
    assert ret.content == {"__model__": "not.a.Class", "x": "go"}


def _varied() -> list[ModelMessage]:
    """Messages with what JSON encoding could treat differently: bytes (base64),
    non-ASCII and line separators, floats out of JSON's range, nested tool data."""
    return [
        ModelRequest(
            parts=[
                SystemPromptPart(content="sys"),
                UserPromptPart(
                    content=[
                        "héllo \u2028 \u00e9 ✓",
                        BinaryContent(data=b"\x00\xff", media_type="image/png"),
                    ]
                ),
            ]
        ),
        ModelResponse(parts=[TextPart("x"), ToolCallPart("t", {"a": float("inf"), "b": 1e300})]),
        ModelRequest(
            parts=[ToolReturnPart("t", {"raw": b"bytes", "n": float("nan"), "l": [{}]}, "c1")]
        ),
    ]


@pytest.mark.parametrize("size", [0, 1, 3])
def test_messages_json_is_byte_for_byte_what_the_list_adapter_writes(size: int) -> None:
    """Built from its messages' items, ``messages_json`` is the very text pydantic-ai's
    ``ModelMessagesTypeAdapter`` writes for the list (what was stored before), and the
    items it keeps are that list's items, each the JSON of one message."""
    messages = _varied()[:size]
    expected = ModelMessagesTypeAdapter.dump_json(messages).decode()
    run = LlmMessageEvent.from_messages(messages, run_id="r", agent="bot")
    replaced = ContextReplacedEvent.from_messages(messages, agent="bot")
    for event in (run, replaced):
        assert event.messages_json == expected
        items = event.message_items()
        assert items is not None and "[" + ",".join(items) + "]" == expected
        assert [json.loads(item) for item in items] == json.loads(expected)


def test_the_items_are_private_and_an_event_from_storage_has_none() -> None:
    """The items are never stored or sent, do not make an event unequal to itself read
    back, and are not trusted once ``messages_json`` is reassigned."""
    event = LlmMessageEvent.from_messages(_varied(), run_id="r", agent="bot")
    data = serialize(event)
    assert set(data) == {"__model__", "run_id", "agent", "messages_json"}
    restored = deserialize(json.loads(json.dumps(data)))
    assert isinstance(restored, LlmMessageEvent)
    assert restored == event and event == restored
    assert restored.message_items() is None
    assert LlmMessageEvent(run_id="r", agent="b", messages_json="[]").message_items() is None
    event.messages_json = "[]"
    assert event.message_items() is None


def test_restored_messages_continue_a_conversation() -> None:
    result = _run()
    event = LlmMessageEvent.from_messages(result.all_messages(), run_id="r", agent="bot")
    model = ScriptedModel.default()
    follow_up = Agent(model).run_sync("again", message_history=event.to_messages())
    assert follow_up.output.endswith("You said: again")
    assert len(follow_up.all_messages()) == len(result.all_messages()) + 2


def test_from_parts_and_usage() -> None:
    call = ToolCallPart("search", '{"q": "x"}', tool_call_id="c9")
    assert ToolCallEvent.from_part(call, run_id="r") == ToolCallEvent(
        run_id="r", tool_name="search", tool_call_id="c9", arguments={"q": "x"}
    )
    ret = ToolReturnPart("search", "ok", tool_call_id="c9", outcome="retried")
    assert ToolReturnEvent.from_part(ret, run_id="r") == ToolReturnEvent(
        run_id="r",
        tool_name="search",
        tool_call_id="c9",
        success=False,
        outcome="retried",
        content="ok",
    )
    usage = RunUsage(requests=2, tool_calls=1, input_tokens=7, output_tokens=3, cache_read_tokens=4)
    assert LlmUsageEvent.from_usage(usage, run_id="r", model="m") == LlmUsageEvent(
        run_id="r",
        model="m",
        input_tokens=7,
        output_tokens=3,
        cache_read_tokens=4,
        requests=2,
        tool_calls=1,
    )
    one = LlmUsageEvent.from_usage(
        RequestUsage(input_tokens=1, output_tokens=1), run_id="r", model="m"
    )
    assert (one.requests, one.tool_calls) == (1, 0)


def test_from_stream_event_maps_text_and_tools() -> None:
    call = ToolCallPart("search", {"q": "x"}, tool_call_id="c1")
    ret = ToolReturnPart("search", "found", tool_call_id="c1")
    assert from_stream_event(PartStartEvent(index=0, part=TextPart("Hi")), run_id="r") == [
        LlmTextDeltaEvent(run_id="r", delta="Hi", index=0)
    ]
    assert from_stream_event(PartStartEvent(index=1, part=TextPart("")), run_id="r") == []
    assert from_stream_event(
        PartDeltaEvent(index=0, delta=TextPartDelta(" there")), run_id="r"
    ) == [LlmTextDeltaEvent(run_id="r", delta=" there", index=0)]
    assert from_stream_event(FunctionToolCallEvent(call), run_id="r") == [
        ToolCallEvent(run_id="r", tool_name="search", tool_call_id="c1", arguments={"q": "x"})
    ]
    assert from_stream_event(FunctionToolResultEvent(ret), run_id="r") == [
        ToolReturnEvent(
            run_id="r", tool_name="search", tool_call_id="c1", success=True, content="found"
        )
    ]
    assert from_stream_event(PartStartEvent(index=0, part=call), run_id="r") == []
    assert from_stream_event(object(), run_id="r") == []


def test_seed_import_path() -> None:
    from akgentic.llm import event

    assert event.ToolCallEvent is ToolCallEvent
    assert event.ToolReturnEvent is ToolReturnEvent
