"""A message the model absorbed into its run (``read_mailbox``) lives or dies with that run:
processed when the run is kept, given back to the inbox when it is not."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentMessage
from akgentic.core import ActorSystem, UserMessage
from akgentic.tool.core import ToolCard

from ..core.conftest import Team
from .conftest import Script
from .test_base_agent import call, start, text


def held(entered: threading.Event, release: threading.Event) -> ToolCard:
    """A card whose ``wait`` holds the turn until the test has sent what must arrive
    mid-run."""

    class Held(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def wait() -> str:
                """Wait for the release."""
                entered.set()
                release.wait(30)
                return "released"

            return [wait]

    return Held()


def provider_down(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise RuntimeError("the provider is down")


def test_a_message_absorbed_into_a_run_that_failed_is_taken_as_a_turn_of_its_own(
    system: ActorSystem, team: Team
) -> None:
    """Before, the failed run's absorbed message was taken out of the inbox and marked
    processed by the next run: its sender never had an answer."""
    entered, release = threading.Event(), threading.Event()
    later = AgentMessage(content="also this, please")
    script = Script(
        call("wait"),
        call("read_mailbox", message_id=str(later.id)),  # absorbs it into this run
        provider_down,  # the run fails after the absorption
        text("answered on its own"),
    )
    agent = start(system, team, script, tools=[held(entered, release)])
    with system.private() as asker, system.private() as colleague:
        asker.tell(agent, UserMessage(content="go"))
        assert entered.wait(30)
        colleague.tell(agent, later)  # arrives while the first turn runs
        release.set()
        answer = colleague.listen(30)
    assert isinstance(answer, AgentMessage) and answer.content == "answered on its own"
    absorbed = [m for m in script.seen[2] if "also this, please" in str(m)]
    assert absorbed  # the failed run did absorb it
    assert "also this, please" in str(script.seen[3][-1])  # then it came as its own prompt


def test_an_answer_counts_its_hops_from_the_longest_chain_the_run_absorbed(
    system: ActorSystem, team: Team
) -> None:
    """The run answers the message it absorbed too: what it sends is one message between
    agents more than the longer of the two chains (``AgentMessage.agent_hops``), so agents
    cannot start the count again by writing to one another mid-run."""
    entered, release = threading.Event(), threading.Event()
    later = AgentMessage(content="also this, please", agent_hops=7)
    script = Script(
        call("wait"),
        call("read_mailbox", message_id=str(later.id)),
        text("both done"),
    )
    agent = start(system, team, script, tools=[held(entered, release)])
    with system.private() as asker, system.private() as colleague:
        asker.tell(agent, AgentMessage(content="go", agent_hops=2))
        assert entered.wait(30)
        colleague.tell(agent, later)
        release.set()
        answer = asker.listen(30)
        assert isinstance(answer, AgentMessage) and answer.content == "both done"
        assert answer.agent_hops == 8
        asker.tell(agent, AgentMessage(content="again", agent_hops=2))
        again = asker.listen(30)
    assert isinstance(again, AgentMessage) and again.agent_hops == 3  # a run of its own
