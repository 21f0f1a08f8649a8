"""The scripted model driving a real pydantic-ai Agent: tools, output, steps, errors."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    CompactionPart,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from akgentic.llm import (
    SUMMARY_INSTRUCTIONS,
    ScenarioError,
    ScriptedModel,
    from_stream_event,
    load_scenario,
    summary_prompt,
    with_summary_ask,
)
from akgentic.llm.events import LlmTextDeltaEvent

SCENARIO = textwrap.dedent(
    r"""
    name: support
    roles:
      assistant:
        rules:
          - when: 'weather in (?P<city>\w+)'
            steps:
              - tool_calls:
                  - tool: get_weather
                    args: {city: "{city}"}
              - text: "[scripted] The weather in {city}: {result}"
          - when: "(?i)^hello"
            reply: {text: "[scripted] Hello! You said {0!r}."}
          - when: 'forecast (\w+) (\w+)'
            reply:
              tool_calls:
                - {tool: get_weather, args: {city: "{1}"}}
                - {tool: get_weather, args: {city: "{2}"}}
          - when: "storm"
            source: tool_return
            text: "[scripted] Take shelter: {message}"
        default: {text: "[scripted] No rule for: {message}"}
      analyst:
        rules:
          - when: "report on (?P<topic>.+)"
            output: {title: "Report: {topic}", score: 7}
    """
)


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "support.yaml"
    path.write_text(SCENARIO)
    return path


def weather_agent(model: ScriptedModel, calls: list[str]) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(model)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        calls.append(city)
        return "storm warning" if city == "Brest" else f"sunny in {city}"

    return agent


class Report(BaseModel):
    title: str
    score: int


def test_model_says_it_is_scripted(scenario_file: Path) -> None:
    model = ScriptedModel.from_file(scenario_file, role="assistant")
    assert model.model_name == "scripted:support"
    assert model.system == "scripted"


def test_tool_call_round_trip_through_a_real_agent(scenario_file: Path) -> None:
    calls: list[str] = []
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), calls)
    result = agent.run_sync("What is the weather in Paris today?")
    assert calls == ["Paris"]
    assert result.output == "[scripted] The weather in Paris: sunny in Paris"
    assert result.usage.requests == 2
    assert result.usage.tool_calls == 1
    assert result.usage.input_tokens > 0
    call = result.all_messages()[1]
    assert isinstance(call, ModelResponse)
    assert call.model_name == "scripted:support"
    assert isinstance(call.parts[0], ToolCallPart)
    assert call.parts[0].args == {"city": "Paris"}


def test_single_step_reply_with_positional_groups(scenario_file: Path) -> None:
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), [])
    assert agent.run_sync("HELLO there").output == "[scripted] Hello! You said 'HELLO'."


def test_default_reply(scenario_file: Path) -> None:
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), [])
    assert agent.run_sync("tell me a joke").output == "[scripted] No rule for: tell me a joke"


def test_builtin_default_scenario_is_plainly_labelled() -> None:
    result = Agent(ScriptedModel.default()).run_sync("ping")
    assert result.output.startswith("[scripted]")
    assert "not an LLM" in result.output
    assert result.output.endswith("You said: ping")


def asked_for(result: Any) -> list[str]:
    """The cities the model asked for, in the order it asked (the calls of one step run
    concurrently: the order they run in is the machine's, not the scenario's)."""
    return [
        part.args_as_dict()["city"]
        for message in result.all_messages()
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart)
    ]


def test_exhausted_rule_closes_with_the_tool_returns(scenario_file: Path) -> None:
    calls: list[str] = []
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), calls)
    result = agent.run_sync("forecast Oslo Rome")
    assert asked_for(result) == ["Oslo", "Rome"] and sorted(calls) == ["Oslo", "Rome"]
    assert result.output == "[scripted] sunny in Oslo\nsunny in Rome"


def test_tool_return_rule_matches_follow_up(scenario_file: Path) -> None:
    calls: list[str] = []
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), calls)
    result = agent.run_sync("forecast Brest Nantes")
    assert asked_for(result) == ["Brest", "Nantes"] and sorted(calls) == ["Brest", "Nantes"]
    assert result.output == "[scripted] Take shelter: storm warning\nsunny in Nantes"


def test_second_run_with_history_starts_a_new_turn(scenario_file: Path) -> None:
    calls: list[str] = []
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), calls)
    first = agent.run_sync("weather in Lyon")
    second = agent.run_sync("weather in Nice", message_history=first.all_messages())
    assert second.output == "[scripted] The weather in Nice: sunny in Nice"
    assert calls == ["Lyon", "Nice"]


def test_runs_are_deterministic(scenario_file: Path) -> None:
    model = ScriptedModel.from_file(scenario_file, role="assistant")

    def transcript() -> list[Any]:
        result = weather_agent(model, []).run_sync("weather in Oslo")
        return [
            [
                (type(p).__name__, getattr(p, "content", None), getattr(p, "args", None))
                for p in m.parts
            ]
            for m in result.all_messages()
            if isinstance(m, ModelResponse)
        ]

    assert transcript() == transcript()


def test_structured_output(scenario_file: Path) -> None:
    agent = Agent(ScriptedModel.from_file(scenario_file, role="analyst"), output_type=Report)
    result = agent.run_sync("please write a report on tidal energy")
    assert result.output == Report(title="Report: tidal energy", score=7)


def test_structured_output_without_a_rule_is_generated_valid(scenario_file: Path) -> None:
    agent = Agent(ScriptedModel.from_file(scenario_file, role="analyst"), output_type=Report)
    result = agent.run_sync("something unscripted")
    assert isinstance(result.output, Report)


def test_invalid_scripted_output_is_a_scenario_error() -> None:
    model = ScriptedModel.from_dict(
        {"rules": [{"when": ".", "output": {"title": "t", "score": "x"}}]}
    )
    with pytest.raises(ScenarioError, match="rejected a scripted reply.*score"):
        Agent(model, output_type=Report).run_sync("go")


def test_rejected_scripted_text_is_a_scenario_error(scenario_file: Path) -> None:
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), [])

    @agent.output_validator
    def no_hello(text: str) -> str:
        if "Hello" in text:
            raise ModelRetry("no greetings please")
        return text

    with pytest.raises(ScenarioError, match="asked for a retry: no greetings please"):
        agent.run_sync("hello")


def test_a_rejection_ending_in_a_full_stop_is_said_once_with_what_to_change() -> None:
    """A refusal's own full stop was followed by the error's ('...from @Human).. Fix'),
    and the hint named only the output type (an agent refuses a valid reply too: a
    recipient, the team's max_agent_hops)."""
    agent = Agent(ScriptedModel.from_dict({"default": {"text": "hi"}}))

    @agent.output_validator
    def refuse(text: str) -> str:
        raise ModelRetry("Stop: do not write to @B.")

    with pytest.raises(ScenarioError) as caught:
        agent.run_sync("go")
    words = str(caught.value)
    assert "asked for a retry: Stop: do not write to @B. A scenario does not answer" in words
    assert ".." not in words and "within the team's max_agent_hops" in words


def test_scalar_output_is_wrapped_for_the_output_tool() -> None:
    model = ScriptedModel.from_dict({"rules": [{"when": "(\\d+)", "output": 42}]})
    assert Agent(model, output_type=int).run_sync("give 7").output == 42


def test_tool_retry_advances_to_the_next_step() -> None:
    model = ScriptedModel.from_dict(
        {
            "rules": [
                {
                    "when": "go",
                    "steps": [
                        {"tool_calls": [{"tool": "flaky", "args": {}}]},
                        {"text": "[scripted] after retry: {result}"},
                    ],
                }
            ]
        }
    )
    agent: Agent[None, str] = Agent(model)

    @agent.tool_plain(retries=2)
    def flaky() -> str:
        raise ModelRetry("come back later")

    assert agent.run_sync("go").output == "[scripted] after retry: come back later"


def test_calling_an_unknown_tool_is_a_scenario_error(scenario_file: Path) -> None:
    agent = Agent(ScriptedModel.from_file(scenario_file, role="assistant"))
    with pytest.raises(ScenarioError) as info:
        agent.run_sync("weather in Paris")
    message = str(info.value)
    assert str(scenario_file) in message
    assert "roles.assistant.rules[0] steps[0]" in message
    assert "'get_weather'" in message


def test_a_summary_request_is_summarised_not_taken_for_the_turns_it_holds(
    scenario_file: Path,
) -> None:
    """The request that asks for a summary (marked by ``with_summary_ask``) is answered with
    a summary of the history before the ask, not matched against the rules of its turns."""
    summarizer = Agent(ScriptedModel.from_file(scenario_file, role="assistant"))
    history = [
        ModelRequest(parts=[UserPromptPart("What is the weather in Paris today?")]),
        ModelResponse(parts=[TextPart("[scripted] sunny in Paris")]),
    ]
    answer = summarizer.run_sync(message_history=with_summary_ask(history)).output
    assert answer == "[scripted] Summary of 2 lines; the last: [scripted] sunny in Paris"
    nothing = summarizer.run_sync(message_history=with_summary_ask([])).output
    assert nothing == "[scripted] Summary: nothing was said."


def test_a_summary_counts_the_same_lines_on_the_prefix_and_bounded() -> None:
    """The two forms of a summary's request (the history as messages ended by the ask, and
    the bounded one: the history as text) are answered with the same summary: what
    pydantic-ai adds to the messages on their way to a model (a toolset's "now available"
    note, from the history's ``ToolAvailabilityDeltaPart``) is not counted as a line of the
    conversation, as the text form never holds it — so a comparison of the two forms is
    not fooled by their line counts."""
    history = [
        ModelRequest(parts=[CompactionPart(content="An earlier summary.\nIt had two lines.")]),
        ModelRequest(parts=[UserPromptPart("Open the board,\nthen add a task.")]),
        ModelResponse(parts=[ToolCallPart("enable_toolset", {"name": "tasks"}, "c1")]),
        ModelRequest(
            parts=[
                ToolReturnPart("enable_toolset", "Toolset 'tasks' activated.", "c1"),
                ToolAvailabilityDeltaPart(tools_added=["tasks_add"], tool_call_id="c1"),
            ]
        ),
        ModelResponse(parts=[ToolCallPart("tasks_add", {"title": "Write"}, "c2")]),
        ModelRequest(parts=[ToolReturnPart("tasks_add", "added 'Write'", "c2")]),
        ModelResponse(parts=[TextPart("Done: the board has one task.")]),
    ]

    def enable_toolset(name: str) -> str:
        return name

    def tasks_add(title: str) -> str:
        return title

    class Seeing(ScriptedModel):
        seen: list[Any] = []

        def respond(self, messages: Any, params: Any) -> ModelResponse:
            self.seen.append(list(messages))
            return super().respond(messages, params)

    model = Seeing.from_dict({"default": {"text": "turn"}})
    on_prefix = Agent(model, instructions="Assist.", tools=[enable_toolset, tasks_add])
    prefix = on_prefix.run_sync(message_history=with_summary_ask(history)).output
    sent = [part for message in Seeing.seen[-1] for part in message.parts]
    assert any("now available" in str(getattr(p, "content", "")) for p in sent)  # the note
    bounded_agent = Agent(ScriptedModel.default(), instructions=SUMMARY_INSTRUCTIONS)
    bounded = bounded_agent.run_sync(summary_prompt(history)).output
    assert bounded == prefix
    assert prefix == "[scripted] Summary of 9 lines; the last: Done: the board has one task."


def test_unknown_role_is_an_error_listing_roles(scenario_file: Path) -> None:
    with pytest.raises(ScenarioError, match="no script for role 'poet'.*analyst, assistant"):
        ScriptedModel.from_file(scenario_file, role="poet")


def test_catch_all_role() -> None:
    model = ScriptedModel.from_dict(
        {"roles": {"*": {"default": {"text": "[scripted] any"}}, "a": {"rules": []}}}, role="b"
    )
    assert Agent(model).run_sync("x").output == "[scripted] any"


def test_streaming_text_deltas(scenario_file: Path) -> None:
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), [])
    deltas: list[LlmTextDeltaEvent] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for event in events:
            deltas.extend(
                e for e in from_stream_event(event, run_id="r") if isinstance(e, LlmTextDeltaEvent)
            )

    result = agent.run_sync("hello world", event_stream_handler=handler)
    assert [d.delta for d in deltas] == ["[scripted] ", "Hello! ", "You ", "said ", "'hello'."]
    assert "".join(d.delta for d in deltas) == result.output


def test_run_stream(scenario_file: Path) -> None:
    agent = weather_agent(ScriptedModel.from_file(scenario_file, role="assistant"), [])

    async def main() -> list[str]:
        async with agent.run_stream("weather in Oslo") as stream:
            return [t async for t in stream.stream_text(delta=True, debounce_by=None)]

    chunks = asyncio.run(main())
    assert "".join(chunks) == "[scripted] The weather in Oslo: sunny in Oslo"
    assert len(chunks) > 1


def test_text_and_tool_calls_in_one_step() -> None:
    model = ScriptedModel.from_dict(
        {"rules": [{"when": "x", "text": "[scripted] calling", "tool_calls": [{"tool": "t"}]}]}
    )
    agent: Agent[None, str] = Agent(model)

    @agent.tool_plain
    def t() -> str:
        return "done"

    result = agent.run_sync("x")
    first = result.all_messages()[1]
    assert isinstance(first, ModelResponse)
    assert isinstance(first.parts[0], TextPart)
    assert result.output == "[scripted] done"


# -- malformed scenarios -----------------------------------------------------------------------

MALFORMED: list[tuple[str, str]] = [
    ("rules:\n  - when: '('\n    text: x\n", r"top level\.rules\[0\]\.when: invalid regex"),
    ("rules:\n  - when: a\n", r"top level\.rules\[0\]: .*exactly one of `reply`"),
    (
        "rules:\n  - when: a\n    text: x\n  - when: b\n    text: '{nope}'\n",
        r"top level\.rules\[1\] steps\[0\]: unknown placeholder \{nope\}",
    ),
    (
        "rules:\n  - when: '(?P<c>x)'\n    tool_calls: [{tool: t, args: {a: '{d}'}}]\n",
        r"rules\[0\] steps\[0\]: unknown placeholder \{d\}",
    ),
    ("rules:\n  - when: a\n    steps: []\n", r"rules\[0\]: .*`steps` is empty"),
    ("rules:\n  - when: a\n    steps: [{}]\n", r"rules\[0\]: .*at least one of text"),
    ("rules:\n  - when: a\n    text: x\n    colour: red\n", r"rules\[0\]: colour: Extra inputs"),
    ("rules:\n  - when: a\n    text: '{}'\n", r"rules\[0\] steps\[0\]: empty placeholder"),
    ("rules:\n  - when: a\n    text: x\n    source: tool\n", r"rules\[0\]: source"),
    (
        "roles:\n  writer:\n    rules:\n      - when: a\n        text: '{2}'\n",
        r"roles\.writer\.rules\[0\] steps\[0\]: unknown placeholder \{2\}",
    ),
    ("roles:\n  writer: [1, 2]\n", r"roles\.writer must be a mapping"),
    ("roles:\n  writer: {rulez: []}\n", r"roles\.writer has an unknown field rulez;"),
    ("roles:\n  writer: {rulez: [], dflt: {}}\n", r"roles\.writer has unknown fields dflt, rulez;"),
    ("roles: {}\n", r"`roles` must map role names"),
    ("- just\n- a list\n", r"expected a mapping at the top"),
    (
        "rules: [\n",
        r"not valid YAML: expected the node content, but found '<stream end>' at line 2",
    ),
    ("default: {text: '{result} {x}'}\n", r"top level\.default steps\[0\]: unknown placeholder"),
    ("rules: &r [{when: a, text: x, then: *r}]\n", r"not valid YAML: the data contains itself"),
    ("rules: {when: a}\n", r"top level\.rules must be a list"),
]


@pytest.mark.parametrize(("text", "expected"), MALFORMED)
def test_malformed_scenario_names_file_and_rule(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=expected) as info:
        ScriptedModel.from_file(path)
    assert str(path) in str(info.value)


def test_missing_scenario_file(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read it"):
        ScriptedModel.from_file(tmp_path / "absent.yaml")


def test_literal_braces_are_doubled() -> None:
    model = ScriptedModel.from_dict({"default": {"text": '[scripted] {{"echo": "{message}"}}'}})
    assert Agent(model).run_sync("hi").output == '[scripted] {"echo": "hi"}'


def test_a_scenario_file_over_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "huge.scenario.yaml"
    with path.open("wb") as file:
        file.truncate(5 * 1024 * 1024)  # sparse: written in no time
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"scenario {path}: 5,242,880 bytes (5.0 MiB), over akgentic's 4 MiB")


def test_a_device_given_as_a_scenario_is_refused_unread() -> None:
    """``/dev/zero`` says its size is 0 and never ends: refused before it is opened."""
    with pytest.raises(ScenarioError) as refused:
        load_scenario("/dev/zero")
    (line,) = str(refused.value).splitlines()
    assert line == (
        "scenario /dev/zero: cannot read it: a character device, not a file: "
        "name the YAML file itself"
    )


def test_a_scenario_that_is_not_utf8_names_the_file_and_the_fix(tmp_path: Path) -> None:
    """As a team card that is not UTF-8: the file, the line, the byte, and what to do."""
    path = tmp_path / "bin.scen.yaml"
    path.write_bytes(b"name: x\n\x9a\x01")
    with pytest.raises(ScenarioError) as refused:
        load_scenario(path)
    assert str(refused.value) == (
        f"scenario {path}:2: not UTF-8 text (byte 0x9a at offset 8): save the scenario as UTF-8"
    )
