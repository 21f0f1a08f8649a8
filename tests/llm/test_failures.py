"""describe_model_failure: a failed model request as one line naming the URL tried."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelQuotaExceededError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.llm import (
    ModelConfig,
    ModelRoster,
    build_model,
    build_roster_model,
    describe_model_failure,
)
from tests.examples.openai_compatible import serve


def failure_of(config: ModelConfig) -> ModelAPIError:
    with pytest.raises(ModelAPIError) as info:
        Agent(build_model(config)).run_sync("hi")
    return info.value


def test_a_refused_connection_names_the_url_tried() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        config = ModelConfig(provider="openai-compatible", model="llama3.2", base_url=url)
        text = describe_model_failure(failure_of(config), config)
    assert text is not None
    assert text.startswith(
        f"cannot reach model 'openai-compatible:llama3.2' at {url}/chat/completions "
        "(connection refused): is its server running there?"
    )


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, "refused the key in LOCAL_KEY (HTTP 401: "),
        (404, "does not serve model 'openai-compatible:nope' (HTTP 404: "),
        (429, "is rate limited (HTTP 429: "),
        (500, "failed on the server's side (HTTP 500: "),
        (503, "failed on the server's side (HTTP 503: "),
    ],
)
def test_an_http_error_says_what_it_means(
    status: int, expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with serve(fail=status) as (url, _):
        config = ModelConfig(
            provider="openai-compatible", model="nope", base_url=url, api_key_env="LOCAL_KEY"
        )
        text = describe_model_failure(failure_of(config), config)
    assert text is not None
    assert f"at {url}/chat/completions" in text
    assert expected in text


def test_anything_else_is_not_a_model_failure() -> None:
    assert describe_model_failure(ValueError("no")) is None
    assert describe_model_failure(ConnectionRefusedError()) is None


def test_a_refused_request_that_sent_no_key_says_so_and_where_one_goes() -> None:
    with serve(fail=401) as (url, _):
        config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        text = describe_model_failure(failure_of(config), config)
    assert text is not None
    assert text.startswith(f"model 'openai-compatible:m' at {url}/chat/completions wants an")
    assert text.endswith(
        "and none was sent: set `api_key_env` on the model to the environment variable holding it"
    )


async def streamed_failure(config: ModelConfig) -> Exception:
    with pytest.raises(Exception) as info:
        async with Agent(build_model(config)).run_stream("hi") as result:
            await result.get_output()
    return info.value


@pytest.mark.parametrize("stream", [False, True])
def test_a_base_url_that_answers_with_a_web_page_is_named_with_the_check_to_make(
    stream: bool,
) -> None:
    with serve(html=True) as (url, _):
        config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        if stream:
            exc: Exception = asyncio.run(streamed_failure(config))
        else:
            with pytest.raises(Exception) as info:
                Agent(build_model(config)).run_sync("hi")
            exc = info.value
        text = describe_model_failure(exc, config)
    assert text is not None and "\n" not in text
    assert text.startswith(f"model 'openai-compatible:m' at {url} did not answer as an ")
    assert f"is {url} an OpenAI-compatible API (not a web page)?" in text


def test_an_error_page_from_a_base_url_is_one_line_naming_the_url_and_the_check() -> None:
    """A web server at the base URL answered 501 with its HTML page, printed whole."""
    with serve(fail=501, html=True) as (url, _):
        config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        text = describe_model_failure(failure_of(config), config)
    assert text == (
        f"model 'openai-compatible:m' at {url}/chat/completions answered HTTP 501 with a web "
        f"page, not an API: is {url} an OpenAI-compatible API? Its base URL "
        f"usually ends in /v1 (akgentic run --base-url URL, or OPENAI_BASE_URL)"
    )


def test_a_long_error_body_is_one_line_cut_short() -> None:
    exc = ModelHTTPError(500, "m", body="line one\n" + "x" * 5_000)
    text = describe_model_failure(exc)
    assert text is not None and "\n" not in text
    assert text.startswith("model 'm' failed: HTTP 500: status_code: 500, model_name: m, body: ")
    assert len(text) < 400 and "characters)" in text


def test_a_model_failing_its_output_checks_is_not_blamed_on_the_url() -> None:
    config = ModelConfig(provider="openai-compatible", model="m", base_url="http://h/v1")
    exc = UnexpectedModelBehavior("Exceeded maximum output retries (1)")
    assert describe_model_failure(exc, config) is None


def test_a_request_past_the_models_window_says_what_to_do() -> None:
    """One line: the window, then what to do — compact or clear, and the setting that has
    the agent compact before the window fills (set it; or, set, check it)."""
    refused = ModelContextWindowExceededError("m", "context_length_exceeded")
    unknown = ModelConfig(provider="openai-compatible", model="m", base_url="http://h/v1")
    line = describe_model_failure(refused, unknown)
    assert line is not None and "\n" not in line
    assert line.startswith("model 'openai-compatible:m' at http://h/v1 refused the request: ")
    assert "exceeds the model's context window (context_length_exceeded)" in line
    assert "/compact or /clear" in line
    assert "set the model's context_length to its window" in line
    known = unknown.model_copy(update={"context_length": 128_000})
    line = describe_model_failure(refused, known)
    assert line is not None
    assert "check the model's context_length (128000) is not larger than its real window" in line


def test_a_model_whose_fallbacks_all_failed_says_each_failure_in_the_order_tried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pydantic-ai raises a group of the failures; the line names each model, its URL and
    what to check for it, first the model in force, then its fallbacks in order."""
    monkeypatch.setenv("LOCAL_KEY", "sk-local")
    with serve(fail=500) as (first, _), serve(fail=401) as (second, asked):
        roster = ModelRoster(
            models=[
                ModelConfig(
                    provider="openai-compatible",
                    model="a",
                    base_url=first,
                    fallback_models=["ollama:b"],
                ),
                ModelConfig(provider="ollama", model="b", base_url=second, api_key_env="LOCAL_KEY"),
            ]
        )
        with pytest.raises(Exception) as info:
            Agent(build_roster_model(roster)).run_sync("hi")
        text = describe_model_failure(info.value, roster.active_config, roster)
    assert asked  # the fallback was really tried
    assert text is not None and "\n" not in text
    assert text.startswith(
        f"all 2 models failed, tried in order: (1) model 'openai-compatible:a' at "
        f"{first}/chat/completions failed on the server's side (HTTP 500: "
    )
    assert (
        f"; (2) model 'ollama:b' at {second}/chat/completions refused the key in LOCAL_KEY "
        "(HTTP 401: " in text
    )


@pytest.mark.parametrize(
    ("headers", "wait"), [({"retry-after-ms": "10"}, "wait 0.01s"), ({}, "wait a while")]
)
def test_a_rate_limit_says_how_long_the_server_asked_to_wait(
    headers: dict[str, str], wait: str
) -> None:
    with serve(fail=429, fail_headers=headers) as (url, _):
        config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        text = describe_model_failure(failure_of(config), config)
    assert text is not None and "\n" not in text
    assert text.endswith(
        f"): {wait} and send the message again, or set fallback_models to a model to try next"
    )


def test_a_server_failure_says_to_try_later_or_fall_back() -> None:
    with serve(fail=500) as (url, _):
        config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        text = describe_model_failure(failure_of(config), config)
    assert text is not None
    assert text.endswith(
        "): send the message again later, or set fallback_models to a model to try next"
    )


def test_a_used_up_quota_says_waiting_will_not_help() -> None:
    """OpenAI answers 429 ``insufficient_quota`` when the credits are gone: no wait helps."""
    exc = ModelQuotaExceededError("gpt-5.2", "insufficient_quota")
    config = ModelConfig(provider="openai", model="gpt-5.2")
    text = describe_model_failure(exc, config)
    assert text == (
        "model 'openai:gpt-5.2' refused the request: the account's quota or credits are used "
        "up (insufficient_quota): waiting will not help; top up the account or switch to "
        "another model (/switch_model, or --model on resume)"
    )


class NotJson(BaseHTTPRequestHandler):
    """Answers every chat completion 200 with a body that is not JSON: plain text, or a
    streamed event whose data is cut mid-object."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'data: {"id": "x", "choices": [{"index": 0, "delta": {"con\n\n')
            return
        data = b"Service temporarily unavailable, try again later"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize("stream", [False, True])
def test_a_body_that_is_not_json_says_to_check_what_answered(stream: bool) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotJson)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = ModelConfig(provider="openai-compatible", model="m", base_url=url)
        if stream:
            exc: Exception = asyncio.run(streamed_failure(config))
        else:
            exc = failure_of(config)
    finally:
        server.shutdown()
        server.server_close()
    text = describe_model_failure(exc, config)
    assert text is not None and "\n" not in text
    assert text.startswith(
        f"model 'openai-compatible:m' at {url} answered with a body that is not valid JSON ("
    )
    assert text.endswith(
        "something other than the model's API may have answered (a proxy, a login or error "
        "page) or cut the answer short; check that the base_url reaches the model's API "
        "(akgentic run --base-url URL, or OPENAI_BASE_URL) and send the message again"
    )


def test_tool_arguments_that_never_parse_say_to_use_a_model_that_supports_tool_calls() -> None:
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("add", '{"a": 1, "b"')])

    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(UnexpectedModelBehavior) as info:
        Agent(FunctionModel(broken), tools=[add]).run_sync("add")
    config = ModelConfig(provider="test", model="small")
    assert describe_model_failure(info.value, config) == (
        "model 'test:small' sent arguments for tool 'add' that are not valid JSON, each time "
        "it was asked again (Invalid JSON: EOF while parsing an object at line 1 column 12): "
        "it may not support tool calls (or its server does not parse them); switch to a "
        "model that supports tool calls (/switch_model, or --model provider:model)"
    )
    other = UnexpectedModelBehavior("Tool 'add' exceeded max retries count of 1.")
    assert describe_model_failure(other, config) is None  # not a JSON failure: not said so


@pytest.mark.parametrize(
    "said",
    [
        "registry.ollama.ai/library/gemma:2b does not support tools",
        '"auto" tool choice requires --enable-auto-tool-choice: tool calls are not supported',
    ],
)
def test_a_model_refusing_the_tools_says_to_use_one_that_supports_them(said: str) -> None:
    exc = ModelHTTPError(400, "gemma:2b", body={"error": {"message": said}})
    config = ModelConfig(provider="ollama", model="gemma:2b")
    text = describe_model_failure(exc, config)
    assert text is not None and text.startswith(
        "model 'ollama:gemma:2b' refused the request's tools (HTTP 400: "
    )
    assert text.endswith(
        "it does not support tool calls; switch to a model that supports tool calls "
        "(/switch_model, or --model provider:model)"
    )
    other = ModelHTTPError(400, "gemma:2b", body={"error": {"message": "bad temperature"}})
    assert "tool calls" not in (describe_model_failure(other, config) or "")
