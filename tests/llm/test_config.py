"""ModelConfig and ModelRoster: keys, the entry in force, switching and restore."""

from __future__ import annotations

import logging

import pytest
import yaml
from pydantic import ValidationError

from akgentic.core import deserialize, serialize
from akgentic.llm import ModelConfig, ModelRoster, RosterRow, UnknownModelError


def _roster() -> ModelRoster:
    return ModelRoster(
        models=[
            ModelConfig(provider="openai", model="gpt-5.2", context_length=400_000),
            ModelConfig(provider="ollama", model="llama3.2"),
            ModelConfig(provider="scripted", model="default"),
        ]
    )


def test_key_is_provider_colon_model() -> None:
    assert ModelConfig(provider="openai", model="gpt-5.2").key == "openai:gpt-5.2"


def test_config_forbids_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="temprature"):
        ModelConfig(provider="openai", model="gpt-5.2", temprature=0.2)  # type: ignore[call-arg]


@pytest.mark.parametrize("pasted", ["sk-proj-Abc123xyz", "OPENAI API KEY", "1KEY", ""])
def test_api_key_env_is_a_variable_name_and_a_pasted_key_is_never_repeated(pasted: str) -> None:
    """The field names the variable; a key pasted there is refused without being echoed
    (the field's error goes to the terminal, the server's answers and the logs)."""
    with pytest.raises(ValidationError) as refused:
        ModelConfig(provider="openai", model="m", api_key_env=pasted)
    (error,) = refused.value.errors()
    assert error["loc"] == ("api_key_env",)
    assert "name of an environment variable" in error["msg"]
    assert not pasted or pasted not in error["msg"]
    assert ModelConfig(provider="openai", model="m", api_key_env="_TEAM_KEY2").api_key_env


def test_config_rejects_unknown_provider() -> None:
    with pytest.raises(ValidationError, match="provider"):
        ModelConfig(provider="acme", model="m")


def test_from_spec_splits_on_first_colon() -> None:
    config = ModelConfig.from_spec("scripted:scenarios/a:b.yaml", temperature=0.1)
    assert (config.provider, config.model, config.temperature) == (
        "scripted",
        "scenarios/a:b.yaml",
        0.1,
    )


def test_from_spec_names_the_known_providers_on_one_line() -> None:
    """Not pydantic's literal_error text: the words --model and a server's ``model`` show."""
    with pytest.raises(ValueError) as err:
        ModelRoster.from_spec("scripted:default, nosuchprovider:xyz")
    assert not isinstance(err.value, ValidationError)
    assert str(err.value) == (
        "unknown model provider 'nosuchprovider' in 'nosuchprovider:xyz'; known providers: "
        "openai, anthropic, google, openai-compatible, ollama, scripted, test, registered; "
        "e.g. 'openai:gpt-5.2' or 'scripted:default'"
    )


def test_a_roster_spec_in_a_mapping_says_the_same() -> None:
    with pytest.raises(ValidationError) as err:
        ModelRoster.model_validate({"models": ["acme:m"]})
    assert "unknown model provider 'acme' in 'acme:m'; known providers: openai," in str(err.value)


@pytest.mark.parametrize("spec", ["gpt-5.2", ":gpt", "openai:", ""])
def test_from_spec_needs_provider_and_model(spec: str) -> None:
    with pytest.raises(ValueError, match="provider:model"):
        ModelConfig.from_spec(spec)


def test_roster_first_entry_is_active_by_default() -> None:
    roster = _roster()
    assert roster.active == "openai:gpt-5.2"
    assert roster.active_config.model == "gpt-5.2"
    assert roster.keys() == ["openai:gpt-5.2", "ollama:llama3.2", "scripted:default"]


def test_roster_from_spec_many() -> None:
    roster = ModelRoster.from_spec("openai:gpt-5.2, scripted:default", context_length=1000)
    assert roster.keys() == ["openai:gpt-5.2", "scripted:default"]
    assert roster.active_key == "openai:gpt-5.2"
    assert all(c.context_length == 1000 for c in roster.models)


def test_roster_accepts_spec_strings() -> None:
    roster = ModelRoster.model_validate(
        {"models": ["openai:gpt-5.2", {"provider": "test", "model": "t"}], "active": "test:t"}
    )
    assert roster.keys() == ["openai:gpt-5.2", "test:t"]
    assert roster.active_config.provider == "test"


def test_switch_changes_the_entry_in_force() -> None:
    roster = _roster()
    config = roster.switch("ollama:llama3.2")
    assert config.provider == "ollama"
    assert roster.active == "ollama:llama3.2"


def test_switch_to_unknown_key_lists_known_keys_and_changes_nothing() -> None:
    roster = _roster()
    with pytest.raises(UnknownModelError) as info:
        roster.switch("key=openai:gpt-5.2")
    message = str(info.value)
    assert "'key=openai:gpt-5.2'" in message
    for key in ("openai:gpt-5.2", "ollama:llama3.2", "scripted:default"):
        assert key in message
    assert info.value.known == roster.keys()
    assert roster.active == "openai:gpt-5.2"


def test_get_unknown_key_raises() -> None:
    with pytest.raises(UnknownModelError, match="scripted:default"):
        _roster().get("anthropic:claude")


def test_declared_active_must_be_known() -> None:
    with pytest.raises(ValidationError, match="unknown model 'openai:nope'"):
        ModelRoster(models=[ModelConfig(provider="test", model="t")], active="openai:nope")


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(ValidationError, match="listed twice"):
        ModelRoster(
            models=[
                ModelConfig(provider="test", model="t"),
                ModelConfig(provider="test", model="t"),
            ]
        )


def test_empty_roster_is_refused() -> None:
    with pytest.raises(ValidationError, match="models"):
        ModelRoster(models=[])


def test_fallbacks_must_be_roster_keys() -> None:
    with pytest.raises(ValidationError, match="falls back to 'openai:gpt-4'.*known keys: test:t"):
        ModelRoster(
            models=[ModelConfig(provider="test", model="t", fallback_models=["openai:gpt-4"])]
        )
    with pytest.raises(ValidationError, match="lists itself"):
        ModelRoster(models=[ModelConfig(provider="test", model="t", fallback_models=["test:t"])])


def test_rows_flag_the_active_entry() -> None:
    roster = _roster()
    roster.switch("scripted:default")
    rows = roster.rows()
    assert rows[0] == RosterRow(
        key="openai:gpt-5.2",
        provider="openai",
        model="gpt-5.2",
        context_length=400_000,
        active=False,
    )
    assert [row.active for row in rows] == [False, False, True]


def test_row_context_length_is_required() -> None:
    with pytest.raises(ValidationError, match="context_length"):
        RosterRow(key="a:b", provider="a", model="b", active=True)  # type: ignore[call-arg]


def test_restore_active_applies_a_known_key() -> None:
    roster = _roster()
    assert roster.restore_active("scripted:default") is True
    assert roster.active == "scripted:default"


def test_restore_active_none_keeps_declared() -> None:
    roster = _roster()
    assert roster.restore_active(None) is False
    assert roster.active == "openai:gpt-5.2"


def test_restore_active_drops_a_stale_key_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    roster = _roster()
    with caplog.at_level(logging.WARNING, logger="akgentic.llm.config"):
        assert roster.restore_active("openai:gpt-3") is False
    assert roster.active == "openai:gpt-5.2"
    assert "'openai:gpt-3' is no longer in the roster" in caplog.text


def test_roster_round_trips_through_core_serialization() -> None:
    roster = _roster()
    roster.switch("ollama:llama3.2")
    restored = deserialize(serialize(roster))
    assert isinstance(restored, ModelRoster)
    assert restored == roster
    assert restored.active == "ollama:llama3.2"


def test_sends_finish_reason_is_set_from_yaml_and_kept_through_storage() -> None:
    text = """
models:
  - provider: openai-compatible
    model: qwen
    base_url: http://proxy:8000/v1
    sends_finish_reason: false
  - ollama:llama3.2
"""
    roster = ModelRoster.model_validate(yaml.safe_load(text))
    assert [c.sends_finish_reason for c in roster.models] == [False, True]
    assert deserialize(serialize(roster)) == roster


@pytest.mark.parametrize("provider", ["anthropic", "google", "scripted", "test"])
def test_sends_finish_reason_false_is_refused_off_openai_s_api_in_one_line(provider: str) -> None:
    with pytest.raises(ValidationError) as refused:
        ModelConfig(provider=provider, model="m", sends_finish_reason=False)  # type: ignore[arg-type]
    (error,) = refused.value.errors()
    assert error["msg"] == (
        f"Value error, model '{provider}:m': sends_finish_reason applies to openai, "
        f"openai-compatible, ollama models only (servers of OpenAI's API); remove it"
    )
