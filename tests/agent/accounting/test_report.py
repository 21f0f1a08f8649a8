"""The usage report: records added up per member and per card, the breakers ranked, the
plain-text table and the JSON document."""

from __future__ import annotations

import json

from akgentic.agent.accounting import (
    CacheBreak,
    PartTokens,
    PrefixCacheRules,
    PromptAccountingEvent,
    ProviderUsage,
    RequestKind,
    UsageReport,
    accounting_events,
    render_usage,
    usage_report,
)
from akgentic.core import EventMessage
from akgentic.core.serialization import MODEL_MARKER, deserialize, serialize

RULES = PrefixCacheRules(name="openai", min_prefix_tokens=1024, block_tokens=128)


def event(
    agent: str,
    parts: list[tuple[str, str, int, int]],
    *,
    breaker: CacheBreak | None = None,
    provider: int = 0,
    kind: RequestKind = "turn",
) -> PromptAccountingEvent:
    rows = [PartTokens(channel=c, card=k, tokens=t, cached=h, items=1) for c, k, t, h in parts]  # type: ignore[arg-type]
    framing = 7
    return PromptAccountingEvent(
        agent=agent,
        kind=kind,
        model="openai:gpt-5.2",
        encoding="o200k_base",
        input_tokens=sum(r.tokens for r in rows) + framing,
        framing_tokens=framing,
        parts=rows,
        cached_tokens=sum(r.cached for r in rows) + (4 if any(r.cached for r in rows) else 0),
        breaker=breaker,
        cache_rules=RULES,
        provider=ProviderUsage(input_tokens=provider, cache_read_tokens=provider // 2),
    )


TOOLS = ("tool_call", "PlanningTool", 600, 0)
SYSTEM = ("system_prompt", "SkillTool", 100, 0)
PLAN_BREAK = CacheBreak(
    channel="tool_call",
    card="ToolsetCard[tasks].PlanningTool",
    name="tasks_update",
    change="added",
    lost_tokens=900,
)


def sample() -> list[PromptAccountingEvent]:
    return [
        event("@Writer", [TOOLS, SYSTEM, ("message", "", 50, 0)], provider=700),
        event(
            "@Writer",
            [
                ("tool_call", "PlanningTool", 600, 600),
                ("system_prompt", "SkillTool", 100, 100),
                ("history", "", 57, 57),
                ("llm_context", "PlanningTool", 30, 0),
                ("message", "", 20, 0),
            ],
            provider=800,
        ),
        event(
            "@Writer", [TOOLS, SYSTEM, ("history", "", 120, 0)], breaker=PLAN_BREAK, provider=900
        ),
        event(
            "@Editor",
            [("tool_call", "TeamTool", 300, 0), ("message", "", 10, 0)],
            breaker=PLAN_BREAK,
        ),
    ]


def test_members_and_cards_add_up() -> None:
    report = usage_report(sample(), team="docs")
    assert [m.name for m in report.members] == ["@Editor", "@Writer"]
    writer = report.members[1]
    assert writer.requests == 3
    assert writer.input_tokens == (750 + 7) + (807 + 7) + (820 + 7)
    assert writer.cached_tokens == 757 + 4
    assert writer.hit_rate == round(761 / writer.input_tokens, 4)
    assert writer.tool_schema_tokens_per_request == 600.0
    cards = {c.card: c for c in writer.cards}
    assert cards["PlanningTool"].tokens == 1830
    assert cards["PlanningTool"].channels == {"tool_call": 1800, "llm_context": 30}
    assert cards["PlanningTool"].hit_rate == round(600 / 1830, 4)
    assert cards["(history)"].tokens == 177 and cards["(new messages)"].tokens == 70
    assert cards["(framing)"].tokens == 21 and cards["(framing)"].cached == 4
    assert sum(c.tokens for c in writer.cards) == writer.input_tokens
    assert abs(sum(c.share for c in writer.cards) - 1) < 0.001
    assert writer.cards[0].card == "PlanningTool"  # largest first
    assert writer.provider.input_tokens == 2400 and writer.provider.cache_read_tokens == 1200
    assert writer.cache_rules == RULES.describe()
    assert writer.channels == {
        "tool_call": 1800,
        "system_prompt": 300,
        "llm_context": 30,
        "history": 177,
        "message": 70,
        "framing": 21,
    }
    assert list(writer.channels) == [  # wire order, framing last
        "tool_call",
        "system_prompt",
        "llm_context",
        "history",
        "message",
        "framing",
    ]
    assert sum(writer.channels.values()) == writer.input_tokens


def test_breakers_are_ranked_per_member_and_for_the_team() -> None:
    other = CacheBreak(channel="system_prompt", card="Meta", name="m", lost_tokens=5000)
    report = usage_report([*sample(), event("@Writer", [TOOLS], breaker=other)])
    writer = report.members[1]
    assert [(b.card, b.breaks) for b in writer.breakers] == [
        ("Meta", 1),
        ("ToolsetCard[tasks].PlanningTool", 1),
    ]  # equal counts: more tokens lost first
    [top, *_] = report.breakers
    assert (top.card, top.breaks, top.lost_tokens) == ("ToolsetCard[tasks].PlanningTool", 2, 1800)


def test_the_team_totals() -> None:
    report = usage_report(sample(), team="docs")
    assert report.requests == 4
    assert report.input_tokens == sum(m.input_tokens for m in report.members)
    assert report.tool_schema_tokens_per_request == (1800 + 300) / 4


def test_the_plain_text_table() -> None:
    text = render_usage(usage_report(sample(), team="docs"), breakers=1)
    lines = text.splitlines()
    assert lines[0].startswith("team docs: 4 model requests, ")
    assert "@Writer (openai:gpt-5.2): 3 requests, " in text
    rules = "  cache model: openai: prefix >= 1024 tokens, 128-token blocks, ttl 300 s; "
    assert f"{rules}counted in o200k_base" in lines
    row = next(line for line in lines if line.strip().startswith("PlanningTool"))
    assert row.split()[1:5] == ["1,830", "76.3%", "32.8%", "tool_call,"]
    assert (
        "    tool_call ToolsetCard[tasks].PlanningTool: tasks_update (added): once, "
        "900 tokens after the break"
    ) in lines
    assert "cache broken by: nothing" not in text
    assert "  by channel: tool_call 1,800 (75.1%), system_prompt 300 (12.5%), " in text
    assert render_usage(UsageReport(team="empty")) == (
        "team empty: no model request has been accounted yet"
    )


def test_the_json_document_round_trips() -> None:
    report = usage_report(sample(), team="docs")
    data = json.loads(report.model_dump_json())
    assert UsageReport.model_validate(data) == report
    assert data["members"][1]["cards"][0]["card"] == "PlanningTool"


def test_records_are_picked_out_of_a_log() -> None:
    [first, *_] = sample()
    messages = [EventMessage(event=first), EventMessage(event="something else"), object()]
    assert accounting_events(messages) == [first]


def test_one_request_is_said_in_the_singular() -> None:
    [first, *_] = sample()
    lines = render_usage(usage_report([first], team="docs")).splitlines()
    assert lines[0].startswith("team docs: 1 model request, 757 input tokens, ")
    assert lines[3].startswith("@Writer (openai:gpt-5.2): 1 request, 757 input tokens, ")


SUMMARY_BREAK = CacheBreak(channel="message", change="changed", lost_tokens=80)


def with_summaries() -> list[PromptAccountingEvent]:
    """The sample, @Writer having written two summaries between its turns: a summary's
    request carries its instructions and the conversation's text, no tool."""
    summary = [("system_prompt", "BaseAgent", 20, 0), ("message", "", 90, 0)]
    writer = sample()[:3]
    return [
        writer[0],
        event("@Writer", summary, provider=105, kind="summary"),
        writer[1],
        event("@Writer", summary, breaker=SUMMARY_BREAK, provider=106, kind="summary"),
        writer[2],
        sample()[3],
    ]


def test_summary_requests_are_counted_in_the_totals_and_shown_apart() -> None:
    plain = usage_report(sample(), team="docs")
    report = usage_report(with_summaries(), team="docs")
    summary_tokens = 2 * (110 + 7)
    assert report.requests == plain.requests + 2
    assert report.input_tokens == plain.input_tokens + summary_tokens
    assert report.provider.input_tokens == plain.provider.input_tokens + 211
    assert report.kinds["summary"].model_dump() == {
        "requests": 2,
        "input_tokens": summary_tokens,
        "cached_tokens": 0,
        "provider": {
            "input_tokens": 211,
            "output_tokens": 0,
            "cache_read_tokens": 105,
            "cache_write_tokens": 0,
        },
    }
    assert report.kinds["turn"].requests == 4
    assert report.kinds["turn"].input_tokens == plain.input_tokens
    assert list(report.kinds) == ["turn", "summary"]

    writer = report.members[1]
    assert writer.requests == 5 and list(writer.kinds) == ["turn", "summary"]
    assert writer.kinds["summary"].requests == 2
    cards = {c.card: c for c in writer.cards}
    summaries = cards["(summary requests)"]
    assert summaries.tokens == summary_tokens  # framing included: the requests whole
    assert summaries.channels == {"system_prompt": 40, "message": 180}
    assert summaries.share == round(summary_tokens / writer.input_tokens, 4)
    assert "BaseAgent" not in cards  # a summary's instructions are no card's
    # the turns' rows are as they were; every row sums to the member's total
    assert cards["(new messages)"].tokens == 70 and cards["(framing)"].tokens == 21
    assert sum(c.tokens for c in writer.cards) == writer.input_tokens
    assert writer.channels["summary"] == summary_tokens
    assert writer.channels["message"] == 70 and writer.channels["system_prompt"] == 300
    assert sum(writer.channels.values()) == writer.input_tokens
    # per turn's request: a summary's carries no tool
    assert writer.tool_schema_tokens_per_request == 600.0
    assert report.tool_schema_tokens_per_request == plain.tool_schema_tokens_per_request
    # the breakers are the turns': a summary's prompt never extends the one before
    assert writer.breakers == plain.members[1].breakers
    assert report.breakers == plain.breakers
    # a member that wrote none has no summary kind, channel or row
    editor = report.members[0]
    assert list(editor.kinds) == ["turn"] and "summary" not in editor.channels
    assert UsageReport.model_validate(json.loads(report.model_dump_json())) == report


def test_the_table_says_what_the_summaries_cost() -> None:
    text = render_usage(usage_report(with_summaries(), team="docs"))
    lines = text.splitlines()
    assert lines[0].startswith("team docs: 6 model requests, ")
    line = (
        "compaction summaries: 2 requests, 234 input tokens (counted in the totals); "
        "provider reported 211 input, 0 output"
    )
    assert lines[2] == line
    assert f"  {line}" in lines  # @Writer's, under its totals
    assert "@Writer (openai:gpt-5.2): 5 requests, " in text
    row = next(line for line in lines if line.strip().startswith("(summary requests)"))
    assert row.split()[2:] == ["234", "8.9%", "0.0%", "system_prompt,", "message"]
    assert ", summary 234 (8.9%)" in text  # by channel
    assert "compaction summaries" not in render_usage(usage_report(sample(), team="docs"))


def test_a_record_stored_before_kinds_reads_as_a_turns() -> None:
    [first, *_] = sample()
    stored = serialize(first)
    del stored["kind"]  # as a log written before summaries were accounted holds it
    assert MODEL_MARKER in stored
    old = deserialize(stored)
    assert isinstance(old, PromptAccountingEvent) and old.kind == "turn"
    assert old == first
    assert old.summary().startswith("request 0: ")
    assert list(usage_report([old]).kinds) == ["turn"]
