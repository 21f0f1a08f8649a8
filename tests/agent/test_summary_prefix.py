"""A compaction's summary is asked on the agent's own prefix: the request that writes it
carries the turns' instructions and tool definitions byte for byte, the history as the
turns sent it, and one last message asking for the summary — so a provider's cache of the
turns' prefix serves it. Tool calls are refused for it; a reply that makes one all the same
is a failed summary that changes nothing."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel
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
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo
from pydantic_ai.usage import RequestUsage

from akgentic.agent import BaseAgent
from akgentic.agent.config import CompactionConfig
from akgentic.core import ActorSystem, Orchestrator, WarningMessage
from akgentic.llm import SUMMARY_ASK, asks_for_summary
from akgentic.tool.metadata import MetadataTool, RenderMetadata
from akgentic.tool.planning import PlanningTool
from akgentic.tool.toolsets import ToolsetCard

from ..core.conftest import Team
from .conftest import Script
from .test_base_agent import Calc, start
from .test_compaction_lifecycle import WINDOW, ask, is_summary
from .test_compaction_lifecycle import adding as lifecycle_adding
from .test_toolsets import MEDIA_TOOLS, Films


def tool_defs(info: AgentInfo) -> str:
    """Every tool definition a request sends, in wire order, as JSON (kind aside: a
    definition's kind is pydantic-ai's bookkeeping, never sent)."""
    return json.dumps(
        [
            [t.name, t.description, t.parameters_json_schema, t.strict]
            for t in [*info.function_tools, *info.output_tools]
        ]
    )


def wire(messages: list[ModelMessage]) -> bytes:
    return ModelMessagesTypeAdapter.dump_json(messages)


def adding(summary: ModelResponse) -> Script:
    """A tool round trip for a prompt that says "add", a text answer to any other;
    ``summary`` answers a summary's request. Each reports 100 input tokens a message."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info):
            return summary
        usage = RequestUsage(input_tokens=100 * len(messages))
        last = messages[-1]
        if any(isinstance(p, ToolReturnPart) for p in last.parts):
            return ModelResponse(parts=[TextPart("the sum is in")], usage=usage)
        prompt = next(p for p in last.parts if isinstance(p, UserPromptPart))
        if "add" in str(prompt.content):
            return ModelResponse(parts=[ToolCallPart("add", {"a": 20, "b": 22})], usage=usage)
        return ModelResponse(parts=[TextPart(f"answer to {len(messages)}")], usage=usage)

    return Script(respond)


@pytest.mark.parametrize("trigger", ["/compact", "before a turn"])
def test_a_summary_request_is_the_turns_prefix_and_one_ask(
    system: ActorSystem, team: Team, trigger: str
) -> None:
    script = adding(ModelResponse(parts=[TextPart("SUMMARY")]))
    threshold = 0.3 if trigger == "before a turn" else 0.99
    agent = start(
        system,
        team,
        script,
        tools=[Calc()],
        models=WINDOW,
        compaction=CompactionConfig(threshold=threshold, keep_last=1),
    )
    ask(system, agent, "add 20 and 22")
    ask(system, agent, "thanks")
    if trigger == "/compact":
        assert ask(system, agent, "/compact").startswith("Compacted")
    else:
        ask(system, agent, "more")
    at = next(i for i, info in enumerate(script.infos) if is_summary(info))
    turn, summary = script.infos[at - 1], script.infos[at]
    turn_seen, summary_seen = script.seen[at - 1], script.seen[at]
    assert summary.instructions == turn.instructions and turn.instructions
    assert tool_defs(summary) == tool_defs(turn)
    assert (summary.model_settings or {}).get("tool_choice") == "none"
    # the history the turn sent, then the ask (after the last message kept of the older part)
    last = summary_seen[-1]
    assert asks_for_summary(last)
    assert isinstance(last, ModelRequest) and last.parts[-1] == UserPromptPart(
        SUMMARY_ASK, timestamp=last.parts[-1].timestamp
    )
    before_ask = summary_seen[:-1]
    assert wire(before_ask) == wire(turn_seen[: len(before_ask)])
    assert len(before_ask) >= 1
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    head = history[0]
    assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)
    assert head.parts[0].content == "SUMMARY"


def test_a_summary_reply_calling_a_tool_is_a_failed_summary(
    system: ActorSystem, team: Team
) -> None:
    """The model calls a tool instead of summarising: nothing is called, the history stays
    as it was, and the warning says what happened in one line."""
    script = adding(ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})]))
    agent = start(
        system,
        team,
        script,
        tools=[Calc()],
        models=WINDOW,
        compaction=CompactionConfig(threshold=0.3, keep_last=1),
    )
    ask(system, agent, "add 20 and 22")
    before = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    assert ask(system, agent, "thanks").startswith("answer to")  # the turn went on
    assert any(is_summary(info) for info in script.infos)
    [warning] = team.recorder.wait_for_type(WarningMessage)
    content = str(warning.content)
    assert "compaction before this turn failed" in content and "tool call (add)" in content
    assert "\n" not in content
    after = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    assert wire(after[: len(before)]) == wire(before)  # uncompacted: the turn added to it
    assert not any(isinstance(p, CompactionPart) for m in after for p in m.parts)
    calls = [p for m in after for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(calls) == 1  # the summary's call was never run


def test_a_summary_within_a_turn_sends_the_turns_instructions_and_tools_byte_for_byte(
    system: ActorSystem, team: Team
) -> None:
    """The turn's history fills the window between two of its requests: the summary asked
    within the run carries the instructions and tool definitions of the run's request
    before it, unchanged, so the provider's cached prefix serves it."""
    script = Script(lifecycle_adding(6))
    agent = start(
        system,
        team,
        script,
        tools=[Calc()],
        models=WINDOW,
        compaction=CompactionConfig(threshold=0.5, keep_last=2),
    )
    assert ask(system, agent, "add a lot") == "done after 6 calls"
    at = next(i for i, info in enumerate(script.infos) if is_summary(info))
    assert at > 1  # within the run: after its first requests
    turn, summary = script.infos[at - 1], script.infos[at]
    assert summary.instructions is not None
    assert summary.instructions.encode() == (turn.instructions or "").encode()
    assert tool_defs(summary).encode() == tool_defs(turn).encode()
    assert "add" in [t.name for t in summary.function_tools]
    assert asks_for_summary(script.seen[at][-1])


class Engagement(BaseModel):
    client: str


def test_a_compact_before_any_turn_of_the_process_sends_the_next_turns_prefix(
    system: ActorSystem, team: Team
) -> None:
    """A resume's first act is often ``/compact``, before any turn of the process: its
    summary request carries the instructions and tool definitions of the next turn's
    request byte for byte — the agent's tools, the toolset switches (an inactive set's
    tools left out, as a turn leaves them), the output tool, and the team metadata set
    since start-up, which the next turn's system prompt takes in — so the provider's
    cache of the turns' prefix serves it, and the next turn shares its prefix."""
    script = adding(ModelResponse(parts=[TextPart("SUMMARY")]))
    media = ToolsetCard(name="media", description="Films: search and details", cards=[Films()])
    client = MetadataTool(render_metadata=RenderMetadata(template="Client: {client}."))
    agent = start(
        system,
        team,
        script,
        tools=[Calc(), PlanningTool(), media, client],
        models=WINDOW,
        compaction=CompactionConfig(threshold=0.99, keep_last=1),
    )
    resumed = [  # the context a resume rebuilds: no turn ran in this process
        ModelRequest(parts=[UserPromptPart("Message from @Human:\nhello")]),
        ModelResponse(parts=[TextPart("hi")]),
        ModelRequest(parts=[UserPromptPart("Message from @Human:\nthanks")]),
        ModelResponse(parts=[TextPart("welcome")]),
    ]
    system.proxy_ask(agent, BaseAgent, timeout=30).restore_history(resumed)
    orchestrator = system.proxy_ask(team.orchestrator, Orchestrator, timeout=10)
    orchestrator.set_metadata(Engagement(client="Acme"))
    assert ask(system, agent, "/compact").startswith("Compacted")
    assert ask(system, agent, "go on").startswith("answer to")
    summary, turn = script.infos
    assert is_summary(summary) and not is_summary(turn)
    assert asks_for_summary(script.seen[0][-1])
    assert "Client: Acme." in (turn.instructions or "")
    assert (summary.instructions or "").encode() == (turn.instructions or "").encode()
    assert tool_defs(summary).encode() == tool_defs(turn).encode()
    names = [t.name for t in [*summary.function_tools, *summary.output_tools]]
    assert {"add", "update_planning", "enable_toolset", "final_result"} <= set(names)
    assert not set(MEDIA_TOOLS) & set(names)


def test_a_first_request_of_the_process_refused_for_its_window_summarises_on_its_prefix(
    system: ActorSystem, team: Team
) -> None:
    """The first turn of the process (a resume's) is refused for its window at its first
    request: the summary asked within the run, before any request of the process was
    answered, carries that request's instructions and tool definitions byte for byte."""
    refused: list[bool] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if is_summary(info):
            return ModelResponse(parts=[TextPart("SUMMARY")])
        if not refused:
            refused.append(True)
            raise ModelContextWindowExceededError("script", "context_length_exceeded")
        return ModelResponse(parts=[TextPart("answered")])

    script = Script(respond)
    agent = start(
        system,
        team,
        script,
        tools=[Calc(), PlanningTool()],
        compaction=CompactionConfig(keep_last=1),
    )
    resumed = [
        ModelRequest(parts=[UserPromptPart("Message from @Human:\nhello")]),
        ModelResponse(parts=[TextPart("hi")]),
    ]
    system.proxy_ask(agent, BaseAgent, timeout=30).restore_history(resumed)
    assert ask(system, agent, "go on") == "answered"
    turn, summary, again = script.infos
    assert is_summary(summary) and not is_summary(turn) and not is_summary(again)
    assert (summary.instructions or "").encode() == (turn.instructions or "").encode()
    assert tool_defs(summary).encode() == tool_defs(turn).encode() == tool_defs(again).encode()
    assert "update_planning" in tool_defs(summary)
