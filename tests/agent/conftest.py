"""Agents under test: a BaseAgent driven by a FunctionModel the test controls."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, ClassVar
from uuid import uuid4

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from akgentic.agent import BaseAgent
from akgentic.llm import Registration, register_model

from ..core.conftest import system, team  # noqa: F401  (shared fixtures)

Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def streamed(respond: Respond) -> Callable[..., AsyncIterator[Any]]:
    """``respond`` as a FunctionModel stream function: its text, and its tool calls as
    deltas (so a streamed run sees what a plain run would)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = respond(messages, info)
        for index, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                yield {
                    index: DeltaToolCall(
                        name=part.tool_name,
                        json_args=part.args_as_json_str(),
                        tool_call_id=part.tool_call_id,
                    )
                }

    return stream


class Script:
    """Answers model requests with the next function in a list; records what it saw."""

    def __init__(self, *steps: Respond) -> None:
        self.steps = list(steps)
        self.seen: list[list[ModelMessage]] = []
        self.infos: list[AgentInfo] = []
        self.lock = threading.Lock()

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        with self.lock:
            self.seen.append(list(messages))
            self.infos.append(info)
            step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        return step(messages, info)


@pytest.fixture
def model_key() -> Iterator[Callable[[Script], str]]:
    """Registers a ``Script`` the public way (``register_model``: a FunctionModel that
    streams too) and gives its roster key, for a plain BaseAgent's ``AgentConfig(models=)``;
    every name is unregistered when the test ends."""
    registrations: list[Registration] = []

    def register(script: Script) -> str:
        model = FunctionModel(script, stream_function=streamed(script))
        registrations.append(register_model(f"script-{uuid4().hex[:8]}", model))
        return registrations[-1].key

    yield register
    for registration in registrations:
        registration.unregister()


class ScriptedAgent(BaseAgent):
    """A BaseAgent whose model is the class's ``script`` (set per test): the older way,
    through the private ``_build_model``; new tests use the ``model_key`` fixture."""

    script: ClassVar[Any] = None

    def _build_model(self) -> Any:
        script = type(self).script

        return FunctionModel(script, stream_function=streamed(script))
