"""Compaction over an agent's life: what a summary's request costs is counted and
accounted (a record of its own kind, which ``akgentic usage`` reports), a summary that
fails does not fail the turn it came before, a history just compacted is not compacted
again, and a summary chains the one before it however long the conversation. And a failed
turn's answered requests are counted too."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RequestUsage

from akgentic.agent import AgentMessage, BaseAgent
from akgentic.agent.accounting import AGENT, PrefixCacheRules, PromptAccountingEvent
from akgentic.agent.config import CompactionConfig
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import ActorSystem, EventMessage, UserMessage, WarningMessage
from akgentic.llm import SUMMARY_INSTRUCTIONS, LlmUsageEvent, ModelRoster

from ..core.conftest import Team
from .conftest import Script
from .test_base_agent import Calc, start

WINDOW = ModelRoster.from_spec("scripted:default", context_length=1000)
"""A 1,000-token window: a reply to N messages reports 100 * N input tokens."""


def is_summary(info: AgentInfo) -> bool:
    return info.instructions == SUMMARY_INSTRUCTIONS


def sized(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A summary (7 in, 3 out), or an answer reporting 100 input tokens a message."""
    if is_summary(info):
        return ModelResponse(
            parts=[TextPart("SUMMARY")], usage=RequestUsage(input_tokens=7, output_tokens=3)
        )
    usage = RequestUsage(input_tokens=100 * len(messages), output_tokens=1)
    return ModelResponse(parts=[TextPart(f"answer to {len(messages)}")], usage=usage)


def summaries(script: Script) -> int:
    return sum(1 for info in script.infos if is_summary(info))


def ask(system: ActorSystem, agent: Any, text: str) -> str:
    reply = system.ask(agent, UserMessage(content=text), timeout=30)
    assert isinstance(reply, AgentMessage)
    return reply.content


def test_the_turn_after_a_compact_command_does_not_compact_again(
    system: ActorSystem, team: Team
) -> None:
    script = Script(sized)
    agent = start(
        system, team, script, models=WINDOW, compaction=CompactionConfig(threshold=0.5, keep_last=2)
    )
    for index in range(3):  # the third answer reports 500 tokens: half the window
        ask(system, agent, f"round {index}")
    assert ask(system, agent, "/compact").startswith("Compacted")
    assert summaries(script) == 1
    assert ask(system, agent, "round 3") == "answer to 3"  # the compacted history, merged
    assert summaries(script) == 1  # not a summary of the summary


def test_a_summarys_usage_is_published_and_counted(system: ActorSystem, team: Team) -> None:
    script = Script(sized)
    agent = start(system, team, script, models=WINDOW, compaction=CompactionConfig(keep_last=2))
    for index in range(3):
        ask(system, agent, f"round {index}")
    assert ask(system, agent, "/compact").startswith("Compacted")
    events = team.recorder.wait_for_type(
        EventMessage, 4, where=lambda m: isinstance(m.event, LlmUsageEvent)
    )
    usage = [m.event for m in events if isinstance(m.event, LlmUsageEvent)]
    assert [(u.input_tokens, u.output_tokens) for u in usage] == [
        (100, 1),
        (300, 1),
        (500, 1),
        (7, 3),  # the summary's request
    ]
    actor = system.get_actor(agent)
    assert isinstance(actor, BaseAgent)
    assert actor.state.lifetime_usage == {
        "requests": 4,
        "tool_calls": 0,
        "input_tokens": 907,
        "output_tokens": 6,
    }


@pytest.mark.parametrize("trigger", ["/compact", "before a turn"])
def test_a_summarys_request_is_accounted_as_a_summary(
    system: ActorSystem, team: Team, trigger: str
) -> None:
    """The summary's request is on the team stream like the turns' (what ``akgentic
    usage`` adds up), of kind ``summary`` and numbered among them; it is modelled apart,
    so the turn after it is compared with the turn before it."""
    script = Script(sized)
    threshold = 0.5 if trigger == "before a turn" else 0.8
    agent = start(
        system,
        team,
        script,
        models=WINDOW,
        compaction=CompactionConfig(threshold=threshold, keep_last=2),
        prompt_accounting={"cache": PrefixCacheRules(name="test", min_prefix_tokens=0)},
    )
    for index in range(3):  # the third answer reports 500 tokens: half the window
        ask(system, agent, f"round {index}")
    if trigger == "/compact":
        assert ask(system, agent, "/compact").startswith("Compacted")
    ask(system, agent, "round 3")
    assert summaries(script) == 1
    found = team.recorder.wait_for_type(
        EventMessage, 5, where=lambda m: isinstance(m.event, PromptAccountingEvent)
    )
    events = [m.event for m in found if isinstance(m.event, PromptAccountingEvent)]
    assert [(e.kind, e.request) for e in events] == [
        ("turn", 1),
        ("turn", 2),
        ("turn", 3),
        ("summary", 4),
        ("turn", 5),
    ]
    before, summary, after = events[2:]
    assert (summary.provider.input_tokens, summary.provider.output_tokens) == (7, 3)
    assert summary.agent == "@Agent" and summary.run_id not in ("", before.run_id)
    # its instructions (the agent's own) and the conversation's text; no tool
    assert {(p.channel, p.card) for p in summary.parts} == {
        ("system_prompt", AGENT),
        ("message", ""),
    }
    assert summary.tool_schema_tokens == 0 and summary.cache_status == "cold"
    assert summary.summary().startswith("summary request 4: ")
    # the turn after it extends the tools and system prompt of the turn before it: the
    # compacted history is what breaks the prefix, not the summary's request
    assert after.breaker is not None and after.breaker.channel == "history"
    assert after.shared_prefix_tokens > after.tool_schema_tokens > 0


def test_a_summary_that_fails_before_a_turn_leaves_the_turn_to_go_on(
    system: ActorSystem, team: Team
) -> None:
    """The compaction before a turn asks for a summary that times out: the turn is answered
    from the whole history, a warning says so, and the next turn tries again."""
    failing = [True]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info) and failing[0]:
            raise TimeoutError("the summary took too long")
        return sized(messages, info)

    script = Script(respond)
    agent = start(
        system, team, script, models=WINDOW, compaction=CompactionConfig(threshold=0.5, keep_last=2)
    )
    for index in range(3):
        ask(system, agent, f"round {index}")
    assert ask(system, agent, "round 3") == "answer to 7"  # all of it, uncompacted
    [warning] = team.recorder.wait_for_type(WarningMessage)
    assert "compaction before this turn failed" in str(warning.content)
    assert "the summary took too long" in str(warning.content)
    failing[0] = False
    assert ask(system, agent, "round 4") == "answer to 3"  # compacted first, this time
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    head = history[0]
    assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)


def test_a_summary_chains_the_one_before_however_long_the_conversation_since(
    system: ActorSystem, team: Team
) -> None:
    prompts: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info):
            [prompt] = [p.content for p in messages[-1].parts if isinstance(p, UserPromptPart)]
            assert isinstance(prompt, str)
            prompts.append(prompt)
            return ModelResponse(parts=[TextPart(f"SUMMARY-{len(prompts)}")])
        return ModelResponse(parts=[TextPart("x" * 5_000)])

    script = Script(respond)
    agent = start(system, team, script, compaction=CompactionConfig(keep_last=2))
    ask(system, agent, "round 0")
    ask(system, agent, "round 1")
    assert ask(system, agent, "/compact").startswith("Compacted")
    for index in range(2, 8):  # 30,000 characters of answers since
        ask(system, agent, f"round {index}")
    assert ask(system, agent, "/compact").startswith("Compacted")
    assert prompts[1].startswith("SUMMARY-1")  # the first summary is summarised again
    assert len(prompts[1]) <= 20_000
    assert "round 7" not in prompts[1]  # kept as it is: not summarised
    assert "round 6" in prompts[1]  # the latest of what is summarised


def summary_prompts(script: Script) -> list[str]:
    """The prompts of the summary requests the model was sent."""
    prompts = []
    for seen, info in zip(script.seen, script.infos, strict=True):
        if is_summary(info):
            [prompt] = [p.content for p in seen[-1].parts if isinstance(p, UserPromptPart)]
            assert isinstance(prompt, str)
            prompts.append(prompt)
    return prompts


def test_a_summary_is_written_from_the_tool_calls_and_their_results_too(
    system: ActorSystem, team: Team
) -> None:
    """An agent that did its work through tools remembers it after a compaction: the summary
    request is shown each call (name, arguments) and each result, in order."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info):
            return ModelResponse(parts=[TextPart("SUMMARY")])
        last = messages[-1]
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart("the sum is in")])
        return ModelResponse(parts=[ToolCallPart("add", {"a": 20, "b": 22})])

    script = Script(respond)
    agent = start(system, team, script, tools=[Calc()], compaction=CompactionConfig(keep_last=1))
    ask(system, agent, "add 20 and 22")
    ask(system, agent, "thanks")
    assert ask(system, agent, "/compact").startswith("Compacted")
    [prompt] = summary_prompts(script)
    lines = prompt.splitlines()
    at = lines.index('[tool call] add({"a":20,"b":22})')
    assert lines[at : at + 3] == [
        '[tool call] add({"a":20,"b":22})',
        "[tool result] add: 42",
        "the sum is in",
    ]
    assert lines.index("add 20 and 22") < at < lines.index("thanks")


def test_a_turn_that_fails_after_answered_requests_publishes_their_usage(
    system: ActorSystem, team: Team
) -> None:
    """The model answers with a tool call, then its next request fails: the first request
    was billed, so it is published and saved in the lifetime usage (a resume's limits)."""

    def unreachable(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError("the endpoint went away")

    def add(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=50, output_tokens=5)
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})], usage=usage)

    agent = start(system, team, Script(add, unreachable), tools=[Calc()])
    system.tell(agent, UserMessage(content="add"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    usage = [m.event for m in team.recorder.of_type(EventMessage)]
    assert [(u.requests, u.input_tokens) for u in usage if isinstance(u, LlmUsageEvent)] == [
        (1, 50)
    ]
    actor = system.get_actor(agent)
    assert isinstance(actor, BaseAgent)
    assert actor.state.lifetime_usage["input_tokens"] == 50
