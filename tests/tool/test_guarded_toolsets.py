"""A runtime toolset's tool keeps the rule a function tool keeps: a ``RetriableError``
(or a raw exception) raised in a toolset's call path reaches the model as a retry, it
never ends the run. Asserted on real pydantic-ai runs over ``ToolFactory.get_toolsets()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from akgentic.tool import RetriableError, ToolCard, ToolFactory
from akgentic.tool.toolsets import ToolGroup, ToolsetCard


def raising(exc: Exception) -> Callable[[int], str]:
    def flaky(x: int) -> str:
        """A tool that fails."""
        raise exc

    return flaky


class OwnToolset(ToolCard):
    """A card serving its tool through a toolset it builds itself (not ``get_tools``)."""

    def get_toolsets(self) -> list[Any]:
        return [FunctionToolset([raising(self._exc)])]

    _exc: Exception = RetriableError("pass x=1")


def card_raising(exc: Exception) -> OwnToolset:
    card = OwnToolset()
    card._exc = exc
    return card


def run_once(toolsets: list[Any], tool: str) -> str:
    """One run: the model calls ``tool`` once, then answers with what it was told."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool, {"x": -1})])
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        retries = [p.content for p in request.parts if getattr(p, "outcome", None) == "retried"]
        return ModelResponse(parts=[TextPart(str(retries[0]) if retries else "no retry")])

    agent: Agent[None, str] = Agent(FunctionModel(respond), toolsets=toolsets)
    return agent.run_sync("go").output


@pytest.mark.parametrize("retry", [ModelRetry, None])
def test_a_retriable_error_in_a_toolset_reaches_the_model_as_a_retry(
    retry: type[Exception] | None,
) -> None:
    factory = ToolFactory([card_raising(RetriableError("pass x=1"))], retry_exception=retry)
    assert run_once(factory.get_toolsets(), "flaky") == "pass x=1"


def test_a_raw_exception_in_a_toolset_reaches_the_model_naming_the_tool() -> None:
    factory = ToolFactory([card_raising(KeyError("boom"))], retry_exception=ModelRetry)
    told = run_once(factory.get_toolsets(), "flaky")
    assert told.startswith("flaky failed (KeyError: 'boom'). Try again")


def test_a_toolset_card_group_stays_a_group_and_its_member_toolsets_are_guarded() -> None:
    card = ToolsetCard(
        name="media", description="Films", cards=[card_raising(RetriableError("pass x=1"))]
    )
    factory = ToolFactory([card], retry_exception=ModelRetry)
    (group,) = factory.get_toolsets()
    assert isinstance(group, ToolGroup)
    assert factory.card_of(group) is card
    assert run_once([group], "media_flaky") == "pass x=1"
