"""Model configuration: one ``ModelConfig`` per model, a ``ModelRoster`` of them per agent.

The contract:

- A model is named by its **roster key** ``f"{provider}:{model}"`` (``"openai:gpt-5.2"``). The key
  is what ``ToolState.active_model`` persists and what ``/switch_model`` takes, so it is the only
  identity a model has outside this package.
- A roster holds one or more configs with distinct keys and has exactly one entry in force,
  ``active``. Declaring no ``active`` makes the first entry the one in force.
- Configuration models forbid unknown fields: a typo is an error naming the field, never a silent
  default.
- Nothing here reads the environment or builds a client; :mod:`akgentic.llm.providers` does, so a
  roster can be declared, stored and listed on a machine that holds no API key.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar, Literal, Self, get_args

from pydantic import ConfigDict, Field, field_validator, model_validator

from akgentic.core.error_pickle import reduce_by_fields
from akgentic.core.excerpt import excerpt
from akgentic.core.serialization import SerializableModel
from akgentic.core.words import env_var_name

__all__ = [
    "BASE_URL_ENV",
    "BASE_URL_PROVIDERS",
    "DEFAULT_API_KEY_ENV",
    "ModelConfig",
    "ModelRoster",
    "ProviderName",
    "RosterRow",
    "UnknownModelError",
    "http_url",
]

logger = logging.getLogger(__name__)

ProviderName = Literal[
    "openai", "anthropic", "google", "openai-compatible", "ollama", "scripted", "test", "registered"
]
"""The providers :func:`akgentic.llm.providers.build_model` knows how to build; ``registered``
is a model of your own, registered by name (:func:`akgentic.llm.register_model`)."""

DEFAULT_API_KEY_ENV: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GOOGLE_API_KEY",
}
"""The environment variable holding the key when a config names none. The other providers
(``openai-compatible``, ``ollama``, ``scripted``, ``test``, ``registered``) need no key unless
one is named."""


BASE_URL_PROVIDERS = ("openai-compatible", "ollama")
"""The providers that are an OpenAI-compatible server at a URL of the user's choice
(``--base-url``, :meth:`ModelRoster.with_base_url`)."""

BASE_URL_ENV = "OPENAI_BASE_URL"
"""Where an ``openai-compatible`` model without ``base_url`` finds its endpoint — the
variable the OpenAI client (and so pydantic-ai) reads for ``openai`` models too."""


REGISTERED_UNSET = ("base_url", "api_key_env", "temperature", "max_tokens")
"""The fields a ``registered`` model refuses: its model object is built whole by its owner."""

OPENAI_API_PROVIDERS = ("openai", "openai-compatible", "ollama")
"""The providers whose models speak OpenAI's chat-completions API (``sends_finish_reason``
applies to them only)."""


def http_url(url: str, named: str) -> str:
    """``url`` stripped, when it is an http(s) URL; else a ``ValueError`` of one line naming
    it (``named``: where it came from) and the form expected. The OpenAI client would take
    ``localhost:11434/v1`` and fail only on the first request, after the team started."""
    stripped = url.strip()
    if stripped.startswith(("http://", "https://")):
        return stripped
    example = f"http://{stripped}" if stripped else "http://localhost:11434/v1"
    raise ValueError(f"{named} {excerpt(url)} is not an http(s) URL: e.g. {example}")


def _spaced_name(provider: str, model: str) -> str | None:
    """What is wrong with a served model's name holding a space, else None. No provider's
    names have one: "llama 3" would be created, then refused by the server at the first
    request. A scenario's path (``scripted``) or a registered name may."""
    if provider in ("scripted", "registered") or not any(c.isspace() for c in model):
        return None
    return (
        f"model {excerpt(f'{provider}:{model}')}: model names have no spaces; write it as "
        f"the server lists it, e.g. '{provider}:{''.join(model.split())}'"
    )


class UnknownModelError(ValueError):
    """A roster key that is not in the roster; the message lists the keys that are."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, key: str, known: list[str]) -> None:
        self.key = key
        self.known = known
        listing = ", ".join(known) if known else "(the roster is empty)"
        super().__init__(f"unknown model {key!r}: the roster holds {listing}")


class ModelConfig(SerializableModel):
    """How to reach one model.

    - ``provider`` / ``model``: the pair the roster key is made of. For ``scripted`` the model is
      the scenario: a path to a YAML file, or ``"default"`` for the built-in echo scenario. For
      ``registered`` it is the name a model of your own was registered under
      (:func:`akgentic.llm.register_model`), in the process that runs the team.
    - ``base_url``: the endpoint; required for ``openai-compatible`` (Ollama, vLLM, llama.cpp
      server), optional elsewhere (``ollama`` defaults to its local port).
    - ``api_key_env``: the *name* of the environment variable holding the key, never the key
      itself, so a config can be stored and shared. ``None`` means the provider's default
      (:data:`DEFAULT_API_KEY_ENV`).
    - ``temperature`` / ``max_tokens``: default model settings for every request.
    - ``context_length``: the model's window in tokens, used to decide when to compact; ``None``
      means unknown: an unknown window is never compacted ahead of time, only when the model
      refuses a request of a turn for its window (then the request is sent once more).
    - ``fallback_models``: roster keys tried in order when this model fails with an API error.
    - ``sends_finish_reason``: whether the server ends each streamed answer with a finish
      reason (``openai``, ``openai-compatible``, ``ollama`` only). ``false`` for a server
      that never sends one: its streams are then taken whole as they end, and a stream cut
      mid-way can no longer be told from a finished one.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    provider: ProviderName = Field(
        description="Who serves the model; with ``model``, the roster key ``provider:model``."
    )
    model: str = Field(
        min_length=1,
        description="The model's name; for ``scripted``, a scenario file or ``default`` (the "
        "echo scenario); for ``registered``, the name register_model gave it.",
    )
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description="The sampling temperature of every request (None: the provider's).",
    )
    max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="The most tokens a response may hold (None: the provider's limit).",
    )
    context_length: int | None = Field(default=None, ge=1)
    fallback_models: list[str] = Field(default_factory=list)
    sends_finish_reason: bool = Field(
        default=True,
        description="Whether the server ends each streamed answer with a finish reason, so "
        "one ending without it was cut off and is asked again (openai, openai-compatible, "
        "ollama). Set false for a server that never sends one (some proxies and small local "
        "servers): its answers are then taken whole as they end, and an answer cut off "
        "mid-way is no longer noticed.",
    )

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        return value if value is None else env_var_name(value, "OPENAI_API_KEY")

    @model_validator(mode="after")
    def _a_served_name_has_no_space(self) -> Self:
        problem = _spaced_name(self.provider, self.model)
        if problem is not None:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _finish_reason_is_openais(self) -> Self:
        if not self.sends_finish_reason and self.provider not in OPENAI_API_PROVIDERS:
            raise ValueError(
                f"model {self.key!r}: sends_finish_reason applies to "
                f"{', '.join(OPENAI_API_PROVIDERS)} models only (servers of OpenAI's API); "
                f"remove it"
            )
        return self

    @model_validator(mode="after")
    def _registered_is_built_whole(self) -> Self:
        if self.provider != "registered":
            return self
        for field in REGISTERED_UNSET:
            if getattr(self, field) is not None:
                raise ValueError(
                    f"model {self.key!r}: {field} does not apply to a registered model (you "
                    f"build it whole, settings included); remove it"
                )
        return self

    @property
    def key(self) -> str:
        """The roster key, ``f"{provider}:{model}"``."""
        return f"{self.provider}:{self.model}"

    @classmethod
    def from_spec(cls, spec: str, **fields: object) -> ModelConfig:
        """Parse ``"provider:model"`` (split on the first colon); ``fields`` sets the rest.

        A spec that does not read so, or names a provider not in :data:`ProviderName`, is a
        ``ValueError`` of one line saying what would do — the words ``--model``, a server's
        ``model`` and a card's ``models: [spec]`` all answer with."""
        provider, sep, model = spec.strip().partition(":")
        if not sep or not provider or not model:
            raise ValueError(
                f"model spec {excerpt(spec)} must read 'provider:model', e.g. 'openai:gpt-5.2' "
                f"or 'scripted:default'"
            )
        if provider not in get_args(ProviderName):
            raise ValueError(
                f"unknown model provider {excerpt(provider)} in {excerpt(spec)}; known "
                f"providers: {', '.join(get_args(ProviderName))}; e.g. 'openai:gpt-5.2' or "
                f"'scripted:default'"
            )
        spaced = _spaced_name(provider, model)
        if spaced is not None:
            raise ValueError(spaced)
        return cls.model_validate({"provider": provider, "model": model, **fields})


class RosterRow(SerializableModel):
    """One roster entry as a listing shows it: a projection, rebuilt per call, never stored.

    These are the five fields of the tool layer's ``ModelRow``; the agent layer maps one onto
    the other (the tool layer may not import this package). ``context_length`` has no default
    on purpose: a row is built fresh every time, so an omitted value is a construction bug.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    key: str
    provider: str
    model: str
    context_length: int | None
    active: bool


class ModelRoster(SerializableModel):
    """The models an agent may use, keyed ``"provider:model"``, exactly one of them in force.

    ``switch(key)`` is the only way the entry in force changes after construction; an unknown key
    raises :class:`UnknownModelError` listing the known ones and leaves the roster unchanged.
    Every ``fallback_models`` key must name another entry of the same roster. An entry may be
    written as its spec string (``"openai:gpt-5.2"``) where no other field is needed.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    models: list[ModelConfig] = Field(min_length=1)
    """The entries, each a ``provider:model`` spec or a mapping of its fields."""
    active: str | None = None
    """The key of the entry in force; the first entry when none is given."""

    @field_validator("models", mode="before")
    @classmethod
    def _specs_are_configs(cls, value: Any) -> Any:
        # `models: [openai:gpt-5.2, scripted:default]` in a team file.
        if isinstance(value, list):
            return [ModelConfig.from_spec(v) if isinstance(v, str) else v for v in value]
        return value

    @field_validator("models")
    @classmethod
    def _distinct_keys(cls, models: list[ModelConfig]) -> list[ModelConfig]:
        seen: set[str] = set()
        for config in models:
            if config.key in seen:
                raise ValueError(f"model {config.key!r} is listed twice: list each model once")
            seen.add(config.key)
        return models

    @model_validator(mode="after")
    def _active_and_fallbacks_are_known(self) -> Self:
        keys = self.keys()
        if self.active is None:
            self.active = keys[0]
        elif self.active not in keys:
            raise UnknownModelError(self.active, keys)
        for config in self.models:
            for fallback in config.fallback_models:
                if fallback == config.key:
                    raise ValueError(f"model {config.key!r} lists itself as a fallback")
                if fallback not in keys:
                    raise ValueError(
                        f"model {config.key!r} falls back to {fallback!r}, which is not in the "
                        f"roster; known keys: {', '.join(keys)}"
                    )
        return self

    @classmethod
    def from_spec(cls, spec: str, **fields: object) -> ModelRoster:
        """A roster from ``"provider:model"``, or several comma-separated; the first is in force.

        ``fields`` (``base_url=...``, ``context_length=...``) apply to every entry.
        """
        specs = [part for part in (s.strip() for s in spec.split(",")) if part]
        if not specs:
            raise ValueError("an empty model spec names no model; try 'scripted:default'")
        return cls(models=[ModelConfig.from_spec(s, **fields) for s in specs])

    @classmethod
    def of(cls, model: str | ModelRoster) -> ModelRoster:
        """``model`` as a roster: a spec string is parsed (:meth:`from_spec`), a roster is
        copied."""
        if isinstance(model, ModelRoster):
            return model.model_copy(deep=True)
        return cls.from_spec(model)

    def with_base_url(self, base_url: str) -> ModelRoster:
        """A copy whose OpenAI-compatible entries (``openai-compatible``, ``ollama``) reach
        ``base_url``; ``ValueError`` when the roster has none (the URL would go unused)."""
        url = http_url(base_url, "base URL")
        copy = self.model_copy(deep=True)
        served = [c for c in copy.models if c.provider in BASE_URL_PROVIDERS]
        if not served:
            raise ValueError(
                f"a base URL is for {' and '.join(BASE_URL_PROVIDERS)} models, and "
                f"{', '.join(self.keys())} has none: e.g. --model openai-compatible:llama3.2"
            )
        for config in served:
            config.base_url = url
        return copy

    def keys(self) -> list[str]:
        """The roster keys, in declaration order."""
        return [config.key for config in self.models]

    def get(self, key: str) -> ModelConfig:
        """The config under ``key``; :class:`UnknownModelError` (listing the keys) otherwise."""
        for config in self.models:
            if config.key == key:
                return config
        raise UnknownModelError(key, self.keys())

    @property
    def active_key(self) -> str:
        """The key of the entry in force."""
        assert self.active is not None  # set by the validator
        return self.active

    @property
    def active_config(self) -> ModelConfig:
        """The config of the entry in force."""
        return self.get(self.active_key)

    def switch(self, key: str) -> ModelConfig:
        """Make ``key`` the entry in force and return its config.

        Raises :class:`UnknownModelError` listing the known keys; the roster is then unchanged.
        """
        config = self.get(key)
        self.active = config.key
        return config

    def restore_active(self, key: str | None) -> bool:
        """Apply a persisted preference (``ToolState.active_model``) on restore.

        ``None`` means no preference: the declared entry stays in force. A key no longer in the
        roster is dropped with a log line and the declared entry wins: a restore never fails over
        a stale preference. Returns whether the preference was applied.
        """
        if key is None:
            return False
        if key not in self.keys():
            logger.warning(
                "persisted model %r is no longer in the roster (%s); keeping %r",
                key,
                ", ".join(self.keys()),
                self.active_key,
            )
            return False
        self.active = key
        return True

    def rows(self) -> list[RosterRow]:
        """The roster as serializable rows, the entry in force flagged ``active``."""
        return [
            RosterRow(
                key=config.key,
                provider=config.provider,
                model=config.model,
                context_length=config.context_length,
                active=config.key == self.active,
            )
            for config in self.models
        ]
