"""PublishRunEvents: a run's text, tool calls and tool returns on the team stream, as they
happen, without pydantic-ai streaming the run.

pydantic-ai streams every step of a run as soon as one capability listens to its events
(``on_event``), and a streamed model request is read through its ``AgentStream``, which
takes an anyio lock and a cancel scope — a trip round the event loop — for every event it
pulls. On a model that answers at once that costs a turn about 0.8 ms
(``bench/agent_turn.py``): most of what the agent added to a bare pydantic-ai run.

So this capability listens to no event. It gets the same events another way:

- **Text** — the model is wrapped (``get_wrapper_model``): the wrapper asks the model for
  its streamed response, reads the deltas straight off it while the model works, and hands
  pydantic-ai the finished response as if it had asked without streaming. A model that
  cannot stream is asked plainly; its text goes out in one piece when it answers. A
  provider's stream cut off before it finished is asked again (``llm.FinishedResponses``):
  the cut text was published already, so an ``LlmAnswerRestartedEvent`` follows it, saying
  how many characters of it to drop, then the new answer's deltas (so after a failure
  once the answer began, before a fallback's answer).
- **Tool calls** — announced when the step that runs them starts (``before_node_run`` of a
  ``CallToolsNode``, after the cancel check: a cancelled step announces nothing): every
  call that is not the run's output (a function tool, or a tool the model made up).
- **Tool returns** — when that step ends (``after_node_run``), read from the parts
  pydantic-ai built to send back to the model, so each says what the model will see: its
  outcome (``success``, ``retried``, ``failed``...) and its content.

Order is the run's: the text of a response, then the calls it made, then their returns,
then the next response's text. Text deltas are gathered (see :class:`PublishRunEvents`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import CallToolsNode, ModelRequestNode
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from akgentic.llm import (
    FinishedResponses,
    LlmAnswerRestartedEvent,
    LlmTextDeltaEvent,
    ToolCallEvent,
    ToolReturnEvent,
    from_stream_event,
    listening,
)

__all__ = ["TEXT_BATCH_CHARS", "PublishRunEvents"]

TEXT_BATCH_CHARS = 4096
"""Gathered text is published once it reaches this many characters, whatever the time."""


@dataclass
class PublishRunEvents(AbstractCapability[Any]):
    """Publishes text deltas, tool calls and tool returns as they happen (module docstring).

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
    _run_id: str = field(default="", init=False, repr=False)
    _calls: set[str] = field(default_factory=set, init=False, repr=False)
    _answered: int = field(default=0, init=False, repr=False)
    """Characters of text published since the model's answer began (``answer_begins``)."""

    # -- text: the model's streamed response, read by the wrapper ------------------------
    def get_wrapper_model(self, model: Model) -> Model | None:
        return _StreamingModel(model, self)

    def model_event(self, event: ModelResponseStreamEvent) -> None:
        """One event of the model's streamed response."""
        for item in from_stream_event(event, run_id=self._run_id):
            if isinstance(item, LlmTextDeltaEvent):
                self._gather(item)
            else:
                self.flush_text()
                self.publish(item)
        if not isinstance(event, PartDeltaEvent | PartStartEvent):
            self.flush_text()  # a part ended: the text so far is complete

    def answer_begins(self) -> None:
        """The model is asked for a new answer: the text published from here is its."""
        self._answered = 0

    def restarted(self) -> None:
        """The response streamed so far is no answer (cut off, or failed): its text goes
        out as it is (published, it cannot be taken back), then, when it had any, an
        ``LlmAnswerRestartedEvent`` saying how much of it to drop; the next answer's
        (asked again, or a fallback's) after it."""
        self.flush_text()
        if self._answered:
            self.publish(LlmAnswerRestartedEvent(run_id=self._run_id, chars=self._answered))
        self._answered = 0

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
        self._answered += len(text)
        self.publish(LlmTextDeltaEvent(run_id=first.run_id, delta=text, index=first.index))

    # -- tools: announced when their step starts, returned when it ends -------------------
    async def before_node_run(self, ctx: RunContext[Any], *, node: Any) -> Any:
        if isinstance(node, CallToolsNode):
            self.flush_text()
            self._calls = set()
            for part in node.model_response.parts:
                if isinstance(part, ToolCallPart) and not _is_output(ctx, part.tool_name):
                    self._calls.add(part.tool_call_id)
                    self.publish(ToolCallEvent.from_part(part, run_id=self._run_id))
        return node

    async def after_node_run(self, ctx: RunContext[Any], *, node: Any, result: Any) -> Any:
        if isinstance(node, CallToolsNode) and self._calls:
            for part in _returned(ctx, result):
                if isinstance(part, ToolReturnPart) and part.tool_call_id in self._calls:
                    self.publish(ToolReturnEvent.from_part(part, run_id=self._run_id))
            self._calls = set()
        return result

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        self._run_id = ctx.run_id or ""
        try:
            return await handler()
        finally:
            self.flush_text()
            self._calls = set()

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None


def _is_output(ctx: RunContext[Any], tool_name: str) -> bool:
    """Whether ``tool_name`` is one of the run's output tools (its answer, not a call)."""
    manager = ctx.tool_manager
    if manager is None:
        return False
    try:
        tool_def = manager.get_tool_def(tool_name)
    except ValueError:  # not prepared for this step: pydantic-ai runs it as a function
        return False
    return tool_def is not None and tool_def.kind == "output"


def _returned(ctx: RunContext[Any], result: Any) -> list[Any]:
    """The parts a tool step sends back to the model: the next request's, or — when the
    run ended in that step — those of the request it closed the history with."""
    if isinstance(result, ModelRequestNode):
        return list(result.request.parts)
    messages: list[ModelMessage] = ctx.messages
    if messages and isinstance(messages[-1], ModelRequest):
        return list(messages[-1].parts)
    return []


class _StreamingModel(WrapperModel):
    """Asks ``wrapped`` for its streamed response and feeds the events to ``events`` as
    they arrive; answers pydantic-ai with the finished response — one a provider cut off
    before finishing it is asked again, then failed (``llm.FinishedResponses``)."""

    def __init__(self, wrapped: Model, events: PublishRunEvents) -> None:
        super().__init__(wrapped)
        self._events = events

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self._events.answer_begins()
        try:
            with listening(self._events):
                return await FinishedResponses.around(self.wrapped).request(
                    messages, model_settings, model_request_parameters
                )
        finally:
            self._events.flush_text()
