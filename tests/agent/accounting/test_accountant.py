"""The accounting of fixed prompts, through real pydantic-ai runs: every part attributed
to the card the factory's wiring says served it, the parts summing to the whole request
to the token, a re-rendered system prompt naming its card as the breaker, and nothing
counted twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent.accounting import (
    AGENT,
    CONTEXT_MARKER,
    MESSAGE_FRAMING,
    REPLY_PRIMING,
    PrefixCacheRules,
    PromptAccounting,
    PromptAccountingEvent,
    PromptWiring,
    RequestAccountant,
    tool_json,
)
from akgentic.llm import TokenCounter, count_tokens, token_counter, with_summary_ask
from akgentic.tool.core import ContextState, ToolCard, ToolFactory

ANY = PrefixCacheRules(name="test", min_prefix_tokens=0)


class Stamp(ToolCard):
    """A card whose SYSTEM_PROMPT text is whatever ``text`` holds when it is rendered."""

    text: list[str] = ["Stamp: version 1 of the house rules."]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        def house_rules() -> str:
            return self.text[0]

        return [house_rules]


class Adder(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        return [add]


class Note(ContextState):
    text: str = ""

    def render_full(self) -> str:
        return self.text

    def render_delta(self, previous: Note) -> str | None:
        return None if previous.text == self.text else self.text


class Board(ToolCard):
    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def board() -> ContextState | None:
            return Note(text="Board: 2 tasks open.")

        return [board]


@dataclass
class Setup:
    wiring: PromptWiring
    events: list[PromptAccountingEvent]
    agent: Agent[None, str]
    infos: list[AgentInfo]
    stamp: Stamp
    accountant: RequestAccountant


def publish_to(events: list[PromptAccountingEvent]) -> Callable[[Any], None]:
    """A ``publish`` that builds each record at once (the agent defers it to the
    orchestrator's thread: ``notify_event_later``)."""
    return lambda build: events.append(build())


def setup(
    *responses: Callable[[list[ModelMessage], AgentInfo], ModelResponse],
    clock: Callable[[], float] = lambda: 0.0,
) -> Setup:
    stamp = Stamp()
    factory = ToolFactory([stamp, Adder(), Board()])
    wiring = PromptWiring(factory)
    factory.get_context_states()  # the agent's updater asks for them
    instructions = wiring.render_system_prompt(prompt="You are @A, the team's analyst.")
    events: list[PromptAccountingEvent] = []
    infos: list[AgentInfo] = []
    steps = list(responses)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        return steps.pop(0)(messages, info) if steps else ModelResponse(parts=[TextPart("done")])

    accountant = RequestAccountant(wiring)
    accounting = PromptAccounting(
        accountant, publish_to(events), agent="@A", rules=lambda: ANY, clock=clock
    )
    agent: Agent[None, str] = Agent(
        FunctionModel(model),
        instructions=instructions,
        tools=factory.get_tools(),
        capabilities=[accounting],
    )
    return Setup(wiring, events, agent, infos, stamp, accountant)


def call_add(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})])


def wire_texts(messages: list[ModelMessage]) -> tuple[list[str], int]:
    """Each message part's text as it is sent, and how many messages go on the wire."""
    texts, count = [], 0
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                count += 1
                if hasattr(part, "model_response_str"):
                    texts.append(part.model_response_str())
                else:
                    texts.append(str(part.content))
        else:
            count += 1
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    texts.append(f"{part.tool_name}{part.args_as_json_str()}")
                else:
                    texts.append(str(part.content))
    return texts, count


def independent_total(info: AgentInfo, messages: list[ModelMessage]) -> int:
    """The request counted from what pydantic-ai handed the model, not by the accountant."""
    tools = sum(count_tokens(tool_json(t)) for t in [*info.function_tools, *info.output_tools])
    texts, count = wire_texts(messages)
    system = count_tokens(info.instructions or "") + MESSAGE_FRAMING
    framing = MESSAGE_FRAMING * count + REPLY_PRIMING
    return tools + system + sum(count_tokens(t) for t in texts) + framing


def turn_prompt(wiring: PromptWiring, body: str) -> str:
    sections = [("board", "Board: 2 tasks open."), ("unknown_provider", "Weather: sunny.")]
    block = "**Context update 1**\n\n" + "\n\n".join(text for _, text in sections)
    return wiring.turn_prompt(body, block, sections)


def test_the_parts_sum_to_the_whole_request_to_the_token() -> None:
    s = setup(call_add)
    prompt = turn_prompt(s.wiring, "Message from @Human:\nadd one and two, please.")
    result = s.agent.run_sync(prompt)

    first, second = s.events
    requests = [m for m in result.all_messages()]
    assert first.input_tokens == independent_total(s.infos[0], requests[:1])
    assert second.input_tokens == independent_total(s.infos[1], requests[:3])
    for event in s.events:
        assert event.input_tokens == sum(p.tokens for p in event.parts) + event.framing_tokens
        assert event.encoding == "o200k_base" and event.exact


def test_each_part_is_attributed_to_the_card_the_wiring_names() -> None:
    s = setup()
    body = "Message from @Human:\nhow are we doing?"
    prompt = turn_prompt(s.wiring, body)
    s.agent.run_sync(prompt)
    [event] = s.events
    rows = {(p.channel, p.card): p.tokens for p in event.parts}

    system = s.wiring.system_prompt
    assert rows[("system_prompt", AGENT)] + rows[("system_prompt", "Stamp")] == count_tokens(system)
    assert rows[("tool_call", "Adder")] == count_tokens(tool_json(s.infos[0].function_tools[0]))
    assert ("llm_context", "Board") in rows
    assert ("llm_context", "(unattributed)") in rows  # a provider nothing in the wiring claims
    assert ("llm_context", CONTEXT_MARKER) in rows
    context = sum(t for (channel, _), t in rows.items() if channel == "llm_context")
    assert context + rows[("message", "")] == count_tokens(prompt)
    assert rows[("message", "")] == count_tokens(body)


def test_history_is_what_came_before_the_new_message() -> None:
    s = setup(call_add)
    s.agent.run_sync(turn_prompt(s.wiring, "Message from @Human:\nadd them"))
    first, second = s.events
    assert first.channel_tokens("history") == 0
    assert second.channel_tokens("history") > 0  # the prompt and the call, sent again
    assert second.channel_tokens("llm_context") == 0  # the block is history now
    assert second.breaker is None and second.cache_status == "hit"
    assert second.shared_prefix_tokens == first.input_tokens - REPLY_PRIMING


def test_a_card_whose_system_prompt_changes_is_named_as_the_breaker() -> None:
    s = setup()
    s.agent.run_sync(s.wiring.turn_prompt("first", None))
    s.stamp.text[0] = "Stamp: version 2 of the house rules."
    instructions = s.wiring.render_system_prompt(prompt="You are @A, the team's analyst.")
    with s.agent.override(instructions=instructions):
        s.agent.run_sync(s.wiring.turn_prompt("second", None))
    second = s.events[1]
    assert second.breaker is not None
    assert (second.breaker.channel, second.breaker.card, second.breaker.name) == (
        "system_prompt",
        "Stamp",
        "house_rules",
    )
    assert second.breaker.change == "changed"


def restored_turn(history: list[ModelMessage], now: float) -> PromptAccountingEvent:
    """A fresh agent (as a resume starts one) given ``history``, its clock at ``now``:
    the record of its first request."""
    s = setup(clock=lambda: now)
    s.accountant.resume(history)
    s.agent.run_sync(s.wiring.turn_prompt("second", None), message_history=history)
    assert s.accountant.requests == 1
    return s.events[0]


def test_a_resumed_accountant_compares_with_the_last_request_before_the_stop() -> None:
    s = setup(call_add)
    history = s.agent.run_sync(s.wiring.turn_prompt("first", None)).all_messages()
    last = s.events[-1]
    answered = history[-1]
    assert isinstance(answered, ModelResponse)
    at = answered.timestamp.timestamp()
    warm = restored_turn(history, now=at + 60)
    assert warm.shared_prefix_tokens == last.input_tokens - REPLY_PRIMING
    assert (warm.breaker, warm.cache_status) == (None, "hit")
    assert warm.seconds_since_previous == pytest.approx(60)
    # the recorded time far in the past: the provider's cache has let the prefix go
    answered.timestamp = answered.timestamp - timedelta(hours=2)
    late = restored_turn(history, now=at)
    assert late.shared_prefix_tokens == warm.shared_prefix_tokens
    assert (late.cached_tokens, late.cache_status) == (0, "expired")
    assert late.seconds_since_previous == pytest.approx(7200)


def test_a_resumed_request_to_another_model_than_the_last_answer_is_cold() -> None:
    """The restored context was answered by another model (the roster's entry changed
    across the stop): its provider cache holds nothing this model can be served."""
    s = setup()
    history = s.agent.run_sync(s.wiring.turn_prompt("first", None)).all_messages()
    answered = history[-1]
    assert isinstance(answered, ModelResponse)
    answered.model_name = "another-model"
    moved = restored_turn(history, now=answered.timestamp.timestamp() + 60)
    assert (moved.cache_status, moved.shared_prefix_tokens, moved.breaker) == ("cold", 0, None)


def test_a_restored_context_without_a_response_leaves_the_first_request_cold() -> None:
    s = setup()
    s.accountant.resume([ModelRequest.user_text_prompt("never answered")])
    s.agent.run_sync(s.wiring.turn_prompt("first", None))
    assert (s.events[0].cache_status, s.events[0].shared_prefix_tokens) == ("cold", 0)


def test_the_provider_usage_is_reported_beside_our_count() -> None:
    s = setup(call_add)
    result = s.agent.run_sync(s.wiring.turn_prompt("add", None))
    reported = [m.usage for m in result.all_messages() if isinstance(m, ModelResponse)]
    assert [e.provider.input_tokens for e in s.events] == [u.input_tokens for u in reported]
    assert [e.provider.output_tokens for e in s.events] == [u.output_tokens for u in reported]


def add_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls add when the last message is the user's, answers once the return is in."""
    returned = any(getattr(p, "part_kind", "") == "tool-return" for p in messages[-1].parts)
    return ModelResponse(parts=[TextPart("ok")]) if returned else call_add(messages, info)


def test_nothing_already_counted_is_tokenized_again() -> None:
    tokenized: list[str] = []
    real = token_counter()

    @dataclass(frozen=True)
    class Recording(TokenCounter):
        def count_spans(self, text: str, starts: Any) -> list[int]:
            tokenized.append(text)
            return real.count_spans(text, starts)

    recording = Recording(encoding=real.encoding, exact=real.exact, _encoder=real._encoder)
    factory = ToolFactory([Adder()])
    wiring = PromptWiring(factory)
    wiring.render_system_prompt(prompt="You are @A.")
    accountant = RequestAccountant(wiring, counter=recording, rules=ANY)
    events: list[PromptAccountingEvent] = []
    agent: Agent[None, str] = Agent(
        FunctionModel(add_then_answer),
        instructions=wiring.system_prompt,
        tools=factory.get_tools(),
        capabilities=[
            PromptAccounting(accountant, publish_to(events), agent="@A", rules=lambda: ANY)
        ],
    )
    result = agent.run_sync("first")
    once = list(tokenized)
    tokenized.clear()
    agent.run_sync("second", message_history=result.all_messages())

    assert len(events) == 4
    assert wiring.system_prompt in once and wiring.system_prompt not in tokenized
    assert any(t.startswith('{"type":"function"') for t in once)
    assert not any(t.startswith('{"type":"function"') for t in tokenized)
    # the second run tokenized only texts never counted before: the first run's answer
    # (sent for the first time) and its own prompt; its call and return repeat run 1's
    assert tokenized == ["ok", "second"]


def test_a_failure_in_accounting_never_breaks_the_run(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> PrefixCacheRules:
        raise RuntimeError("no rules today")

    wiring = PromptWiring(ToolFactory([Adder()]))
    events: list[PromptAccountingEvent] = []
    accounting = PromptAccounting(
        RequestAccountant(wiring), publish_to(events), agent="@A", rules=broken
    )
    agent: Agent[None, str] = Agent(
        FunctionModel(lambda m, i: ModelResponse(parts=[TextPart("fine")])),
        capabilities=[accounting],
    )
    assert agent.run_sync("hi").output == "fine"
    assert events == []
    assert "could not be accounted" in caplog.text


def test_history_added_up_in_bulk_agrees_with_span_by_span() -> None:
    from akgentic.agent.accounting.accountant import _parts, _spans
    from akgentic.agent.accounting.segments import Counted, Segment
    from akgentic.agent.accounting.source import Source

    def seg(channel: str, tokens: int, framing: int, card: str = "") -> Counted:
        segment = Segment.single("user", f"{channel}{tokens}", Source(channel, card), opens=True)  # type: ignore[arg-type]
        return Counted(segment, (tokens,), framing)

    head = [seg("tool_call", 50, 0, "A"), seg("system_prompt", 30, 4, "B")]
    history = [seg("history", t, f) for t, f in [(10, 4), (7, 4), (0, 4), (25, 0), (3, 4)]]
    tail = [seg("message", 9, 4)]
    everything = [*head, *history, *tail]
    for cached in range(sum(c.tokens for c in everything) + 2):
        reference: dict[tuple[str, str], list[int]] = {}
        _spans(reference, everything, cached)  # type: ignore[arg-type]
        bulk = {
            (p.channel, p.card): [p.tokens, p.cached, p.items]
            for p in _parts(head, history, tail, cached)
        }
        assert bulk == reference, cached


def published_request(
    system: str, user: str, tools: list[Any]
) -> Any:  # a request built as OpenAI's cookbook sends it
    from pydantic_ai.messages import InstructionPart, UserPromptPart
    from pydantic_ai.models import ModelRequestContext, ModelRequestParameters

    params = ModelRequestParameters(
        function_tools=tools, instruction_parts=[InstructionPart(content=system)]
    )
    return ModelRequestContext(
        model=FunctionModel(lambda m, i: ModelResponse(parts=[])),
        messages=[ModelRequest(parts=[UserPromptPart(user)])],
        model_settings=None,
        model_request_parameters=params,
    )


def test_our_count_against_openai_published_samples() -> None:
    """OpenAI's cookbook "How to count tokens with tiktoken" publishes the API's count of
    two requests for gpt-4o: 124 prompt tokens for six messages (five carrying a ``name``,
    which pydantic-ai never sends: 14 tokens), 101 for two messages and one tool."""
    from pydantic_ai.tools import ToolDefinition

    accountant = RequestAccountant(PromptWiring(ToolFactory([])), rules=ANY)
    messages = [
        "You are a helpful, pattern-following assistant that translates corporate jargon "
        "into plain English.",
        "New synergies will help drive top-line growth.",
        "Things working well together will increase revenue.",
        "Let's circle back when we have more bandwidth to touch base on opportunities for "
        "increased leverage.",
        "Let's talk later when we're less busy about how to do better.",
        "This late pivot means we don't have time to boil the ocean for the client deliverable.",
    ]
    ours = sum(count_tokens(m) for m in messages) + MESSAGE_FRAMING * 6 + REPLY_PRIMING
    assert ours + 14 == 124  # our rule is OpenAI's for messages: exact, names aside

    weather = ToolDefinition(
        name="get_current_weather",
        description="Get the current weather in a given location",
        parameters_json_schema={
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "The city and state, e.g. San Francisco, CA",
                },
                "unit": {
                    "type": "string",
                    "description": "The unit of temperature to return",
                    "enum": ["celsius", "fahrenheit"],
                },
            },
            "required": ["location"],
        },
    )
    request = published_request(
        "You are a helpful assistant that can answer to questions about the weather.",
        "What's the weather like in San Francisco?",
        [weather],
    )
    event = accountant.record(accountant.capture(request, agent="@A", now=0))
    assert event.input_tokens == 118  # the API: 101
    assert event.tool_schema_tokens == 85  # the API renders this tool in 101 - 33 = 68
    assert event.input_tokens - event.tool_schema_tokens == 33  # messages: exact


def test_a_companions_request_does_not_become_the_previous_request() -> None:
    """A summary between two turns (a companion's request, on the turns' prefix) is
    compared with the turn before it, but the next turn is still compared with that turn:
    what it shares with the summary is not what the provider's cache holds for it."""

    def turns(
        with_summary: bool,
    ) -> tuple[list[PromptAccountingEvent], list[PromptAccountingEvent]]:
        s = setup()
        summaries: list[PromptAccountingEvent] = []
        history = s.agent.run_sync(s.wiring.turn_prompt("first", None)).all_messages()
        if with_summary:
            companion = PromptAccounting(
                s.accountant.companion("summary"),
                publish_to(summaries),
                agent="@A",
                rules=lambda: ANY,
            )
            summarizer: Agent[None, str] = Agent(
                s.agent.model,  # the same model: one prefix cache
                instructions=s.wiring.render_system_prompt(
                    prompt="You are @A, the team's analyst."
                ),
                capabilities=[companion],
            )
            summarizer.run_sync(message_history=with_summary_ask(history))
        s.agent.run_sync(s.wiring.turn_prompt("second", None), message_history=history)
        return s.events, summaries

    (first, second), [summary] = turns(with_summary=True)
    (_, alone), _ = turns(with_summary=False)
    assert (summary.kind, summary.request, second.request) == ("summary", 2, 3)
    assert second.shared_prefix_tokens == alone.shared_prefix_tokens
    assert second.shared_prefix_tokens == first.input_tokens - REPLY_PRIMING
