"""Usage limits: per run and per lifetime, enforced by pydantic-ai, reported as a soft stop."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from pydantic_ai import Agent
from pydantic_ai.usage import RunUsage

from akgentic.core import WarningError
from akgentic.llm import (
    ScriptedModel,
    UsageLimitReached,
    UsageLimitsConfig,
    UsageLimitSet,
    UsageTracker,
)

STEPS = 5


def busy_agent() -> Agent[None, str]:
    """An agent whose scripted model calls a tool on each of five steps, then answers."""
    steps: list[dict[str, object]] = [
        {"tool_calls": [{"tool": "tick", "args": {"n": str(i)}}]} for i in range(STEPS)
    ]
    steps.append({"text": "[scripted] done"})
    model = ScriptedModel.from_dict({"rules": [{"when": "work", "steps": steps}]})
    agent: Agent[None, str] = Agent(model)

    @agent.tool_plain
    def tick(n: str) -> str:
        return f"tick {n}"

    return agent


def run(tracker: UsageTracker, agent: Agent[None, str], prompt: str = "work") -> str:
    run_usage = RunUsage()
    with tracker.track(run_usage) as limits:
        return agent.run_sync(prompt, usage_limits=limits, usage=run_usage).output


def test_config_forbids_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="request"):
        UsageLimitSet(request=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="per_runs"):
        UsageLimitsConfig(per_runs={})  # type: ignore[call-arg]


def test_default_per_run_request_guard() -> None:
    limits = UsageTracker().usage_limits()
    assert limits.request_limit == 50
    assert limits.total_tokens_limit is None


def test_within_limits_the_run_completes_and_is_recorded() -> None:
    tracker = UsageTracker(UsageLimitsConfig(per_run=UsageLimitSet(requests=10)))
    assert run(tracker, busy_agent()) == "[scripted] done"
    assert tracker.runs == 1
    assert tracker.total.requests == STEPS + 1
    assert tracker.total.tool_calls == STEPS


def test_per_run_request_limit_is_a_soft_stop() -> None:
    tracker = UsageTracker(UsageLimitsConfig(per_run=UsageLimitSet(requests=2)))
    with pytest.raises(UsageLimitReached) as info:
        run(tracker, busy_agent())
    stop = info.value
    assert isinstance(stop, WarningError)
    assert (stop.limit, stop.scope, stop.value, stop.used) == ("requests", "per_run", 2, 2)
    assert str(stop) == (
        "usage limit reached: the per-run limit of 2 model requests (2 used); the run stopped; "
        "the next run starts a fresh per-run budget (usage_limits.per_run.requests)"
    )
    # the stopped run's usage still counts
    assert tracker.total.requests == 2
    assert tracker.runs == 1


def test_per_run_tool_call_limit() -> None:
    tracker = UsageTracker(UsageLimitsConfig(per_run=UsageLimitSet(tool_calls=3)))
    with pytest.raises(UsageLimitReached) as info:
        run(tracker, busy_agent())
    assert (info.value.limit, info.value.scope, info.value.value) == ("tool_calls", "per_run", 3)
    assert "3 tool calls" in str(info.value)


def test_per_run_output_token_limit() -> None:
    tracker = UsageTracker(UsageLimitsConfig(per_run=UsageLimitSet(output_tokens=5)))
    with pytest.raises(UsageLimitReached) as info:
        run(tracker, busy_agent())
    assert (info.value.limit, info.value.scope) == ("output_tokens", "per_run")
    assert info.value.used is not None and info.value.used > 5


def test_lifetime_request_budget_tightens_the_run_then_refuses_runs() -> None:
    limits = UsageLimitsConfig(
        per_run=UsageLimitSet(requests=10), lifetime=UsageLimitSet(requests=8)
    )
    tracker = UsageTracker(limits)
    assert run(tracker, busy_agent()) == "[scripted] done"  # 6 requests
    assert tracker.remaining("requests") == 2
    assert tracker.usage_limits().request_limit == 2

    with pytest.raises(UsageLimitReached) as info:
        run(tracker, busy_agent())
    assert (info.value.limit, info.value.scope, info.value.value, info.value.used) == (
        "requests",
        "lifetime",
        8,
        8,
    )
    assert "lifetime limit of 8 model requests" in str(info.value)
    assert tracker.total.requests == 8

    with pytest.raises(UsageLimitReached, match="lifetime limit of 8 model requests"):
        tracker.usage_limits()


def test_lifetime_total_tokens() -> None:
    tracker = UsageTracker(UsageLimitsConfig(lifetime=UsageLimitSet(total_tokens=10)))
    tracker.record(RunUsage(input_tokens=8, output_tokens=2, requests=1))
    with pytest.raises(UsageLimitReached) as info:
        tracker.check()
    assert (info.value.limit, info.value.scope, info.value.used) == ("total_tokens", "lifetime", 10)
    assert "usage_limits.lifetime.total_tokens" in str(info.value)


def test_used_up_tool_budget_still_allows_a_run_without_tools() -> None:
    tracker = UsageTracker(UsageLimitsConfig(lifetime=UsageLimitSet(tool_calls=0)))
    assert tracker.usage_limits().tool_calls_limit == 0
    assert run(tracker, busy_agent(), prompt="chat").startswith("[scripted]")
    with pytest.raises(UsageLimitReached) as info:
        run(tracker, busy_agent())
    assert (info.value.limit, info.value.scope) == ("tool_calls", "lifetime")


def test_restored_total_keeps_the_lifetime_budget() -> None:
    limits = UsageLimitsConfig(lifetime=UsageLimitSet(requests=3))
    tracker = UsageTracker(limits, total=RunUsage(requests=3))
    with pytest.raises(UsageLimitReached, match="lifetime"):
        tracker.usage_limits()
