"""Compaction over an agent's life: what a summary's request costs is counted and
accounted (a record of its own kind, which ``akgentic usage`` reports), a summary that
fails does not fail the turn it came before, a history just compacted is not compacted
again, and a summary chains the one before it however long the conversation. And a failed
turn's answered requests are counted too."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelContextWindowExceededError
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RequestUsage

from akgentic.agent import AgentMessage, BaseAgent
from akgentic.agent.accounting import PrefixCacheRules, PromptAccountingEvent
from akgentic.agent.config import CompactionConfig
from akgentic.agent.cut import CANCEL_NOTE, CUT_NOTE
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import ActorSystem, CancelMessage, EventMessage, UserMessage, WarningMessage
from akgentic.llm import (
    ContextReplacedEvent,
    LlmMessageEvent,
    LlmUsageEvent,
    ModelRoster,
    asks_for_summary,
    summary_prompt,
    without_summary_ask,
)

from ..core.conftest import Team
from .conftest import Respond, Script
from .test_base_agent import Calc, start

WINDOW = ModelRoster.from_spec("scripted:default", context_length=1000)
"""A 1,000-token window: a reply to N messages reports 100 * N input tokens."""


def is_summary(info: AgentInfo) -> bool:
    """A summary's request: the only one the agent sends with tool calls refused."""
    return (info.model_settings or {}).get("tool_choice") == "none"


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


def test_a_compact_of_a_history_that_is_all_kept_says_so_and_changes_nothing(
    system: ActorSystem, team: Team
) -> None:
    """Every message is in the recent part compaction keeps: no summary is asked for, no
    replacement recorded, and the reply says why (not "Compacted 2 messages into 2")."""
    script = Script(sized)
    agent = start(system, team, script, models=WINDOW, compaction=CompactionConfig(keep_last=6))
    ask(system, agent, "round 0")
    reply = ask(system, agent, "/compact")
    assert reply == (
        "Nothing to compact: the 2 messages are the recent part compaction keeps "
        "(keep_last 6, more to keep a tool call with its result)."
    )
    assert summaries(script) == 0
    replaced = [
        m for m in team.recorder.of_type(EventMessage) if isinstance(m.event, ContextReplacedEvent)
    ]
    assert replaced == []


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
    usage`` adds up), of kind ``summary`` and numbered among them; it is modelled on the
    turns' prefix — a hit on what the turn before it read, only its ask unread — and the
    turn after it is still compared with the turn before it."""
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
    # the turns' tools, system prompt and history, then its ask: all but the ask cached
    assert {p.channel for p in summary.parts} == {
        "tool_call",
        "system_prompt",
        "history",
        "message",
    }
    assert summary.tool_schema_tokens == before.tool_schema_tokens > 0
    assert summary.cache_status == "hit" and summary.breaker is not None
    assert before.input_tokens > summary.cached_tokens > before.tool_schema_tokens
    unread = [(p.channel, p.cached) for p in summary.parts if p.cached < p.tokens]
    assert unread == [("message", 0)]
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
        if is_summary(info):  # what the request carries before its ask, as text
            prompts.append(summary_prompt(without_summary_ask(messages)))
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
    assert "round 7" not in prompts[1]  # kept as it is: not summarised
    assert "round 6" in prompts[1]  # the latest of what is summarised


def summary_prompts(script: Script) -> list[str]:
    """What each summary request the model was sent carries before its ask, as text."""
    prompts = []
    for seen, info in zip(script.seen, script.infos, strict=True):
        if is_summary(info):
            assert asks_for_summary(seen[-1])
            prompts.append(summary_prompt(without_summary_ask(seen)))
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


# -- a compaction within a turn ---------------------------------------------------------------


def adding(calls: int) -> Respond:
    """A turn of ``calls`` tool round trips, then an answer; each request reports 100 input
    tokens a message it was sent, a summary 7 in and 3 out."""
    made = [0]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info):
            return ModelResponse(
                parts=[TextPart(f"SUMMARY-{made[0]}")],
                usage=RequestUsage(input_tokens=7, output_tokens=3),
            )
        usage = RequestUsage(input_tokens=100 * len(messages), output_tokens=1)
        if made[0] == calls:
            return ModelResponse(parts=[TextPart(f"done after {calls} calls")], usage=usage)
        made[0] += 1
        return ModelResponse(parts=[ToolCallPart("add", {"a": made[0], "b": 1})], usage=usage)

    return respond


def logged_context(team: Team) -> list[ModelMessage]:
    """The agent's context as a resume rebuilds it: its last replacement, then every run
    recorded after it."""
    context: list[ModelMessage] = []
    for message in team.recorder.of_type(EventMessage):
        if isinstance(message.event, ContextReplacedEvent):
            context = message.event.to_messages()
        elif isinstance(message.event, LlmMessageEvent):
            context += message.event.to_messages()
    return context


def same(a: list[ModelMessage], b: list[ModelMessage]) -> bool:
    return ModelMessagesTypeAdapter.dump_json(a) == ModelMessagesTypeAdapter.dump_json(b)


def test_a_long_turn_is_compacted_between_its_requests_and_goes_on(
    system: ActorSystem, team: Team, caplog: pytest.LogCaptureFixture
) -> None:
    """One turn of eight tool round trips fills half the window three times over: each time,
    the history is summarised before the next request (the summary chaining the one before),
    the turn goes on to its answer, the system prompt stays as it was, the summaries' usage
    is the turn's, and the log rebuilds exactly the context the agent ends with."""
    script = Script(adding(8))
    agent = start(
        system,
        team,
        script,
        tools=[Calc()],
        models=WINDOW,
        compaction=CompactionConfig(threshold=0.5, keep_last=2),
    )
    assert ask(system, agent, "add a lot") == "done after 8 calls"
    assert summaries(script) == 3
    turn = [
        seen for seen, info in zip(script.seen, script.infos, strict=True) if not is_summary(info)
    ]
    # each request that would have held 7 messages (past half the window) holds 3
    assert [len(seen) for seen in turn] == [1, 3, 5, 3, 5, 3, 5, 3, 5]
    assert len({info.instructions for info in script.infos if not is_summary(info)}) == 1
    prompts = summary_prompts(script)
    assert prompts[0].startswith("Message from @External:\nadd a lot")
    assert prompts[1].startswith("SUMMARY-3\n") and prompts[2].startswith("SUMMARY-5\n")
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    head = history[0]
    assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)
    assert head.parts[0].content == "SUMMARY-7"
    [usage] = [
        m.event
        for m in team.recorder.wait_for_type(
            EventMessage, where=lambda m: isinstance(m.event, LlmUsageEvent)
        )
        if isinstance(m.event, LlmUsageEvent)
    ]
    assert usage.requests == 9 + 3  # the turn's and its summaries'
    assert usage.input_tokens == 100 * sum(len(seen) for seen in turn) + 3 * 7
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, LlmMessageEvent))
    kinds = [
        type(m.event)
        for m in team.recorder.of_type(EventMessage)
        if isinstance(m.event, ContextReplacedEvent | LlmMessageEvent)
    ]
    assert kinds == [ContextReplacedEvent, LlmMessageEvent]
    assert same(logged_context(team), history)
    accounted = [
        m.event
        for m in team.recorder.of_type(EventMessage)
        if isinstance(m.event, PromptAccountingEvent)
    ]
    # each of the turn's requests, as sent, and each summary's, accounted as one
    assert [a.kind for a in accounted].count("turn") == 9
    assert [a.kind for a in accounted].count("summary") == 3
    assert [a.request for a in accounted] == list(range(1, 13))  # one numbering
    assert team.recorder.of_type(WarningMessage) == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_compaction_within_a_turn_is_not_repeated_on_the_counts_its_summary_made_stale(
    system: ActorSystem, team: Team
) -> None:
    """The responses a compaction within a turn keeps still carry the input counts of the
    history before the summary (pydantic-ai requires the kept tail unchanged). A provider
    that reports no usage after it leaves those stale counts the latest ones: they must not
    measure the compacted history, or every later step would be compacted again."""
    reported = [True]
    inner = adding(8)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        response = inner(messages, info)
        if is_summary(info):
            reported[0] = False  # from here on, the provider reports no usage
        elif not reported[0]:
            response.usage = RequestUsage(output_tokens=1)  # no input count
        return response

    script = Script(respond)
    agent = start(
        system,
        team,
        script,
        tools=[Calc()],
        models=WINDOW,
        compaction=CompactionConfig(threshold=0.5, keep_last=2),
    )
    assert ask(system, agent, "add a lot") == "done after 8 calls"
    assert summaries(script) == 1  # the short histories after it are estimated: far from full


def test_a_request_the_model_refuses_for_its_window_is_compacted_and_sent_again(
    system: ActorSystem, team: Team
) -> None:
    """The window is not known (no ``context_length``): when the model refuses a request
    for exceeding it, the history is compacted and the request sent once more."""
    inner = adding(6)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not is_summary(info) and len(messages) > 6:
            raise ModelContextWindowExceededError("script", "context_length_exceeded")
        return inner(messages, info)

    script = Script(respond)
    agent = start(system, team, script, tools=[Calc()], compaction=CompactionConfig(keep_last=2))
    assert ask(system, agent, "add a lot") == "done after 6 calls"
    assert summaries(script) == 2
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, LlmMessageEvent))
    assert same(logged_context(team), history)


def test_a_turn_past_the_window_without_compaction_fails_saying_what_to_do(
    system: ActorSystem, team: Team
) -> None:
    inner = adding(6)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) > 3:
            raise ModelContextWindowExceededError("script", "context_length_exceeded")
        return inner(messages, info)

    agent = start(
        system, team, Script(respond), tools=[Calc()], compaction=CompactionConfig(enabled=False)
    )
    system.tell(agent, UserMessage(content="add a lot"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "failed"
    error = ended.event.error
    assert error is not None and "\n" not in error
    assert "exceeds the model's context window" in error
    assert "/compact" in error and "context_length" in error


def test_a_summary_that_fails_within_a_turn_leaves_the_turn_to_go_on(
    system: ActorSystem, team: Team
) -> None:
    """The summary asked for within the turn times out: a warning says so, the turn goes on
    with the whole history, and it does not ask again (it would fail at each step alike)."""
    inner = adding(6)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info):
            raise TimeoutError("the summary took too long")
        return inner(messages, info)

    script = Script(respond)
    agent = start(
        system,
        team,
        script,
        tools=[Calc()],
        models=WINDOW,
        compaction=CompactionConfig(threshold=0.5, keep_last=2),
    )
    assert ask(system, agent, "add a lot") == "done after 6 calls"
    assert summaries(script) == 1
    [warning] = team.recorder.wait_for_type(WarningMessage)
    assert "compaction within this turn (threshold) failed" in str(warning.content)
    assert "the summary took too long" in str(warning.content)
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    assert len(history) == 14  # all of it
    assert not any(isinstance(p, CompactionPart) for m in history for p in m.parts)


def test_a_turn_cut_after_a_compaction_within_it_keeps_the_compacted_history(
    system: ActorSystem, team: Team
) -> None:
    """A cancel arrives after the second turn compacted within it: the turn stops at the
    next step boundary and keeps its completed steps after the summary (the first turn
    summarised with the rest), and the log says so exactly."""
    inner = adding(8)
    agent: list[Any] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[TextPart("hello")], usage=RequestUsage(input_tokens=100))
        head = messages[0].parts[0]
        if not is_summary(info) and isinstance(head, CompactionPart) and len(messages) == 5:
            system.tell(agent[0], CancelMessage(reason="enough"))  # seen at the next boundary
        return inner(messages, info)

    script = Script(respond)
    agent.append(
        start(
            system,
            team,
            script,
            tools=[Calc()],
            models=WINDOW,
            compaction=CompactionConfig(threshold=0.5, keep_last=2),
        )
    )
    assert ask(system, agent[0], "hi") == "hello"
    assert ask(system, agent[0], "add a lot") == "The run was cancelled."
    assert summaries(script) == 1
    assert "hi" in summary_prompts(script)[0]  # the first turn is in the summary
    history = system.proxy_ask(agent[0], BaseAgent, timeout=30).get_history()
    head = history[0]
    assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)
    assert isinstance(history[-1], ModelResponse) and history[-1].text == CANCEL_NOTE
    team.recorder.wait_for_type(
        EventMessage, 2, where=lambda m: isinstance(m.event, LlmMessageEvent)
    )
    assert same(logged_context(team), history)


def test_an_interrupt_cuts_a_summary_within_a_turn_and_the_turn_keeps_its_steps(
    system: ActorSystem, team: Team
) -> None:
    """The team stops while the summary asked for within a turn is in flight: the summary's
    request is cut as the turn's own would be, nothing is compacted, and the turn keeps its
    completed steps (interrupted, for a resume to offer again)."""
    inner = adding(8)
    agent: list[Any] = []

    async def stalled() -> ModelResponse:
        system.tell(agent[0], CancelMessage(reason="Ctrl-C", interrupt=True))
        await asyncio.get_running_loop().create_future()  # never answered: the cut ends it
        raise AssertionError("the summary's request was not cut")

    def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        return stalled() if is_summary(info) else inner(messages, info)

    script = Script(respond)
    agent.append(
        start(
            system,
            team,
            script,
            tools=[Calc()],
            models=WINDOW,
            compaction=CompactionConfig(threshold=0.5, keep_last=2),
        )
    )
    system.tell(agent[0], UserMessage(content="add a lot"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent) and ended.event.outcome == "interrupted"
    assert summaries(script) == 1
    history = system.proxy_ask(agent[0], BaseAgent, timeout=30).get_history()
    assert not any(isinstance(p, CompactionPart) for m in history for p in m.parts)
    assert len(history) == 8  # the prompt, three round trips, the closing word
    assert isinstance(history[-1], ModelResponse) and history[-1].text == CUT_NOTE
    assert not any(
        isinstance(m.event, ContextReplacedEvent) for m in team.recorder.of_type(EventMessage)
    )
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, LlmMessageEvent))
    assert same(logged_context(team), history)


def test_a_turn_cut_after_a_compaction_within_it_records_only_its_own_messages(
    system: ActorSystem, team: Team
) -> None:
    """The summary within the turn keeps an earlier turn's message in its tail: a cut turn
    records that tail with the replacement, as a completed turn does, not as its own
    messages (nor its usage under the earlier run's id); the log rebuilds the context."""
    inner = adding(8)
    agent: list[Any] = []
    cancelled = [False]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[TextPart("hello")], usage=RequestUsage(input_tokens=100))
        head = messages[0].parts[0]
        if not is_summary(info) and isinstance(head, CompactionPart) and not cancelled[0]:
            cancelled[0] = True
            system.tell(agent[0], CancelMessage(reason="enough"))  # seen at the next boundary
        return inner(messages, info)

    script = Script(respond)
    agent.append(
        start(
            system,
            team,
            script,
            tools=[Calc()],
            models=WINDOW,
            compaction=CompactionConfig(threshold=0.5, keep_last=6),
        )
    )
    assert ask(system, agent[0], "hi") == "hello"
    assert ask(system, agent[0], "add a lot") == "The run was cancelled."
    assert summaries(script) == 1
    history = system.proxy_ask(agent[0], BaseAgent, timeout=30).get_history()
    assert isinstance(history[0].parts[0], CompactionPart)
    assert isinstance(history[1], ModelResponse) and history[1].text == "hello"  # kept
    [first, second] = team.recorder.wait_for_type(
        EventMessage, 2, where=lambda m: isinstance(m.event, LlmMessageEvent)
    )
    assert second.event.run_id != first.event.run_id
    own = second.event.to_messages()
    # the cut's own closing (its note, a closed-out call) carries no run id
    assert {m.run_id for m in own} - {None} == {second.event.run_id}
    assert not any(isinstance(m, ModelResponse) and m.text == "hello" for m in own)
    assert same(logged_context(team), history)
