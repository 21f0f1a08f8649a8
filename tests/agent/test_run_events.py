"""A run's events on the team stream (PublishRunEvents): the model's text while it works,
then the calls of a tool step, then their returns as the model will see them — in the
run's order, without pydantic-ai streaming the run."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    PartDeltaEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.agent.capabilities.run_events import PublishRunEvents
from akgentic.core import ActorSystem, ErrorMessage, EventMessage, UserMessage
from akgentic.llm import (
    LlmAnswerRestartedEvent,
    LlmMessageEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
    register_model,
)
from akgentic.tool.core import ToolCard

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent
from .test_base_agent import Calc, text

RUN_EVENTS = (LlmTextDeltaEvent, ToolCallEvent, ToolReturnEvent)


def run_events(team: Team) -> list[Any]:
    """The run events of the first turn, in the order the team stream carried them."""
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, LlmUsageEvent))
    events = [m.event for m in team.recorder.of_type(EventMessage)]
    return [e for e in events if isinstance(e, RUN_EVENTS)]


def start(system: ActorSystem, team: Team, cls: type[BaseAgent], **config: Any) -> Any:
    config.setdefault("stream_text_interval", 0.0)
    return system.createActor(
        cls, config=AgentConfig(name="@Agent", role="Assistant", **config), team_id=team.team_id
    )


def scripted(script: Script) -> type[BaseAgent]:
    return type("RunEventsAgent", (ScriptedAgent,), {"script": script})


def test_text_then_calls_then_returns_then_the_next_text(system: ActorSystem, team: Team) -> None:
    def add_both(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                TextPart("adding"),
                ToolCallPart("add", {"a": 2, "b": 3}, tool_call_id="c1"),
                ToolCallPart("add", {"a": -1, "b": 1}, tool_call_id="c2"),
            ]
        )

    agent = start(system, team, scripted(Script(add_both, text("sum is 5"))), tools=[Calc()])
    reply = system.ask(agent, UserMessage(content="add"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "sum is 5"

    events = run_events(team)
    shape = [
        (type(e).__name__, getattr(e, "delta", None) or getattr(e, "tool_call_id", None))
        for e in events
    ]
    assert shape == [
        ("LlmTextDeltaEvent", "adding"),
        ("ToolCallEvent", "c1"),
        ("ToolCallEvent", "c2"),
        ("ToolReturnEvent", "c1"),
        ("ToolReturnEvent", "c2"),
        ("LlmTextDeltaEvent", "sum is 5"),
    ]
    call, returned, retried = events[1], events[3], events[4]
    assert call.tool_name == "add" and call.arguments == {"a": 2, "b": 3}
    assert returned.success and returned.outcome == "success" and returned.content == "5"
    assert not retried.success and retried.outcome == "retried"
    assert "negative numbers are not supported" in retried.content
    assert {e.run_id for e in events} == {events[0].run_id} and events[0].run_id


def test_the_answer_is_not_announced_as_a_tool_call(system: ActorSystem, team: Team) -> None:
    """A structured reply goes through pydantic-ai's output tool: it is the answer, not a
    call (a tool the model made up is a call, and its return says it failed)."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        args = {"messages": [{"to": "@External", "content": "hi", "type": "notification"}]}
        return ModelResponse(
            parts=[
                ToolCallPart("no_such_tool", {}, tool_call_id="made-up"),
                ToolCallPart(info.output_tools[0].name, args, tool_call_id="answer"),
            ]
        )

    agent = start(system, team, scripted(Script(reply, text("done"))))
    with system.private() as context:
        context.tell(agent, UserMessage(content="say hi"))
        assert isinstance(context.listen(30), AgentMessage)
    events = run_events(team)
    calls = [e.tool_call_id for e in events if isinstance(e, ToolCallEvent)]
    returns = [e for e in events if isinstance(e, ToolReturnEvent)]
    assert calls == ["made-up"]
    assert [r.tool_call_id for r in returns] == ["made-up"] and not returns[0].success


class LiveModelAgent(BaseAgent):
    """Its model streams 'first', then waits until the test has seen that delta published,
    then streams ' second'."""

    seen_first: ClassVar[threading.Event]
    waited: ClassVar[list[bool]]

    def _build_model(self) -> Any:
        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            yield "first"
            type(self).waited.append(type(self).seen_first.wait(30))
            yield " second"

        def plain(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            raise AssertionError("the agent must ask for the streamed response")

        return FunctionModel(plain, stream_function=stream)


def test_text_is_published_while_the_model_is_still_answering(
    system: ActorSystem, team: Team
) -> None:
    LiveModelAgent.seen_first = threading.Event()
    LiveModelAgent.waited = []
    agent = start(system, team, LiveModelAgent)
    with system.private() as context:
        context.tell(agent, UserMessage(content="talk"))
        team.recorder.wait_for_type(
            EventMessage,
            where=lambda m: isinstance(m.event, LlmTextDeltaEvent) and m.event.delta == "first",
        )
        LiveModelAgent.seen_first.set()
        reply = context.listen(30)
    assert isinstance(reply, AgentMessage) and reply.content == "first second"
    assert LiveModelAgent.waited == [True]
    deltas = [e.delta for e in run_events(team) if isinstance(e, LlmTextDeltaEvent)]
    assert "".join(deltas) == "first second"


def test_a_model_that_cannot_stream_still_has_its_events(system: ActorSystem, team: Team) -> None:
    script = Script(lambda m, i: ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})]))
    script.steps.append(text("three"))
    with register_model("plain", FunctionModel(script)) as plain:  # no stream function
        agent = start(system, team, BaseAgent, tools=[Calc()], models=plain.key)
        reply = system.ask(agent, UserMessage(content="add"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "three"
    kinds = [type(e).__name__ for e in run_events(team)]
    assert kinds == ["ToolCallEvent", "ToolReturnEvent", "LlmTextDeltaEvent"]


def test_a_turn_with_events_off_publishes_none(system: ActorSystem, team: Team) -> None:
    script = Script(lambda m, i: ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})]))
    script.steps.append(text("three"))
    agent = start(system, team, scripted(script), tools=[Calc()], stream_events=False)
    reply = system.ask(agent, UserMessage(content="add"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "three"
    assert run_events(team) == []


class Loose(ToolCard):
    """Returns text decoded loosely: a lone surrogate, as ``"\\udce9"`` in JSON makes."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def read_text() -> str:
            """The text."""
            return "caf\udce9"

        def read_data() -> dict[str, list[str]]:
            """The data."""
            return {"names": ["d\udce9j\u00e0"]}

        return [read_text, read_data]


def test_a_tool_returning_a_lone_surrogate_does_not_break_the_turn(
    system: ActorSystem, team: Team
) -> None:
    def read_both(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ToolCallPart("read_text", {}, tool_call_id="c1"),
                ToolCallPart("read_data", {}, tool_call_id="c2"),
            ]
        )

    agent = start(system, team, scripted(Script(read_both, text("read"))), tools=[Loose()])
    reply = system.ask(agent, UserMessage(content="read"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "read"
    returns = [e for e in run_events(team) if isinstance(e, ToolReturnEvent)]
    assert [(e.success, e.content) for e in returns] == [
        (True, "caf\ufffd"),
        (True, '{"names":["d\ufffdj\u00e0"]}'),
    ]
    # the run's messages were built for the stream (and so for the log a resume reads)
    team.recorder.wait_for_type(EventMessage, where=lambda m: isinstance(m.event, LlmMessageEvent))
    assert team.recorder.of_type(ErrorMessage) == []


def test_a_restarted_answer_says_how_much_of_its_text_to_drop() -> None:
    """Only this answer's text counts (not the text before it began), gathered or flushed;
    an answer that published no text says nothing."""
    published: list[Any] = []
    events = PublishRunEvents(publish=published.append, text_interval=60.0)

    def say(content: str) -> None:
        events.model_event(PartDeltaEvent(index=0, delta=TextPartDelta(content)))

    events.answer_begins()
    say("Earlier.")  # a former answer of the run: kept
    events.flush_text()
    events.answer_begins()
    say("Hel")
    events.flush_text()
    say("lo")  # still gathered when the cut is known
    events.restarted()
    events.restarted()  # a failure before any text of the next answer
    assert published == [
        LlmTextDeltaEvent(run_id="", delta="Earlier."),
        LlmTextDeltaEvent(run_id="", delta="Hel"),
        LlmTextDeltaEvent(run_id="", delta="lo"),
        LlmAnswerRestartedEvent(run_id="", chars=5),
    ]
