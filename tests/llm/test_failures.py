"""describe_model_failure: a failed model request as one line naming the URL tried."""

from __future__ import annotations

import socket

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ModelAPIError

from akgentic.llm import ModelConfig, build_model, describe_model_failure
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
        (500, "failed: HTTP 500: "),
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
