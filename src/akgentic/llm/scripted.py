"""The scripted model: the embedded offline default, a pydantic-ai ``Model`` playing a scenario.

It lets the main job, the examples and load tests run with no API key, no network and no
randomness, through the very same pydantic-ai ``Agent`` loop a real model drives: tool calls are
real calls to the agent's real tools, structured output goes through the real output tool.

How a reply is chosen (see :mod:`akgentic.llm.scenario` for the file format). Everything is
derived from the message history, so the model holds no per-run state, replays identically, and
one instance can serve many agents and threads at once:

1. The turn opens at the latest request holding a user prompt. Its text is matched against the
   role's ``source: prompt`` rules in order; the first match wins, else the role's ``default``.
2. Each of this turn's earlier responses consumed one step of that reply. While steps remain,
   the next one plays.
3. When a reply's steps are used up (its last step called tools), the tool returns that came
   back are matched against the ``source: tool_return`` rules; when none matches, the turn
   closes with ``"[scripted] {result}"``, the tool returns as text. A reply never loops.

A step's ``text`` becomes a text part, its ``tool_calls`` tool calls (to tools the agent must
have: calling an unknown tool is a :class:`ScenarioError`, not a silent retry loop) and its
``output`` a call to the agent's final-result tool. When the agent requires structured output
and the step gives none, valid arguments are generated from the output schema with pydantic-ai's
``TestModel``, so an unscripted prompt still ends the run. A scripted reply that pydantic-ai
sends back for a retry (its output failed validation) is a scenario bug and raises
:class:`ScenarioError` quoting the feedback.

The request that summarises a conversation for a compaction is not a turn: it is the agent's
history, which would match the rules of the turns it holds, ended by the message that asks for
the summary (:func:`~akgentic.llm.compaction.with_summary_ask`, marked in its metadata). It is
answered with ``"[scripted] Summary of N lines; the last: ..."``, the lines those of the
history as :func:`~akgentic.llm.compaction.summary_prompt` renders it. So is the bounded form
an agent falls back to when its history no longer fits the window (its instructions
:data:`~akgentic.llm.compaction.SUMMARY_INSTRUCTIONS`, its prompt that rendering).

The model says what it is: ``model_name`` is ``scripted:<scenario>``, ``system`` is
``scripted``, and the built-in default reply starts with ``[scripted]``. Streaming is supported
(``request_stream``): text parts arrive word by word, tool calls whole. Usage is estimated at
four characters per token. Nothing sleeps.
"""

from __future__ import annotations

import json
import string
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    RetryFeedbackPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.test import TestModel
from pydantic_ai.profiles import ModelProfileSpec
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.usage import RequestUsage

from akgentic.llm.compaction import (
    SUMMARY_INSTRUCTIONS,
    asks_for_summary,
    estimate_tokens,
    summary_prompt,
    without_summary_ask,
)
from akgentic.llm.scenario import (
    DEFAULT_SCENARIO,
    CompiledReply,
    Scenario,
    ScenarioError,
    ScriptedStep,
    load_scenario,
    scenario_from_dict,
)

__all__ = ["ScriptedModel", "ScriptedStreamedResponse"]

SYSTEM = "scripted"

_CLOSING = CompiledReply(
    where="closing reply (no `source: tool_return` rule matched)",
    steps=(ScriptedStep(text="[scripted] {result}"),),
    pattern=None,
    source="tool_return",
)


@dataclass(frozen=True, slots=True)
class _Choice:
    reply: CompiledReply
    text: str
    positional: tuple[str, ...]
    named: Mapping[str, str]


def _user_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    texts = []
    for item in part.content:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, TextContent):
            texts.append(item.content)
    return "\n".join(texts)


def _prompt_text(message: ModelRequest) -> str:
    return "\n".join(
        _user_text(p)
        for p in message.parts
        if isinstance(p, UserPromptPart) and not _is_system_note(p)
    )


def _asks_for_a_summary(messages: Sequence[ModelMessage], params: ModelRequestParameters) -> bool:
    """Whether this request asks for a summary, in either form: the history ended by the
    marked ask (:func:`~akgentic.llm.compaction.with_summary_ask`), or the bounded form —
    :data:`~akgentic.llm.compaction.SUMMARY_INSTRUCTIONS` and the conversation as text."""
    if messages and asks_for_summary(messages[-1]):
        return True
    return _bounded(messages, params)


def _bounded(messages: Sequence[ModelMessage], params: ModelRequestParameters) -> bool:
    """Whether this is the bounded summary request (its instructions say so)."""
    if any(p.content == SUMMARY_INSTRUCTIONS for p in params.instruction_parts or ()):
        return True
    last = messages[-1] if messages else None
    return isinstance(last, ModelRequest) and last.instructions == SUMMARY_INSTRUCTIONS


def _summary(messages: Sequence[ModelMessage], params: ModelRequestParameters) -> str:
    """The summary of the history the request asks to summarise: its lines as
    :func:`~akgentic.llm.compaction.summary_prompt` renders them — in the bounded form, the
    lines of the text it sends. Both forms count the same lines for the same history: the
    framework notes pydantic-ai adds to the messages on their way to a model (a toolset's
    "now available", from a ``ToolAvailabilityDeltaPart`` the history holds, which the
    text form never shows) are left out of the prefix form's rendering, as they are of a
    turn's prompt (:func:`_is_system_note`)."""
    last = messages[-1] if messages else None
    if not asks_for_summary(last) and _bounded(messages, params):
        prompt = _prompt_text(last) if isinstance(last, ModelRequest) else ""
    else:
        prompt = summary_prompt(_without_system_notes(without_summary_ask(messages)))
    lines = [line.strip() for line in prompt.splitlines() if line.strip()]
    if not lines:
        return "[scripted] Summary: nothing was said."
    return f"[scripted] Summary of {len(lines)} lines; the last: {lines[-1][:200]}"


def _without_system_notes(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """``messages`` without the framework notes in their requests (:func:`_is_system_note`);
    a request left with no part is left out."""
    kept: list[ModelMessage] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            kept.append(message)
            continue
        parts = [
            p for p in message.parts if not (isinstance(p, UserPromptPart) and _is_system_note(p))
        ]
        if len(parts) == len(message.parts):
            kept.append(message)
        elif parts:
            kept.append(replace(message, parts=parts))
    return kept


def _returns_text(message: ModelMessage | None) -> str:
    if not isinstance(message, ModelRequest):
        return ""
    return "\n".join(
        p.model_response_str(wrap_if_error=False)
        for p in message.parts
        if isinstance(p, ToolReturnPart)
    )


def _is_system_note(part: UserPromptPart) -> bool:
    """A framework note pydantic-ai puts in a user turn as ``<system>…</system>`` (a tool
    availability announcement, a mid-run notice): never the start of a turn."""
    text = _user_text(part).strip()
    return text.startswith("<system") and text.endswith("</system>")


def _turn_start(messages: Sequence[ModelMessage]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(
            isinstance(p, UserPromptPart) and not _is_system_note(p) for p in message.parts
        ):
            return index
    return None


class ScriptedModel(Model):
    """A pydantic-ai model that answers from a scenario, offline and deterministically.

    Build it with :meth:`from_file`, :meth:`from_dict` or :meth:`default`; ``role`` picks the
    role's script (its own, else the scenario's ``"*"`` script), and an unknown role is a
    :class:`ScenarioError` at construction, not at the first request.
    """

    # No wire and no model to read framework announcements: keep them out of the history.
    _announces_lookalike_notes = False
    # Receive retry feedback as a `RetryFeedbackPart` rather than as text posing as a user
    # prompt, so a rejected scripted reply is reported instead of being matched as a new turn.
    _renders_retry_feedback = True

    def __init__(
        self,
        scenario: Scenario,
        *,
        role: str | None = None,
        settings: ModelSettings | None = None,
        profile: ModelProfileSpec | None = None,
    ) -> None:
        self._scenario = scenario
        self._role = role
        self._rules, self._default = scenario.script(role)
        self._model_name = f"{SYSTEM}:{scenario.name}"
        super().__init__(settings=settings, profile=profile)

    @classmethod
    def from_file(cls, path: str | Path, role: str | None = None, **kwargs: Any) -> ScriptedModel:
        """Play the scenario in a YAML file; a malformed file raises :class:`ScenarioError`."""
        return cls(load_scenario(path), role=role, **kwargs)

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        role: str | None = None,
        *,
        name: str | None = None,
        **kwargs: Any,
    ) -> ScriptedModel:
        """Play a scenario held as data (the same shape as the YAML file)."""
        return cls(
            scenario_from_dict(data, origin=f"<dict {name or 'scenario'}>", name=name),
            role=role,
            **kwargs,
        )

    @classmethod
    def default(cls, role: str | None = None, **kwargs: Any) -> ScriptedModel:
        """The built-in scenario: it echoes the prompt behind a plain ``[scripted]`` label."""
        return cls(
            scenario_from_dict(DEFAULT_SCENARIO, origin="<built-in default>"), role=role, **kwargs
        )

    @property
    def model_name(self) -> str:
        """``scripted:<scenario name>``."""
        return self._model_name

    @property
    def system(self) -> str:
        """Always ``scripted``."""
        return SYSTEM

    @property
    def scenario(self) -> Scenario:
        """The scenario being played."""
        return self._scenario

    @property
    def role(self) -> str | None:
        """The role whose script is played."""
        return self._role

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Answer from the scenario (see the module docstring for how the reply is chosen)."""
        _, params = self.prepare_request(model_settings, model_request_parameters)
        return self.respond(messages, params)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        """The same answer as :meth:`request`, streamed: text word by word, tool calls whole."""
        _, params = self.prepare_request(model_settings, model_request_parameters)
        response = self.respond(messages, params)
        yield ScriptedStreamedResponse(
            model_request_parameters=params, _model_name=self._model_name, _response=response
        )

    # -- choosing the reply -------------------------------------------------------------------

    def _choose(self, text: str, source: str) -> _Choice:
        for rule in self._rules:
            if rule.source != source:
                continue
            found = rule.match(text)
            if found is not None:
                groups = tuple(g or "" for g in found.groups())
                named = {k: v or "" for k, v in found.groupdict().items()}
                return _Choice(rule, text, (found.group(0), *groups), named)
        fallback = self._default if source == "prompt" else _CLOSING
        return _Choice(fallback, text, (text,), {})

    def _position(self, messages: Sequence[ModelMessage]) -> tuple[_Choice, int]:
        start = _turn_start(messages)
        opening = messages[start] if start is not None else None
        prompt = _prompt_text(opening) if isinstance(opening, ModelRequest) else ""
        choice = self._choose(prompt, "prompt")
        step = 0
        for index in range((start or 0) + 1, len(messages)):
            if not isinstance(messages[index], ModelResponse):
                continue
            step += 1
            if step >= len(choice.reply.steps):
                following = messages[index + 1] if index + 1 < len(messages) else None
                choice = self._choose(_returns_text(following), "tool_return")
                step = 0
        return choice, step

    def _check_no_feedback(
        self, messages: Sequence[ModelMessage], params: ModelRequestParameters
    ) -> None:
        last = messages[-1] if messages else None
        if not isinstance(last, ModelRequest):
            return
        output_names = {t.name for t in params.output_tools}
        for part in last.parts:
            rejected = isinstance(part, RetryFeedbackPart) or (
                isinstance(part, ToolReturnPart)
                and part.outcome == "retried"
                and part.tool_name in output_names
            )
            if isinstance(part, RetryFeedbackPart | ToolReturnPart) and rejected:
                content = part.content
                detail = content if isinstance(content, str) else json.dumps(content, default=str)
                raise ScenarioError(
                    f"scenario {self._scenario.origin}: the agent rejected a scripted reply "
                    f"and asked for a retry: {detail.rstrip().rstrip('.')}. A scenario does "
                    f"not answer a retry: change the step that produced it to one the agent "
                    f"takes (its `output` valid for the agent's output type, written to a "
                    f"member, within the team's max_agent_hops)."
                )

    # -- building the response ----------------------------------------------------------------

    def respond(
        self, messages: Sequence[ModelMessage], params: ModelRequestParameters
    ) -> ModelResponse:
        """The scripted response to ``messages``; pure, but may raise :class:`ScenarioError`."""
        self._check_no_feedback(messages, params)
        if _asks_for_a_summary(messages, params):
            return self._response([TextPart(_summary(messages, params))], messages)
        choice, step_index = self._position(messages)
        step = choice.reply.steps[step_index]
        where = f"{choice.reply.where} steps[{step_index}]"
        variables = {
            "message": choice.text,
            "result": _returns_text(messages[-1] if messages else None),
            **choice.named,
        }

        def render(value: Any) -> Any:
            if isinstance(value, str):
                try:
                    return string.Formatter().vformat(value, choice.positional, variables)
                except (KeyError, IndexError, ValueError, AttributeError) as exc:
                    raise ScenarioError(f"{where}: cannot fill {value!r}: {exc!r}") from exc
            if isinstance(value, Mapping):
                return {k: render(v) for k, v in value.items()}
            if isinstance(value, list):
                return [render(v) for v in value]
            return value

        responses_so_far = sum(isinstance(m, ModelResponse) for m in messages)
        parts: list[ModelResponsePart] = []
        if step.text is not None:
            parts.append(TextPart(render(step.text)))
        tools = {t.name for t in params.function_tools}
        for number, call in enumerate(step.tool_calls):
            if call.tool not in tools:
                known = ", ".join(sorted(tools)) or "none"
                raise ScenarioError(
                    f"{where} calls tool {call.tool!r}, which this agent does not have "
                    f"(its tools: {known})"
                )
            parts.append(
                ToolCallPart(
                    call.tool,
                    render(call.args),
                    tool_call_id=f"scripted-{responses_so_far}-{number}",
                )
            )
        output = self._output_part(step, params, render, responses_so_far)
        if output is not None:
            parts.append(output)
        return self._response(parts, messages)

    def _response(
        self, parts: list[ModelResponsePart], messages: Sequence[ModelMessage]
    ) -> ModelResponse:
        response = ModelResponse(
            parts=parts,
            model_name=self._model_name,
            provider_name=SYSTEM,
            timestamp=datetime.now(UTC),
        )
        response.usage = RequestUsage(
            input_tokens=estimate_tokens(messages), output_tokens=estimate_tokens([response])
        )
        return response

    def _output_part(
        self,
        step: ScriptedStep,
        params: ModelRequestParameters,
        render: Any,
        responses_so_far: int,
    ) -> ModelResponsePart | None:
        if step.output is None:
            if step.tool_calls or params.allow_text_output or not params.output_tools:
                return None
            generated = params.output_tools[0]
            args = TestModel().gen_tool_args(generated)
            return ToolCallPart(
                generated.name, args, tool_call_id=f"scripted-{responses_so_far}-out"
            )
        value = render(step.output)
        if not params.output_tools:
            return TextPart(value if isinstance(value, str) else json.dumps(value))
        tool: ToolDefinition = params.output_tools[0]
        key = tool.outer_typed_dict_key
        if key is not None and not (isinstance(value, dict) and set(value) == {key}):
            value = {key: value}
        return ToolCallPart(tool.name, value, tool_call_id=f"scripted-{responses_so_far}-out")


@dataclass
class ScriptedStreamedResponse(StreamedResponse):
    """A scripted response, streamed: each text part word by word, each tool call whole."""

    _model_name: str
    _response: ModelResponse
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        self._usage = self._response.usage
        for index, part in enumerate(self._response.parts):
            if isinstance(part, TextPart):
                words = part.content.split(" ")
                for position, word in enumerate(words):
                    chunk = word if position == len(words) - 1 else f"{word} "
                    for event in self._parts_manager.handle_text_delta(
                        vendor_part_id=index, content=chunk
                    ):
                        yield event
            elif isinstance(part, ToolCallPart):
                yield self._parts_manager.handle_tool_call_part(
                    vendor_part_id=index,
                    tool_name=part.tool_name,
                    args=part.args_as_dict(),
                    tool_call_id=part.tool_call_id,
                )

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str:
        return SYSTEM

    @property
    def provider_url(self) -> None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp
