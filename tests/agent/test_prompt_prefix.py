"""The prompt prefix as the model receives it, request after request: a turn whose prompt
never reached the history (its model request failed) leaves the context baselines as they
were, so the next turn's block is the delta since the last block the history carries — not
a full snapshot that sends every unchanged section again; a card's system prompt text
that was not there at start-up (team metadata set later) arrives once, on a later turn; and
the tools and the system prompt stay byte for byte the same through a plan change, a
compaction and a model switch."""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel
from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.config import CompactionConfig
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import ActorAddress, ActorSystem, EventMessage, Orchestrator, UserMessage
from akgentic.llm import ModelRoster, asks_for_summary, register_model
from akgentic.tool.core import ContextState, ToolCard
from akgentic.tool.metadata import MetadataTool, RenderMetadata
from akgentic.tool.model import ModelTool
from akgentic.tool.planning import PlanningTool

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent


class Gauge(ContextState):
    value: int = 0

    def render_full(self) -> str:
        return f"Gauge: {self.value}."

    def render_delta(self, previous: Gauge) -> str | None:
        return None if previous.value == self.value else f"Gauge now: {self.value}."


LEVEL = [1]
"""The gauge's value, set by the test (the agent holds a copy of its cards)."""


class Gauged(ToolCard):
    """A card whose context state is :data:`LEVEL`."""

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def gauge() -> ContextState | None:
            return Gauge(value=LEVEL[0])

        return [gauge]


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("ok")])


def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ConnectionError("the provider cannot be reached")


def turn(system: ActorSystem, team: Team, agent: ActorAddress, text: str, count: int) -> str:
    """Send ``text`` and wait for the ``count``-th turn to end; its outcome."""
    system.tell(agent, UserMessage(content=text))
    ended = team.recorder.wait_for_type(
        EventMessage, count, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    event = ended[count - 1].event
    assert isinstance(event, TurnEndedEvent)
    return event.outcome


def prompt_of(messages: list[ModelMessage]) -> str:
    """The turn's prompt: the last user prompt of a request."""
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    [part] = [p for p in request.parts if isinstance(p, UserPromptPart)]
    assert isinstance(part.content, str)
    return part.content


def test_a_failed_turn_does_not_turn_the_next_block_into_a_full_snapshot(
    system: ActorSystem, team: Team
) -> None:
    script = Script(reply, fail, reply)
    LEVEL[0] = 1
    cls = type("PrefixAgent", (ScriptedAgent,), {"script": script})
    agent = system.createActor(
        cls,
        config=AgentConfig(name="@Agent", role="Assistant", tools=[Gauged()], stream_events=False),
        team_id=team.team_id,
    )
    assert turn(system, team, agent, "one", 1) == "completed"
    LEVEL[0] = 2
    assert turn(system, team, agent, "two", 2) == "failed"
    assert turn(system, team, agent, "three", 3) == "completed"

    first, failed, third = (prompt_of(seen) for seen in script.seen)
    assert "**Context update 1**" in first and "Gauge: 1." in first
    assert "Team members:" in first
    assert "**Context update 2**" in failed and "Gauge now: 2." in failed
    # the failed turn's block is not in the history: the next one says it again, as a
    # delta against the block the history carries, and nothing that did not change
    assert prompt_of(script.seen[2]).endswith("**Context update 2**\n\nGauge now: 2.")
    assert "Team members:" not in third
    # the history the third request starts with is the first turn's, byte for byte
    assert script.seen[2][: len(script.seen[0]) + 1] == [*script.seen[0], script.seen[2][1]]


class Engagement(BaseModel):
    client: str


def test_team_metadata_set_after_start_reaches_the_prompt_once_on_a_later_turn(
    system: ActorSystem, team: Team
) -> None:
    """Seed 004: a degraded metadata render caches nothing, so metadata that arrives just
    after start-up still produces its block on a later turn; once rendered, the block is a
    snapshot — a later set_metadata leaves the prompt as it is."""
    script = Script(reply)
    cls = type("MetadataAgent", (ScriptedAgent,), {"script": script})
    agent = system.createActor(
        cls,
        config=AgentConfig(
            name="@Agent",
            role="Assistant",
            tools=[MetadataTool(render_metadata=RenderMetadata(template="Client: {client}."))],
            stream_events=False,
        ),
        team_id=team.team_id,
    )
    orchestrator = system.proxy_ask(team.orchestrator, Orchestrator, timeout=10)
    assert turn(system, team, agent, "one", 1) == "completed"
    orchestrator.set_metadata(Engagement(client="Acme"))
    assert turn(system, team, agent, "two", 2) == "completed"
    orchestrator.set_metadata(Engagement(client="Globex"))
    assert turn(system, team, agent, "three", 3) == "completed"

    first, second, third = (info.instructions or "" for info in script.infos)
    assert "Client:" not in first
    assert second.endswith("Client: Acme.") and second.startswith(first)
    assert third == second  # the snapshot holds
    assert system.proxy_ask(agent, BaseAgent, timeout=10).get_system_prompt() == second


def prefix(info: AgentInfo) -> tuple[str, list[str]]:
    """What a request puts before its messages: the instructions, and each tool
    definition (function tools, then output tools) as it is sent, in order."""
    tools = [
        json.dumps([t.name, t.description, t.parameters_json_schema, t.strict])
        for t in [*info.function_tools, *info.output_tools]
    ]
    return info.instructions or "", tools


def test_the_prefix_is_the_same_across_a_compaction_a_model_switch_and_a_plan_change(
    system: ActorSystem, team: Team
) -> None:
    """Tools then system prompt, byte for byte, on every request of a session that
    changes the plan (a tool call), compacts (``/compact``: only the messages change) —
    also first of all, on the context a resume rebuilds, before any turn of the process —
    switches model and back: the volatile state reaches the model at the tail only."""
    plan = {"items": [{"op": "create", "title": "Write the report"}]}

    def planning(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("update_planning", plan)])

    script = Script(reply, reply, planning, reply)  # the summary, "one", "plan"...
    alpha = register_model("prefix-alpha", FunctionModel(script, model_name="alpha"))
    beta = register_model("prefix-beta", FunctionModel(script, model_name="beta"))
    try:
        config = AgentConfig(
            name="@Agent",
            role="Assistant",
            models=ModelRoster(models=["registered:prefix-alpha", "registered:prefix-beta"]),
            tools=[PlanningTool(), ModelTool(), Gauged()],
            compaction=CompactionConfig(keep_last=2),
            stream_events=False,
        )
        agent = system.createActor(BaseAgent, config=config, team_id=team.team_id)
        resumed = [  # the context a resume rebuilds: no turn ran in this process
            ModelRequest(parts=[UserPromptPart("Message from @Human:\nearlier")]),
            ModelResponse(parts=[TextPart("noted")]),
            ModelRequest(parts=[UserPromptPart("Message from @Human:\nand then")]),
            ModelResponse(parts=[TextPart("noted")]),
        ]
        system.proxy_ask(agent, BaseAgent, timeout=30).restore_history(resumed)
        texts = ["/compact", "one", "plan", "three", "four", "/compact", "five"]
        texts += ["/switch_model registered:prefix-beta", "six"]
        texts += ["/switch_model registered:prefix-alpha", "seven"]
        for level, text in enumerate(texts):
            LEVEL[0] = level  # the gauge's state changes at every turn
            system.ask(agent, UserMessage(content=text), timeout=30)
    finally:
        alpha.unregister()
        beta.unregister()
    pairs = zip(script.seen, script.infos, strict=True)
    turns = [info for seen, info in pairs if not asks_for_summary(seen[-1])]
    assert len(turns) == 8 and len(script.infos) == 10  # and two summaries, on the same prefix
    assert asks_for_summary(script.seen[0][-1])  # the first request: before any turn
    assert all(prefix(info) == prefix(turns[0]) for info in script.infos)  # the summaries' too
    assert len(prefix(turns[0])[1]) > 0
    compacted = script.seen[7]  # "five": the history starts with the summary
    assert isinstance(compacted[0].parts[0], CompactionPart)
    assert "Gauge now: 10." in prompt_of(script.seen[-1])  # the state, at the tail
