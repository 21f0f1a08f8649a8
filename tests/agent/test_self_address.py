"""An AgentReply addressed to the agent itself: refused in-run, never a turn of its own."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, Akgent, BaseConfig, UserMessage, WarningMessage

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent


def reply_to(name: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0].name
        sent = [{"to": name, "content": "keep going", "type": "request"}]
        return ModelResponse(parts=[ToolCallPart(tool, {"messages": sent})])

    return respond


@pytest.mark.parametrize("name", ["@Agent", "Agent"])
def test_a_message_to_itself_is_refused_and_the_model_told_why(
    system: ActorSystem, team: Team, name: str
) -> None:
    """A model that writes to itself would start a turn of its own, which could write to
    itself again, for ever: the output validator refuses it and the model retries."""
    script = Script(reply_to(name), reply_to("@External"))
    cls: type[BaseAgent] = type("TestAgent", (ScriptedAgent,), {"script": script})
    agent = system.createActor(
        cls,
        config=AgentConfig(name="@Agent", role="Assistant", stream_events=False),
        team_id=team.team_id,
    )
    with system.private() as context:
        context.tell(agent, UserMessage(content="work on it"))
        reply = context.listen(30)
    assert isinstance(reply, AgentMessage) and reply.content == "keep going"
    assert len(script.seen) == 2  # one refused output, one retry; no turn of its own
    retry = str(script.seen[1][-1])
    assert f"{name} is you" in retry
    assert system.ask(agent, UserMessage(content="/help stop"), timeout=30) is not None
    assert len(script.seen) == 2


def test_a_message_to_a_tool_actor_is_refused_and_the_model_told_why(
    system: ActorSystem, team: Team
) -> None:
    """A ``#`` tool actor is called through its tools, never written to: an AgentMessage
    would reach no handler (a warning for the person, nothing done)."""
    system.createActor(Akgent, config=BaseConfig(name="#Ledger", role="Tool"), team_id=team.team_id)
    script = Script(reply_to("#Ledger"), reply_to("@External"))
    cls: type[BaseAgent] = type("TestAgent", (ScriptedAgent,), {"script": script})
    agent = system.createActor(
        cls,
        config=AgentConfig(name="@Agent", role="Assistant", stream_events=False),
        team_id=team.team_id,
    )
    with system.private() as context:
        context.tell(agent, UserMessage(content="record it"))
        reply = context.listen(30)
    assert isinstance(reply, AgentMessage) and reply.content == "keep going"
    retry = str(script.seen[1][-1])
    assert "#Ledger is one of the team's tools" in retry
    assert not [m for m in team.recorder.messages if isinstance(m, WarningMessage)]
