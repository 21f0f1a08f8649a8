"""Context compaction: summarise the older turns when the context nears the model's window.

The contract:

- :func:`needs_compaction` says whether a history fills ``threshold`` of the window. It measures
  with the provider's own count when one is known (the input tokens of the last response, plus
  that response and what came after it, estimated) and with :func:`estimate_tokens`
  (characters / 4) otherwise. An unknown window (``None``) never needs compaction.
- :func:`compact` keeps the system prompt parts that open the history, replaces everything
  before the cut with **one** summary part written by the caller's ``summarize`` callable, and
  keeps the last ``keep_last`` messages (or a few more) verbatim — but for the usage of the
  responses kept, which measured a context that is gone: read as current, it would have the
  next :func:`needs_compaction` call a history just compacted full again (the log keeps it).
  Its two halves, :func:`plan_compaction` (what is summarised, where the tail starts) and
  :func:`apply_summary`, serve a summary written asynchronously — inside pydantic-ai's
  ``compact_history`` hook, which wants the kept tail unchanged (``keep_usage=True``): there the
  next response, to the compacted history, reports its size.
- **A tool call and its answer are never split.** A ``ToolCallPart`` in a ``ModelResponse`` and
  the ``ToolReturnPart`` (or retry) answering it in a later ``ModelRequest`` always land on the
  same side of the cut: the cut moves *earlier* until no pair straddles it, so compaction keeps
  more rather than hand a provider a tool result whose call it never saw (a hard API error).

- :func:`with_summary_ask` ends a summary's request. The request is the agent's
  own — its system prompt, its tool definitions, the history up to the cut as its messages —
  so a provider's prompt cache of the agent's prefix serves it, and this one message asks for
  the summary (what to keep: decisions, facts, open questions, what tools returned that still
  matters). Its ``metadata`` marks it (:func:`asks_for_summary`), never sent to a provider:
  the offline scripted model tells a summary's request from a turn by it.
- :func:`summary_prompt` renders the conversation as text: in order —
  what was said, and each tool call (its name and arguments) and tool result — with the
  summaries it opens with kept whole. A call's arguments and a result are each cut to a bound
  (:data:`TOOL_ARGS_CHARS`, :data:`TOOL_RESULT_CHARS`), saying how much was cut, so one huge
  result neither fills the summary's request nor crowds out the rest; the whole is held to
  :data:`SUMMARY_PROMPT_CHARS`, the latest kept.

The summary is pydantic-ai's own request-side :class:`~pydantic_ai.messages.CompactionPart`: every
provider model sends it as user-voice text framed as a summary, and pydantic-ai's history window
logic (``post_compaction_window``) treats it as the boundary. Its ``metadata`` says how many
messages it replaced. Compaction removes the markers of earlier context updates, which is what
the tool layer's trust gate expects: the next context block is then a full snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.messages import (
    BaseToolCallPart,
    BaseToolReturnPart,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    TextContent,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

__all__ = [
    "SUMMARY_ASK",
    "SUMMARY_ASK_KEY",
    "SUMMARY_INSTRUCTIONS",
    "SUMMARY_METADATA_KEY",
    "SUMMARY_PROMPT_CHARS",
    "TOOL_ARGS_CHARS",
    "TOOL_RESULT_CHARS",
    "CompactionPlan",
    "apply_summary",
    "asks_for_summary",
    "compact",
    "context_tokens",
    "estimate_tokens",
    "needs_compaction",
    "plan_compaction",
    "safe_cut",
    "summary_prompt",
    "with_summary_ask",
    "without_summary_ask",
]

SUMMARY_METADATA_KEY = "akgentic_summary"
"""The ``CompactionPart.metadata`` key marking a summary written by :func:`compact`."""

SUMMARY_ASK = (
    "Summarise the conversation so far for yourself: this summary will replace it. Keep the "
    "decisions made, the facts established, the open questions, and what tools returned that "
    "still matters. Be brief. Do not call any tool: answer with the summary as text."
)
"""The text that asks for a summary at the end of its request (:func:`with_summary_ask`)."""

SUMMARY_ASK_KEY = "akgentic_summary_ask"
"""The ``ModelRequest.metadata`` key marking the message that asks for a summary."""

SUMMARY_INSTRUCTIONS = (
    "Summarise this conversation for yourself, keeping decisions, facts and open "
    "questions. Be brief."
)
"""The instructions of the bounded summary request: its prompt is the conversation as text
(:func:`summary_prompt`, at most :data:`SUMMARY_PROMPT_CHARS`), no tools, so it fits a window
the history itself no longer fits — the fallback when the request on the agent's prefix
(:func:`with_summary_ask`) is too large. The scripted model tells it from a turn by them."""

CHARS_PER_TOKEN = 4

SUMMARY_PROMPT_CHARS = 20_000
"""The most characters of the conversation a summary's request carries."""

TOOL_ARGS_CHARS = 1_000
"""The most characters of one tool call's arguments (JSON) :func:`summary_prompt` shows."""

TOOL_RESULT_CHARS = 2_000
"""The most characters of one tool result :func:`summary_prompt` shows."""


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, TextContent):
        return len(content.content)
    if isinstance(content, list | tuple):
        return sum(_content_chars(item) for item in content)
    return 0


def _part_chars(part: Any) -> int:
    if isinstance(part, BaseToolCallPart):
        return len(part.tool_name) + len(part.args_as_json_str())
    if isinstance(part, BaseToolReturnPart):
        return len(part.tool_name) + len(part.model_response_str())
    content = getattr(part, "content", None)
    if content is not None and not isinstance(content, str | list | tuple | TextContent):
        return len(str(content))
    return _content_chars(content)


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """A rough token count: the characters of every textual part, divided by four, rounded up."""
    chars = sum(_part_chars(part) for message in messages for part in message.parts)
    return math.ceil(chars / CHARS_PER_TOKEN)


def context_tokens(messages: Sequence[ModelMessage]) -> int:
    """The tokens the history puts in the window, measured where the provider measured it.

    The last response with a reported input count anchors the measure: its input tokens, plus
    its output and everything after it, estimated. Without one the whole history is estimated.
    A response a summary kept with its usage (:func:`apply_summary`'s ``keep_usage``) anchors
    nothing: its count measured the history before the summary.
    """
    fresh = _measured_from(messages)
    for index in range(len(messages) - 1, fresh - 1, -1):
        message = messages[index]
        if isinstance(message, ModelResponse) and message.usage.input_tokens > 0:
            return message.usage.input_tokens + estimate_tokens(messages[index:])
    return estimate_tokens(messages)


def _measured_from(messages: Sequence[ModelMessage]) -> int:
    """The first index whose responses' input counts measure this history: past the tail the
    latest summary kept with its stale usage (none kept so: the summary's own index)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, CompactionPart) and part.metadata:
                marks = part.metadata.get(SUMMARY_METADATA_KEY)
                if isinstance(marks, dict):
                    stale = marks.get("stale_usage", 0)
                    return index + 1 + (stale if isinstance(stale, int) else 0)
    return 0


def needs_compaction(
    messages: Sequence[ModelMessage], context_length: int | None, threshold: float = 0.8
) -> bool:
    """Whether the history fills at least ``threshold`` of a ``context_length``-token window.

    ``None`` (an unknown window) is never full: compaction needs a window to aim for.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    if context_length is None:
        return False
    return context_tokens(messages) >= threshold * context_length


def _excerpt(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters saying how many more were cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters cut]"


def _render(part: Any) -> str | None:
    """One line (or several) of :func:`summary_prompt` for ``part``; None: not shown."""
    if isinstance(part, BaseToolCallPart):
        args = _excerpt(part.args_as_json_str(), TOOL_ARGS_CHARS)
        return f"[tool call] {part.tool_name}({args})"
    if isinstance(part, BaseToolReturnPart):
        outcome = "" if part.outcome == "success" else f" ({part.outcome})"
        result = _excerpt(part.model_response_str(wrap_if_error=False), TOOL_RESULT_CHARS)
        return f"[tool result] {part.tool_name}{outcome}: {result}"
    content = getattr(part, "content", None)
    if not isinstance(content, str) or isinstance(part, SystemPromptPart):
        return None
    return content


def with_summary_ask(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """``messages`` (a history, up to a compaction's cut) ended by the ask for a summary: a
    user prompt (:data:`SUMMARY_ASK`) in a request marked in its ``metadata``
    (:data:`SUMMARY_ASK_KEY`, which pydantic-ai never sends) — so a model that answers
    offline (the scripted model) tells the request from a turn, the system prompt unchanged.

    A history that ends with a request (tool results) gets the ask as that request's last
    part, in a copy: pydantic-ai would merge two requests in a row into one, dropping the
    marker, and a provider sends both alike. The messages before it are the same objects."""
    history = list(messages)
    ask = UserPromptPart(SUMMARY_ASK)
    last = history[-1] if history else None
    if isinstance(last, ModelRequest):
        marked = replace(
            last,
            parts=[*last.parts, ask],
            metadata={**(last.metadata or {}), SUMMARY_ASK_KEY: True},
        )
        return [*history[:-1], marked]
    return [*history, ModelRequest(parts=[ask], metadata={SUMMARY_ASK_KEY: True})]


def asks_for_summary(message: ModelMessage | None) -> bool:
    """Whether ``message`` is the one :func:`with_summary_ask` ends a summary's request with."""
    if not isinstance(message, ModelRequest):
        return False
    return bool((message.metadata or {}).get(SUMMARY_ASK_KEY))


def without_summary_ask(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history a summary's request (:func:`with_summary_ask`) asks to summarise: its
    messages without the ask (``messages`` as they are when they end with none)."""
    history = list(messages)
    last = history[-1] if history else None
    if not isinstance(last, ModelRequest) or not asks_for_summary(last):
        return history
    parts = list(last.parts[:-1])
    return [*history[:-1], replace(last, parts=parts)] if parts else history[:-1]


def summary_prompt(messages: Sequence[ModelMessage]) -> str:
    """The text a summary of ``messages`` is written from (see the module docstring).

    In order, one entry a part: what was said as it is, a tool call as
    ``[tool call] name({...})`` and its result as ``[tool result] name: ...`` (an outcome other
    than success named), each cut to its bound. The summaries ``messages`` open with (an
    earlier compaction's) come first, whole, then the latest of the rest that fits in
    :data:`SUMMARY_PROMPT_CHARS` — so a summary chains the ones before it however long the
    conversation since, rather than lose them first, as the oldest text. The system prompt is
    left out: it is not summarised, it stays."""
    summaries: list[str] = []
    lines: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, CompactionPart):
                if isinstance(part.content, str):
                    summaries.append(part.content)
                continue
            line = _render(part)
            if line is not None:
                lines.append(line)
    head = "\n".join(summaries)
    room = SUMMARY_PROMPT_CHARS - (len(head) + 1 if head else 0)  # the line between
    rest = "\n".join(lines)[-room:] if room > 0 else ""
    return "\n".join(filter(None, [head, rest]))


def _tool_pairs(messages: Sequence[ModelMessage]) -> list[tuple[int, int]]:
    """``(call index, answer index)`` of every tool call answered in the history."""
    calls: dict[str, int] = {}
    pairs: list[tuple[int, int]] = []
    for index, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, BaseToolCallPart):
                    calls.setdefault(part.tool_call_id, index)
        else:
            for answer in message.parts:
                call_id = getattr(answer, "tool_call_id", None)
                if isinstance(call_id, str) and call_id in calls and calls[call_id] < index:
                    pairs.append((calls[call_id], index))
    return pairs


def safe_cut(messages: Sequence[ModelMessage], cut: int) -> int:
    """The latest position ``<= cut`` that splits no tool call from its answer.

    A cut at ``i`` keeps ``messages[i:]``; it is unsafe when a call sits before ``i`` and its
    answer at or after it.
    """
    cut = max(0, min(cut, len(messages)))
    pairs = _tool_pairs(messages)
    moved = True
    while moved and cut > 0:
        moved = False
        for call, answer in pairs:
            if call < cut <= answer:
                cut = call
                moved = True
    return cut


def _leading_system_parts(message: ModelMessage) -> list[ModelRequestPart]:
    if not isinstance(message, ModelRequest):
        return []
    head: list[ModelRequestPart] = []
    for part in message.parts:
        if not isinstance(part, SystemPromptPart):
            break
        head.append(part)
    return head


@dataclass(frozen=True)
class CompactionPlan:
    """What a compaction of a history summarises (:func:`plan_compaction`)."""

    older: list[ModelMessage]
    """The messages the summary replaces, the head's system parts removed (a previous
    summary included, so summaries chain): what the summary is written from."""
    cut: int
    """Where the tail kept verbatim starts in the history."""


def plan_compaction(messages: Sequence[ModelMessage], keep_last: int = 6) -> CompactionPlan | None:
    """What :func:`compact` would summarise of ``messages``; None when nothing would be.

    The cut keeps the last ``keep_last`` messages, moved earlier when it would split a tool
    call from its answer (so the tail may hold more).
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}")
    history = list(messages)
    if not history:
        return None
    cut = safe_cut(history, len(history) - keep_last)
    if cut == 0:
        return None
    system_parts = _leading_system_parts(history[0])
    first = history[0]
    older: list[ModelMessage] = []
    if isinstance(first, ModelRequest) and system_parts:
        rest: list[ModelRequestPart] = list(first.parts[len(system_parts) :])
        if rest:
            older.append(replace(first, parts=rest))
    else:
        older.append(first)
    older.extend(history[1:cut])
    if not older:
        return None
    return CompactionPlan(older=older, cut=cut)


def apply_summary(
    messages: Sequence[ModelMessage],
    plan: CompactionPlan,
    summary: str,
    *,
    keep_usage: bool = False,
) -> list[ModelMessage]:
    """``messages`` with what ``plan`` summarises replaced by one ``summary``: the head (the
    system prompt parts opening the first request, then a ``CompactionPart`` holding the
    summary), then the tail from ``plan.cut``.

    The responses kept lose their usage — their input tokens counted the context before the
    summary — unless ``keep_usage`` (a compaction within a run, where pydantic-ai requires the
    kept tail unchanged: the next response to the compacted history reports the new count;
    the summary's metadata says how many messages kept it, so :func:`context_tokens` does not
    measure with it).
    """
    history = list(messages)
    first = history[0]
    kept = history[plan.cut :]
    marks: dict[str, int] = {"messages": plan.cut}
    if keep_usage:
        marks["stale_usage"] = len(kept)  # see context_tokens
    head = ModelRequest(
        parts=[
            *_leading_system_parts(first),
            CompactionPart(content=summary, metadata={SUMMARY_METADATA_KEY: marks}),
        ],
        timestamp=first.timestamp,
        instructions=first.instructions if isinstance(first, ModelRequest) else None,
    )
    if not keep_usage:
        kept = [
            replace(message, usage=RequestUsage())
            if isinstance(message, ModelResponse)
            else message
            for message in kept
        ]
    return [head, *kept]


def compact(
    messages: Sequence[ModelMessage],
    summarize: Callable[[list[ModelMessage]], str],
    keep_last: int = 6,
) -> list[ModelMessage]:
    """Replace all but the last ``keep_last`` messages with one summary; return the new history.

    - The system prompt parts opening the first request stay at the head, followed by a
      ``CompactionPart`` holding ``summarize(older)``. ``older`` is what the summary replaces,
      the head's system parts removed (a previous summary included, so summaries chain).
    - The cut moves earlier when it would split a tool call from its answer, so the tail may
      hold more than ``keep_last`` messages.
    - The responses kept lose their usage: their input tokens counted the context before
      the summary, so :func:`context_tokens` measures the new history by estimate until a
      response to it reports a count.
    - When nothing would be summarised, the history comes back unchanged (as a new list) and
      ``summarize`` is not called.

    :func:`plan_compaction` and :func:`apply_summary` are its two halves, for a caller whose
    summary is written asynchronously (a compaction within a run).
    """
    plan = plan_compaction(messages, keep_last)
    if plan is None:
        return list(messages)
    return apply_summary(messages, plan, summarize(plan.older))
