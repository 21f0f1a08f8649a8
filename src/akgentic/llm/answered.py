"""Which model answered: a run's usage booked to the models that answered its requests.

A ``FallbackModel`` is named ``fallback:a,b`` — no model at all. Its requests are each
answered by one of its models, and the response says which (``ModelResponse.model_name``,
the name the provider answered as). The contract:

- :func:`answering_name` names the model that answered a response as the agent's model
  names it: the chain's member that answered, by its own ``model_name`` (what a model
  without fallbacks is booked as, so one model is one name in a report, whichever way
  it answered), matched by the response's name (a provider may add a version to it:
  ``gpt-5-mini`` answers as ``gpt-5-mini-2025-08-07``).
- :func:`answer_of` takes that name and the response's usage as an :class:`Answer`; the
  agent keeps one per answered request of a run.
- :func:`usage_by_model` books a run's usage to the models that answered it: all of it
  to the one model that answered, or, when several did (a fallback answered some
  requests), each its own requests' tokens — the last to answer takes the rest (the run's
  tool calls, and whatever no response reported), so the parts always add up to the run.
- :func:`answering_config` finds the roster entry a model name answered for (its cache
  rules are that provider's), and :func:`model_label` names a model when no response
  does (a run whose requests all failed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.usage import RequestUsage, RunUsage

from akgentic.llm.config import ModelConfig, ModelRoster

__all__ = [
    "Answer",
    "answer_of",
    "answering_config",
    "answering_name",
    "model_label",
    "usage_by_model",
]

_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass(frozen=True, slots=True)
class Answer:
    """One answered request: the model that answered it, and what it used."""

    model: str
    usage: RequestUsage


def _unwrapped(model: Model) -> Model:
    """``model`` without the wrappers around it (a run's capabilities'), down to a
    ``FallbackModel`` (whose members are wrapped in turn) or the model itself."""
    while isinstance(model, WrapperModel):
        model = model.wrapped
    return model


def answering_name(model: Model, response: ModelResponse) -> str:
    """The name of the model of ``model`` that answered ``response`` (module docstring):
    ``model``'s own unless it is a fallback chain; the response's own name when no
    member of the chain goes by it."""
    inner = _unwrapped(model)
    if not isinstance(inner, FallbackModel):
        return inner.model_name
    said = response.model_name or ""
    names = [member.model_name for member in inner.models]
    if said in names:
        return said
    return next((name for name in names if said.startswith(f"{name}-")), said)


def answer_of(model: Model, response: ModelResponse) -> Answer:
    """Who of ``model`` answered ``response`` (:func:`answering_name`), and its usage."""
    return Answer(answering_name(model, response), response.usage)


def model_label(model: Model) -> str:
    """The name to book usage to when no response names the model: a fallback chain's
    first model (the one meant), else the model's own name."""
    inner = _unwrapped(model)
    if isinstance(inner, FallbackModel):
        return inner.models[0].model_name
    return inner.model_name


def usage_by_model(
    run_usage: RunUsage, answers: Sequence[Answer], default: str
) -> list[tuple[str, RunUsage]]:
    """``run_usage`` split among the models of ``answers`` (module docstring), in the order
    they first answered; all of it to ``default`` when no answer names a model."""
    names = list(dict.fromkeys(a.model for a in answers if a.model))
    if len(names) <= 1:
        return [(names[0] if names else default, run_usage)]
    last = next(a.model for a in reversed(answers) if a.model)
    shares: list[tuple[str, RunUsage]] = []
    booked = RunUsage()
    for name in names:
        if name == last:
            continue
        share = RunUsage(requests=sum(1 for a in answers if a.model == name))
        for field in _TOKENS:
            setattr(share, field, sum(getattr(a.usage, field) for a in answers if a.model == name))
        shares.append((name, share))
        booked.requests += share.requests
        for field in _TOKENS:
            setattr(booked, field, getattr(booked, field) + getattr(share, field))
    # never below nothing: a run that counted less than its answers said books no debt
    rest = RunUsage(
        requests=max(run_usage.requests - booked.requests, 0), tool_calls=run_usage.tool_calls
    )
    for field in _TOKENS:
        setattr(rest, field, max(getattr(run_usage, field) - getattr(booked, field), 0))
    at = names.index(last)
    return [*shares[:at], (last, rest), *shares[at:]]


def answering_config(roster: ModelRoster, model_name: str | None) -> ModelConfig:
    """The entry of ``roster`` that answered as ``model_name``: the one in force or one of
    its ``fallback_models`` whose model (or key) it names — a provider may add a version
    to the name it answers as (``gpt-5-mini`` answers as ``gpt-5-mini-2025-08-07``) —
    else the one in force."""
    active = roster.active_config
    if not model_name:
        return active
    known = roster.keys()
    candidates = [active, *(roster.get(k) for k in active.fallback_models if k in known)]
    for config in candidates:
        if model_name in (config.model, config.key):
            return config
    for config in candidates:
        if model_name.startswith(f"{config.model}-"):
            return config
    return active
