"""An agent holds itself to the team's ``max_agent_hops`` whoever writes: a reminder it set
itself (a ``#`` tool actor's message) does not start the count again — only a person does."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentHopLimitReached, AgentMessage
from akgentic.core import ActorAddress, ActorSystem, Akgent, BaseConfig, BaseState, UserMessage

from ..core.conftest import eventually, make_team
from .conftest import Script
from .test_base_agent import start, text


class Colleague(Akgent[BaseConfig, BaseState]):
    """A member that keeps what it is sent."""

    received: ClassVar[list[AgentMessage]] = []

    def receiveMsg_AgentMessage(self, msg: AgentMessage, sender: ActorAddress | None) -> None:
        type(self).received.append(msg)


def write_to_colleague(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    args = {"messages": [{"to": "@Colleague", "content": "and again"}]}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def test_a_reminder_goes_on_with_the_count_and_a_person_starts_it_again(
    system: ActorSystem,
) -> None:
    team = make_team(system, max_agent_hops=2)
    Colleague.received = []
    system.createActor(Colleague, config=BaseConfig(name="@Colleague"), team_id=team.team_id)
    script = Script(
        text("noted"),  # to the agent that wrote at 2: refused (3 > 2)
        text("reported"),  # told: to the person (none here)
        write_to_colleague,  # on the reminder: still past the bound, refused
        text("reported again"),
        write_to_colleague,  # on the person's message: sent, the first of a new count
    )
    agent: Any = start(system, team, script)
    with system.private("@Peer") as peer, system.private("#Clock") as clock:
        peer.tell(agent, AgentMessage(content="ping", agent_hops=2))
        clock.tell(agent, UserMessage(content="your reminder: write to @Colleague"))
        with system.private("@Human") as person:
            person.tell(agent, UserMessage(content="go on"))
            eventually(lambda: len(Colleague.received) == 1)
    assert Colleague.received[0].agent_hops == 1
    warnings = team.recorder.of_type(AgentHopLimitReached)
    assert [(w.limit, w.to) for w in warnings] == [(2, ["@Peer"]), (2, ["@Colleague"])]
