"""Compaction: the head stays, older turns become one summary, tool pairs are never split."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    BaseToolCallPart,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from akgentic.llm import (
    ScriptedModel,
    apply_summary,
    compact,
    context_tokens,
    estimate_tokens,
    needs_compaction,
    plan_compaction,
    safe_cut,
    summary_prompt,
)
from akgentic.llm.compaction import SUMMARY_METADATA_KEY, TOOL_ARGS_CHARS, TOOL_RESULT_CHARS

SCENARIO = {
    "rules": [
        {
            "when": "pair",
            "steps": [
                {
                    "tool_calls": [
                        {"tool": "look", "args": {"q": "a"}},
                        {"tool": "look", "args": {"q": "b"}},
                    ]
                },
                {"text": "[scripted] looked"},
            ],
        },
        {
            "when": "retry",
            "steps": [
                {"tool_calls": [{"tool": "picky", "args": {"n": "1"}}]},
                {"tool_calls": [{"tool": "look", "args": {"q": "c"}}]},
                {"text": "[scripted] retried"},
            ],
        },
        {"when": "report", "output": {"title": "r"}},
    ],
}


class Title(BaseModel):
    title: str


def _history() -> list[ModelMessage]:
    model = ScriptedModel.from_dict(SCENARIO)
    agent: Agent[None, str | Title] = Agent(
        model, system_prompt="You are terse.", output_type=[str, Title]
    )

    @agent.tool_plain
    def look(q: str) -> str:
        return f"seen {q} " * 20

    @agent.tool_plain(retries=3)
    def picky(n: str) -> str:
        raise ModelRetry("not that one")

    messages: list[ModelMessage] = []
    for prompt in ("pair", "retry", "report", "pair", "hello"):
        messages = agent.run_sync(prompt, message_history=messages).all_messages()
    return messages


HISTORY = _history()


def _call_ids(messages: list[ModelMessage]) -> set[str]:
    return {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, BaseToolCallPart)
    }


def _answer_ids(messages: list[ModelMessage]) -> set[str]:
    return {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }


def _without_usage(message: ModelMessage) -> ModelMessage:
    """``message`` as compaction keeps it: a response without its (stale) usage."""
    if isinstance(message, ModelResponse):
        return replace(message, usage=RequestUsage())
    return message


def test_history_has_the_shapes_we_cut_through() -> None:
    answers = [p for m in HISTORY if isinstance(m, ModelRequest) for p in m.parts]
    assert any(isinstance(p, ToolReturnPart) and p.outcome == "retried" for p in answers)
    assert any(isinstance(p, ToolReturnPart) and p.tool_name == "final_result" for p in answers)
    assert any(
        isinstance(m, ModelResponse) and sum(isinstance(p, ToolCallPart) for p in m.parts) == 2
        for m in HISTORY
    )


@pytest.mark.parametrize("keep_last", range(len(HISTORY) + 2))
def test_compaction_keeps_tool_pairs_together(keep_last: int) -> None:
    summarized: list[list[ModelMessage]] = []

    def summarize(older: list[ModelMessage]) -> str:
        summarized.append(older)
        return f"summary of {len(older)} messages"

    result = compact(HISTORY, summarize, keep_last=keep_last)

    # every answer in the result has its call in the result, and vice versa
    assert _answer_ids(result) <= _call_ids(result)
    answered = _call_ids(result) & _answer_ids(HISTORY)
    assert answered <= _answer_ids(result)

    if not summarized:
        assert result == HISTORY
        return
    (older,) = summarized
    # ...and the same holds on the summarised side of the cut
    assert _answer_ids(older) <= _call_ids(older)
    assert _call_ids(older) & _answer_ids(HISTORY) <= _answer_ids(older)

    head = result[0]
    assert isinstance(head, ModelRequest)
    assert isinstance(head.parts[0], SystemPromptPart)
    assert head.parts[0].content == "You are terse."
    summary = head.parts[-1]
    assert isinstance(summary, CompactionPart)
    assert summary.content == f"summary of {len(older)} messages"
    assert summary.metadata is not None
    cut = summary.metadata[SUMMARY_METADATA_KEY]["messages"]
    assert result[1:] == [_without_usage(m) for m in HISTORY[cut:]]
    assert len(result) - 1 >= keep_last
    # nothing is lost: the summary covers exactly the messages cut away
    assert sum(len(m.parts) for m in older) == sum(len(m.parts) for m in HISTORY[:cut]) - 1


@pytest.mark.parametrize("keep_last", range(len(HISTORY) + 1))
def test_compacted_history_drives_a_new_run(keep_last: int) -> None:
    result = compact(HISTORY, lambda older: "earlier: tools were used", keep_last=keep_last)
    model = ScriptedModel.from_dict(SCENARIO)
    agent: Agent[None, str] = Agent(model)

    @agent.tool_plain
    def look(q: str) -> str:
        return q

    assert agent.run_sync("pair", message_history=result).output == "[scripted] looked"


def test_cut_moves_earlier_to_keep_a_pair() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("sys"), UserPromptPart("q")]),
        ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart("t", "r", tool_call_id="c1")]),
        ModelResponse(parts=[TextPart("a")]),
    ]
    assert safe_cut(messages, 2) == 1
    assert safe_cut(messages, 3) == 3
    assert safe_cut(messages, 99) == 4
    result = compact(messages, lambda older: "s", keep_last=2)
    assert [type(m) for m in result] == [ModelRequest, ModelResponse, ModelRequest, ModelResponse]


def test_legacy_retry_prompt_part_stays_with_its_call() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        retry = RetryPromptPart("bad args", tool_name="t", tool_call_id="c1")
        messages: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart("q")]),
            ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="c1")]),
            ModelRequest(parts=[retry]),
            ModelResponse(parts=[TextPart("a")]),
        ]
    assert safe_cut(messages, 2) == 1


def test_nothing_to_summarise_returns_the_history_unchanged() -> None:
    calls: list[int] = []

    def summarize(older: list[ModelMessage]) -> str:
        calls.append(1)
        return "s"

    only_system: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("sys")]),
        ModelResponse(parts=[TextPart("a")]),
    ]
    assert compact(only_system, summarize, keep_last=1) == only_system
    assert compact([], summarize) == []
    assert calls == []


def test_summaries_chain() -> None:
    once = compact(HISTORY, lambda older: "first", keep_last=6)
    seen: list[list[ModelMessage]] = []

    def summarize(older: list[ModelMessage]) -> str:
        seen.append(older)
        return "second"

    twice = compact(once, summarize, keep_last=2)
    first_part = seen[0][0].parts[0]
    assert isinstance(first_part, CompactionPart) and first_part.content == "first"
    head = twice[0]
    assert isinstance(head, ModelRequest)
    assert [type(p) for p in head.parts] == [SystemPromptPart, CompactionPart]


def test_keep_last_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="keep_last"):
        compact(HISTORY, lambda older: "s", keep_last=-1)


def test_estimate_tokens_is_chars_over_four() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("x" * 40)]),
        ModelResponse(parts=[TextPart("y" * 41)]),
    ]
    assert estimate_tokens(messages) == 21  # ceil(81 / 4)
    assert estimate_tokens([]) == 0


def test_context_tokens_prefers_reported_usage() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("x" * 400)]),
        ModelResponse(parts=[TextPart("y" * 8)], usage=RequestUsage(input_tokens=1000)),
        ModelRequest(parts=[UserPromptPart("z" * 40)]),
    ]
    assert context_tokens(messages) == 1000 + 2 + 10
    assert context_tokens(messages[:1]) == 100


def test_a_history_just_compacted_is_not_measured_by_the_usage_before_it() -> None:
    """The responses kept verbatim reported the input tokens of the context before the
    summary: read as current, the next check would compact again at once (a summary of the
    summary, one more model request) — e.g. at the turn after a ``/compact``."""
    full = RequestUsage(input_tokens=900, output_tokens=1)
    history: list[ModelMessage] = []
    for index in range(4):
        history += [
            ModelRequest(parts=[UserPromptPart(f"question {index}")]),
            ModelResponse(parts=[TextPart(f"answer {index}")], usage=full),
        ]
    assert needs_compaction(history, 1000)
    compacted = compact(history, lambda older: "earlier questions answered", keep_last=2)
    assert not needs_compaction(compacted, 1000)
    assert context_tokens(compacted) == estimate_tokens(compacted)
    kept = compacted[-1]
    assert isinstance(kept, ModelResponse) and kept.text == "answer 3"  # the text is kept


def test_needs_compaction() -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("x" * 400)])]  # 100 tokens
    assert needs_compaction(messages, 125) is True  # 100 >= 0.8 * 125
    assert needs_compaction(messages, 126) is False
    assert needs_compaction(messages, 200, threshold=0.5) is True
    assert needs_compaction(messages, None) is False
    with pytest.raises(ValueError, match="threshold"):
        needs_compaction(messages, 100, threshold=0)


def test_a_summary_prompt_shows_tool_calls_and_results_in_order() -> None:
    """What an agent did through tools is what a summary must keep: each call (name and
    arguments) and each result is in the text a summary is written from, where it happened."""
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart("be brief"), UserPromptPart("write the report")]),
        ModelResponse(
            parts=[
                TextPart("writing it"),
                ToolCallPart("write_file", {"path": "report.md", "text": "# Q3"}, "c1"),
            ]
        ),
        ModelRequest(parts=[ToolReturnPart("write_file", {"bytes": 4, "path": "report.md"}, "c1")]),
        ModelResponse(parts=[ToolCallPart("search", {"q": "revenue"}, "c2")]),
        ModelRequest(
            parts=[ToolReturnPart("search", "the index is offline", "c2", outcome="failed")]
        ),
        ModelResponse(parts=[TextPart("done: report.md")]),
    ]
    prompt = summary_prompt(history)
    assert prompt.splitlines() == [
        "write the report",
        "writing it",
        '[tool call] write_file({"path":"report.md","text":"# Q3"})',
        '[tool result] write_file: {"bytes":4,"path":"report.md"}',
        '[tool call] search({"q":"revenue"})',
        "[tool result] search (failed): the index is offline",
        "done: report.md",
    ]
    assert "be brief" not in prompt  # the system prompt stays: it is not summarised


def test_a_summary_prompt_cuts_a_huge_result_and_says_so() -> None:
    """One huge result (or call) is cut to its bound, saying how much was cut: it neither
    fills the summary's request nor crowds out what came before and after it."""
    huge = "x" * 50_000
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("read the log")]),
        ModelResponse(parts=[ToolCallPart("write_file", {"text": huge}, "c1")]),
        ModelRequest(parts=[ToolReturnPart("write_file", "ok", "c1")]),
        ModelResponse(parts=[ToolCallPart("read_file", {"path": "big.log"}, "c2")]),
        ModelRequest(parts=[ToolReturnPart("read_file", huge, "c2")]),
        ModelResponse(parts=[TextPart("the log is all x")]),
    ]
    prompt = summary_prompt(history)
    lines = prompt.splitlines()
    assert lines[0] == "read the log" and lines[-1] == "the log is all x"
    call = lines[1]
    assert call.startswith('[tool call] write_file({"text":"xxx')
    args = len('{"text":""}') + 50_000
    assert call.endswith(f"[... {args - TOOL_ARGS_CHARS} more characters cut])")
    result = next(line for line in lines if line.startswith("[tool result] read_file: "))
    assert result.endswith(f"[... {50_000 - TOOL_RESULT_CHARS} more characters cut]")
    assert len(result) < TOOL_RESULT_CHARS + 100
    assert len(prompt) < TOOL_ARGS_CHARS + TOOL_RESULT_CHARS + 300


def test_compact_in_two_halves_keeps_the_tail_unchanged_when_asked() -> None:
    """``plan_compaction`` says what a summary replaces and where the tail starts;
    ``apply_summary(keep_usage=True)`` keeps the tail as it is (pydantic-ai's compaction hook
    wants it unchanged), where ``compact`` drops the kept responses' usage."""
    plan = plan_compaction(HISTORY, keep_last=2)
    assert plan is not None
    tail = HISTORY[plan.cut :]
    assert any(isinstance(m, ModelResponse) and m.usage.input_tokens for m in tail)
    kept = apply_summary(HISTORY, plan, "S", keep_usage=True)
    assert all(a is b for a, b in zip(kept[1:], tail, strict=True))
    compacted = compact(HISTORY, lambda older: "S", keep_last=2)
    [summary] = [p for p in kept[0].parts if isinstance(p, CompactionPart)]
    [same] = [p for p in compacted[0].parts if isinstance(p, CompactionPart)]
    assert summary.metadata == {SUMMARY_METADATA_KEY: {"messages": plan.cut, "stale_usage": 2}}
    assert kept[0] == replace(compacted[0], parts=[*compacted[0].parts[:-1], summary])
    assert same.metadata == {SUMMARY_METADATA_KEY: {"messages": plan.cut}}
    assert [_without_usage(m) for m in kept[1:]] == compacted[1:]
    # the tail's kept counts measured the history before the summary: they measure nothing now
    assert context_tokens(kept) == estimate_tokens(kept) == context_tokens(compacted)
    assert plan.older == [replace(HISTORY[0], parts=HISTORY[0].parts[1:]), *HISTORY[1 : plan.cut]]
    assert plan_compaction(HISTORY[:1], keep_last=2) is None
