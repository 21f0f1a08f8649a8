"""FinishedResponses: a streamed answer counts once the provider finished it; a cut one is
asked again, then failed — offline models, which set no finish reason, are never checked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelConnectionError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from akgentic.llm import (
    CUT_OFF_ATTEMPTS,
    FinishedResponses,
    ModelConfig,
    ModelRoster,
    ResponseCutOffError,
    ScriptedModel,
    build_model,
    build_roster_model,
    describe_model_failure,
    listening,
)
from akgentic.llm.streamed import _unfinished
from tests.examples.openai_compatible import serve


class Heard:
    """A listener that keeps what it heard: the text, each attempt's on its own."""

    def __init__(self) -> None:
        self.attempts: list[str] = [""]

    def model_event(self, event: ModelResponseStreamEvent) -> None:
        if isinstance(event, PartStartEvent):
            self.attempts[-1] += getattr(event.part, "content", "") or ""
        elif isinstance(event, PartDeltaEvent):
            self.attempts[-1] += getattr(event.delta, "content_delta", "") or ""

    def restarted(self) -> None:
        self.attempts.append("")


def ask(model: Any, listener: Heard | None = None) -> ModelResponse:
    """One plain request to ``model``, with ``listener`` listening."""

    async def request() -> ModelResponse:
        messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("hi")])]
        wrapped = FinishedResponses.around(model)
        if listener is None:
            return await wrapped.request(messages, None, ModelRequestParameters())
        with listening(listener):
            return await wrapped.request(messages, None, ModelRequestParameters())

    return asyncio.run(request())


def openai(url: str, model: str = "m") -> Any:
    return build_model(ModelConfig(provider="openai-compatible", model=model, base_url=url))


def test_a_cut_stream_is_asked_again_and_the_listener_told() -> None:
    cuts = [True]
    heard = Heard()
    with serve(lambda body: ("Hello there.", None), cut=lambda b: bool(cuts) and cuts.pop()) as (
        url,
        requests,
    ):
        response = ask(openai(url), heard)
    assert response.text == "Hello there." and response.finish_reason == "stop"
    assert len(requests) == 2
    assert heard.attempts == ["Hello", "Hello there."]


def test_a_stream_cut_every_time_raises_a_connection_error_naming_the_attempts() -> None:
    heard = Heard()
    with (
        serve(lambda body: ("Hello there.", None), cut=lambda b: True) as (url, requests),
        pytest.raises(ResponseCutOffError) as info,
    ):
        ask(openai(url), heard)
    assert isinstance(info.value, ModelConnectionError)  # a FallbackModel moves on for it
    assert len(requests) == CUT_OFF_ATTEMPTS
    assert heard.attempts == ["Hello"] * CUT_OFF_ATTEMPTS + [""]  # told after each
    assert info.value.message == (
        f"the streamed response ended without a finish reason, {CUT_OFF_ATTEMPTS} time(s) in "
        f"a row (the connection was closed mid-stream, or the server sends none)"
    )


def test_nobody_listening_asks_plainly() -> None:
    with serve(lambda body: ("Hello there.", None), cut=lambda b: True) as (url, requests):
        response = ask(openai(url))
    assert response.text == "Hello there."
    assert [r.get("stream", False) for r in requests] == [False]


async def no_finish(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield "partial "
    yield "text"


@pytest.mark.parametrize(
    "model",
    [
        FunctionModel(stream_function=no_finish),
        TestModel(custom_output_text="plain text"),
        ScriptedModel.default(),
    ],
    ids=["function", "test", "scripted"],
)
def test_an_offline_model_that_sets_no_finish_reason_is_not_taken_for_cut(model: Any) -> None:
    heard = Heard()
    response = ask(model, heard)
    assert len(heard.attempts) == 1 and heard.attempts[0] == response.text
    assert response.text


def test_each_model_of_a_fallback_chain_is_checked_on_its_own() -> None:
    roster = ModelRoster.model_validate(
        {
            "models": [
                {"provider": "test", "model": "first", "fallback_models": ["scripted:default"]},
                "scripted:default",
            ]
        }
    )
    model = build_roster_model(roster)
    assert isinstance(model, FallbackModel)
    assert all(isinstance(m, FinishedResponses) for m in model.models)
    assert FinishedResponses.around(model) is model


def test_a_cut_stream_read_by_run_stream_is_said_as_cut() -> None:
    """Nothing asks again when the caller reads the stream itself: the line says what to do."""
    config = ModelConfig(provider="openai-compatible", model="m", base_url="http://x/v1")

    async def streamed(url: str) -> BaseException:
        built = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        with pytest.raises(ModelConnectionError) as info:
            async with Agent(build_model(built)).run_stream("hi") as result:
                await result.get_output()
        return info.value

    with serve(lambda body: ("Hello there.", None), cut=lambda b: True) as (url, _):
        exc = asyncio.run(streamed(url))
    text = describe_model_failure(exc, config)
    assert text is not None and "\n" not in text
    assert text.startswith("model 'openai-compatible:m' at ")
    assert "cut its answer off before finishing it (Streamed response ended without" in text
    assert text.endswith(
        "or set fallback_models to a model to try next; if its server never sends a finish "
        "reason (some proxies and small local servers do not), set sends_finish_reason: false "
        "on the model"
    )


def test_a_cut_off_model_off_openai_s_api_is_not_told_of_sends_finish_reason() -> None:
    """The setting is refused there: the line does not offer it."""
    config = ModelConfig(provider="anthropic", model="claude")
    text = describe_model_failure(ResponseCutOffError.after("claude", CUT_OFF_ATTEMPTS), config)
    assert text is not None and "sends_finish_reason" not in text
    assert text.endswith("or set fallback_models to a model to try next")


class AnthropicLike(FunctionModel):
    """A FunctionModel that says it is Anthropic's, whose streams always finish."""

    @property
    def system(self) -> str:
        return "anthropic"


def test_a_finishing_providers_stream_that_ends_with_no_finish_reason_is_cut() -> None:
    streams: list[int] = []

    async def unfinished(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        streams.append(1)
        yield "half an ans"

    heard = Heard()
    with pytest.raises(ResponseCutOffError):
        ask(AnthropicLike(stream_function=unfinished), heard)
    assert len(streams) == CUT_OFF_ATTEMPTS
    assert heard.attempts == ["half an ans"] * CUT_OFF_ATTEMPTS + [""]


@pytest.mark.parametrize(
    ("finish_reason", "raw", "state", "cut"),
    [
        (None, None, "complete", True),
        ("stop", None, "complete", False),
        (None, "eos", "complete", False),  # a reason pydantic-ai does not map still finishes
        (None, None, "suspended", False),  # paused by the provider, to be continued
    ],
)
def test_only_an_answer_with_no_finish_reason_at_all_is_unfinished(
    finish_reason: Any, raw: str | None, state: Any, cut: bool
) -> None:
    response = ModelResponse(
        parts=[TextPart("hi")],
        finish_reason=finish_reason,
        provider_details={"finish_reason": raw} if raw else None,
        state=state,
    )
    assert _unfinished(response) is cut
