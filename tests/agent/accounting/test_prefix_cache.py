"""The prefix-cache model on hand-built request sequences: identical requests, a tail
change, a change in the middle named by card and channel, tools added and removed, the
TTL, the minimum, OpenAI's blocks, and the published rules by provider and model."""

from __future__ import annotations

import pytest

from akgentic.agent.accounting import (
    DEFAULT_RULES,
    CacheBreak,
    Counted,
    PrefixCacheModel,
    PrefixCacheRules,
    Segment,
    Source,
    rules_for,
)

ANY = PrefixCacheRules(name="test", min_prefix_tokens=0, ttl_seconds=300)


def tool(name: str, card: str, tokens: int) -> Counted:
    segment = Segment.single("tools", f'{{"name":"{name}"}}', Source("tool_call", card, name))
    return Counted(segment, (tokens,), 0)


def system(*parts: tuple[str, str, int]) -> Counted:
    """The system prompt: (card, text, tokens) per part."""
    spans, texts, offset = [], [], 0
    for card, text, _ in parts:
        spans.append((Source("system_prompt", card, card.lower()), offset))
        texts.append(text)
        offset += len(text)
    segment = Segment("system", "".join(texts), tuple(spans), opens_message=True)
    return Counted(segment, tuple(t for _, _, t in parts), 4)


def message(role: str, text: str, tokens: int, channel: str = "history") -> Counted:
    segment = Segment.single(role, text, Source(channel), opens=True)  # type: ignore[arg-type]
    return Counted(segment, (tokens,), 4)


TOOLS = [tool("plan", "PlanningTool", 300), tool("search", "KnowledgeGraphTool", 200)]
SYSTEM = system(
    ("BaseAgent", "You are @A.", 10), ("SkillTool", "Skills: x", 20), ("Meta", "Acme", 30)
)
HELLO = message("user", "hello", 5, "message")


def test_the_first_request_is_cold() -> None:
    outcome = PrefixCacheModel(ANY).observe([*TOOLS, SYSTEM, HELLO], now=0)
    assert (outcome.shared, outcome.cached, outcome.status) == (0, 0, "cold")
    assert outcome.breaker is None and outcome.since_previous is None


def test_an_identical_request_is_served_whole() -> None:
    model = PrefixCacheModel(ANY)
    request = [*TOOLS, SYSTEM, HELLO]
    model.observe(request, now=0)
    outcome = model.observe(list(request), now=10)
    whole = 300 + 200 + (10 + 20 + 30 + 4) + (5 + 4)
    assert (outcome.shared, outcome.cached, outcome.status) == (whole, whole, "hit")
    assert outcome.breaker is None
    assert outcome.since_previous == 10


def test_a_tail_change_keeps_the_whole_previous_request() -> None:
    model = PrefixCacheModel(ANY)
    first = [*TOOLS, SYSTEM, HELLO]
    model.observe(first, now=0)
    second = [*first, message("assistant", "hi there", 7), message("user", "next", 3, "message")]
    outcome = model.observe(second, now=1)
    assert outcome.shared == sum(c.tokens for c in first)
    assert outcome.breaker is None


def test_a_change_in_the_middle_names_the_card_and_keeps_the_parts_before_it() -> None:
    model = PrefixCacheModel(ANY)
    model.observe([*TOOLS, SYSTEM, HELLO], now=0)
    changed = system(
        ("BaseAgent", "You are @A.", 10), ("SkillTool", "Skills: y", 21), ("Meta", "Acme", 30)
    )
    outcome = model.observe([*TOOLS, changed, HELLO], now=1)
    assert outcome.breaker == CacheBreak(
        channel="system_prompt",
        card="SkillTool",
        name="skilltool",
        change="changed",
        lost_tokens=(20 + 30) + (5 + 4),
    )
    assert (
        outcome.shared == 500 + 4 + 10
    )  # the tools, then the system prompt's framing and first part
    assert outcome.cached == outcome.shared


def test_a_tool_added_before_the_rest_is_named_as_added() -> None:
    model = PrefixCacheModel(ANY)
    model.observe([*TOOLS, SYSTEM, HELLO], now=0)
    extra = tool("info", "ToolsetCard[media].Films", 90)
    outcome = model.observe([TOOLS[0], extra, TOOLS[1], SYSTEM, HELLO], now=1)
    assert outcome.breaker is not None
    assert (outcome.breaker.change, outcome.breaker.card, outcome.breaker.name) == (
        "added",
        "ToolsetCard[media].Films",
        "info",
    )
    assert outcome.shared == 300


def test_a_tool_removed_is_named_as_removed() -> None:
    model = PrefixCacheModel(ANY)
    model.observe([*TOOLS, SYSTEM, HELLO], now=0)
    outcome = model.observe([TOOLS[1], SYSTEM, HELLO], now=1)
    assert outcome.breaker is not None
    assert (outcome.breaker.change, outcome.breaker.card) == ("removed", "PlanningTool")
    assert outcome.shared == 0 and outcome.status == "short"


def test_a_request_shorter_than_the_previous_names_what_went() -> None:
    model = PrefixCacheModel(ANY)
    model.observe([*TOOLS, SYSTEM, HELLO, message("assistant", "a", 2)], now=0)
    outcome = model.observe([*TOOLS, SYSTEM], now=1)
    assert outcome.breaker is not None
    assert (outcome.breaker.channel, outcome.breaker.change) == ("message", "removed")


def test_the_ttl_expires_the_cache() -> None:
    model = PrefixCacheModel(ANY)
    request = [*TOOLS, SYSTEM, HELLO]
    model.observe(request, now=0)
    outcome = model.observe(request, now=300.5)
    assert outcome.status == "expired" and outcome.cached == 0
    assert outcome.shared > 0 and outcome.breaker is None
    assert model.observe(request, now=301).status == "hit"  # the last request warmed it again


def test_a_prefix_below_the_minimum_is_not_served() -> None:
    model = PrefixCacheModel(PrefixCacheRules(min_prefix_tokens=1024))
    request = [*TOOLS, SYSTEM, HELLO]
    model.observe(request, now=0)
    outcome = model.observe(request, now=1)
    assert (outcome.status, outcome.cached) == ("short", 0)


def test_openai_serves_whole_blocks_of_128_tokens() -> None:
    model = PrefixCacheModel(PrefixCacheRules(min_prefix_tokens=0, block_tokens=128))
    request = [*TOOLS, SYSTEM, HELLO]  # 573 tokens
    model.observe(request, now=0)
    assert model.observe(request, now=1).cached == 512


def test_each_model_has_a_cache_of_its_own() -> None:
    """A request to another model is cold; a return to the first, within its TTL, is
    served what that model read last, whatever was sent elsewhere meanwhile."""
    cache = PrefixCacheModel(ANY)
    first = [*TOOLS, SYSTEM, HELLO]
    cache.observe(first, now=0, model="alpha")
    other = cache.observe([*TOOLS, SYSTEM, HELLO], now=10, model="beta")
    assert (other.shared, other.cached, other.status, other.breaker) == (0, 0, "cold", None)
    back = cache.observe([*first, message("user", "again", 5, "message")], now=20, model="alpha")
    whole = sum(c.tokens for c in first)
    assert (back.shared, back.cached, back.status, back.breaker) == (whole, whole, "hit", None)
    assert back.since_previous == 20
    late = cache.observe(first, now=400, model="beta")  # beta's last request: 390 s ago
    assert late.status == "expired"


def test_reset_makes_the_next_request_cold() -> None:
    model = PrefixCacheModel(ANY)
    model.observe([*TOOLS], now=0)
    model.reset()
    assert model.observe([*TOOLS], now=1).status == "cold"


@pytest.mark.parametrize(
    ("provider", "model", "minimum", "block"),
    [
        ("openai", "gpt-5.2", 1024, 128),
        ("anthropic", "claude-sonnet-4-5", 1024, 1),
        ("anthropic", "claude-opus-4-5-20251101", 4096, 1),
        ("anthropic", "claude-3-5-haiku-latest", 2048, 1),
        ("google", "gemini-2.5-flash", 2048, 1),
        ("google", "gemini-3-pro-preview", 4096, 1),
        ("scripted", "default", 1024, 1),
    ],
)
def test_the_published_rules_by_provider_and_model(
    provider: str, model: str, minimum: int, block: int
) -> None:
    rules = rules_for(provider, model)
    assert (rules.min_prefix_tokens, rules.block_tokens, rules.ttl_seconds) == (minimum, block, 300)


def test_rules_refuse_unknown_fields() -> None:
    with pytest.raises(ValueError, match="ttl"):
        PrefixCacheRules(ttl=60)  # type: ignore[call-arg]
    assert DEFAULT_RULES.describe() == "default: prefix >= 1024 tokens, ttl 300 s"
