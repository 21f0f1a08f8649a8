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

Accounting a request comes in two steps, so the agent's turn only pays for the first:
:meth:`RequestAccountant.capture` takes what the record needs when the response comes back
(the messages sent, the parameters, the layouts of the system prompt and of the turn's
prompt as they were then, the provider's usage, the time); :meth:`RequestAccountant.record`
counts and models it — later, on any one thread, in the order of the captures (the cache
model is sequential). A capture reads nothing that the agent changes afterwards.

The whole request is the sum of its segments: each is counted on its own, as the provider
tokenizes messages on their own, and a segment with several sources (the system prompt,
the turn's prompt with its context block) is tokenized once and split by where each token
starts, so its parts sum to it to the token.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, count
from operator import attrgetter, is_not
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

from akgentic.agent.accounting.event import (
    PartTokens,
    PromptAccountingEvent,
    ProviderUsage,
    RequestKind,
)
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
from akgentic.agent.accounting.wiring import Layout, PromptWiring
from akgentic.llm import TokenCounter, answering_name, token_counter

__all__ = ["RequestAccountant", "RequestCapture"]

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


@dataclass(frozen=True, slots=True)
class RequestCapture:
    """One model request as :meth:`RequestAccountant.capture` took it: everything its
    record is made of, fixed when the response came back."""

    messages: tuple[ModelMessage, ...]
    params: ModelRequestParameters
    model: str
    served_by: str
    """The model whose cache the request met: the name the response came from (a
    fallback's), else the model's own."""
    usage: ProviderUsage
    system_layout: Layout
    turn_layout: Layout | None
    said: tuple[tuple[Role, str], ...] | None
    rules: PrefixCacheRules | None
    now: float
    run_id: str
    agent: str


class _Numbering:
    """The number of the last request accounted, shared by an agent's accountants."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last = 0


class _ResumePoint:
    """The last request before a resume (its messages, when it was answered, and by which
    model: None, not said), shared by an accountant and the companions on its prefix: the
    first of their requests after the resume is compared with it, then it is gone."""

    __slots__ = ("last",)

    def __init__(self) -> None:
        self.last: tuple[tuple[ModelMessage, ...], float, str | None] | None = None


class RequestAccountant:
    """Accounts one agent's requests of one ``kind``; see the module docstring.

    ``counter`` defaults to ``akgentic.llm.token_counter()`` (``o200k_base``, or the
    estimate without bpe-openai); ``rules`` are the prefix-cache rules (settable between
    requests, e.g. when the model is switched); ``cache_size`` bounds each table. The
    agent's requests of another kind (a compaction's summary) go to a :meth:`companion`.
    """

    _extends: bool = True
    """Whether a request this accountant records becomes the previous request its cache
    model compares the next with (a companion's does not)."""

    def __init__(
        self,
        wiring: PromptWiring,
        *,
        counter: TokenCounter | None = None,
        rules: PrefixCacheRules = DEFAULT_RULES,
        cache_size: int = 4096,
        kind: RequestKind = "turn",
    ) -> None:
        self.wiring = wiring
        self.kind: RequestKind = kind
        self.counter = counter if counter is not None else token_counter()
        self.cache = PrefixCacheModel(rules)
        self._numbering = _Numbering()
        self._cache_size = cache_size
        self._counts: _Bounded[tuple[str, tuple[int, ...]], tuple[int, ...]] = _Bounded(cache_size)
        self._tools: _Bounded[tuple[str, str, int], tuple[object, Counted]] = _Bounded(cache_size)
        self._system: tuple[str, tuple[tuple[Source, int], ...], Counted] | None = None
        self._messages: _Bounded[tuple[int, bool], tuple[object, tuple[Counted, ...]]] = _Bounded(
            cache_size
        )
        self._history: _History = _History()
        # what each request's parts said when it was sent (a capture renders them):
        # a tool's return value is the tool's object, which its owner may change later
        self._said: _Bounded[int, tuple[object, tuple[tuple[Role, str], ...]]] = _Bounded(
            cache_size
        )
        # the last request before a resume, compared with the first after it (resume)
        self._resumed = _ResumePoint()

    @property
    def requests(self) -> int:
        """How many of the agent's requests have been accounted (a companion's included)."""
        return self._numbering.last

    def companion(self, kind: RequestKind, wiring: PromptWiring | None = None) -> RequestAccountant:
        """An accountant for the same agent's requests of another ``kind``. Its records
        carry ``kind`` and are numbered in one sequence with this one's; counts of text are
        shared. Its records are built on the thread that builds this one's, in the order of
        the captures of both.

        Without ``wiring``, its requests are made on this one's prefix (a compaction's
        summary: the turns' instructions, tools and history, then a message of its own):
        laid out by the same wiring and modelled on the same prefix cache, a request is
        compared with the last one this accountant recorded — a hit on what that one read —
        but does not replace it (a provider keeps both prefixes; the next turn extends the
        turn before, not the summary). A resume's last request is compared with the first
        request after the resume, its or this one's (a ``/compact`` before any turn of the
        process: its prefix is the turns'). Rendered parts are shared too.

        With ``wiring``, its requests have a prompt of their own that ``wiring`` lays out (a
        bounded summary: its own instructions, no tools), and a prefix-cache model of their
        own: they neither extend nor break this one's prefix."""
        other = RequestAccountant(
            wiring or self.wiring,
            counter=self.counter,
            rules=self.cache.rules,
            cache_size=self._cache_size,
            kind=kind,
        )
        other._numbering = self._numbering
        other._counts = self._counts
        if wiring is not None:
            return other
        other.cache = self.cache
        other._resumed = self._resumed
        other._extends = False
        other._tools = self._tools
        other._messages = self._messages
        other._said = self._said
        return other

    def resume(self, history: Sequence[ModelMessage]) -> None:
        """Take the model context a resume restored: the last request before the stop is
        its messages up to its last response (which answered them), sent when that
        response was stamped (its ``timestamp``, wall-clock seconds). The next record
        compares its request with that one instead of calling it ``cold``, under the TTL
        of the rules in force — so the clock requests are dated with must be the wall
        clock too. Its tools and system prompt are taken to be the next request's own:
        the agent rebuilds them from the same card and restored state. It was sent to the
        model that response names: a first request to another model is ``cold``."""
        last = next(
            (i for i in range(len(history) - 1, -1, -1) if isinstance(history[i], ModelResponse)),
            None,
        )
        if last is None or not any(isinstance(m, ModelRequest) for m in history[:last]):
            self._resumed.last = None
            return
        response = history[last]
        assert isinstance(response, ModelResponse)
        at = response.timestamp.timestamp()
        self._resumed.last = (tuple(history[:last]), at, response.model_name or None)

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
        entry = self._tools.get(key)
        if entry is None or entry[0] is not schema:
            source = self.wiring.tool_source(tool_def, output=output)
            counted = self.count(Segment.single("tools", tool_json(tool_def), source))
            entry = self._tools.put(key, (schema, counted))
        return entry[1]

    def _system_prompt(self, params: ModelRequestParameters, system: Layout) -> Counted | None:
        parts = [
            p
            for p in params.instruction_parts or ()
            if params.instruction_visibility_of(p) == "prefix"
        ]
        if not parts:
            return None
        ours, layout = system
        text = "\n\n".join(part.content for part in parts)  # how pydantic-ai joins them
        if self._system is not None and self._system[0] == text and self._system[1] == layout:
            return self._system[2]
        spans: list[tuple[Source, int]] = []
        offset = 0
        for index, part in enumerate(parts):
            if index:
                offset += 2
            if part.content == ours:
                spans.extend((source, offset + start) for source, start in layout)
            else:
                name = str(part.id) if getattr(part, "id", None) is not None else "instructions"
                spans.append((Source("system_prompt", UNATTRIBUTED, name), offset))
            offset += len(part.content)
        counted = self.count(Segment("system", text, tuple(spans), opens_message=True))
        self._system = (text, layout, counted)
        return counted

    def _message(
        self, message: ModelMessage, new: bool, turn: Layout | None = None
    ) -> tuple[Counted, ...]:
        """``message``'s parts counted; ``turn``: the layout of the turn's prompt, for
        the new message (its body, context block and sections). A request's parts are
        read as they were when it was sent, when a capture rendered them then."""
        key = (id(message), new)
        entry = self._messages.get(key)
        if entry is None or entry[0] is not message:
            said = self._said.get(id(message))
            texts = said[1] if said is not None and said[0] is message else None
            if texts is not None and len(texts) != len(message.parts):
                texts = None
            counted = tuple(
                self._part(message, part, new, index == 0, turn, texts[index] if texts else None)
                for index, part in enumerate(message.parts)
            )
            entry = self._messages.put(key, (message, counted))
        return entry[1]

    def _part(
        self,
        message: ModelMessage,
        part: Any,
        new: bool,
        first: bool,
        turn: Layout | None,
        said: tuple[Role, str] | None = None,
    ) -> Counted:
        channel: Channel = "message" if new else "history"
        if isinstance(message, ModelResponse):
            text = _response_part(part)
            return self.count(Segment.single("assistant", text, Source(channel), opens=first))
        role, text = said if said is not None else _request_part(part)
        if new and isinstance(part, UserPromptPart) and turn is not None and turn[0] == text:
            return self.count(Segment(role, text, turn[1], opens_message=True))
        return self.count(Segment.single(role, text, Source(channel), opens=True))

    def _sections(
        self,
        messages: Sequence[ModelMessage],
        params: ModelRequestParameters,
        system_layout: Layout,
        turn_layout: Layout | None,
    ) -> tuple[list[Counted], list[Counted], list[Counted]]:
        """The request in three: tools and system prompt, history, the new message."""
        # a summary's request offers the output tools among its function tools, still
        # of kind output (capabilities.summary_parameters): they are the agent's all the same
        head = [self._tool(t, output=t.kind == "output") for t in params.function_tools]
        head += [self._tool(t, output=True) for t in params.output_tools]
        system = self._system_prompt(params, system_layout)
        if system is not None:
            head.append(system)
        last = len(messages) - 1
        ends_new = last >= 0 and isinstance(messages[last], ModelRequest)
        earlier = messages[:last] if ends_new else messages
        history = self._history.extend(earlier, lambda m: self._message(m, False))
        tail = list(self._message(messages[last], True, turn_layout)) if ends_new else []
        return head, history, tail

    def segments(
        self, messages: Sequence[ModelMessage], params: ModelRequestParameters
    ) -> list[Counted]:
        """The request in wire order — tools, system prompt, messages — counted. The last
        message, when it is a request, is the new message; the others are history."""
        wiring = self.wiring
        head, history, tail = self._sections(
            messages, params, wiring.system_layout, wiring.turn_layout
        )
        return [*head, *history, *tail]

    # -- the record -------------------------------------------------------------------
    def capture(
        self,
        request_context: ModelRequestContext,
        response: ModelResponse | None = None,
        *,
        agent: str,
        run_id: str = "",
        now: float,
        rules: PrefixCacheRules | None = None,
    ) -> RequestCapture:
        """Take the request ``request_context`` describes, sent at ``now``, for
        :meth:`record`; ``rules``: the cache's rules for it (None: the ones set). Cheap:
        nothing is counted, and nothing of this accountant is read or changed. What the
        record reads that could change afterwards is taken now: the layouts of the
        prompts, the text of the new message's parts (a tool's return value is its
        owner's object), the map of the tools' sources (built from the agent's cards)."""
        usage = response.usage if response is not None else None
        messages = tuple(request_context.messages)
        last = messages[-1] if messages else None
        said = (
            tuple(_request_part(part) for part in last.parts)
            if isinstance(last, ModelRequest)
            else None
        )
        self.wiring.prepare_tool_sources()
        model = getattr(request_context.model, "model_name", "") or ""
        if response is not None:  # the model that answered: a fallback's, not the chain's
            model = answering_name(request_context.model, response) or model
        return RequestCapture(
            messages=messages,
            params=request_context.model_request_parameters,
            model=model,
            served_by=(response.model_name if response is not None else None) or model,
            usage=ProviderUsage(
                input_tokens=usage.input_tokens if usage else 0,
                output_tokens=usage.output_tokens if usage else 0,
                cache_read_tokens=usage.cache_read_tokens if usage else 0,
                cache_write_tokens=usage.cache_write_tokens if usage else 0,
            ),
            system_layout=self.wiring.system_layout,
            turn_layout=self.wiring.turn_layout,
            said=said,
            rules=rules,
            now=now,
            run_id=run_id,
            agent=agent,
        )

    def record(self, capture: RequestCapture) -> PromptAccountingEvent:
        """The record of a captured request. Call it once per capture, in the order they
        were taken, from one thread at a time."""
        if capture.rules is not None:
            self.cache.rules = capture.rules
        messages = capture.messages
        if capture.said is not None:
            self._said.put(id(messages[-1]), (messages[-1], capture.said))
        resumed, self._resumed.last = self._resumed.last, None
        if resumed is not None and not self.cache.has_previous:
            before, at, served_by = resumed
            sent = self._sections(before, capture.params, capture.system_layout, None)
            model = capture.served_by if served_by is None else served_by
            self.cache.seed([c for section in sent for c in section], at, model)
        head, history, tail = self._sections(
            capture.messages, capture.params, capture.system_layout, capture.turn_layout
        )
        counted = [*head, *history, *tail]
        outcome = self.cache.observe(counted, capture.now, capture.served_by, extend=self._extends)
        self._numbering.last += 1
        parts = _parts(head, history, tail, outcome.cached)
        framing = sum(map(_FRAMING, counted)) + REPLY_PRIMING
        return PromptAccountingEvent(
            agent=capture.agent,
            kind=self.kind,
            run_id=capture.run_id,
            request=self._numbering.last,
            model=capture.model,
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
            provider=capture.usage,
        )


_TOKENS = attrgetter("tokens")
_FRAMING = attrgetter("framing")


class _History:
    """The history segments of the last request, kept so the next request — the same
    messages plus a few — only renders its new ones (the rest is a slice)."""

    def __init__(self) -> None:
        self._messages: list[ModelMessage] = []
        self._starts: list[int] = []  # where each message's segments start
        self._flat: list[Counted] = []

    def extend(
        self,
        messages: Sequence[ModelMessage],
        render: Callable[[ModelMessage], tuple[Counted, ...]],
    ) -> list[Counted]:
        seen = self._messages
        same = next(compress(count(), map(is_not, seen, messages)), min(len(seen), len(messages)))
        starts = self._starts[:same]
        flat = self._flat[: self._starts[same]] if same < len(self._starts) else self._flat[:]
        for message in messages[same:]:
            starts.append(len(flat))
            flat.extend(render(message))
        self._messages, self._starts, self._flat = list(messages), starts, flat
        return flat


def _add(rows: dict[tuple[Channel, str], list[int]], source: Source, tokens: int, hit: int) -> None:
    row = rows.get((source.channel, source.card))
    if row is None:
        row = rows[(source.channel, source.card)] = [0, 0, 0]
    row[0] += tokens
    row[1] += hit
    row[2] += 1


def _spans(rows: dict[tuple[Channel, str], list[int]], items: Sequence[Counted], left: int) -> int:
    """Add ``items`` span by span; the first ``left`` tokens are cached. What is left."""
    for item in items:
        framing = item.framing  # before the first span's text
        for (source, _), tokens in zip(item.segment.spans, item.counts, strict=True):
            hit = min(left, framing + tokens)
            left -= hit
            _add(rows, source, tokens, max(0, hit - framing))
            framing = 0
    return left


def _parts(
    head: Sequence[Counted], history: Sequence[Counted], tail: Sequence[Counted], cached: int
) -> list[PartTokens]:
    """The request's tokens by (channel, card), in wire order, with the modelled cache's
    share of each: the first ``cached`` tokens of the request (framing counts as the part
    it frames). History is one row, added up in bulk: its length does not cost per request
    what its segments do."""
    rows: dict[tuple[Channel, str], list[int]] = {}
    left = _spans(rows, head, cached)
    if history:
        totals = list(accumulate(map(_TOKENS, history)))
        framings = list(accumulate(map(_FRAMING, history)))
        text = totals[-1] - framings[-1]
        hit = 0
        if left >= totals[-1]:
            hit, left = text, left - totals[-1]
        elif left > 0:
            whole = bisect_right(totals, left)  # the segments entirely cached
            done = totals[whole - 1] if whole else 0
            hit = done - (framings[whole - 1] if whole else 0)
            partial = left - done
            hit += max(0, partial - history[whole].framing)
            left = 0
        rows[("history", "")] = [text, hit, len(history)]
    _spans(rows, tail, left)
    order = {channel: index for index, channel in enumerate(CHANNELS)}
    return [
        PartTokens(channel=channel, card=card, tokens=t, cached=c, items=n)
        for (channel, card), (t, c, n) in sorted(rows.items(), key=lambda kv: order[kv[0][0]])
    ]
