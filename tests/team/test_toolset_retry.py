"""A BaseAgent turn over a card's runtime toolset: a ``RetriableError`` raised inside the
toolset's call path is a retry the model reads, and the turn ends with the model's
answer (before the fix it escaped the turn and the person got no reply at all)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, Orchestrator, OrchestratorConfig, UserMessage
from akgentic.llm import register_model
from akgentic.tool import RetriableError, ToolCard


class Lookup(ToolCard):
    def get_toolsets(self) -> list[Any]:
        def lookup(x: int) -> str:
            """Look ``x`` up."""
            if x < 0:
                raise RetriableError("x must be positive: pass x=1")
            return f"found {x}"

        return [FunctionToolset([lookup])]


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    retries = [str(p.content) for p in request.parts if getattr(p, "outcome", None) == "retried"]
    if retries:
        return ModelResponse(parts=[TextPart(f"told: {retries[0]}")])
    return ModelResponse(parts=[ToolCallPart("lookup", {"x": -1})])


@pytest.fixture
def model() -> Iterator[str]:
    registration = register_model(f"toolset-retry-{uuid4().hex[:8]}", FunctionModel(respond))
    yield registration.key
    registration.unregister()


def test_a_retriable_error_from_a_toolset_is_a_retry_in_the_turn(
    system: ActorSystem, model: str
) -> None:
    team_id = uuid4()
    system.createActor(Orchestrator, config=OrchestratorConfig(), team_id=team_id)
    agent = system.createActor(
        BaseAgent,
        config=AgentConfig(
            name="@Agent", role="Assistant", models=model, tools=[Lookup()], stream_events=False
        ),
        team_id=team_id,
    )
    reply = system.ask(agent, UserMessage(content="go"), timeout=60)
    assert isinstance(reply, AgentMessage)
    assert reply.content == "told: x must be positive: pass x=1"
