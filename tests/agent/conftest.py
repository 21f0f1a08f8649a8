"""Agents under test: a BaseAgent driven by a FunctionModel the test controls."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from akgentic.agent import BaseAgent

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


class ScriptedAgent(BaseAgent):
    """A BaseAgent whose model is the class's ``script`` (set per test)."""

    script: ClassVar[Any] = None

    def _build_model(self) -> Any:
        script = type(self).script

        return FunctionModel(script, stream_function=streamed(script))
