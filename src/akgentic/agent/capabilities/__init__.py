"""The pydantic-ai capabilities a BaseAgent runs with: events out, cancellation in, tools on
the agent's own thread, the toolsets the model switches on (``toolsets``) and the history
compacted between a run's requests (``compaction``).

They are small adapters between pydantic-ai's run hooks and the actor; they live for one
agent and hold its bound methods, and never block.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic_ai import CallToolsNode, CancellationToken
from pydantic_ai.capabilities import AbstractCapability, UseThreadExecutor
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models import Model, ModelRequestContext, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext, ToolDefinition

from akgentic.agent.capabilities.answers import RecordAnswers
from akgentic.agent.capabilities.compaction import (
    CompactWithinRun,
    LastTurnRequest,
    SummaryAsTurn,
    SummaryCalledToolError,
)
from akgentic.agent.capabilities.fused import FusedCapability, fuse
from akgentic.agent.capabilities.run_events import TEXT_BATCH_CHARS, PublishRunEvents
from akgentic.agent.capabilities.tool_args import ToolArgsAdvice
from akgentic.agent.capabilities.toolsets import DynamicToolsets, dynamic_toolsets
from akgentic.llm import sound_message

T = TypeVar("T")

__all__ = [
    "TEXT_BATCH_CHARS",
    "CancelAtStepBoundary",
    "CompactWithinRun",
    "DynamicToolsets",
    "FusedCapability",
    "InlineExecutor",
    "LastTurnRequest",
    "PublishRunEvents",
    "RecordAnswers",
    "RunInterruptedError",
    "SoundModelOutput",
    "SummaryAsTurn",
    "SummaryCalledToolError",
    "ToolArgsAdvice",
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
    A tool held to a time bound (``AgentConfig.tool_timeout``) never comes here: its factory
    wrapper is async and moves the call to a thread of its own, acting for the agent while
    the run awaits it (``akgentic.tool.core.time_bound``) — so an interrupt can end the wait.
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


class SoundModelOutput(AbstractCapability[Any]):
    """Makes each model response encodable before the run reads it: a lone surrogate the
    model produced (in its text, or in a tool call's arguments, as a loosely decoded
    answer or a test's FunctionModel carries) becomes U+FFFD (``llm.sound_message``).

    The one place a response enters the run: its text, its answer, the calls it makes
    and the record of the run are all read from the response this hook returns. Text
    streamed before the response is complete is made sound where it becomes an event
    (``llm.from_stream_event``)."""

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        sound = sound_message(response)
        assert isinstance(sound, ModelResponse)
        return sound

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
    """At each step boundary, asks whether a cancel has arrived; if so, stops the run. And
    cuts a model request in flight when an interrupt arrives (the team is stopping).

    ``requested`` is the agent's check (it purges the cancel from the inbox when it finds
    one). The boundaries are: before the tools the model asked for run, and before the
    model is asked again. The run ends with :class:`RunInterruptedError`, carrying every
    completed step.

    The cut: the runs made inside :meth:`scope` are given its token (``cancellation_token=``)
    and their model wrapped (:meth:`cuttable`; this capability does it for the agent's own
    runs). ``in_flight`` names the stretch in progress that an interrupt cuts where it is:
    the model request proper (``"request"``, not any capability's hook around it: a hook
    cut half-way, accounting half recorded, would be worse than waiting for the next
    boundary), or a tool call (``"tool"``: the team is stopping, and a tool that blocks
    would hold the stop for as long as it blocks). A cut tool call is abandoned: an async
    tool is cancelled; a sync one's thread runs on and its result is dropped — the turn
    keeps the model's call closed out as interrupted, never a late return (what the tool
    started that can be stopped, a subprocess, is stopped: ``time_bound.on_cancel``).
    :meth:`interrupt` is called on the runs' loop, so ``in_flight`` is exact there.
    """

    requested: Callable[[], bool]
    in_flight: Literal["request", "tool"] | None = None
    token: CancellationToken | None = None
    """The token of the scope in progress (None: no run is in progress)."""
    interrupted: bool = False
    """An interrupt has arrived: the team is stopping, for good."""

    @contextmanager
    def scope(self) -> Iterator[CancellationToken]:
        """A stretch whose runs :meth:`interrupt` may cut: give them the token it yields."""
        self.token = CancellationToken()
        try:
            yield self.token
        finally:
            self.token = None

    @property
    def requesting(self) -> bool:
        """A model request is in flight."""
        return self.in_flight == "request"

    def interrupt(self) -> None:
        """On the runs' loop: an interrupt arrived. Cuts the model request or the tool call
        in flight; one that starts later is cut as it starts (the step boundary before it
        looked into the inbox before the interrupt was put in). Anywhere else — a hook, no
        run at all — the next step boundary (or the next turn) sees the cancel."""
        self.interrupted = True
        self._cut()

    def _cut(self) -> None:
        if self.in_flight is not None and self.token is not None:
            self.token.cancel()  # pydantic-ai tears the stretch down: RunCancelled

    @asynccontextmanager
    async def stretch(self, what: Literal["request", "tool"]) -> AsyncIterator[None]:
        """Around a stretch an interrupt cuts where it is (see :meth:`cuttable`,
        :meth:`wrap_tool_execute`). One cut — at once when the interrupt came before it
        started — never ends otherwise: pydantic-ai passes the cut from the run's task to
        the one doing the work a loop turn or two later, and work done meanwhile would carry
        it into the hooks after it (a late tool return, a response)."""
        self.in_flight = what
        try:
            if self.interrupted:  # it came past the last step boundary: cut this stretch
                self._cut()
            await self._landing()
            yield
            await self._landing()
        finally:
            self.in_flight = None

    async def _landing(self) -> None:
        """Once the request is cut: wait for the cut to reach it (it ends the wait)."""
        if self.token is not None and self.token.cancelled:
            await asyncio.get_running_loop().create_future()

    def cuttable(self, model: Model) -> Model:
        """``model``, its requests in flight cut by :meth:`interrupt`."""
        return _CuttableModel(model, self)

    def get_wrapper_model(self, model: Model) -> Model | None:
        return self.cuttable(model)

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        async with self.stretch("tool"):
            return await handler(args)

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


class _CuttableModel(WrapperModel):
    """``wrapped``, each request (plain or streamed) marked in flight on ``boundary``."""

    def __init__(self, wrapped: Model, boundary: CancelAtStepBoundary) -> None:
        super().__init__(wrapped)
        self._boundary = boundary

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        async with self._boundary.stretch("request"):
            return await self.wrapped.request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        async with (
            self._boundary.stretch("request"),
            self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream,
        ):
            yield stream
