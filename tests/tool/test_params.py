"""Channels, BaseToolParam, the ``Param | bool`` rule and the persisted-exposure migration."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ConfigDict, ValidationError, field_validator

from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import COMMAND, LLM_CONTEXT, SYSTEM_PROMPT, TOOL_CALL, BaseToolParam, Channels
from akgentic.tool.core import normalize_system_prompt_to_llm_context, resolve_param, serve


class GetPlanning(BaseToolParam):
    filter_by_agent: bool = True
    expose: set[Channels] = {LLM_CONTEXT, COMMAND}
    _moved = field_validator("expose", mode="before")(normalize_system_prompt_to_llm_context)


class Unmoved(BaseToolParam):
    expose: set[Channels] = {SYSTEM_PROMPT}


def test_channel_constants_are_the_enum_members_with_persisted_values() -> None:
    from akgentic.tool.core import COMMAND as CORE_COMMAND

    assert CORE_COMMAND is Channels.COMMAND
    assert [c.value for c in (TOOL_CALL, SYSTEM_PROMPT, LLM_CONTEXT, COMMAND)] == [
        "tool_call",
        "system_prompt",
        "llm_context",
        "command",
    ]


def test_base_param_defaults_to_tool_call_and_no_instructions() -> None:
    param = BaseToolParam()
    assert param.expose == {TOOL_CALL}
    assert param.instructions is None


def test_resolution_rule() -> None:
    custom = GetPlanning(filter_by_agent=False)
    assert resolve_param(False, GetPlanning) is None
    default = resolve_param(True, GetPlanning)
    assert isinstance(default, GetPlanning) and default.filter_by_agent is True
    assert resolve_param(custom, GetPlanning) is custom
    with pytest.raises(TypeError, match="GetPlanning or a bool"):
        resolve_param("yes", GetPlanning)  # type: ignore[arg-type]


def test_serve_needs_both_gates() -> None:
    assert serve(True, GetPlanning, LLM_CONTEXT) is not None
    assert serve(True, GetPlanning, TOOL_CALL) is None  # resolves, but not exposed there
    assert serve(False, GetPlanning, LLM_CONTEXT) is None  # exposed, but removed
    only_command = GetPlanning(expose={COMMAND})
    assert serve(only_command, GetPlanning, COMMAND) is only_command
    assert serve(only_command, GetPlanning, LLM_CONTEXT) is None


def test_unknown_field_on_a_param_is_an_error_naming_it() -> None:
    with pytest.raises(ValidationError, match="filter_by_agnet"):
        GetPlanning(filter_by_agnet=False)  # type: ignore[call-arg]


def test_arbitrary_types_refused_on_param_subclass_at_definition() -> None:
    with pytest.raises(TypeError, match="arbitrary_types_allowed=True.*PrivateAttr"):

        class Bad(BaseToolParam):
            model_config = ConfigDict(arbitrary_types_allowed=True)


def test_persisted_system_prompt_exposure_is_rewritten_on_a_moved_param() -> None:
    stored = {"expose": ["system_prompt", "command"], "filter_by_agent": False}
    param = GetPlanning.model_validate(stored)
    assert param.expose == {LLM_CONTEXT, COMMAND}
    assert param.filter_by_agent is False


def test_the_rewrite_is_per_class_never_global() -> None:
    assert Unmoved.model_validate({"expose": ["system_prompt"]}).expose == {SYSTEM_PROMPT}


def test_normalizer_leaves_other_values_for_the_field_to_judge() -> None:
    assert normalize_system_prompt_to_llm_context("tool_call") == "tool_call"
    assert normalize_system_prompt_to_llm_context(["tool_call"]) == ["tool_call"]
    assert normalize_system_prompt_to_llm_context({SYSTEM_PROMPT}) == {LLM_CONTEXT}
    with pytest.raises(ValidationError, match="expose"):
        GetPlanning.model_validate({"expose": ["nowhere"]})


@pytest.mark.parametrize("param", [GetPlanning(filter_by_agent=False), BaseToolParam()])
def test_params_round_trip(param: Any) -> None:
    assert deserialize(serialize(param)) == param
    assert type(param).model_validate(param.model_dump(mode="json")) == param


def test_a_moved_param_rewrites_system_prompt_in_any_case() -> None:
    assert GetPlanning.model_validate({"expose": ["SYSTEM_PROMPT"]}).expose == {LLM_CONTEXT}
    assert Unmoved.model_validate({"expose": ["System_Prompt"]}).expose == {SYSTEM_PROMPT}
