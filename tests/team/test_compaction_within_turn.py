"""A turn compacted within it resumes as it ended: the log records the compaction as a
replacement of the context followed by the turn's run, so a resume (and the working
memory) rebuild exactly the context the agent had, and the next turn goes on from it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import (
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.config import CompactionConfig
from akgentic.core import ActorSystem, AgentCard
from akgentic.llm import ModelRoster, asks_for_summary, register_model
from akgentic.storage import open_storage
from akgentic.team import MemberSpec, TeamCard, TeamManager, TeamRuntime
from akgentic.tool.core import ToolCard

from .conftest import answer


class Adder(ToolCard):
    """Adds two numbers."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        return [add]


def adding(seen: list[list[ModelMessage]]) -> FunctionModel:
    """Eight tool round trips for the first prompt, then an answer; a text answer to any
    later one. Each request reports 100 input tokens a message; ``seen`` gets them all."""
    made = [0]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if asks_for_summary(messages[-1]):
            return ModelResponse(parts=[TextPart(f"SUMMARY-{made[0]}")])
        seen.append(list(messages))
        usage = RequestUsage(input_tokens=100 * len(messages), output_tokens=1)
        if made[0] == 8:
            return ModelResponse(parts=[TextPart(f"{len(messages)} messages")], usage=usage)
        made[0] += 1
        return ModelResponse(parts=[ToolCallPart("add", {"a": made[0], "b": 1})], usage=usage)

    return FunctionModel(respond)


def card() -> TeamCard:
    config = AgentConfig(
        name="@A",
        role="A",
        models=ModelRoster.from_spec("registered:compacting", context_length=1000),
        compaction=CompactionConfig(threshold=0.5, keep_last=2),
        tools=[Adder()],
    )
    agent = AgentCard(role="A", agent_class=BaseAgent, config=config)
    return TeamCard(name="compacting", entry_point="@A", members=[MemberSpec(card=agent)])


def history(system: ActorSystem, runtime: TeamRuntime) -> list[Any]:
    member = runtime.member("@A")
    assert member is not None
    messages = system.proxy_ask(member, BaseAgent, timeout=30).get_history()
    dumped: list[Any] = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
    return dumped


def test_a_turn_compacted_within_it_resumes_with_the_context_it_ended_with(
    storage_url: str, system: ActorSystem
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    seen: list[list[ModelMessage]] = []
    try:
        with register_model("compacting", adding(seen)):
            runtime = manager.create_team(card())
            runtime.send("add a lot")
            seq, text = answer(runtime, 0)
            assert text == "5 messages"  # the turn went on, compacted
            ended = history(system, runtime)
            head = ended[0]
            assert head["parts"][0]["part_kind"] == "compaction"
            team_id = runtime.team_id
            member = runtime.member("@A")
            assert member is not None
            manager.stop_team(team_id)
            assert storage.working_memory.get(team_id, member.agent_id) == ended

            runtime = manager.resume_team(team_id)
            assert history(system, runtime) == ended
            runtime.send("and now?")
            _, text = answer(runtime, seq)
    finally:
        manager.shutdown()
    assert text.endswith(" messages")  # answered from the context the resume rebuilt
    first = seen[-1][0]
    assert isinstance(first, ModelRequest) and isinstance(first.parts[0], CompactionPart)
