"""fuse(): the agent's capabilities as one, with pydantic-ai's own hook order."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.capabilities import AbstractCapability, CompactionResult
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.toolsets import FunctionToolset

from akgentic.agent.capabilities import FusedCapability, fuse

from .conftest import streamed


@dataclass(eq=False)
class Recorder(AbstractCapability[Any]):
    """Records each hook it sees as ``(name, hook)`` in a shared trace."""

    name: str
    trace: list[tuple[str, str]]

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
        self.trace.append((self.name, "wrap_run:enter"))
        try:
            return await handler()
        finally:
            self.trace.append((self.name, "wrap_run:exit"))

    async def before_node_run(self, ctx: Any, *, node: Any) -> Any:
        self.trace.append((self.name, f"before_node_run:{type(node).__name__}"))
        return node

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        self.trace.append((self.name, "before_model_request"))
        return request_context

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        self.trace.append((self.name, "after_model_request"))
        return response

    async def after_node_run(self, ctx: Any, *, node: Any, result: Any) -> Any:
        self.trace.append((self.name, f"after_node_run:{type(node).__name__}"))
        return result

    def get_wrapper_model(self, model: Model) -> Model | None:
        return Tracing(model, self.name, self.trace)


class Tracing(WrapperModel):
    """Records each request it passes on, as its capability's ``model:request``."""

    def __init__(self, wrapped: Model, name: str, trace: list[tuple[str, str]]) -> None:
        super().__init__(wrapped)
        self.name, self.trace = name, trace

    async def request(self, *args: Any) -> Any:
        self.trace.append((self.name, "model:request"))
        return await self.wrapped.request(*args)

    @asynccontextmanager
    async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        self.trace.append((self.name, "model:request"))
        async with self.wrapped.request_stream(*args, **kwargs) as stream:
            yield stream


@dataclass(eq=False)
class Listener(Recorder):
    async def on_event(self, ctx: Any, *, event: Any) -> None:
        self.trace.append((self.name, f"on_event:{type(event).__name__}"))


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returned = any(getattr(p, "part_kind", "") == "tool-return" for p in messages[-1].parts)
    if not returned:
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})])
    return ModelResponse(parts=[TextPart("3")])


def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def _run(capabilities: list[Any]) -> Any:
    agent: Agent[None, str] = Agent(
        FunctionModel(_model, stream_function=streamed(_model)),
        tools=[add],
        capabilities=capabilities,
        instructions="Add.",
    )
    return agent.run_sync("1 + 2")


def test_fused_parts_see_the_hooks_in_the_order_separate_capabilities_do() -> None:
    separate: list[tuple[str, str]] = []
    plain = _run([Listener("a", separate), Recorder("b", separate), Listener("c", separate)])
    fused: list[tuple[str, str]] = []
    one = _run([fuse([Listener("a", fused), Recorder("b", fused), Listener("c", fused)])])
    assert plain.output == one.output == "3"
    assert fused == separate
    # the order is pydantic-ai's: before hooks first to last, after hooks last to first,
    # wrap_run nested with the first outermost, events to listeners only
    assert separate[:3] == [
        ("a", "wrap_run:enter"),
        ("b", "wrap_run:enter"),
        ("c", "wrap_run:enter"),
    ]
    assert separate[-3:] == [("c", "wrap_run:exit"), ("b", "wrap_run:exit"), ("a", "wrap_run:exit")]
    for hook in ("after_model_request", "after_node_run:CallToolsNode"):
        first_after = separate.index(("c", hook))
        assert separate[first_after : first_after + 3] == [("c", hook), ("b", hook), ("a", hook)]
    first_request = separate.index(("a", "model:request"))  # the first wraps outermost
    assert separate[first_request : first_request + 3] == [
        ("a", "model:request"),
        ("b", "model:request"),
        ("c", "model:request"),
    ]
    assert any(hook.startswith("on_event") for _, hook in separate)
    assert not any(name == "b" and hook.startswith("on_event") for name, hook in fused)


def test_a_fusion_without_listeners_does_not_make_the_run_stream() -> None:
    trace: list[tuple[str, str]] = []
    quiet = fuse([Recorder("a", trace), Recorder("b", trace)])
    assert isinstance(quiet, FusedCapability)
    assert not quiet.has_on_event
    assert fuse([Recorder("a", trace), Listener("b", trace)]).has_on_event
    assert _run([quiet]).output == "3"


@dataclass(eq=False)
class WithTools(AbstractCapability[Any]):
    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def get_toolset(self) -> Any:
        return FunctionToolset([add])


def test_a_part_with_a_hook_fuse_does_not_carry_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"WithTools implements get_toolset"):
        fuse([Recorder("a", []), WithTools()])


@dataclass(eq=False)
class Compactor(Recorder):
    """Asks for a compaction before the run's second request; ``compacts``: answers it
    (one summary, the last two messages kept), else leaves it to the next capability."""

    compacts: bool = False

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        if ctx.run_step == 2:
            ctx.request_compaction()
        return await super().before_model_request(ctx, request_context)

    async def compact_history(self, ctx: Any, request: Any) -> Any:
        self.trace.append((self.name, "compact_history"))
        if not self.compacts:
            return None
        part = CompactionPart(content=f"summary by {self.name}")
        messages = [ModelRequest(parts=[part]), *request.messages[-2:]]
        return CompactionResult(messages=messages, part=part, handler=self.name, kept_from=1)


def test_a_fusion_compacts_with_its_first_part_that_does_and_only_then_is_a_compactor() -> None:
    trace: list[tuple[str, str]] = []
    quiet = fuse([Recorder("a", trace), Recorder("b", trace)])
    assert type(quiet).compact_history is AbstractCapability.compact_history
    fused = fuse(
        [Compactor("a", trace), Compactor("b", trace, compacts=True), Listener("c", trace)]
    )
    assert fused.has_on_event
    result = _run([fused])
    assert result.output == "3"
    assert [(name, hook) for name, hook in trace if hook == "compact_history"] == [
        ("a", "compact_history"),
        ("b", "compact_history"),
    ]
    [record] = result.compactions
    assert record.handler == "b"
    assert isinstance(record.part, CompactionPart) and record.part.content == "summary by b"


@dataclass(eq=False)
class Advisor(AbstractCapability[Any]):
    """Sees a tool call's arguments fail validation; ``advice``: replaces the error with a
    retry saying it (else raises the error it was given)."""

    name: str
    trace: list[tuple[str, str]]
    advice: str | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def on_tool_validate_error(
        self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Any
    ) -> Any:
        self.trace.append((self.name, type(error).__name__))
        if self.advice is None:
            raise error
        raise ModelRetry(self.advice) from error


def test_fused_parts_see_a_tool_validation_error_last_listed_first_each_the_error_before() -> None:
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("add", '{"a": 1')])
        return ModelResponse(parts=[TextPart("done")])

    def add(a: int) -> int:
        return a

    trace: list[tuple[str, str]] = []
    fused = fuse([Advisor("a", trace), Advisor("b", trace, advice="send one JSON object")])
    result = Agent(FunctionModel(respond), tools=[add], capabilities=[fused]).run_sync("go")
    assert result.output == "done"
    assert trace == [("b", "ValidationError"), ("a", "ModelRetry")]
    retry = seen[1][-1].parts[0]
    assert getattr(retry, "content", None) == "send one JSON object"
