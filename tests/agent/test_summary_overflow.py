"""A summary on the agent's prefix carries the history up to the cut, which can itself exceed
the model's window (a turn the model refused for its window compacts through it). The summary
is then written the bounded way: its own short instructions, the conversation as text at most
``SUMMARY_PROMPT_CHARS`` long, no tools — once, and accounted as a summary on its own prefix."""

from __future__ import annotations

from pydantic_ai.exceptions import ModelContextWindowExceededError
from pydantic_ai.messages import CompactionPart, ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RequestUsage

from akgentic.agent import BaseAgent
from akgentic.agent.accounting import PromptAccountingEvent
from akgentic.agent.config import CompactionConfig
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import ActorSystem, EventMessage, UserMessage, WarningMessage
from akgentic.llm import SUMMARY_INSTRUCTIONS, ModelRoster, asks_for_summary, estimate_tokens

from ..core.conftest import Team
from .conftest import Script
from .test_base_agent import Calc, start
from .test_compaction_lifecycle import adding, ask, is_summary


def is_bounded(info: AgentInfo) -> bool:
    """The bounded summary's request: its own instructions, no tool definition."""
    return info.instructions == SUMMARY_INSTRUCTIONS


LIMIT = 8_000
"""The window of ``refusing_past``'s model in the test, in estimated tokens."""

LONG = "add these: " + "x" * 4 * 7_970
"""A prompt that nearly fills ``LIMIT``: a few round trips later the turn's request exceeds
it, and so does the summary's on its prefix (the ask is longer than the tail kept)."""


def refusing_past(size: int, calls: int) -> Script:
    """A turn of ``calls`` tool round trips (``adding``) from a model that refuses, for its
    window, any request whose messages exceed ``size`` estimated tokens — a summary's on the
    prefix too."""
    inner = adding(calls)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if estimate_tokens(messages) > size:
            raise ModelContextWindowExceededError("script", "context_length_exceeded")
        if is_bounded(info):
            assert not info.function_tools and not info.output_tools
            return ModelResponse(
                parts=[TextPart("BOUNDED")], usage=RequestUsage(input_tokens=7, output_tokens=3)
            )
        return inner(messages, info)

    return Script(respond)


def summary_records(team: Team) -> list[PromptAccountingEvent]:
    return [
        m.event
        for m in team.recorder.of_type(EventMessage)
        if isinstance(m.event, PromptAccountingEvent) and m.event.kind == "summary"
    ]


def test_a_turn_past_the_window_compacts_through_the_bounded_summary(
    system: ActorSystem, team: Team
) -> None:
    """The window is not known: the turn's request is refused, the summary on its prefix
    (the history up to the cut, as many messages) is refused too, and the bounded summary
    (one message) is written instead — the turn goes on with it."""
    script = refusing_past(LIMIT, calls=6)
    agent = start(system, team, script, tools=[Calc()], compaction=CompactionConfig(keep_last=2))
    system.tell(agent, UserMessage(content=LONG))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent)
    assert (ended.event.outcome, ended.event.error) == ("completed", None)
    on_prefix = [
        seen for seen, info in zip(script.seen, script.infos, strict=True) if is_summary(info)
    ]
    bounded = [
        seen for seen, info in zip(script.seen, script.infos, strict=True) if is_bounded(info)
    ]
    assert len(on_prefix) == 1 and estimate_tokens(on_prefix[0]) > LIMIT  # refused
    assert len(bounded) == 1 and len(bounded[0]) == 1  # once: the conversation as text
    assert not team.recorder.of_type(WarningMessage)
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    head = history[0]
    assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)
    assert head.parts[0].content == "BOUNDED"
    # accounted as a summary on its own prefix: its own instructions, no tool, no history
    team.recorder.wait_for_type(
        EventMessage,
        where=lambda m: isinstance(m.event, PromptAccountingEvent) and m.event.kind == "summary",
    )
    [*_, record] = summary_records(team)
    channels = {(p.channel, p.card) for p in record.parts}
    assert ("system_prompt", "BaseAgent") in channels
    assert not any(channel in ("tool_call", "history") for channel, _ in channels)


def test_a_prefix_known_not_to_fit_the_window_is_summarised_bounded_directly(
    system: ActorSystem, team: Team
) -> None:
    """The window is known and the history up to the cut (and the ask) is estimated past
    it: no summary is asked on the prefix, the bounded one is."""
    script = refusing_past(10**9, calls=0)  # refuses nothing
    tiny = ModelRoster.from_spec("scripted:default", context_length=60)
    agent = start(
        system, team, script, models=tiny, compaction=CompactionConfig(enabled=False, keep_last=1)
    )
    for index in range(3):
        ask(system, agent, f"round {index} " + "words " * 20)  # 30 tokens each
    assert ask(system, agent, "/compact").startswith("Compacted")
    assert not any(is_summary(info) for info in script.infos)
    assert not any(asks_for_summary(seen[-1]) for seen in script.seen)
    assert sum(1 for info in script.infos if is_bounded(info)) == 1
