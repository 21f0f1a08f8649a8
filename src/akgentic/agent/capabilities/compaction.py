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
run's). A summary that fails otherwise than by a cut or a usage limit is reported to
``failed`` and leaves the history as it was (the request goes on with it; for a threshold
there is still room), and the run asks no more: a summary that fails once would fail at
each step alike. ``made`` lists the summary parts made in the current run, so the agent
tells a history compacted within the run from one that was not (a cut run's, too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.capabilities import AbstractCapability, CompactionRequest, CompactionResult
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import CompactionPart, ModelMessage
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from akgentic.llm import apply_summary, needs_compaction, plan_compaction

__all__ = ["HANDLER", "CompactWithinRun"]

HANDLER = "akgentic-summary"
"""The ``CompactionResult.handler`` of this capability's compactions."""

Summarize = Callable[[list[ModelMessage], RunContext[Any]], Awaitable[str]]


@dataclass(eq=False)
class CompactWithinRun(AbstractCapability[Any]):
    """Compacts the history between a run's model requests; see the module docstring."""

    window: Callable[[], int | None]
    """The context window of the model in force, in tokens (None: unknown)."""
    threshold: float
    keep_last: int
    summarize: Summarize
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
            summary = await self.summarize(plan.older, ctx)
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
