"""Prompt accounting across a stop and a resume of a team: the first request after the
resume is compared with the last one before the stop (the restored context is its
prefix), not called ``cold`` — a hit when the gap is within the cache's TTL, ``expired``
when it is not (the clock injected: no waiting). A summary's request before the stop
stays in the team's usage, read from its log, after the resume."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import ClassVar

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.accounting import (
    REPLY_PRIMING,
    PrefixCacheRules,
    PromptAccountingConfig,
    PromptAccountingEvent,
    accounting_events,
)
from akgentic.agent.config import CompactionConfig
from akgentic.core import AgentCard
from akgentic.llm import register_model
from akgentic.team import MemberSpec, TeamCard, TeamManager, team_usage

from ..team import test_registered_models
from ..team.conftest import answer

manager = test_registered_models.manager  # a TeamManager on a SQLite store (the fixture)

RULES = PrefixCacheRules(name="test", min_prefix_tokens=0, ttl_seconds=300)


class ClockedAgent(BaseAgent):
    """A BaseAgent whose accounting clock is the wall clock moved by ``offset`` seconds."""

    offset: ClassVar[float] = 0.0

    @staticmethod
    def accounting_clock() -> float:
        return time.time() + ClockedAgent.offset


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(f"answer {len(messages)}")])


def solo(compaction: CompactionConfig | None = None) -> TeamCard:
    analyst = AgentCard(
        role="Analyst",
        agent_class=f"{__name__}.ClockedAgent",
        config=AgentConfig(
            name="@Analyst",
            role="Analyst",
            models="registered:accounting-llm",
            prompt_accounting=PromptAccountingConfig(cache=RULES),
            compaction=compaction or CompactionConfig(),
        ),
    )
    return TeamCard(name="solo", entry_point="@Analyst", members=[MemberSpec(card=analyst)])


@pytest.fixture(autouse=True)
def wall_clock() -> Iterator[None]:
    yield
    ClockedAgent.offset = 0.0


def turn_stop_resume_turn(manager: TeamManager, gap: float) -> list[PromptAccountingEvent]:
    """A turn, a stop, a resume ``gap`` seconds later (by the agent's clock), a turn: the
    agent's accounting records, in order."""
    with register_model("accounting-llm", FunctionModel(respond)):
        runtime = manager.create_team(solo())
        runtime.send("first question")
        answer(runtime, 0)
        team_id = runtime.team_id
        manager.stop_team(team_id)
        ClockedAgent.offset = gap
        resumed = manager.resume_team(team_id)
        seq = resumed.recorder.last_seq
        resumed.send("second question")
        answer(resumed, seq)
        manager.stop_team(team_id)
    records = manager.storage.events.read(team_id, from_seq=1, limit=10_000)
    events = accounting_events(record.message for record in records if record.ok)
    return [event for event in events if event.agent == "@Analyst"]


def test_the_first_request_after_a_quick_resume_is_served_the_prefix_before_the_stop(
    manager: TeamManager,
) -> None:
    before, after = turn_stop_resume_turn(manager, gap=0.0)
    assert before.cache_status == "cold"
    whole = before.input_tokens - REPLY_PRIMING  # the request before, all of it a prefix
    assert after.shared_prefix_tokens == whole
    assert after.breaker is None
    assert after.cache_status == "hit"
    assert after.cached_tokens == whole
    assert after.seconds_since_previous is not None


def test_the_first_request_after_a_resume_past_the_ttl_is_expired(
    manager: TeamManager,
) -> None:
    before, after = turn_stop_resume_turn(manager, gap=3600.0)
    assert after.shared_prefix_tokens == before.input_tokens - REPLY_PRIMING
    assert after.breaker is None
    assert after.cache_status == "expired"
    assert after.cached_tokens == 0
    assert after.seconds_since_previous is not None
    assert after.seconds_since_previous > RULES.ttl_seconds


def test_a_summary_before_the_stop_is_in_the_usage_after_the_resume(
    manager: TeamManager,
) -> None:
    with register_model("accounting-llm", FunctionModel(respond)):
        runtime = manager.create_team(solo(CompactionConfig(keep_last=1)))
        runtime.send("first question")
        seq, _ = answer(runtime, 0)
        runtime.send("/compact")
        _, compacted = answer(runtime, seq)
        assert compacted.startswith("Compacted")
        team_id = runtime.team_id
        manager.stop_team(team_id)
        resumed = manager.resume_team(team_id)
        seq = resumed.recorder.last_seq
        resumed.send("second question")
        answer(resumed, seq)
        manager.stop_team(team_id)
    records = manager.storage.events.read(team_id, from_seq=1, limit=10_000)
    events = accounting_events(record.message for record in records if record.ok)
    assert [(e.kind, e.request) for e in events] == [
        ("turn", 1),
        ("summary", 2),
        ("turn", 1),  # numbered from 1 in the new process
    ]
    report = team_usage(manager.storage, team_id, "solo")
    assert report.requests == 3
    assert report.input_tokens == sum(e.input_tokens for e in events)
    assert report.kinds["summary"].requests == 1
    assert report.kinds["summary"].input_tokens == events[1].input_tokens
    [member] = report.members
    summaries = next(c for c in member.cards if c.card == "(summary requests)")
    assert summaries.tokens == events[1].input_tokens


def test_a_compact_right_after_a_resume_carries_the_turns_prefix_and_is_served_it(
    manager: TeamManager,
) -> None:
    """No turn request yet in this process: the summary carries the instructions and tool
    definitions of the turns all the same, byte for byte, and is compared with the last
    request before the stop, as the first turn after the resume would be — a hit on it."""
    infos: list[AgentInfo] = []

    def recording(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        return respond(messages, info)

    with register_model("accounting-llm", FunctionModel(recording)):
        runtime = manager.create_team(solo(CompactionConfig(keep_last=1)))
        runtime.send("first question")
        answer(runtime, 0)
        team_id = runtime.team_id
        manager.stop_team(team_id)
        resumed = manager.resume_team(team_id)
        seq = resumed.recorder.last_seq
        resumed.send("/compact")
        _, compacted = answer(resumed, seq)
        assert compacted.startswith("Compacted")
        manager.stop_team(team_id)
    turn, summary = infos
    assert (summary.model_settings or {}).get("tool_choice") == "none"
    assert summary.instructions == turn.instructions and summary.instructions
    sent = [t.name for t in [*turn.function_tools, *turn.output_tools]]
    assert sent and [t.name for t in summary.function_tools] == sent
    assert summary.output_tools == []
    records = manager.storage.events.read(team_id, from_seq=1, limit=10_000)
    events = accounting_events(record.message for record in records if record.ok)
    mine = [event for event in events if event.agent == "@Analyst"]
    assert [event.kind for event in mine] == ["turn", "summary"]
    before, after = mine
    assert after.cache_status == "hit" and after.breaker is None
    assert after.cached_tokens == after.shared_prefix_tokens > before.tool_schema_tokens
    assert after.tool_schema_tokens == before.tool_schema_tokens
    cards = [(p.card, p.tokens) for p in after.parts if p.channel == "tool_call"]
    assert cards == [(p.card, p.tokens) for p in before.parts if p.channel == "tool_call"]
    assert "BaseAgent" in dict(cards)  # the output tool, offered among the summary's tools
