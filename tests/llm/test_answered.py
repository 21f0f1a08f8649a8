"""Which model answered: a run's usage booked to the models that answered its requests."""

from __future__ import annotations

from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage, RunUsage

from akgentic.llm import (
    Answer,
    ModelRoster,
    answering_config,
    answering_name,
    build_roster_model,
    model_label,
    usage_by_model,
)

ROSTER = ModelRoster.model_validate(
    {
        "models": [
            {"provider": "test", "model": "gpt-5-mini", "fallback_models": ["test:backup"]},
            "test:backup",
            "test:other",
        ]
    }
)


def answered(model: str, tokens: int) -> Answer:
    return Answer(model, RequestUsage(input_tokens=tokens, output_tokens=1))


def test_one_model_answering_is_booked_the_whole_run() -> None:
    run = RunUsage(requests=2, tool_calls=1, input_tokens=50, output_tokens=2)
    answers = [answered("backup", 20), answered("backup", 30)]
    assert usage_by_model(run, answers, "fallback-name") == [("backup", run)]


def test_no_answer_books_the_run_to_the_default() -> None:
    run = RunUsage(requests=1, input_tokens=5)
    assert usage_by_model(run, [], "gpt-5-mini") == [("gpt-5-mini", run)]


def test_several_models_each_get_their_own_and_the_last_the_rest() -> None:
    run = RunUsage(requests=3, tool_calls=2, input_tokens=65, output_tokens=3)
    answers = [answered("a", 20), answered("b", 30), answered("a", 10)]
    [(first, a), (second, b)] = usage_by_model(run, answers, "x")
    assert (first, second) == ("a", "b")
    assert (b.requests, b.input_tokens, b.output_tokens, b.tool_calls) == (1, 30, 1, 0)
    assert (a.requests, a.input_tokens, a.output_tokens, a.tool_calls) == (2, 35, 2, 2)
    assert a.input_tokens + b.input_tokens == run.input_tokens  # the parts add up


def test_the_answering_entry_is_found_by_its_model_a_dated_name_or_its_key() -> None:
    assert answering_config(ROSTER, "backup").key == "test:backup"
    assert answering_config(ROSTER, "gpt-5-mini-2025-08-07").key == "test:gpt-5-mini"
    assert answering_config(ROSTER, "test:backup").key == "test:backup"
    # only the entry in force and its fallbacks answer for it; anything else is the former
    assert answering_config(ROSTER, "other").key == "test:gpt-5-mini"
    assert answering_config(ROSTER, None).key == "test:gpt-5-mini"


def test_a_fallback_chain_answer_is_named_by_the_member_that_gave_it() -> None:
    chain = build_roster_model(ROSTER)
    dated = ModelResponse(parts=[TextPart("hi")], model_name="gpt-5-mini-2025-08-07")
    assert answering_name(chain, dated) == "gpt-5-mini"
    backup = ModelResponse(parts=[TextPart("hi")], model_name="backup")
    assert answering_name(chain, backup) == "backup"
    assert model_label(chain) == "gpt-5-mini"
    single = TestModel(model_name="solo")
    other = ModelResponse(parts=[TextPart("hi")], model_name="solo-2025")
    assert answering_name(single, other) == "solo" == model_label(single)


def test_the_rest_is_never_below_nothing() -> None:
    run = RunUsage(requests=1, input_tokens=10)  # counted less than the answers said
    answers = [answered("a", 20), answered("b", 30)]
    [(_, a), (_, b)] = usage_by_model(run, answers, "x")
    assert (a.requests, a.input_tokens) == (1, 20)
    assert (b.requests, b.input_tokens) == (0, 0)
