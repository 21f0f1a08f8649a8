"""UsageReport: a team's prompt accounting added up, per member and per card.

:func:`usage_report` folds :class:`~akgentic.agent.accounting.event.PromptAccountingEvent`
records (in any order of members, each member's in the order they were made) into:

- per member: requests, input tokens (our count), the share the modelled cache served,
  tool-schema tokens per request, the provider's own totals (cache reads and writes
  included), a row per card — tokens sent, share of the member's total, the share of them
  the cache served, the channels they came on — and the parts that broke the cache most;
- for the team: the same totals and the breakers across members.

History, new messages and framing get rows of their own (``(history)``,
``(new messages)``, ``(framing)``), so a member's rows sum to its total. So do the
requests that wrote a compaction's summary (records of ``kind`` ``summary``): they are
counted in every total, and each member's are one row, ``(summary requests)``, and one
entry of its channels, ``summary``, whole — their instructions and prompt are no card's and
no turn's. ``kinds`` adds the requests up by kind (``turn``, ``summary``), for a member and
for the team. The tool-schema tokens per request are per turn's request (a summary's
carries no tool), and the breakers are the turns' (a summary's prompt is compared with the
previous summary's, which it never extends: it is the conversation since).
:func:`render_usage` writes the plain-text table ``akgentic usage`` prints; the report
itself is the JSON ``akgentic usage --json`` and ``GET /teams/{id}/usage`` return.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import Field

from akgentic.agent.accounting.event import (
    REQUEST_KINDS,
    PromptAccountingEvent,
    ProviderUsage,
    RequestKind,
)
from akgentic.agent.accounting.source import CHANNELS, Channel
from akgentic.core.serialization import SerializableModel
from akgentic.core.words import counted

__all__ = [
    "BreakerUsage",
    "CardUsage",
    "KindUsage",
    "MemberUsage",
    "UsageReport",
    "accounting_events",
    "render_usage",
    "usage_report",
]

HISTORY = "(history)"
MESSAGES = "(new messages)"
FRAMING = "(framing)"
SUMMARIES = "(summary requests)"

_CONVERSATION: dict[str, str] = {"history": HISTORY, "message": MESSAGES}


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


class CardUsage(SerializableModel):
    """What one card (or the history, the new messages, the framing) sent for one member:
    ``tokens``, their ``share`` of the member's input tokens, ``cached`` and the
    ``hit_rate`` among them, and ``channels`` (tokens per channel)."""

    card: str
    tokens: int = 0
    share: float = 0.0
    cached: int = 0
    hit_rate: float = 0.0
    channels: dict[str, int] = Field(default_factory=dict)


class KindUsage(SerializableModel):
    """The requests of one kind (``turn``, ``summary``), added up: how many, our count of
    their input tokens, how many of those the modelled cache served, and the provider's
    own usage for them."""

    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    provider: ProviderUsage = Field(default_factory=ProviderUsage)

    def add(self, other: KindUsage) -> None:
        """Add ``other``'s requests to these."""
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.cached_tokens += other.cached_tokens
        _add_usage(self.provider, other.provider)


class BreakerUsage(SerializableModel):
    """A part that broke the prefix cache: how often (``breaks``) and the previous
    requests' tokens after the break (``lost_tokens``)."""

    channel: Channel
    card: str = ""
    name: str = ""
    change: str = "changed"
    breaks: int = 0
    lost_tokens: int = 0


class MemberUsage(SerializableModel):
    """One member's requests, added up: ``channels`` holds its turns' tokens per channel
    (and ``framing``) in wire order, then its summaries' (``summary``) when it wrote any;
    ``kinds`` the requests by kind; ``cache_rules`` are those of its last request."""

    name: str
    model: str = ""
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    hit_rate: float = 0.0
    tool_schema_tokens: int = 0
    tool_schema_tokens_per_request: float = 0.0
    cache_rules: str = ""
    encoding: str = ""
    provider: ProviderUsage = Field(default_factory=ProviderUsage)
    channels: dict[str, int] = Field(default_factory=dict)
    kinds: dict[RequestKind, KindUsage] = Field(default_factory=dict)
    cards: list[CardUsage] = Field(default_factory=list)
    breakers: list[BreakerUsage] = Field(default_factory=list)


class UsageReport(SerializableModel):
    """A team's prompt accounting; see the module docstring."""

    team: str = ""
    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    hit_rate: float = 0.0
    tool_schema_tokens_per_request: float = 0.0
    provider: ProviderUsage = Field(default_factory=ProviderUsage)
    kinds: dict[RequestKind, KindUsage] = Field(default_factory=dict)
    members: list[MemberUsage] = Field(default_factory=list)
    breakers: list[BreakerUsage] = Field(default_factory=list)


def accounting_events(messages: Iterable[Any]) -> list[PromptAccountingEvent]:
    """The accounting records among a team's stored messages (``EventMessage.event``)."""
    found = []
    for message in messages:
        event = getattr(message, "event", None)
        if isinstance(event, PromptAccountingEvent):
            found.append(event)
    return found


def _add_usage(total: ProviderUsage, usage: ProviderUsage) -> None:
    total.input_tokens += usage.input_tokens
    total.output_tokens += usage.output_tokens
    total.cache_read_tokens += usage.cache_read_tokens
    total.cache_write_tokens += usage.cache_write_tokens


def _ranked(breakers: Iterable[BreakerUsage]) -> list[BreakerUsage]:
    return sorted(breakers, key=lambda b: (-b.breaks, -b.lost_tokens, b.card, b.name))


def _kinds(kinds: dict[RequestKind, KindUsage]) -> dict[RequestKind, KindUsage]:
    return {kind: kinds[kind] for kind in REQUEST_KINDS if kind in kinds}


def _turn_requests(kinds: dict[RequestKind, KindUsage]) -> int:
    turns = kinds.get("turn")
    return turns.requests if turns is not None else 0


def _summary(row: CardUsage, event: PromptAccountingEvent) -> None:
    """Add a summary's request to its row: all its tokens, framing included."""
    row.tokens += event.input_tokens
    row.cached += event.cached_tokens
    for part in event.parts:
        row.channels[part.channel] = row.channels.get(part.channel, 0) + part.tokens


def _member(name: str, events: list[PromptAccountingEvent]) -> MemberUsage:
    member = MemberUsage(name=name)
    cards: dict[str, CardUsage] = {}
    breakers: dict[tuple[str, str, str, str], BreakerUsage] = {}
    framing_tokens = 0
    for event in events:
        member.requests += 1
        member.input_tokens += event.input_tokens
        member.cached_tokens += event.cached_tokens
        member.model, member.encoding = event.model, event.encoding
        member.cache_rules = event.cache_rules.describe()
        _add_usage(member.provider, event.provider)
        member.kinds.setdefault(event.kind, KindUsage()).add(
            KindUsage(
                requests=1,
                input_tokens=event.input_tokens,
                cached_tokens=event.cached_tokens,
                provider=event.provider,
            )
        )
        if event.kind == "summary":
            _summary(cards.setdefault(SUMMARIES, CardUsage(card=SUMMARIES)), event)
            continue
        member.tool_schema_tokens += event.tool_schema_tokens
        framing_tokens += event.framing_tokens
        for part in event.parts:
            member.channels[part.channel] = member.channels.get(part.channel, 0) + part.tokens
            label = _CONVERSATION.get(part.channel, part.card)
            row = cards.setdefault(label, CardUsage(card=label))
            row.tokens += part.tokens
            row.cached += part.cached
            row.channels[part.channel] = row.channels.get(part.channel, 0) + part.tokens
        framing = cards.setdefault(FRAMING, CardUsage(card=FRAMING))
        framing.tokens += event.framing_tokens
        parts_cached = sum(p.cached for p in event.parts)
        framing.cached += max(0, event.cached_tokens - parts_cached)
        if event.breaker is not None:
            b = event.breaker
            key = (b.channel, b.card, b.name, b.change)
            row_b = breakers.setdefault(
                key, BreakerUsage(channel=b.channel, card=b.card, name=b.name, change=b.change)
            )
            row_b.breaks += 1
            row_b.lost_tokens += b.lost_tokens
    order = {channel: index for index, channel in enumerate(CHANNELS)}
    member.channels = dict(sorted(member.channels.items(), key=lambda kv: order[kv[0]]))  # type: ignore[index]
    member.channels["framing"] = framing_tokens
    member.kinds = _kinds(member.kinds)
    summaries = member.kinds.get("summary")
    if summaries is not None:
        member.channels["summary"] = summaries.input_tokens
    for row in cards.values():
        row.share = _rate(row.tokens, member.input_tokens)
        row.hit_rate = _rate(row.cached, row.tokens)
    member.cards = sorted(cards.values(), key=lambda r: (-r.tokens, r.card))
    member.breakers = _ranked(breakers.values())
    member.hit_rate = _rate(member.cached_tokens, member.input_tokens)
    turns = _turn_requests(member.kinds)
    member.tool_schema_tokens_per_request = round(
        member.tool_schema_tokens / turns if turns else 0.0, 1
    )
    return member


def usage_report(events: Iterable[PromptAccountingEvent], team: str = "") -> UsageReport:
    """The report of ``events`` (a team's records; see the module docstring)."""
    by_member: dict[str, list[PromptAccountingEvent]] = {}
    for event in events:
        by_member.setdefault(event.agent, []).append(event)
    report = UsageReport(team=team)
    team_breakers: dict[tuple[str, str, str, str], BreakerUsage] = {}
    schema = 0
    for name in sorted(by_member):
        member = _member(name, by_member[name])
        report.members.append(member)
        report.requests += member.requests
        report.input_tokens += member.input_tokens
        report.cached_tokens += member.cached_tokens
        schema += member.tool_schema_tokens
        _add_usage(report.provider, member.provider)
        for kind, used in member.kinds.items():
            report.kinds.setdefault(kind, KindUsage()).add(used)
        for b in member.breakers:
            key = (b.channel, b.card, b.name, b.change)
            row = team_breakers.setdefault(
                key, b.model_copy(update={"breaks": 0, "lost_tokens": 0})
            )
            row.breaks += b.breaks
            row.lost_tokens += b.lost_tokens
    report.kinds = _kinds(report.kinds)
    report.hit_rate = _rate(report.cached_tokens, report.input_tokens)
    turns = _turn_requests(report.kinds)
    report.tool_schema_tokens_per_request = round(schema / turns if turns else 0.0, 1)
    report.breakers = _ranked(team_breakers.values())
    return report


def _pct(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def _breaker_line(b: BreakerUsage) -> str:
    what = f"{b.channel} {b.card}".strip() + (f": {b.name}" if b.name and b.name != b.card else "")
    times = "once" if b.breaks == 1 else f"{b.breaks} times"
    return f"{what} ({b.change}): {times}, {counted(b.lost_tokens, 'token')} after the break"


def _summaries_line(kinds: dict[RequestKind, KindUsage]) -> list[str]:
    """The line on the requests that wrote summaries (none without any)."""
    used = kinds.get("summary")
    if used is None:
        return []
    p = used.provider
    return [
        f"compaction summaries: {counted(used.requests, 'request')}, "
        f"{counted(used.input_tokens, 'input token')} (counted in the totals); provider "
        f"reported {p.input_tokens:,} input, {p.output_tokens:,} output"
    ]


def render_usage(report: UsageReport, *, breakers: int = 5) -> str:
    """The plain-text report: team totals, then per member a table of its cards and the
    ``breakers`` parts that broke its cache most; the requests that wrote compaction
    summaries get a line of their own (the team's, each member's) and a row."""
    if not report.requests:
        return f"team {report.team}: no model request has been accounted yet"
    p = report.provider
    lines = [
        f"team {report.team}: {counted(report.requests, 'model request')}, "
        f"{counted(report.input_tokens, 'input token')}, {_pct(report.hit_rate)} from the "
        f"modelled prefix cache, "
        f"{report.tool_schema_tokens_per_request:,.0f} tool-schema tokens per request",
        f"provider reported: {p.input_tokens:,} input ({p.cache_read_tokens:,} cache read, "
        f"{p.cache_write_tokens:,} cache write), {p.output_tokens:,} output",
        *_summaries_line(report.kinds),
    ]
    for m in report.members:
        lines += [
            "",
            f"{m.name} ({m.model}): {counted(m.requests, 'request')}, "
            f"{counted(m.input_tokens, 'input token')}, "
            f"{_pct(m.hit_rate)} cached, {m.tool_schema_tokens_per_request:,.0f} tool-schema "
            f"tokens per request",
            f"  cache model: {m.cache_rules}; counted in {m.encoding}",
            *(f"  {line}" for line in _summaries_line(m.kinds)),
            "  by channel: "
            + ", ".join(
                f"{channel} {tokens:,} ({_pct(_rate(tokens, m.input_tokens))})"
                for channel, tokens in m.channels.items()
            ),
            f"  {'card':<40} {'tokens':>10} {'share':>7} {'cached':>7}  channels",
        ]
        for row in m.cards:
            channels = ", ".join(row.channels) if row.channels else ""
            lines.append(
                f"  {row.card:<40} {row.tokens:>10,} {_pct(row.share):>7} "
                f"{_pct(row.hit_rate):>7}  {channels}".rstrip()
            )
        if m.breakers:
            lines.append("  cache broken by:")
            lines += [f"    {_breaker_line(b)}" for b in m.breakers[:breakers]]
        else:
            lines.append("  cache broken by: nothing (every request extended the one before)")
    return "\n".join(lines)
