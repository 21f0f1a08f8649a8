"""Events an LLM agent publishes on the team stream (``Akgent.notify_event``).

Every event is a :class:`~akgentic.core.serialization.SerializableModel`, so it is stored,
replayed and sent over HTTP like any other framework object, and decodes back to its class.

- :class:`LlmMessageEvent` is the **record** of what the model was told and answered in one run:
  the run's pydantic-ai messages, kept as JSON through pydantic-ai's own
  ``ModelMessagesTypeAdapter``, so a restore rebuilds the exact model context
  (:meth:`LlmMessageEvent.to_messages`). JSON text rather than nested data, because message
  content (tool arguments, tool returns) is arbitrary and must not be mistaken for framework
  objects by the decoder.
- :class:`ToolCallEvent` / :class:`ToolReturnEvent` make tool use observable (ADR-018: they moved
  here from ``akgentic.tool``). Only function tools are reported; the final-result output tool is
  the run's answer, not a tool use.
- :class:`LlmUsageEvent` reports the tokens and requests a run (or request) used.
- :class:`LlmTextDeltaEvent` carries streamed text as it arrives;
  :class:`LlmAnswerRestartedEvent` says that the last of it was no answer (cut off, asked
  again), so a view drops it.

:func:`from_stream_event` maps pydantic-ai's agent stream events (the ``event_stream_handler``
of ``Agent.run``) onto these, so the agent layer publishes them with no mapping of its own.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr, TypeAdapter
from pydantic_ai.messages import (
    BaseToolCallPart,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.usage import RequestUsage, RunUsage
from pydantic_core import PydanticSerializationError

from akgentic.core.serialization import SerializableModel
from akgentic.core.surrogates import replace_lone_surrogates, replace_lone_surrogates_in

__all__ = [
    "ContextReplacedEvent",
    "LlmAnswerRestartedEvent",
    "LlmEvent",
    "LlmMessageEvent",
    "LlmTextDeltaEvent",
    "LlmUsageEvent",
    "ToolCallEvent",
    "ToolReturnEvent",
    "from_stream_event",
    "messages_to_json",
    "sound_message",
]


def messages_to_json(messages: Sequence[ModelMessage]) -> str:
    """pydantic-ai messages as JSON text (kept as text, so tool data is never decoded as
    a framework object by the event store)."""
    return ModelMessagesTypeAdapter.dump_json(list(messages)).decode()


_MessageAdapter: TypeAdapter[ModelMessage] = TypeAdapter(
    ModelMessage,
    config=ConfigDict(defer_build=True, ser_json_bytes="base64", val_json_bytes="base64"),
)
"""One message, encoded exactly as ``ModelMessagesTypeAdapter`` encodes each item of its
list (same configuration): the list's JSON is its items' JSON joined by commas in
brackets, which a test checks byte for byte."""


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A surrogate written as a JSON escape: a pair's half (one character once decoded), or a
lone surrogate — which pydantic refuses as invalid JSON."""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A surrogate in a decoded string: always a lone one (a pair is one character)."""

_SCALARS = (int, float, bytes, bytearray, datetime.date, datetime.time, datetime.timedelta)
"""Values that hold no text: what a response's fields are besides strings, containers
and pydantic-ai's dataclasses (counts, binary content, its timestamp)."""


def _may_hold_lone_surrogate(value: object) -> bool:
    """Whether ``value`` holds a lone surrogate, or something this walk does not look
    into (the encoder decides then). A walk of the strings, at C speed each: an ASCII
    string answers at once (a flag), any other one by one regex scan."""
    if value is None or isinstance(value, _SCALARS):
        return False
    if isinstance(value, str):
        return not value.isascii() and _LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(map(_may_hold_lone_surrogate, value.keys())) or any(
            map(_may_hold_lone_surrogate, value.values())
        )
    if isinstance(value, list | tuple):
        return any(map(_may_hold_lone_surrogate, value))
    if dataclasses.is_dataclass(value) and hasattr(value, "__dict__"):
        return any(map(_may_hold_lone_surrogate, vars(value).values()))
    return True


def sound_message(message: ModelMessage) -> ModelMessage:
    """``message`` with its lone surrogates as U+FFFD, wherever they are (a reply's text,
    a tool call's arguments — data, or JSON text escaping one — a thinking part);
    ``message`` itself when it has none (the usual case: a walk of its strings, each
    checked at C speed, and one scan of each call's JSON arguments — not an encoding,
    which cost ≈ 40 µs a response).

    What a model answers enters the run here (see ``akgentic.core.surrogates``): a lone
    surrogate left in would make the next request, the run's events and its record
    impossible to encode, and the turn — and its resume — fail; escaped in a call's JSON
    arguments, it would make the call fail as invalid JSON."""
    if _may_hold_lone_surrogate(message):
        try:
            _MessageAdapter.dump_json(message)
        except PydanticSerializationError:
            # As Python data, not JSON: pydantic's JSON mode fails outright on a dict
            # key holding a lone surrogate (a call's arguments as data).
            data = _MessageAdapter.dump_python(message)
            sound = replace_lone_surrogates_in(data)
            if sound is not data:
                message = _MessageAdapter.validate_python(sound)
    if isinstance(message, ModelResponse):
        parts = [_sound_arguments(part) for part in message.parts]
        if any(new is not old for new, old in zip(parts, message.parts, strict=True)):
            message = dataclasses.replace(message, parts=parts)
    return message


def _sound_arguments(part: Any) -> Any:
    """``part`` — a call whose JSON arguments escape a lone surrogate — with that
    surrogate as U+FFFD; any other part as it is."""
    if not isinstance(part, BaseToolCallPart) or not isinstance(part.args, str):
        return part
    if _SURROGATE_ESCAPE.search(part.args) is None:
        return part
    try:
        text = json.dumps(json.loads(part.args), ensure_ascii=False)
    except ValueError:
        return part  # not JSON: the call fails as invalid arguments, and says so
    sound = replace_lone_surrogates(text)
    return part if sound == text else dataclasses.replace(part, args=sound)


class _Items:
    """Each message's JSON text, kept beside an event's ``messages_json`` (a private
    attribute): the working memory keeps one row per message, and its writer stores
    these texts instead of decoding the list to encode every item again.

    A cache, not part of the event's value: pydantic compares private attributes in
    ``==``, and an event built here must still equal the same event decoded from storage
    (which has none), so it compares equal to any other and to None."""

    __slots__ = ("texts",)

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts

    def __eq__(self, other: object) -> bool:
        return other is None or isinstance(other, _Items)

    __hash__ = None  # type: ignore[assignment]

    def of(self, messages_json: str) -> list[str] | None:
        """The texts while they still make up ``messages_json`` (same length: the field
        is not frozen, and one reassigned since makes them stale); None otherwise."""
        texts = self.texts
        size = sum(map(len, texts)) + max(len(texts) - 1, 0) + 2
        return texts if size == len(messages_json) else None


def _items_json(messages: Sequence[ModelMessage]) -> tuple[str, _Items]:
    """The messages' JSON (what :func:`messages_to_json` gives), every message encoded
    once, and each message's text."""
    texts = [_MessageAdapter.dump_json(message).decode() for message in messages]
    return "[" + ",".join(texts) + "]", _Items(texts)


class LlmMessageEvent(SerializableModel):
    """The pydantic-ai messages of one run, as JSON; enough to rebuild the model's context."""

    run_id: str
    agent: str
    messages_json: str = "[]"
    _items: _Items | None = PrivateAttr(default=None)

    @classmethod
    def from_messages(
        cls, messages: Sequence[ModelMessage], *, run_id: str, agent: str
    ) -> LlmMessageEvent:
        """Record ``messages`` (typically ``result.new_messages()``) of run ``run_id``."""
        text, items = _items_json(messages)
        event = cls(run_id=run_id, agent=agent, messages_json=text)
        event._items = items
        return event

    def message_items(self) -> list[str] | None:
        """Each message's JSON text, in order, when this event was built from messages
        (:meth:`from_messages`); None for one decoded from storage or built from its
        ``messages_json`` (split that instead). Joined by commas in brackets, the items
        are ``messages_json`` exactly; they are private, never stored or sent."""
        return None if self._items is None else self._items.of(self.messages_json)

    def to_messages(self) -> list[ModelMessage]:
        """The pydantic-ai messages back, ready for ``Agent.run(message_history=...)``."""
        return ModelMessagesTypeAdapter.validate_json(self.messages_json)


class ContextReplacedEvent(SerializableModel):
    """An agent's model context was replaced wholesale (``/clear``, compaction).

    Until the next one, the context is these messages followed by every later
    ``LlmMessageEvent`` of the agent: the working memory and restore follow this rule.
    """

    agent: str
    messages_json: str = "[]"
    _items: _Items | None = PrivateAttr(default=None)

    @classmethod
    def from_messages(cls, messages: Sequence[ModelMessage], *, agent: str) -> ContextReplacedEvent:
        text, items = _items_json(messages)
        event = cls(agent=agent, messages_json=text)
        event._items = items
        return event

    def message_items(self) -> list[str] | None:
        """Each message's JSON text, as :meth:`LlmMessageEvent.message_items`."""
        return None if self._items is None else self._items.of(self.messages_json)

    def to_messages(self) -> list[ModelMessage]:
        return ModelMessagesTypeAdapter.validate_json(self.messages_json)


class ToolCallEvent(SerializableModel):
    """The model called a function tool with these arguments."""

    run_id: str
    tool_name: str
    tool_call_id: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_part(cls, part: ToolCallPart, *, run_id: str) -> ToolCallEvent:
        """From pydantic-ai's call part (JSON-string arguments are parsed)."""
        return cls(
            run_id=run_id,
            tool_name=part.tool_name,
            tool_call_id=part.tool_call_id,
            arguments=part.args_as_dict(),
        )


class ToolReturnEvent(SerializableModel):
    """A function tool call ended: ``success`` unless it failed, was denied, retried or cut off.

    ``outcome`` is pydantic-ai's word for how it ended (``success``, ``failed``, ``denied``,
    ``interrupted``, ``retried``). ``content`` is the return as the model saw it, cut to
    ``RETURN_PREVIEW_CHARS`` (the whole of it is in the run's ``LlmMessageEvent``).
    """

    run_id: str
    tool_name: str
    tool_call_id: str
    success: bool
    outcome: str = "success"
    content: str = ""

    @classmethod
    def from_part(cls, part: ToolReturnPart, *, run_id: str) -> ToolReturnEvent:
        """From pydantic-ai's return part."""
        return cls(
            run_id=run_id,
            tool_name=part.tool_name,
            tool_call_id=part.tool_call_id,
            success=part.outcome == "success",
            outcome=part.outcome,
            content=_preview(part.model_response_str(wrap_if_error=False)),
        )


RETURN_PREVIEW_CHARS = 2000


def _preview(text: str) -> str:
    if len(text) <= RETURN_PREVIEW_CHARS:
        return text
    return f"{text[:RETURN_PREVIEW_CHARS]}… ({len(text) - RETURN_PREVIEW_CHARS} more characters)"


class LlmUsageEvent(SerializableModel):
    """Tokens and requests a run (or one request) used, as the provider reported them."""

    run_id: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0

    @classmethod
    def from_usage(
        cls, usage: RunUsage | RequestUsage, *, run_id: str, model: str
    ) -> LlmUsageEvent:
        """From pydantic-ai's usage of a run (``result.usage``) or of one response."""
        return cls(
            run_id=run_id,
            model=model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            requests=usage.requests,
            tool_calls=usage.tool_calls if isinstance(usage, RunUsage) else 0,
        )


class LlmTextDeltaEvent(SerializableModel):
    """A piece of streamed text; ``index`` is the part's index within its model response."""

    run_id: str
    delta: str
    index: int = 0


class LlmAnswerRestartedEvent(SerializableModel):
    """The model's answer streamed so far is no answer: it was cut off before its finish
    reason and is asked again, or it failed and a fallback model may answer. Published text
    cannot be taken back, so this says which to drop: the last ``chars`` characters of the
    run's text deltas, the whole text of that answer (never 0: an answer that published no
    text is not said). What follows is a new answer, not the rest of that one."""

    run_id: str
    chars: int


LlmEvent = (
    LlmMessageEvent
    | ToolCallEvent
    | ToolReturnEvent
    | LlmUsageEvent
    | LlmTextDeltaEvent
    | LlmAnswerRestartedEvent
)
"""Any event of this module."""


def from_stream_event(event: object, *, run_id: str) -> list[LlmEvent]:
    """The events to publish for one pydantic-ai agent stream event (often none).

    Text that starts a part or extends it becomes :class:`LlmTextDeltaEvent`; a function tool
    call and its result become :class:`ToolCallEvent` and :class:`ToolReturnEvent`.
    """
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        if event.part.content:
            delta = replace_lone_surrogates(event.part.content)  # the model's, as it streams
            return [LlmTextDeltaEvent(run_id=run_id, delta=delta, index=event.index)]
    elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        if event.delta.content_delta:
            delta = replace_lone_surrogates(event.delta.content_delta)
            return [LlmTextDeltaEvent(run_id=run_id, delta=delta, index=event.index)]
    elif isinstance(event, FunctionToolCallEvent):
        return [ToolCallEvent.from_part(event.part, run_id=run_id)]
    elif isinstance(event, FunctionToolResultEvent):
        return [ToolReturnEvent.from_part(event.part, run_id=run_id)]
    return []
