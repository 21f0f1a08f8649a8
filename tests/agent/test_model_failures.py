"""A model request that fails at the provider, through the agent, end to end against an
OpenAI-compatible server on loopback: a stream cut off before its finish reason is asked
again, then fallen back from, then said in one line; the usage of a fallback's answer is
booked to the model that answered, not to the chain; tool-call arguments that are not JSON
are sent back with what to send, and when they never parse the line says to switch model."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import RequestUsage
from rich.console import Console

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.agent.accounting import PromptAccountingEvent
from akgentic.agent.turn import TurnEndedEvent
from akgentic.cli.live import LiveView
from akgentic.core import ActorSystem, ErrorMessage, EventMessage, UserMessage
from akgentic.llm import (
    CUT_OFF_ATTEMPTS,
    LlmAnswerRestartedEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ModelRoster,
    register_model,
)
from tests.examples.openai_compatible import serve

from ..cli.test_live import record, screen
from ..core.conftest import Team
from .conftest import Script
from .test_base_agent import Calc, call

ANSWER = "Hello there, person."


def answer(body: dict[str, Any]) -> tuple[str | None, None]:
    return ANSWER, None


def start(system: ActorSystem, team: Team, roster: ModelRoster) -> Any:
    config = AgentConfig(name="@Agent", role="Assistant", models=roster)
    return system.createActor(BaseAgent, config=config, team_id=team.team_id)


def events_of(team: Team, kind: type[Any]) -> list[Any]:
    return [m.event for m in team.recorder.of_type(EventMessage) if isinstance(m.event, kind)]


def test_a_stream_cut_before_its_finish_is_asked_again_and_the_whole_answer_kept(
    system: ActorSystem, team: Team
) -> None:
    cuts = [True]  # the first answer only: the connection closes after its first chunk

    def cut_first(body: dict[str, Any]) -> bool:
        return bool(cuts) and cuts.pop()

    with serve(answer, cut=cut_first) as (url, requests):
        agent = start(system, team, ModelRoster.from_spec("openai-compatible:m").with_base_url(url))
        reply = system.ask(agent, UserMessage(content="hi"), timeout=60)
    assert isinstance(reply, AgentMessage) and reply.content == ANSWER
    assert len(requests) == 2 and all(r["stream"] for r in requests)
    [usage] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, LlmUsageEvent)
    )
    assert isinstance(usage.event, LlmUsageEvent) and usage.event.requests == 1
    # the cut answer's text was published as it came, then said to be no answer; the new
    # answer's follows it whole
    streamed = [
        m.event
        for m in team.recorder.of_type(EventMessage)
        if isinstance(m.event, LlmTextDeltaEvent | LlmAnswerRestartedEvent)
    ]
    assert [type(e) for e in streamed] == [
        LlmTextDeltaEvent,
        LlmAnswerRestartedEvent,
        LlmTextDeltaEvent,
    ]
    assert [getattr(e, "delta", None) for e in streamed] == ["Hello", None, ANSWER]
    assert isinstance(streamed[1], LlmAnswerRestartedEvent) and streamed[1].chars == len("Hello")
    # the person's live view ends showing the whole answer only
    buffer = io.StringIO()
    console = Console(file=buffer, width=60, force_terminal=True, soft_wrap=True)
    live = LiveView(console, human="@Human", known={"@Agent"})
    for seq, message in enumerate(team.recorder.of_type(EventMessage), 1):
        live.render(record(seq, message))
    live.finish()
    assert screen(buffer.getvalue(), 60) == [f"@Agent ✎ {ANSWER}"]


def test_a_stream_cut_every_time_fails_the_turn_in_one_line_saying_what_to_do(
    system: ActorSystem, team: Team
) -> None:
    with serve(answer, cut=lambda body: True) as (url, requests):
        agent = start(system, team, ModelRoster.from_spec("openai-compatible:m").with_base_url(url))
        system.tell(agent, UserMessage(content="hi"))
        [ended] = team.recorder.wait_for_type(
            EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
        )
    assert len(requests) == CUT_OFF_ATTEMPTS
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    assert ended.event.error == (
        f"model 'openai-compatible:m' at {url} cut its answer off before finishing it (the "
        f"streamed response ended without a finish reason, {CUT_OFF_ATTEMPTS} time(s) in a "
        f"row (the connection was closed mid-stream, or the server sends none)): send the "
        f"message again; if it keeps happening, check the server or a proxy in between (one "
        f"that closes streamed responses early), or set fallback_models to a model to try "
        f"next; if its server never sends a finish reason (some proxies and small local "
        f"servers do not), set sends_finish_reason: false on the model"
    )
    [error] = team.recorder.of_type(ErrorMessage)
    assert error.content == ended.event.error
    assert not [m for m in team.recorder.of_type(AgentMessage) if m.content.startswith("Hello")]
    assert [e.chars for e in events_of(team, LlmAnswerRestartedEvent)] == [5] * CUT_OFF_ATTEMPTS


def test_a_server_that_never_sends_a_finish_reason_fails_each_answer_naming_the_setting(
    system: ActorSystem, team: Team
) -> None:
    with serve(answer, finish_reason=False) as (url, requests):
        agent = start(system, team, ModelRoster.from_spec("openai-compatible:m").with_base_url(url))
        system.tell(agent, UserMessage(content="hi"))
        [ended] = team.recorder.wait_for_type(
            EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
        )
    assert len(requests) == CUT_OFF_ATTEMPTS  # each whole answer read as cut
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    assert ended.event.error is not None
    assert ended.event.error.startswith(f"model 'openai-compatible:m' at {url} cut its answer")
    assert ended.event.error.endswith("set sends_finish_reason: false on the model")


def test_sends_finish_reason_false_takes_such_a_servers_whole_answer(
    system: ActorSystem, team: Team
) -> None:
    roster = ModelRoster.model_validate(
        {"models": [{"provider": "openai-compatible", "model": "m", "sends_finish_reason": False}]}
    )
    with serve(answer, finish_reason=False) as (url, requests):
        agent = start(system, team, roster.with_base_url(url))
        reply = system.ask(agent, UserMessage(content="hi"), timeout=60)
    assert isinstance(reply, AgentMessage) and reply.content == ANSWER
    assert len(requests) == 1 and requests[0]["stream"]
    assert "".join(e.delta for e in events_of(team, LlmTextDeltaEvent)) == ANSWER


def fallback_roster(url: str) -> ModelRoster:
    return ModelRoster.model_validate(
        {
            "models": [
                {
                    "provider": "openai-compatible",
                    "model": "first",
                    "base_url": url,
                    "fallback_models": ["openai-compatible:second"],
                },
                {"provider": "openai-compatible", "model": "second", "base_url": url},
            ]
        }
    )


def test_a_stream_cut_every_time_falls_back_and_books_the_usage_to_the_model_that_answered(
    system: ActorSystem, team: Team
) -> None:
    with serve(answer, cut=lambda body: body["model"] == "first") as (url, requests):
        agent = start(system, team, fallback_roster(url))
        reply = system.ask(agent, UserMessage(content="hi"), timeout=60)
    assert isinstance(reply, AgentMessage) and reply.content == ANSWER
    assert [r["model"] for r in requests] == ["first"] * CUT_OFF_ATTEMPTS + ["second"]
    deltas = [e.delta for e in events_of(team, LlmTextDeltaEvent)]
    assert deltas == ["Hello"] * CUT_OFF_ATTEMPTS + [ANSWER]  # each cut attempt apart
    dropped = [e.chars for e in events_of(team, LlmAnswerRestartedEvent)]
    assert dropped == [len("Hello")] * CUT_OFF_ATTEMPTS  # each taken back, the last too
    [usage] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, LlmUsageEvent)
    )
    assert isinstance(usage.event, LlmUsageEvent)
    booked = (usage.event.model, usage.event.requests, usage.event.input_tokens)
    assert booked == ("second", 1, 12)
    [accounted] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, PromptAccountingEvent)
    )
    assert isinstance(accounted.event, PromptAccountingEvent)
    assert accounted.event.model == "second"


def test_a_failed_model_and_its_answering_fallback_each_book_their_own_usage(
    system: ActorSystem, team: Team
) -> None:
    """The fallback answers the first request (a tool call), the model in force the second:
    each model is booked its own request's tokens, the one that answered last the rest (the
    run's tool call), in the order they first answered."""
    first_calls: list[int] = []

    def first(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        first_calls.append(len(messages))
        if len(first_calls) == 1:
            raise ModelHTTPError(503, "first", body="overloaded")
        return ModelResponse(
            parts=[TextPart("done")], usage=RequestUsage(input_tokens=30, output_tokens=3)
        )

    def second(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=20, output_tokens=2)
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})], usage=usage)

    one = register_model("first-model", FunctionModel(first, model_name="first-model"))
    two = register_model("second-model", FunctionModel(second, model_name="second-model"))
    try:
        roster = ModelRoster.model_validate(
            {
                "models": [
                    {"provider": "registered", "model": one.name, "fallback_models": [two.key]},
                    two.key,
                ]
            }
        )
        config = AgentConfig(name="@Agent", role="Assistant", models=roster, tools=[Calc()])
        agent = system.createActor(BaseAgent, config=config, team_id=team.team_id)
        reply = system.ask(agent, UserMessage(content="add"), timeout=60)
    finally:
        one.unregister()
        two.unregister()
    assert isinstance(reply, AgentMessage) and reply.content == "done"
    usage = team.recorder.wait_for_type(
        EventMessage, 2, where=lambda m: isinstance(m.event, LlmUsageEvent)
    )
    booked = [
        (u.event.model, u.event.requests, u.event.input_tokens, u.event.tool_calls)
        for u in usage
        if isinstance(u.event, LlmUsageEvent)
    ]
    assert booked == [("second-model", 1, 20, 0), ("first-model", 1, 30, 1)]


call_add = call("add", a=1, b=2)


def broken_add(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("add", '{"a": 1, "b"')])


def said_back(messages: list[ModelMessage]) -> str:
    """What the last request told the model of its previous step (tool returns, retries)."""
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return "\n".join(str(getattr(part, "content", "")) for part in request.parts)


def raw_stream(script: Script) -> Callable[..., AsyncIterator[Any]]:
    """``script`` as a stream that sends a tool call's arguments as the text they are, as a
    provider's deltas do (``conftest.streamed`` sends them re-encoded)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for index, part in enumerate(script(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                args = part.args if isinstance(part.args, str) else json.dumps(part.args)
                yield {index: DeltaToolCall(name=part.tool_name, json_args=args)}

    return stream


@pytest.mark.parametrize("streams", [True, False])
def test_tool_arguments_that_are_not_json_are_sent_back_with_what_to_send(
    system: ActorSystem, team: Team, streams: bool
) -> None:
    script = Script(broken_add, call_add, lambda m, i: ModelResponse(parts=[TextPart("3")]))
    model = FunctionModel(script, stream_function=raw_stream(script) if streams else None)
    registration = register_model(f"raw-{streams}", model)
    roster = ModelRoster.from_spec(registration.key)
    config = AgentConfig(name="@Agent", role="Assistant", models=roster, tools=[Calc()])
    agent = system.createActor(BaseAgent, config=config, team_id=team.team_id)
    try:
        reply = system.ask(agent, UserMessage(content="add 1 and 2"), timeout=60)
    finally:
        registration.unregister()
    assert isinstance(reply, AgentMessage) and reply.content == "3"
    assert said_back(script.seen[1]) == (
        "The arguments of your call to add are not valid JSON (Invalid JSON: EOF while "
        "parsing an object at line 1 column 12). Call add again with its arguments as one "
        "complete JSON object that matches its parameters."
    )


def test_tool_arguments_that_never_parse_fail_the_turn_saying_to_switch_model(
    system: ActorSystem, team: Team, model_key: Callable[[Script], str]
) -> None:
    """Through the conftest's stream, which sends them re-encoded (``INVALID_JSON``)."""
    key = model_key(Script(broken_add))
    config = AgentConfig(
        name="@Agent", role="Assistant", models=ModelRoster.from_spec(key), tools=[Calc()]
    )
    agent = system.createActor(BaseAgent, config=config, team_id=team.team_id)
    system.tell(agent, UserMessage(content="add 1 and 2"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    assert ended.event.error == (
        f"model {key!r} sent arguments for tool 'add' that are not valid JSON, each time it "
        f'was asked again (Invalid JSON: {{"a": 1, "b"): it '
        f"may not support tool calls (or its server does not parse them); switch to a model "
        f"that supports tool calls (/switch_model, or --model provider:model)"
    )
    [error] = team.recorder.of_type(ErrorMessage)
    assert error.content == ended.event.error
