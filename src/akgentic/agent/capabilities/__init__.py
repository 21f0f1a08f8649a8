"""The pydantic-ai capabilities a BaseAgent runs with: events out, cancellation in, tools on
the agent's own thread, and the toolsets the model switches on (``toolsets``).

They are small adapters between pydantic-ai's run hooks and the actor; they live for one
agent and hold its bound methods, and never block.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic_ai import CallToolsNode
from pydantic_ai.capabilities import AbstractCapability, UseThreadExecutor
from pydantic_ai.messages import AgentStreamEvent, ModelMessage, PartDeltaEvent, PartStartEvent
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from akgentic.agent.capabilities.fused import FusedCapability, fuse
from akgentic.agent.capabilities.toolsets import DynamicToolsets, dynamic_toolsets
from akgentic.llm import LlmTextDeltaEvent, from_stream_event

T = TypeVar("T")

TEXT_BATCH_CHARS = 4096
"""Gathered text is published once it reaches this many characters, whatever the time."""

__all__ = [
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


@dataclass
class PublishRunEvents(AbstractCapability[Any]):
    """Publishes text deltas, tool calls and tool returns as they happen.

    Having an ``on_event`` hook makes pydantic-ai stream each step, so the model in use
    must support streaming (the scripted model does).

    Text deltas are gathered: consecutive deltas of one part become one
    ``LlmTextDeltaEvent`` once ``text_interval`` seconds have passed since the first of
    them (or ``TEXT_BATCH_CHARS`` gathered), and whatever is gathered goes out before any
    other event of the run and when the run ends, however it ends. Order is kept; with
    ``text_interval`` 0, every delta is published as it comes.
    """

    publish: Callable[[Any], None]
    text_interval: float = 0.0
    _text: list[LlmTextDeltaEvent] = field(default_factory=list, init=False, repr=False)
    _chars: int = field(default=0, init=False, repr=False)
    _since: float = field(default=0.0, init=False, repr=False)

    async def on_event(self, ctx: RunContext[Any], *, event: AgentStreamEvent) -> None:
        for item in from_stream_event(event, run_id=ctx.run_id or ""):
            if isinstance(item, LlmTextDeltaEvent):
                self._gather(item)
            else:
                self.flush_text()
                self.publish(item)
        if not isinstance(event, PartDeltaEvent | PartStartEvent):
            self.flush_text()  # a part ended, a tool ran...: the text so far is complete

    def _gather(self, item: LlmTextDeltaEvent) -> None:
        if self._text and self._text[0].index != item.index:
            self.flush_text()
        if not self._text:
            self._since = time.monotonic()
        self._text.append(item)
        self._chars += len(item.delta)  # kept, not summed per delta: O(1) per token
        if self._chars >= TEXT_BATCH_CHARS or time.monotonic() - self._since >= self.text_interval:
            self.flush_text()

    def flush_text(self) -> None:
        """Publish the gathered text deltas as one event (nothing when none are gathered)."""
        if not self._text:
            return
        first, text = self._text[0], "".join(t.delta for t in self._text)
        self._text, self._chars = [], 0
        self.publish(LlmTextDeltaEvent(run_id=first.run_id, delta=text, index=first.index))

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        try:
            return await handler()
        finally:
            self.flush_text()

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


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
    """

    requested: Callable[[], bool]

    async def before_node_run(self, ctx: RunContext[Any], *, node: Any) -> Any:
        if isinstance(node, CallToolsNode) and self.requested():
            raise RunInterruptedError(list(ctx.messages))
        return node

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        if self.requested():
            raise RunInterruptedError(list(request_context.messages))
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
