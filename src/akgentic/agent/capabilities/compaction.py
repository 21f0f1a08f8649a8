"""CompactWithinRun: the history compacted between the model requests of one run.

The agent compacts before each turn (``BaseAgent._compact_before_turn``), but one turn with
many tool round trips can fill the model's window by itself. This capability compacts the
history inside the run, through pydantic-ai's own compaction hook, so the run goes on:

- ``before_model_request``: from the run's second request on (the first is the turn's,
  which the compaction before the turn just measured), when the history as the request
  shows it fills ``threshold`` of the window (``llm.needs_compaction``), it asks for a
  compaction (``RunContext.request_compaction``, reason ``threshold``).
- ``compact_history``: for that request, and for one the model rejected for exceeding its
  window (pydantic-ai asks with reason ``context_overflow``, once, whatever the window is
  said to be), the history is compacted as before a turn (``llm.plan_compaction``): the
  system prompt parts stay first, everything older than the last ``keep_last`` messages
  (tool pairs never split) becomes one summary, and the tail is kept unchanged.
  pydantic-ai sends the compacted history, and once the model answers it, makes it the
  run's history.

The summary is written by ``summarize`` (the agent's: the model in force, its usage the
run's), from the history up to the cut as the request shows it — the system prompt parts
included, the very messages the run's previous request sent, so the summary's request
(:class:`SummaryAsTurn`) shares that request's cached prefix. A summary that fails
otherwise than by a cut or a usage limit (its reply a tool call, too) is reported to
``failed`` and leaves the history as it was (the request goes on with it; for a threshold
there is still room), and the run asks no more: a summary that fails once would fail at
each step alike. ``made`` lists the summary parts made in the current run, so the agent
tells a history compacted within the run from one that was not (a cut run's, too).

The summary's request is the turns' own (:class:`SummaryAsTurn`): a turn request's
instructions and tool definitions (within a run, its last request's, which
:class:`LastTurnRequest` keeps — none answered yet in the process, the compacted request's;
before a turn or on ``/compact``, the next turn's, which the
agent's summarizer builds from the turn's own tools), the history as messages, and one last
message asking for the summary (``llm.with_summary_ask``). A provider's prompt cache of the
agent's prefix then serves all of it but that last message. Tool calls are refused for that
request (``tool_choice`` ``none``, every definition still sent); a reply that calls one all
the same is a failed summary (:class:`SummaryCalledToolError`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, CompactionRequest, CompactionResult
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import BaseToolCallPart, CompactionPart, ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestContext, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from akgentic.llm import apply_summary, needs_compaction, plan_compaction

__all__ = [
    "HANDLER",
    "CompactWithinRun",
    "LastTurnRequest",
    "SummaryAsTurn",
    "SummaryCalledToolError",
    "summary_parameters",
]

HANDLER = "akgentic-summary"
"""The ``CompactionResult.handler`` of this capability's compactions."""

Summarize = Callable[[list[ModelMessage], RunContext[Any], ModelRequestParameters], Awaitable[str]]


@dataclass(eq=False)
class CompactWithinRun(AbstractCapability[Any]):
    """Compacts the history between a run's model requests; see the module docstring."""

    window: Callable[[], int | None]
    """The context window of the model in force, in tokens (None: unknown)."""
    threshold: float
    keep_last: int
    summarize: Summarize
    """Writes the summary of the history it is given (the messages before the cut), told
    the parameters the run's request being compacted goes out with."""
    failed: Callable[[Exception, str], None]
    """Told of a summary that failed, and why the compaction was asked for."""
    made: list[CompactionPart] = field(default_factory=list)
    """The summary parts made in the current run (:meth:`start_run` empties it)."""
    _gave_up: bool = False

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    def start_run(self) -> None:
        """A new run begins: nothing made in it yet, and a summary may be asked for again."""
        self.made = []
        self._gave_up = False

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        if (
            ctx.run_step > 1
            and not self._gave_up
            and needs_compaction(request_context.messages, self.window(), self.threshold)
        ):
            ctx.request_compaction(reason="threshold")
        return request_context

    async def compact_history(
        self, ctx: RunContext[Any], request: CompactionRequest
    ) -> CompactionResult | None:
        plan = plan_compaction(request.messages, self.keep_last)
        if plan is None:
            return None  # all of it is the tail kept: nothing to summarise
        try:
            summary = await self.summarize(
                list(request.messages[: plan.cut]), ctx, request.conversation_request.parameters
            )
        except UsageLimitExceeded:
            raise  # the run's limit: the run stops, as at its own next request
        except Exception as exc:
            self._gave_up = True
            self.failed(exc, str(request.reason))
            return None
        messages = apply_summary(request.messages, plan, summary, keep_usage=True)
        part = next(p for p in messages[0].parts if isinstance(p, CompactionPart))
        self.made.append(part)
        return CompactionResult(messages=messages, part=part, handler=HANDLER, kept_from=1)


class SummaryCalledToolError(RuntimeError):
    """A summary's reply called tools instead of writing the summary (a failed summary)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(
            f"the model answered the summary request with a tool call ({', '.join(names)}) "
            f"instead of a summary; try /compact again, or use a model that honours "
            f"tool_choice none"
        )
        self.names = names


@dataclass(eq=False)
class LastTurnRequest(AbstractCapability[Any]):
    """Keeps the parameters of the agent's last turn request (its instructions, tool and
    output definitions, before the model's ``prepare_request``), as every other hook shaped
    them: a summary's request within a run (:class:`SummaryAsTurn`) reuses them, so its
    prefix is the one the provider cached. ``params`` is None until the first turn request
    of the process."""

    params: ModelRequestParameters | None = None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        self.params = request_context.model_request_parameters
        return response


def summary_parameters(turn: ModelRequestParameters) -> ModelRequestParameters:
    """A summary's request parameters from a turn's: the same instructions and the same
    tool definitions, in the same order (the output tools after the function tools, as
    they go on the wire), but offered as plain definitions with text the only output —
    so ``tool_choice`` ``none`` resolves to ``none`` and no provider filters a definition
    out (one that narrows the tools to the output tools breaks the cached prefix)."""
    return replace(
        turn,
        function_tools=[*turn.function_tools, *turn.output_tools],
        output_tools=[],
        output_mode="text",
        output_object=None,
        prompted_output_template=None,
        allow_text_output=True,
    )


@dataclass(eq=False)
class SummaryAsTurn(AbstractCapability[Any]):
    """Shapes a summary's request as the agent's turn requests (see the module docstring):
    ``turn`` is the parameters of the turn request it shares a prefix with (within a run,
    the run's last request's, :class:`LastTurnRequest`). None: the request's own, as the
    capabilities before this one shaped them — its agent is built from the turn's own
    sources (instructions, tools, toolsets, output type), so they are the next turn's, even
    before any turn of this process. Either way they go out as :func:`summary_parameters`
    says. Tool calls are refused for the request (``tool_choice`` ``none``), and a reply that
    makes one is refused here: a :class:`SummaryCalledToolError`, after any later capability
    (the accounting) saw it."""

    turn: ModelRequestParameters | None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = summary_parameters(self.turn or request_context.model_request_parameters)
        settings: ModelSettings = {**(request_context.model_settings or {}), "tool_choice": "none"}
        return replace(request_context, model_request_parameters=params, model_settings=settings)

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        calls = [p.tool_name for p in response.parts if isinstance(p, BaseToolCallPart)]
        if calls:
            raise SummaryCalledToolError(calls)
        return response
