"""register_model: a model of your own, named by the roster key ``registered:<name>``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.test import TestModel

from akgentic.agent import AgentConfig
from akgentic.core.serialization import deserialize, serialize
from akgentic.llm import (
    ModelConfig,
    ModelRoster,
    UnknownRegisteredModelError,
    build_roster_model,
    register_model,
    registered_models,
)


def test_a_registered_model_is_the_one_built_for_its_key() -> None:
    model = TestModel(custom_output_text="hi")
    with register_model("canned", model) as registration:
        assert registration.key == "registered:canned"
        assert "canned" in registered_models()
        assert build_roster_model(ModelRoster.from_spec("registered:canned")) is model
    assert "canned" not in registered_models()


def test_a_factory_is_called_with_the_role_at_each_build() -> None:
    roles: list[str | None] = []

    def factory(role: str | None) -> TestModel:
        roles.append(role)
        return TestModel(custom_output_text=f"I am {role}")

    roster = ModelRoster.from_spec("registered:per-role")
    with register_model("per-role", factory):
        first = build_roster_model(roster, role="Lead")
        second = build_roster_model(roster, role="Critic")
    assert roles == ["Lead", "Critic"] and first is not second


def test_an_unknown_name_is_one_line_listing_the_registered_ones() -> None:
    with (
        register_model("beta", TestModel()),
        register_model("alpha", TestModel()),
        pytest.raises(UnknownRegisteredModelError) as caught,
    ):
        build_roster_model(ModelRoster.from_spec("registered:gamma"))
    assert str(caught.value) == (
        "model 'registered:gamma': no model is registered as 'gamma' (registered: alpha, "
        "beta); call akgentic.llm.register_model('gamma', model) in the process that runs "
        "the team"
    )
    assert isinstance(caught.value, ValueError)


def test_registering_again_replaces_and_the_old_handle_leaves_the_new_one() -> None:
    first, second = TestModel(), TestModel()
    old = register_model("swap", first)
    new = register_model("swap", second)
    try:
        old.unregister()  # stale: the name now belongs to the second registration
        assert build_roster_model(ModelRoster.from_spec("registered:swap")) is second
    finally:
        new.unregister()
    assert "swap" not in registered_models()


@pytest.mark.parametrize("name", ["", " padded", "a,b"])
def test_a_name_a_roster_key_cannot_carry_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="cannot be a roster key"):
        register_model(name, TestModel())


def test_something_that_is_no_model_is_refused_when_registered() -> None:
    with pytest.raises(TypeError, match="not str"):
        register_model("text", "openai:gpt-5.2")  # type: ignore[arg-type]


def test_a_factory_that_returns_no_model_says_so() -> None:
    with (
        register_model("broken", lambda role: "nope"),  # type: ignore[arg-type,return-value]
        pytest.raises(TypeError, match="'broken' returned str, not a pydantic-ai Model"),
    ):
        build_roster_model(ModelRoster.from_spec("registered:broken"))


@pytest.mark.parametrize(
    "field", [{"base_url": "http://x/v1"}, {"api_key_env": "KEY"}, {"temperature": 0.2}]
)
def test_settings_a_registered_model_cannot_take_are_refused(field: dict[str, object]) -> None:
    with pytest.raises(ValidationError, match="does not apply to a registered model"):
        ModelConfig.from_spec("registered:mine", **field)


def test_only_the_name_is_stored_and_fallbacks_work_as_for_any_model() -> None:
    primary = {"provider": "registered", "model": "primary", "fallback_models": ["test:x"]}
    roster = {"models": [primary, "test:x"]}
    config = AgentConfig(models=ModelRoster.model_validate(roster))
    assert deserialize(serialize(config)) == config  # no model object inside
    with register_model("primary", TestModel()):
        assert isinstance(build_roster_model(config.models), FallbackModel)
