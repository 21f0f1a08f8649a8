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
    UsageReport,
    accounting_events,
    render_usage,
    usage_report,
)
from akgentic.core import EventMessage

RULES = PrefixCacheRules(name="openai", min_prefix_tokens=1024, block_tokens=128)


def event(
    agent: str,
    parts: list[tuple[str, str, int, int]],
    *,
    breaker: CacheBreak | None = None,
    provider: int = 0,
) -> PromptAccountingEvent:
    rows = [PartTokens(channel=c, card=k, tokens=t, cached=h, items=1) for c, k, t, h in parts]  # type: ignore[arg-type]
    framing = 7
    return PromptAccountingEvent(
        agent=agent,
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
