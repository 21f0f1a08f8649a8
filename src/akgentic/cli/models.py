"""``--model`` and ``--base-url``: the model a team is created or resumed on.

``--base-url URL`` points the team's OpenAI-compatible models (``openai-compatible:``,
``ollama:``) at a server: those of ``--model`` when given, else those of the team card.
On ``teams resume`` it goes with ``--model`` — the restored members keep the models
(and endpoints) they were created with, which ``--model`` replaces. Either way the URL
is stored with the team's models, so a later resume needs neither flag again.

A scenario file in ``--model`` (``scripted:./my.yaml``) is a path typed on the command
line, so it is read from the current folder, as any other path there; a card's own
``models`` read theirs from the card's folder. The team keeps the absolute path, so a
resume from another folder plays the same file. (With ``--server`` the server reads it.)
"""

from __future__ import annotations

from pathlib import Path

from akgentic.agent import AgentConfig
from akgentic.cli.errors import CliError
from akgentic.llm import BASE_URL_PROVIDERS, ModelRoster
from akgentic.team import TeamCard
from akgentic.team.card import walk
from akgentic.team.manager import override_models

__all__ = ["local_model", "model_for_resume", "point_card"]


def _clean(value: str | None) -> str | None:
    return (value or "").strip() or None


def local_model(model: str | None) -> str | None:
    """``--model`` for a team of this process: each relative ``scripted:`` scenario made
    absolute from the current folder (``scripted:default`` is the built-in scenario, not a
    file). A server reads the files it plays from its own folders, so ``--server`` sends
    ``--model`` as typed."""
    model = _clean(model)
    if model is None:
        return None
    parts = []
    for part in (p.strip() for p in model.split(",")):
        provider, sep, name = part.partition(":")
        is_file = provider == "scripted" and sep and name not in ("", "default")
        if is_file and not Path(name).is_absolute():
            part = f"scripted:{Path.cwd() / name}"
        parts.append(part)
    return ", ".join(parts)


def _roster(model: str, base_url: str) -> ModelRoster:
    roster = ModelRoster.from_spec(model)  # its errors name the spec, not --base-url
    try:
        return roster.with_base_url(base_url)
    except ValueError as exc:
        raise CliError(f"--base-url: {exc}") from None


def point_card(card: TeamCard, model: str | None, base_url: str | None) -> str | None:
    """Apply ``--base-url`` to ``card`` (in place) and return the ``--model`` still to
    apply: ``None`` once the URL went into the card's models."""
    model, url = _clean(model), _clean(base_url)
    if url is None:
        return model
    if model is not None:
        override_models(card, _roster(model, url))
        return None
    configs = [s.card.config for _, s, _ in walk(card.members)]
    served = [
        config
        for config in configs + [p.config for p in card.profiles]
        if isinstance(config, AgentConfig)
        and any(c.provider in BASE_URL_PROVIDERS for c in config.models.models)
    ]
    if not served:
        raise CliError(
            f"--base-url is for {' and '.join(BASE_URL_PROVIDERS)} models, and team "
            f"{card.name!r} has none: add --model openai-compatible:MODEL"
        )
    for config in served:
        config.models = config.models.with_base_url(url)
    return None


def model_for_resume(model: str | None, base_url: str | None) -> str | ModelRoster | None:
    """``--model`` (with ``--base-url``) as ``TeamManager.resume_team`` takes it."""
    model, url = local_model(model), _clean(base_url)
    if url is None:
        return model
    if model is None:
        raise CliError(
            "on resume, --base-url goes with --model (the members keep the models they were "
            "created with): add --model openai-compatible:MODEL"
        )
    return _roster(model, url)
