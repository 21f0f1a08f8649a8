"""build_model: the right pydantic-ai model per provider, and every misconfiguration by name.

No test touches the network: building a model creates a client, it never contacts it.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel

from akgentic.llm import (
    FinishedResponses,
    MissingApiKeyError,
    MissingProviderError,
    ModelConfig,
    ModelRoster,
    ScenarioError,
    ScriptedModel,
    api_key_env,
    build_model,
    build_roster_model,
)
from akgentic.llm.providers import model_settings


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def test_openai_with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = build_model(
        ModelConfig(provider="openai", model="gpt-5.2", temperature=0.3, max_tokens=99)
    )
    assert isinstance(model, OpenAIChatModel)
    assert model.model_name == "gpt-5.2"
    assert model.client.api_key == "sk-test"
    assert model.settings == {"temperature": 0.3, "max_tokens": 99}


def test_missing_openai_key_names_the_variable() -> None:
    with pytest.raises(MissingApiKeyError) as info:
        build_model(ModelConfig(provider="openai", model="gpt-5.2"))
    assert info.value.env_var == "OPENAI_API_KEY"
    assert "export OPENAI_API_KEY=" in str(info.value)
    assert "'openai:gpt-5.2'" in str(info.value)


def test_empty_key_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "  ")
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        build_model(ModelConfig(provider="openai", model="gpt-5.2"))


def test_custom_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ModelConfig(provider="openai", model="gpt-5.2", api_key_env="TEAM_OPENAI_KEY")
    monkeypatch.delenv("TEAM_OPENAI_KEY", raising=False)
    with pytest.raises(MissingApiKeyError, match="export TEAM_OPENAI_KEY="):
        build_model(config)
    monkeypatch.setenv("TEAM_OPENAI_KEY", "sk-team")
    model = build_model(config)
    assert isinstance(model, OpenAIChatModel)
    assert model.client.api_key == "sk-team"


def test_default_key_variables() -> None:
    assert api_key_env(ModelConfig(provider="openai", model="m")) == "OPENAI_API_KEY"
    assert api_key_env(ModelConfig(provider="anthropic", model="m")) == "ANTHROPIC_API_KEY"
    assert api_key_env(ModelConfig(provider="google", model="m")) == "GOOGLE_API_KEY"
    assert api_key_env(ModelConfig(provider="ollama", model="m")) is None
    assert api_key_env(ModelConfig(provider="scripted", model="default")) is None


def test_openai_compatible_needs_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError) as info:
        build_model(ModelConfig(provider="openai-compatible", model="qwen2.5"))
    text = str(info.value)
    assert "'openai-compatible' needs the server's OpenAI-compatible endpoint" in text
    assert "--base-url URL" in text and "export OPENAI_BASE_URL=URL" in text


def test_openai_compatible_reads_openai_base_url_as_pydantic_ai_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    model = build_model(ModelConfig(provider="openai-compatible", model="llama3.2"))
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url.rstrip("/") == "http://127.0.0.1:11434/v1"
    # the card's own base_url wins over the environment
    mine = build_model(
        ModelConfig(provider="openai-compatible", model="m", base_url="http://vllm:8000/v1")
    )
    assert isinstance(mine, OpenAIChatModel) and mine.base_url.rstrip("/") == (
        "http://vllm:8000/v1"
    )


def test_a_roster_points_its_openai_compatible_entries_at_a_base_url() -> None:
    roster = ModelRoster.from_spec("openai-compatible:llama3.2,ollama:qwen3,scripted:default")
    pointed = roster.with_base_url(" http://127.0.0.1:8000/v1 ")
    assert [c.base_url for c in pointed.models] == [
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:8000/v1",
        None,
    ]
    assert [c.base_url for c in roster.models] == [None, None, None]  # a copy
    with pytest.raises(ValueError, match="openai-compatible and ollama models"):
        ModelRoster.from_spec("openai:gpt-5.2").with_base_url("http://x:1/v1")
    with pytest.raises(ValueError, match="not an http"):
        roster.with_base_url("localhost:11434")
    assert ModelRoster.of("scripted:default").keys() == ["scripted:default"]
    assert ModelRoster.of(pointed) == pointed and ModelRoster.of(pointed) is not pointed


def test_openai_compatible_with_base_url_needs_no_key() -> None:
    model = build_model(
        ModelConfig(provider="openai-compatible", model="qwen2.5", base_url="http://vllm:8000/v1")
    )
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url.rstrip("/") == "http://vllm:8000/v1"


def test_openai_compatible_with_named_key_requires_it() -> None:
    config = ModelConfig(
        provider="openai-compatible",
        model="qwen2.5",
        base_url="http://vllm:8000/v1",
        api_key_env="VLLM_KEY",
    )
    with pytest.raises(MissingApiKeyError, match="VLLM_KEY"):
        build_model(config)


def test_ollama_defaults_to_its_local_endpoint() -> None:
    model = build_model(ModelConfig(provider="ollama", model="llama3.2"))
    assert isinstance(model, OpenAIChatModel)
    assert model.base_url.rstrip("/") == "http://localhost:11434/v1"


@pytest.mark.parametrize(("provider", "extra"), [("anthropic", "anthropic"), ("google", "google")])
def test_optional_providers(provider: str, extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    config = ModelConfig.from_spec(f"{provider}:some-model")
    try:
        importlib.import_module(f"pydantic_ai.models.{provider}")
        installed = True
    except ImportError:
        installed = False
    if not installed:
        with pytest.raises(MissingProviderError) as info:
            build_model(config)
        assert f"pip install 'akgentic[{extra}]'" in str(info.value)
        assert isinstance(info.value, ImportError)
    else:  # pragma: no cover - only where the extra is installed
        with pytest.raises(MissingApiKeyError, match=api_key_env(config) or ""):
            build_model(config)


def test_test_provider_is_pydantic_ai_test_model() -> None:
    model = build_model(ModelConfig(provider="test", model="t1"))
    assert isinstance(model, TestModel)
    assert model.model_name == "t1"


def test_scripted_default_and_file(tmp_path: Path) -> None:
    model = build_model(ModelConfig(provider="scripted", model="default"))
    assert isinstance(model, ScriptedModel)
    assert model.model_name == "scripted:default"

    (tmp_path / "demo.yaml").write_text("rules: []\ndefault: {text: '[scripted] hi'}\n")
    relative = build_model(
        ModelConfig(provider="scripted", model="demo.yaml"), role="writer", base_dir=tmp_path
    )
    assert isinstance(relative, ScriptedModel)
    assert relative.model_name == "scripted:demo"
    assert relative.role == "writer"


def test_scripted_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="nope.yaml"):
        build_model(ModelConfig(provider="scripted", model="nope.yaml"), base_dir=tmp_path)


def test_fallbacks_build_a_fallback_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    roster = ModelRoster(
        models=[
            ModelConfig(provider="openai", model="gpt-5.2", fallback_models=["scripted:default"]),
            ModelConfig(provider="scripted", model="default"),
        ]
    )
    model = build_roster_model(roster, role="assistant")
    assert isinstance(model, FallbackModel)
    # each one's cut-off stream is its own failure, fallen back from (FinishedResponses)
    assert all(isinstance(m, FinishedResponses) for m in model.models)
    assert [type(m.wrapped) for m in model.models] == [OpenAIChatModel, ScriptedModel]


def test_fallback_keys_need_the_roster() -> None:
    config = ModelConfig(provider="test", model="t", fallback_models=["scripted:default"])
    with pytest.raises(ValueError, match="pass the roster"):
        build_model(config)


def test_missing_key_of_a_fallback_is_reported_at_build_time() -> None:
    roster = ModelRoster(
        models=[
            ModelConfig(provider="scripted", model="default", fallback_models=["openai:gpt-5.2"]),
            ModelConfig(provider="openai", model="gpt-5.2"),
        ]
    )
    with pytest.raises(MissingApiKeyError, match="OPENAI_API_KEY"):
        build_roster_model(roster)


def test_roster_switch_then_build(monkeypatch: pytest.MonkeyPatch) -> None:
    roster = ModelRoster.from_spec("scripted:default,test:t")
    assert isinstance(build_roster_model(roster), ScriptedModel)
    roster.switch("test:t")
    assert isinstance(build_roster_model(roster), TestModel)


def test_an_anthropic_model_is_built_with_its_prompt_cache_on() -> None:
    """Anthropic serves nothing from cache without a cache_control breakpoint: the frozen
    system prompt gets one and the conversation's end the automatic one; OpenAI and Gemini
    cache by themselves and get no such setting."""
    anthropic = model_settings(ModelConfig(provider="anthropic", model="claude-sonnet-4-5"))
    assert anthropic is not None
    assert anthropic.get("anthropic_cache") is True
    assert anthropic.get("anthropic_cache_instructions") is True
    tuned = model_settings(ModelConfig(provider="anthropic", model="m", temperature=0.2))
    assert tuned is not None and tuned.get("temperature") == 0.2
    assert tuned.get("anthropic_cache") is True
    assert model_settings(ModelConfig(provider="openai", model="gpt-4o")) is None


def test_a_missing_relative_scenario_names_the_folder_searched_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a config built in Python has no scenario_dir: the current folder is searched
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as info:
        build_model(ModelConfig(provider="scripted", model="tally.scenario.yaml"))
    message = str(info.value)
    assert f"no such file in {tmp_path}" in message and "\n" not in message
    assert "set scenario_dir, or run from the folder that holds it" in message
    (tmp_path / "tally.scenario.yaml").write_text("rules: []\ndefault: {text: hi}\n")
    found = build_model(ModelConfig(provider="scripted", model="tally.scenario.yaml"))
    assert isinstance(found, ScriptedModel)


@pytest.mark.parametrize(
    ("config", "env", "named"),
    [
        (
            ModelConfig(provider="openai-compatible", model="m", base_url="localhost:8000/v1"),
            None,
            "base_url",
        ),
        (
            ModelConfig(provider="ollama", model="m", base_url="127.0.0.1:11434/v1"),
            None,
            "base_url",
        ),
        (
            ModelConfig(provider="openai-compatible", model="m"),
            "localhost:8000/v1",
            "OPENAI_BASE_URL",
        ),
        (ModelConfig(provider="openai", model="m"), "localhost:8000/v1", "OPENAI_BASE_URL"),
    ],
    ids=["card", "ollama", "env", "openai-env"],
)
def test_an_endpoint_without_a_scheme_is_refused_when_the_model_is_built(
    config: ModelConfig, env: str | None, named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The OpenAI client takes ``localhost:8000/v1`` and fails only at the first request,
    after the team started; the build (team creation) refuses it, naming where it came
    from and the URL meant."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    if env is not None:
        monkeypatch.setenv("OPENAI_BASE_URL", env)
    url = env or config.base_url
    with pytest.raises(ValueError) as info:
        build_model(config)
    assert str(info.value) == (
        f"model {config.key!r}: {named} {url!r} is not an http(s) URL: e.g. http://{url}"
    )


def test_an_offline_model_ignores_an_endpoint() -> None:
    config = ModelConfig(provider="scripted", model="default", base_url="anything")
    assert isinstance(build_model(config), ScriptedModel)


@pytest.mark.parametrize("spec", ["openai-compatible:llama 3", "openai:gpt 5", "ollama:qwen\t3"])
def test_a_served_model_name_with_a_space_is_refused_in_one_line(spec: str) -> None:
    provider, _, model = spec.partition(":")
    meant = f"{provider}:{''.join(model.split())}"
    with pytest.raises(ValueError) as spec_info:
        ModelConfig.from_spec(spec)
    assert str(spec_info.value) == (
        f"model {spec!r}: model names have no spaces; write it as the server lists it, "
        f"e.g. {meant!r}"
    )
    with pytest.raises(ValueError, match="model names have no spaces"):
        ModelRoster(models=[{"provider": provider, "model": model}])  # type: ignore[list-item]


def test_a_scenario_path_or_registered_name_may_hold_a_space() -> None:
    assert ModelConfig.from_spec("scripted:my scenarios/a.yaml").model == "my scenarios/a.yaml"
    assert ModelConfig.from_spec("registered:my model").model == "my model"


@pytest.mark.parametrize("sends", [True, False])
def test_an_openai_model_requires_a_finish_reason_unless_its_server_sends_none(
    sends: bool,
) -> None:
    config = ModelConfig(
        provider="openai-compatible",
        model="qwen",
        base_url="http://proxy:8000/v1",
        sends_finish_reason=sends,
    )
    model = build_model(config)
    assert isinstance(model, OpenAIChatModel)
    assert model.profile.get("openai_chat_streaming_requires_finish_reason", False) is sends
