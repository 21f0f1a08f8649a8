"""The pydantic-ai capabilities a BaseAgent runs with: events out, cancellation in, tools on
the agent's own thread, and the toolsets the model switches on (``toolsets``).

They are small adapters between pydantic-ai's run hooks and the actor; they live for one
agent and hold its bound methods, and never block.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic_ai import CallToolsNode
from pydantic_ai.capabilities import AbstractCapability, UseThreadExecutor
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from akgentic.agent.capabilities.fused import FusedCapability, fuse
from akgentic.agent.capabilities.run_events import TEXT_BATCH_CHARS, PublishRunEvents
from akgentic.agent.capabilities.toolsets import DynamicToolsets, dynamic_toolsets

T = TypeVar("T")

__all__ = [
    "TEXT_BATCH_CHARS",
    "CancelAtStepBoundary",
    "DynamicToolsets",
    "FusedCapability",
    "InlineExecutor",
    "PublishRunEvents",
    "RunInterruptedError",
    "dynamic_toolsets",
    "fuse",
    "on_the_agent_thread",
]


class InlineExecutor(Executor):
    """Runs each call at once, in the calling thread.

    pydantic-ai runs sync tools in worker threads by default. An agent's tools act on the
    agent (hire through it, switch its model, ask other actors as it), so they must run on
    the agent's own thread, one at a time — where ``DeadlockError`` can also see an agent
    asking itself. The run is already on that thread; this executor keeps the tools there.
    """

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the awaiting run, as a thread would
            future.set_exception(exc)
        return future


def on_the_agent_thread() -> UseThreadExecutor:
    """The capability that runs sync tools inline (see :class:`InlineExecutor`)."""
    return UseThreadExecutor(InlineExecutor())


class RunInterruptedError(Exception):
    """A run stopped at a step boundary because a cancel arrived; ``messages`` is its history.

    The history ends where the run stopped: with the request whose tool returns were
    already in (the model was not asked again), or with the model's response whose tool
    calls were not run (pydantic-ai closes those out as interrupted on the next run).
    """

    def __init__(self, messages: list[ModelMessage]) -> None:
        super().__init__("the run was cancelled at a step boundary")
        self.messages = messages


@dataclass
class CancelAtStepBoundary(AbstractCapability[Any]):
    """At each step boundary, asks whether a cancel has arrived; if so, stops the run.

    ``requested`` is the agent's check (it purges the cancel from the inbox when it finds
    one). The boundaries are: before the tools the model asked for run, and before the
    model is asked again. The run ends with :class:`RunInterruptedError`, carrying every
    completed step.

    ``requesting`` is True from the boundary before a model request until its response is
    in: the one stretch of a run that an interrupt may cut where it is (a tool call is
    never cut: its side effects and its result must not part). The agent reads it on the
    run's own loop, so it is exact there.
    """

    requested: Callable[[], bool]
    requesting: bool = False

    async def before_node_run(self, ctx: RunContext[Any], *, node: Any) -> Any:
        if isinstance(node, CallToolsNode) and self.requested():
            raise RunInterruptedError(list(ctx.messages))
        return node

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.requesting = True  # first: a cancel put in after the check below finds it set
        if self.requested():
            self.requesting = False
            raise RunInterruptedError(list(request_context.messages))
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        self.requesting = False
        return response

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
