"""RequestAccountant: one agent's model requests, cut into segments, counted and modelled.

It runs on every model request, so it is built to cost little against the request: nothing
already counted is counted again.

- A history part is the same object from request to request (pydantic-ai hands the same
  messages back), so its segment and its counts are kept by the part's identity; a tool
  definition's JSON by its name, description and schema object; counts by their text.
  Every table is bounded (least recently used out).
- Only the new parts of a request are rendered and tokenized: the turn's prompt once, each
  step's tool returns once, the system prompt and the tool schemas once for the life of
  the agent (while they do not change).

The whole request is the sum of its segments: each is counted on its own, as the provider
tokenizes messages on their own, and a segment with several sources (the system prompt,
the turn's prompt with its context block) is tokenized once and split by where each token
starts, so its parts sum to it to the token.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext, ModelRequestParameters

from akgentic.agent.accounting.event import PartTokens, PromptAccountingEvent, ProviderUsage
from akgentic.agent.accounting.prefix_cache import DEFAULT_RULES, PrefixCacheModel, PrefixCacheRules
from akgentic.agent.accounting.segments import (
    MESSAGE_FRAMING,
    REPLY_PRIMING,
    Counted,
    Role,
    Segment,
    tool_json,
)
from akgentic.agent.accounting.source import CHANNELS, UNATTRIBUTED, Channel, Source
from akgentic.agent.accounting.wiring import PromptWiring
from akgentic.llm import TokenCounter, token_counter

__all__ = ["RequestAccountant"]

K = TypeVar("K")
V = TypeVar("V")


class _Bounded(Generic[K, V]):
    """A dict that forgets its least recently used entries beyond ``size``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> V:
        self._items[key] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        item if isinstance(item, str) else f"[{type(item).__name__}]" for item in content
    )


def _request_part(part: Any) -> tuple[Role, str]:
    """How a part of a request to the model goes on the wire: its role and its text."""
    if isinstance(part, UserPromptPart):
        return "user", _user_text(part.content)
    if isinstance(part, SystemPromptPart):
        return "system", part.content
    if isinstance(part, ToolReturnPart):
        return "tool", part.model_response_str()
    role: Role = "tool" if getattr(part, "tool_name", None) else "user"
    if callable(getattr(part, "model_response", None)):  # retry feedback
        return role, str(part.model_response())
    content = getattr(part, "content", None)
    return role, content if isinstance(content, str) else ""


def _response_part(part: Any) -> str:
    """The text of a part of a model response, as it is sent back in later requests."""
    if isinstance(part, ToolCallPart):
        return f"{part.tool_name}{part.args_as_json_str()}"
    content = getattr(part, "content", None)
    return content if isinstance(content, str) else ""


class RequestAccountant:
    """Accounts one agent's requests; see the module docstring.

    ``counter`` defaults to ``akgentic.llm.token_counter()`` (``o200k_base``, or the
    estimate without bpe-openai); ``rules`` are the prefix-cache rules (settable between
    requests, e.g. when the model is switched); ``cache_size`` bounds each table.
    """

    def __init__(
        self,
        wiring: PromptWiring,
        *,
        counter: TokenCounter | None = None,
        rules: PrefixCacheRules = DEFAULT_RULES,
        cache_size: int = 4096,
    ) -> None:
        self.wiring = wiring
        self.counter = counter if counter is not None else token_counter()
        self.cache = PrefixCacheModel(rules)
        self.requests = 0
        self._counts: _Bounded[tuple[str, tuple[int, ...]], tuple[int, ...]] = _Bounded(cache_size)
        self._tool_texts: _Bounded[tuple[str, str, int], tuple[object, str]] = _Bounded(cache_size)
        self._parts: _Bounded[tuple[int, bool, bool], tuple[object, Counted]] = _Bounded(cache_size)

    # -- counting ---------------------------------------------------------------------
    def count(self, segment: Segment) -> Counted:
        """``segment`` with its tokens (counts kept by text)."""
        key = (segment.text, segment.starts)
        counts = self._counts.get(key)
        if counts is None:
            counts = self._counts.put(
                key, tuple(self.counter.count_spans(segment.text, segment.starts))
            )
        return Counted(segment, counts, MESSAGE_FRAMING if segment.opens_message else 0)

    # -- rendering --------------------------------------------------------------------
    def _tool(self, tool_def: Any, *, output: bool) -> Counted:
        schema = tool_def.parameters_json_schema
        key = (tool_def.name, tool_def.description or "", id(schema))
        entry = self._tool_texts.get(key)
        if entry is None or entry[0] is not schema:
            entry = self._tool_texts.put(key, (schema, tool_json(tool_def)))
        source = self.wiring.tool_source(tool_def, output=output)
        return self.count(Segment.single("tools", entry[1], source))

    def _system(self, params: ModelRequestParameters) -> Counted | None:
        parts = [
            p
            for p in params.instruction_parts or ()
            if params.instruction_visibility_of(p) == "prefix"
        ]
        if not parts:
            return None
        ours, layout = self.wiring.system_layout
        spans: list[tuple[Source, int]] = []
        texts: list[str] = []
        offset = 0
        for index, part in enumerate(parts):
            if index:
                offset += 2  # the blank line joining instruction parts
            if part.content == ours:
                spans.extend((source, offset + start) for source, start in layout)
            else:
                name = str(part.id) if getattr(part, "id", None) is not None else "instructions"
                spans.append((Source("system_prompt", UNATTRIBUTED, name), offset))
            texts.append(part.content)
            offset += len(part.content)
        segment = Segment("system", "\n\n".join(texts), tuple(spans), opens_message=True)
        return self.count(segment)

    def _message(self, message: ModelMessage, new: bool) -> list[Counted]:
        counted: list[Counted] = []
        for index, part in enumerate(message.parts):
            key = (id(part), new, index == 0)
            entry = self._parts.get(key)
            if entry is None or entry[0] is not part:
                entry = self._parts.put(key, (part, self._part(message, part, new, index == 0)))
            counted.append(entry[1])
        return counted

    def _part(self, message: ModelMessage, part: Any, new: bool, first: bool) -> Counted:
        channel: Channel = "message" if new else "history"
        if isinstance(message, ModelResponse):
            text = _response_part(part)
            return self.count(Segment.single("assistant", text, Source(channel), opens=first))
        role, text = _request_part(part)
        turn = self.wiring.turn_layout
        if new and isinstance(part, UserPromptPart) and turn is not None and turn[0] == text:
            return self.count(Segment(role, text, turn[1], opens_message=True))
        return self.count(Segment.single(role, text, Source(channel), opens=True))

    def segments(
        self, messages: Sequence[ModelMessage], params: ModelRequestParameters
    ) -> list[Counted]:
        """The request in wire order — tools, system prompt, messages — counted. The last
        message, when it is a request, is the new message; the others are history."""
        counted = [self._tool(t, output=False) for t in params.function_tools]
        counted += [self._tool(t, output=True) for t in params.output_tools]
        system = self._system(params)
        if system is not None:
            counted.append(system)
        last = len(messages) - 1
        for index, message in enumerate(messages):
            new = index == last and isinstance(message, ModelRequest)
            counted += self._message(message, new)
        return counted

    # -- the record -------------------------------------------------------------------
    def account(
        self,
        request_context: ModelRequestContext,
        response: ModelResponse | None = None,
        *,
        agent: str,
        run_id: str = "",
        now: float,
    ) -> PromptAccountingEvent:
        """The record of the request ``request_context`` describes, sent at ``now``."""
        params = request_context.model_request_parameters
        counted = self.segments(request_context.messages, params)
        outcome = self.cache.observe(counted, now)
        self.requests += 1
        parts = _parts(counted, outcome.cached)
        framing = sum(c.framing for c in counted) + REPLY_PRIMING
        usage = response.usage if response is not None else None
        return PromptAccountingEvent(
            agent=agent,
            run_id=run_id,
            request=self.requests,
            model=getattr(request_context.model, "model_name", "") or "",
            encoding=self.counter.encoding,
            exact=self.counter.exact,
            input_tokens=sum(p.tokens for p in parts) + framing,
            framing_tokens=framing,
            parts=parts,
            shared_prefix_tokens=outcome.shared,
            cached_tokens=outcome.cached,
            cache_status=outcome.status,
            breaker=outcome.breaker,
            seconds_since_previous=outcome.since_previous,
            cache_rules=self.cache.rules,
            provider=ProviderUsage(
                input_tokens=usage.input_tokens if usage else 0,
                output_tokens=usage.output_tokens if usage else 0,
                cache_read_tokens=usage.cache_read_tokens if usage else 0,
                cache_write_tokens=usage.cache_write_tokens if usage else 0,
            ),
        )


def _parts(counted: Sequence[Counted], cached: int) -> list[PartTokens]:
    """The request's tokens by (channel, card), in wire order, with the modelled cache's
    share of each: the first ``cached`` tokens of the request (framing counts as the
    part it frames)."""
    rows: dict[tuple[Channel, str], PartTokens] = {}
    left = cached
    for item in counted:
        framing = item.framing  # before the first span's text
        for (source, _), tokens in zip(item.segment.spans, item.counts, strict=True):
            hit = min(left, framing + tokens)
            left -= hit
            row = rows.get((source.channel, source.card))
            if row is None:
                row = rows[(source.channel, source.card)] = PartTokens(
                    channel=source.channel, card=source.card
                )
            row.tokens += tokens
            row.cached += max(0, hit - framing)
            row.items += 1
            framing = 0
    order = {channel: index for index, channel in enumerate(CHANNELS)}
    return sorted(rows.values(), key=lambda r: order[r.channel])
