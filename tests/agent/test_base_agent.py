"""BaseAgent: turns, tools, events, commands, cancellation, context deltas, routing, limits."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.agent.accounting import PromptAccountingEvent, RequestAccountant
from akgentic.agent.cut import CANCEL_NOTE
from akgentic.core import (
    ActorSystem,
    CancelMessage,
    ErrorMessage,
    EventMessage,
    Orchestrator,
    UserMessage,
    WarningMessage,
)
from akgentic.llm import (
    LlmMessageEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
    UsageLimitsConfig,
    UsageLimitSet,
    count_tokens,
)
from akgentic.llm import events as llm_events
from akgentic.tool.core import (
    LLM_CONTEXT,
    BaseToolParam,
    CommandsAnnouncedEvent,
    ContextState,
    RetriableError,
    ToolCard,
)

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent

RETURN = ToolReturnPart


def agent_class(script: Script) -> type[BaseAgent]:
    return type("TestAgent", (ScriptedAgent,), {"script": script})


def text(content: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    return lambda messages, info: ModelResponse(parts=[TextPart(content)])


def call(tool: str, **args: Any) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def last_request_text(messages: list[ModelMessage]) -> str:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return "\n".join(
        p.content
        for p in request.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    )


class Calc(ToolCard):
    """Adds numbers; refuses negatives with a RetriableError."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def add(a: int, b: int) -> int:
            """Add two numbers (both must be non-negative)."""
            if a < 0 or b < 0:
                raise RetriableError("negative numbers are not supported: use 0 or more")
            return a + b

        return [add]


def start(system: ActorSystem, team: Team, script: Script, **config: Any) -> Any:
    config.setdefault("stream_events", False)
    return system.createActor(
        agent_class(script),
        config=AgentConfig(name="@Agent", role="Assistant", **config),
        team_id=team.team_id,
    )


def test_a_tool_call_round_trip_with_its_events(system: ActorSystem, team: Team) -> None:
    script = Script(
        call("add", a=2, b=3),
        lambda m, i: ModelResponse(
            parts=[
                TextPart(f"sum is {next(p.content for p in m[-1].parts if isinstance(p, RETURN))}")
            ]
        ),
    )
    agent = start(system, team, script, tools=[Calc()], stream_events=True)
    reply = system.ask(agent, UserMessage(content="add 2 and 3"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "sum is 5"
    assert reply.type == "response"
    events = [
        e.event
        for e in team.recorder.wait_for_type(
            EventMessage, where=lambda e: isinstance(e.event, LlmUsageEvent)
        )
    ]
    kinds = [type(e) for e in (m.event for m in team.recorder.of_type(EventMessage))]
    assert ToolCallEvent in kinds and ToolReturnEvent in kinds and LlmMessageEvent in kinds
    assert events[0].requests == 2
    tool_call = next(
        m.event for m in team.recorder.of_type(EventMessage) if isinstance(m.event, ToolCallEvent)
    )
    assert tool_call.tool_name == "add" and tool_call.arguments == {"a": 2, "b": 3}


def test_a_runs_messages_and_accounting_are_built_off_the_agents_thread(
    system: ActorSystem, team: Team, monkeypatch: Any
) -> None:
    """The turn's reply does not wait for the run's JSON or its accounting: both are built
    on the orchestrator's thread (``notify_event_later``), and hold what was sent."""
    built_on: list[tuple[str, str]] = []
    encode = llm_events._items_json
    record = RequestAccountant.record

    def encoding(messages: Any) -> Any:
        built_on.append(("json", threading.current_thread().name))
        return encode(messages)

    def recording(self: RequestAccountant, capture: Any) -> PromptAccountingEvent:
        built_on.append(("accounting", threading.current_thread().name))
        return record(self, capture)

    monkeypatch.setattr(llm_events, "_items_json", encoding)
    monkeypatch.setattr(RequestAccountant, "record", recording)
    agent = start(system, team, Script(call("add", a=2, b=3), text("five")), tools=[Calc()])
    reply = system.ask(agent, UserMessage(content="add 2 and 3"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "five"
    run = team.recorder.wait_for_type(
        EventMessage, where=lambda e: isinstance(e.event, LlmMessageEvent)
    )[0].event
    accounted = [
        e.event
        for e in team.recorder.wait_for_type(
            EventMessage, 2, where=lambda e: isinstance(e.event, PromptAccountingEvent)
        )
    ]
    assert sorted(kind for kind, _ in built_on) == ["accounting", "accounting", "json"]
    assert all(thread.startswith("Orchestrator") for _, thread in built_on), built_on
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    assert run.to_messages() == history  # the run's messages, as they were sent
    assert [a.request for a in accounted] == [1, 2]
    assert accounted[1].input_tokens > accounted[0].input_tokens  # the tool's return is new


def test_a_tools_object_is_recorded_as_it_was_returned(system: ActorSystem) -> None:
    """A tool that returns its own object (here the ledger itself) may change it after
    the run: the run's record and its accounting hold what the model was given. The team
    has no subscriber, so nothing is built before the query at the end (after the second
    turn changed the ledger)."""
    ledger: dict[str, int] = {}

    class Ledger(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def note(key: str) -> dict[str, int]:
                """Note ``key``; every entry so far (the ledger itself)."""
                ledger[key] = len(ledger) + 1
                return ledger

            return [note]

    orchestrator = system.createActor(Orchestrator)
    script = Script(call("note", key="a"), text("noted"), call("note", key="b"), text("noted"))
    agent = system.createActor(
        agent_class(script),
        config=AgentConfig(name="@Agent", role="Clerk", tools=[Ledger()], stream_events=False),
        team_id=orchestrator.team_id,
    )
    for line in ("note a", "note b"):
        system.ask(agent, UserMessage(content=line), timeout=30)
    assert ledger == {"a": 1, "b": 2}
    events = system.proxy_ask(orchestrator, Orchestrator, timeout=30).get_events()
    runs = [e.event for e in events if isinstance(e.event, LlmMessageEvent)]
    first = runs[0].to_messages()
    returned = [p for m in first for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [p.content for p in returned] == [{"a": 1}]  # not the ledger as it is now
    accounted = [e.event for e in events if isinstance(e.event, PromptAccountingEvent)]
    sent = returned[0].model_response_str()
    assert sent == '{"a":1}'
    message = [p for p in accounted[1].parts if p.channel == "message"]  # the return
    assert sum(p.tokens for p in message) == count_tokens(sent)


def test_a_retriable_error_reaches_the_model_as_a_retry(system: ActorSystem, team: Team) -> None:
    def after_retry(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        feedback = [p for p in request.parts if isinstance(p, RetryPromptPart | ToolReturnPart)]
        assert feedback, request.parts
        return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 1})])

    script = Script(call("add", a=-1, b=2), after_retry, text("done"))
    agent = start(system, team, script, tools=[Calc()])
    reply = system.ask(agent, UserMessage(content="add"), timeout=30)
    assert reply.content == "done"  # type: ignore[attr-defined]
    retry_text = str(script.seen[1][-1])
    assert "negative numbers are not supported" in retry_text


def test_a_command_never_reaches_the_model(system: ActorSystem, team: Team) -> None:
    script = Script(text("model answer"))
    agent = start(system, team, script)
    reply = system.ask(agent, UserMessage(content="/stop"), timeout=30)
    assert reply.content == "There is no run to cancel."  # type: ignore[attr-defined]
    unknown = system.ask(agent, UserMessage(content="/nope"), timeout=30)
    assert unknown.content.startswith("Unknown command /nope. Commands:")  # type: ignore[attr-defined]
    assert "/clear" in unknown.content and "/compact" in unknown.content  # type: ignore[attr-defined]
    assert unknown.content.endswith("/help (/help describes them)")  # type: ignore[attr-defined]
    assert script.seen == []
    # the announcement travels on the telemetry stream, which the replies above overtake:
    # wait for it rather than read the recorder at once (it failed under load)
    announced = [
        m.event
        for m in team.recorder.wait_for_type(
            EventMessage, where=lambda m: isinstance(m.event, CommandsAnnouncedEvent)
        )
    ]
    assert isinstance(announced[0], CommandsAnnouncedEvent)
    assert {"stop", "clear", "compact"} <= {c.name for c in announced[0].commands}


def test_a_commands_answer_says_whether_it_failed(system: ActorSystem, team: Team) -> None:
    """The answer to an unknown command, or to one that refuses its arguments, is marked
    ``failed``; a command that ran is not: a client tells them apart without the text."""
    agent = start(system, team, Script(text("model answer")))
    answers = {
        text: system.ask(agent, UserMessage(content=text), timeout=30)
        for text in ("/help", "/nope", "/help one two", "/help nope", "/stop")
    }
    assert all(isinstance(a, AgentMessage) and a.type == "response" for a in answers.values())
    failed = {text for text, answer in answers.items() if answer.failed}  # type: ignore[attr-defined]
    assert failed == {"/nope", "/help one two", "/help nope"}
    assert answers["/help one two"].content.startswith("/help: too many")  # type: ignore[attr-defined]


def test_help_lists_the_commands_and_describes_one(system: ActorSystem, team: Team) -> None:
    """``/help`` is a command of every agent: the usage of each command it answers, or
    one command's usage and docstring; a name it does not know is answered as unknown."""
    script = Script(text("model answer"))
    agent = start(system, team, script)
    listing = system.ask(agent, UserMessage(content="/help"), timeout=30).content  # type: ignore[attr-defined]
    commands = system.proxy_ask(agent, BaseAgent, timeout=30).get_commands()
    lines = listing.splitlines()
    assert lines[0] == "Commands (/help NAME describes one):"
    assert [line.split()[0] for line in lines[1:]] == [f"/{name}" for name in commands]
    assert "  /stop — Cancel the agent's current run." in lines
    assert "  /help [command] — List the commands, or describe one: /help, /help NAME." in lines
    one = system.ask(agent, UserMessage(content="/help /compact"), timeout=30)
    assert one.content == (  # type: ignore[attr-defined]
        "/compact\nSummarise the older part of the conversation to free context."
    )
    unknown = system.ask(agent, UserMessage(content="/help nope"), timeout=30)
    assert unknown.content.startswith("/help: no command named nope; commands: /")  # type: ignore[attr-defined]
    assert script.seen == []


def test_model_tool_is_never_added_unless_configured(system: ActorSystem, team: Team) -> None:
    """TeamTool and MailboxTool are the defaults; ModelTool comes only from the config."""
    from akgentic.tool import ModelTool

    script = Script(text("ok"))
    plain = start(system, team, script)
    system.ask(plain, UserMessage(content="hello"), timeout=30)
    commands = set(system.proxy_ask(plain, BaseAgent, timeout=30).get_commands())
    offered = {tool.name for tool in script.infos[0].function_tools}
    assert "list_models" not in commands and "switch_model" not in commands
    assert "list_models" not in offered and "switch_model" not in offered
    assert {"hire_members", "read_mailbox"} <= offered  # the defaults are there

    configured = Script(text("ok"))
    with_tool = system.createActor(
        agent_class(configured),
        config=AgentConfig(
            name="@Switcher", role="Assistant", tools=[ModelTool()], stream_events=False
        ),
        team_id=team.team_id,
    )
    system.ask(with_tool, UserMessage(content="hello"), timeout=30)
    commands = set(system.proxy_ask(with_tool, BaseAgent, timeout=30).get_commands())
    offered = {tool.name for tool in configured.infos[0].function_tools}
    assert {"list_models", "switch_model"} <= commands
    assert {"list_models", "switch_model"} <= offered


def test_clear_forgets_the_conversation(system: ActorSystem, team: Team) -> None:
    script = Script(text("one"))
    agent = start(system, team, script)
    system.ask(agent, UserMessage(content="hello"), timeout=30)
    proxy = system.proxy_ask(agent, BaseAgent, timeout=30)
    assert len(proxy.get_history()) == 2
    assert system.ask(agent, UserMessage(content="/clear"), timeout=30).content == (  # type: ignore[attr-defined]
        "Conversation cleared."
    )
    assert proxy.get_history() == []


def test_clear_resets_the_context_updater(system: ActorSystem, team: Team) -> None:
    """After /clear the model has forgotten the full context block it was given, so the
    next turn states the context in full again (numbered afresh), not as a delta."""
    board_rows.clear()
    board_rows.update({"a": "todo", "b": "todo"})
    script = Script(text("ok"))
    agent = start(system, team, script, tools=[BoardTool()])
    system.ask(agent, UserMessage(content="turn one"), timeout=30)
    system.ask(agent, UserMessage(content="/clear"), timeout=30)
    system.ask(agent, UserMessage(content="turn two"), timeout=30)
    first, second = (last_request_text(seen) for seen in script.seen)
    assert "**Context update 1**" in first and "- a: todo" in first
    assert "**Context update 1**" in second  # a fresh numbering...
    assert "- a: todo" in second and "- b: todo" in second  # ...and the full board
    assert len(script.seen[1]) == 1  # the request carries nothing of the forgotten turn


def test_stop_typed_as_text_mid_run_cancels_it_at_the_next_step(
    system: ActorSystem, team: Team
) -> None:
    """``/stop`` written by a person while a run is going is a cancellation, not a queued
    command: the run stops at the next step boundary and both senders hear of it."""
    entered, release = threading.Event(), threading.Event()

    class Slow(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def wait() -> str:
                """Wait for the release."""
                entered.set()
                release.wait(30)
                return "released"

            return [wait]

    script = Script(call("wait"), text("should never be asked"))
    agent = start(system, team, script, tools=[Slow()])
    with system.private("@Asker") as asker, system.private("@Stopper") as stopper:
        asker.tell(agent, UserMessage(content="go"))
        assert entered.wait(30)
        stopper.tell(agent, UserMessage(content="  /stop "))  # in the inbox on return
        release.set()
        reply = asker.listen(30)
        acknowledged = stopper.listen(30)
    assert isinstance(reply, AgentMessage) and reply.content == "The run was cancelled."
    assert isinstance(acknowledged, AgentMessage)
    assert (
        acknowledged.content == "The run was cancelled." and acknowledged.type == "acknowledgment"
    )
    assert len(script.seen) == 1  # the second model request never happened


def test_cancellation_mid_run_stops_at_the_next_step(system: ActorSystem, team: Team) -> None:
    entered, release = threading.Event(), threading.Event()

    class Slow(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def wait() -> str:
                """Wait for the release."""
                entered.set()
                release.wait(30)
                return "released"

            return [wait]

    script = Script(call("wait"), text("should never be asked"))
    agent = start(system, team, script, tools=[Slow()])
    with system.private() as context:
        context.tell(agent, UserMessage(content="go"))
        assert entered.wait(30)
        system.tell(agent, CancelMessage(reason="enough"))
        release.set()
        reply = context.listen(30)
    assert isinstance(reply, AgentMessage) and reply.content == "The run was cancelled."
    assert len(script.seen) == 1  # the second model request never happened
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    assert any(isinstance(p, ToolReturnPart) for m in history for p in m.parts)
    [run] = team.recorder.wait_for_type(
        EventMessage, where=lambda e: isinstance(e.event, LlmMessageEvent)
    )
    assert isinstance(run.event, LlmMessageEvent)  # the log keeps what memory keeps
    assert json.loads(run.event.messages_json) == ModelMessagesTypeAdapter.dump_python(
        history, mode="json"
    )
    script.steps = [text("again, then")]
    system.ask(agent, UserMessage(content="go"), timeout=30)  # the same question, retried
    *earlier, note, asked = script.seen[-1]  # the cut turn closed out, the question apart
    assert isinstance(note, ModelResponse) and note.text == CANCEL_NOTE  # the team goes on
    assert [type(p) for p in asked.parts] == [UserPromptPart]
    assert any(isinstance(p, ToolReturnPart) for m in earlier for p in m.parts)


class Board(ContextState):
    rows: dict[str, str] = {}

    def render_full(self) -> str:
        return "Board:\n" + "\n".join(f"- {k}: {v}" for k, v in sorted(self.rows.items()))

    def render_delta(self, previous: ContextState) -> str | None:
        assert isinstance(previous, Board)
        changed = {k: v for k, v in self.rows.items() if previous.rows.get(k) != v}
        if not changed:
            return None
        return "Board changes:\n" + "\n".join(f"- {k}: {v}" for k, v in sorted(changed.items()))


class GetBoard(BaseToolParam):
    expose: set[Any] = {LLM_CONTEXT}


board_rows: dict[str, str] = {}


class BoardTool(ToolCard):
    get_board: GetBoard | bool = True

    def get_system_prompts(self) -> list[Callable[[], str]]:
        return [lambda: "You keep an eye on the board."]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def board() -> ContextState | None:
            return Board(rows=dict(board_rows))

        return [board]


def test_context_deltas_go_to_the_tail_and_the_prefix_stays_identical(
    system: ActorSystem, team: Team
) -> None:
    board_rows.clear()
    board_rows.update({"a": "todo", "b": "todo"})
    script = Script(text("ok"))
    agent = start(system, team, script, tools=[BoardTool()])
    system.ask(agent, UserMessage(content="turn one"), timeout=30)
    board_rows["b"] = "done"
    system.ask(agent, UserMessage(content="turn two"), timeout=30)
    system.ask(agent, UserMessage(content="turn three"), timeout=30)
    first, second, third = (last_request_text(seen) for seen in script.seen)
    assert "turn one" in first and "**Context update 1**" in first and "- a: todo" in first
    assert "**Context update 2**" in second and "- b: done" in second and "a: todo" not in second
    assert "Context update" not in third  # nothing changed, no block
    instructions = {info.instructions for info in script.infos}
    assert len(instructions) == 1
    assert "You keep an eye on the board." in next(iter(instructions)) or ""


@pytest.mark.parametrize(
    ("names", "told"),
    [
        (["@Nobody"], "Unknown recipient: @Nobody."),
        (["@Nobody", "@Noone"], "Unknown recipients: @Nobody, @Noone."),
    ],
)
def test_an_unknown_recipient_is_an_error_the_model_is_told_about(
    system: ActorSystem, team: Team, names: list[str], told: str
) -> None:
    from akgentic.agent import AgentReply

    def reply_to(*names: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            tool = info.output_tools[0].name
            sent = [{"to": name, "content": "hi", "type": "notification"} for name in names]
            return ModelResponse(parts=[ToolCallPart(tool, {"messages": sent})])

        return respond

    script = Script(reply_to(*names), reply_to("@External"))
    agent = start(system, team, script)
    with system.private() as context:
        context.tell(agent, UserMessage(content="say hi to someone"))
        reply = context.listen(30)
    assert isinstance(reply, AgentMessage) and reply.type == "notification"
    retry = str(script.seen[1][-1])
    assert told in retry and "hire" in retry
    assert AgentReply.model_json_schema()["required"] == ["messages"]
    assert [a.name for a in team.proxy.get_team()] == ["@Agent"]  # nobody was hired


def test_usage_limits_are_a_soft_stop(system: ActorSystem, team: Team) -> None:
    script = Script(call("add", a=1, b=1), text("never"))
    limits = UsageLimitsConfig(per_run=UsageLimitSet(requests=1))
    agent = start(system, team, script, tools=[Calc()], usage_limits=limits)
    with system.private() as context:
        context.tell(agent, UserMessage(content="add"))
        reply = context.listen(30)
    assert isinstance(reply, AgentMessage) and reply.content.startswith("I had to stop:")
    warning = team.recorder.wait_for_type(WarningMessage)[0]
    assert "request" in str(warning.content)
    assert agent.is_alive()
    again = system.ask(agent, UserMessage(content="/stop"), timeout=30)
    assert again.content == "There is no run to cancel."  # type: ignore[attr-defined]


def test_a_command_that_fails_answers_what_failed_and_is_reported(
    system: ActorSystem, team: Team
) -> None:
    def unreachable(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError("the summary's model cannot be reached")

    script = Script(text("one"))
    agent = start(system, team, script)
    for i in range(5):  # more than the six messages /compact keeps
        system.ask(agent, UserMessage(content=f"round {i}"), timeout=30)
    script.steps = [unreachable]
    answer = system.ask(agent, UserMessage(content="/compact"), timeout=30)  # it got none
    assert isinstance(answer, AgentMessage)
    assert answer.content.startswith("/compact failed: ConnectionError: ")
    assert "cannot be reached" in answer.content
    assert answer.failed and answer.type == "response"
    [error] = team.recorder.wait_for_type(ErrorMessage)
    assert "command /compact raised" in error.content


def test_compact_keeps_tool_pairs_together(system: ActorSystem, team: Team) -> None:
    script = Script(call("add", a=1, b=2), text("three"))
    agent = start(system, team, script, tools=[Calc()])
    for i in range(4):
        system.ask(agent, UserMessage(content=f"round {i}"), timeout=30)
    script.steps = [text("summary of earlier turns")]
    proxy = system.proxy_ask(agent, BaseAgent, timeout=30)
    before = proxy.get_history()
    answer = system.ask(agent, UserMessage(content="/compact"), timeout=30)
    assert answer.content.startswith("Compacted")  # type: ignore[attr-defined]
    after = proxy.get_history()
    assert len(after) < len(before)
    calls = {p.tool_call_id for m in after for p in m.parts if isinstance(p, ToolCallPart)}
    returns = {p.tool_call_id for m in after for p in m.parts if isinstance(p, ToolReturnPart)}
    assert calls == returns
