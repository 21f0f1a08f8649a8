"""Build a pydantic-ai ``Model`` from a :class:`~akgentic.llm.config.ModelConfig`.

The contract:

- ``build_model`` is called when a team is created (and on a model switch), so every
  configuration problem surfaces there, loudly and by name: a missing API key is a
  :class:`MissingApiKeyError` naming the variable to export, a missing optional SDK is a
  :class:`MissingProviderError` naming the extra to install, an ``openai-compatible`` entry
  without ``base_url`` (nor ``OPENAI_BASE_URL`` in the environment) is a ``ValueError``, and
  so is an endpoint that is not an http(s) URL.
  It never touches the network: clients are created, not contacted.
- Keys come from the environment only, through the variable the config names
  (``api_key_env``) or the provider's default (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
  ``GOOGLE_API_KEY``). Configs store variable names, never keys.
- Every model is a stock pydantic-ai model: ``OpenAIChatModel`` + ``OpenAIProvider`` for OpenAI
  and any OpenAI-compatible server (Ollama, vLLM, llama.cpp), ``AnthropicModel``,
  ``GoogleModel``, ``TestModel``, and our :class:`~akgentic.llm.scripted.ScriptedModel` — or,
  for ``registered:<name>``, the model of your own registered under that name
  (:mod:`akgentic.llm.registry`). ``fallback_models`` wraps the chain in pydantic-ai's
  ``FallbackModel``, each of its models a
  :class:`~akgentic.llm.streamed.FinishedResponses`: a streamed answer cut off before the
  provider finished it fails that model (asked again, then fallen back from), not the
  chain.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.profiles.openai import OpenAIModelProfile
from pydantic_ai.settings import ModelSettings

from akgentic.core.error_pickle import reduce_by_fields
from akgentic.llm.config import (
    BASE_URL_ENV,
    DEFAULT_API_KEY_ENV,
    ModelConfig,
    ModelRoster,
    http_url,
)
from akgentic.llm.registry import registered_model
from akgentic.llm.scenario import ScenarioError
from akgentic.llm.scripted import ScriptedModel
from akgentic.llm.streamed import FinishedResponses

__all__ = [
    "OLLAMA_DEFAULT_BASE_URL",
    "MissingApiKeyError",
    "MissingProviderError",
    "api_key_env",
    "build_model",
    "build_roster_model",
    "require_api_key",
]

OLLAMA_DEFAULT_BASE_URL = "http://localhost:11434/v1"
"""Where ``ollama`` serves its OpenAI-compatible API when the config gives no ``base_url``."""

OFFLINE_PROVIDERS = ("scripted", "test", "registered")
"""The providers whose models are built in this process: no endpoint, no key."""

OFFLINE_HINT = "or run offline on the scripted model ('scripted:default')"


class MissingApiKeyError(ValueError):
    """The environment variable holding a model's API key is unset or empty."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, config: ModelConfig, env_var: str) -> None:
        self.model_key = config.key
        self.env_var = env_var
        super().__init__(
            f"model {config.key!r} needs an API key in the environment variable {env_var}, "
            f"which is not set: export {env_var}=<your key> (or set `api_key_env` on this model "
            f"to the variable that holds it), {OFFLINE_HINT}"
        )


class MissingProviderError(ImportError):
    """The pydantic-ai extra a provider needs is not installed; the message names it."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, config: ModelConfig, extra: str, cause: ImportError) -> None:
        self.model_key = config.key
        self.extra = extra
        super().__init__(
            f"model {config.key!r} needs the {config.provider} SDK, which is not installed: "
            f"pip install 'akgentic[{extra}]' ({cause})"
        )


def api_key_env(config: ModelConfig) -> str | None:
    """The variable holding ``config``'s key: its ``api_key_env``, else the provider default.

    ``None`` means the model needs no key (``openai-compatible``/``ollama`` naming none,
    ``scripted``, ``test``).
    """
    return config.api_key_env or DEFAULT_API_KEY_ENV.get(config.provider)


def require_api_key(config: ModelConfig) -> str | None:
    """The key ``config`` needs, read from the environment; :class:`MissingApiKeyError` if unset."""
    env_var = api_key_env(config)
    if env_var is None:
        return None
    key = os.environ.get(env_var, "").strip()
    if not key:
        raise MissingApiKeyError(config, env_var)
    return key


PROMPT_CACHE_SETTINGS: dict[str, ModelSettings] = {
    # Anthropic caches only up to a cache_control breakpoint, and sends none by default:
    # without these no request is ever served from cache. One breakpoint closes the frozen
    # system prompt (the tools before it included), so a compaction or /clear keeps it
    # cached; the automatic one follows the conversation's end, so each request reuses the
    # whole previous one. OpenAI and Gemini cache the prefix by themselves.
    "anthropic": cast(
        "ModelSettings", {"anthropic_cache": True, "anthropic_cache_instructions": True}
    ),
}
"""The settings that turn a provider's prompt cache on, where it is not on by itself."""


def model_settings(config: ModelConfig) -> ModelSettings | None:
    """The settings a model of ``config`` is built with: its provider's prompt-cache
    settings (:data:`PROMPT_CACHE_SETTINGS`), ``temperature`` and ``max_tokens`` when set."""
    settings = ModelSettings(**PROMPT_CACHE_SETTINGS.get(config.provider, {}))
    if config.temperature is not None:
        settings["temperature"] = config.temperature
    if config.max_tokens is not None:
        settings["max_tokens"] = config.max_tokens
    return settings or None


FINISHED_STREAMS = OpenAIModelProfile(openai_chat_streaming_requires_finish_reason=True)
"""The profile an OpenAI(-compatible) model is built with unless its config says the server
sends no finish reason (``sends_finish_reason: false``): its streamed answer is whole only
once it carries one. OpenAI, vLLM, llama.cpp and Ollama all send one; one that ends without
it was cut (a proxy or an HTTP/1.0 server closing the connection), and pydantic-ai, left to
its default, would read the partial answer as finished (``stop``) — what a model of a
server that never sends one is left to."""


def _openai(config: ModelConfig, base_url: str | None, api_key: str | None) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    if api_key is None:
        # Local servers ignore the key, but the OpenAI client insists on one.
        api_key = "not-needed"
    provider = OpenAIProvider(base_url=base_url, api_key=api_key)
    return OpenAIChatModel(
        config.model,
        provider=provider,
        settings=model_settings(config),
        profile=FINISHED_STREAMS if config.sends_finish_reason else None,
    )


def _anthropic(config: ModelConfig) -> Model:
    try:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
    except ImportError as exc:
        raise MissingProviderError(config, "anthropic", exc) from exc
    provider = AnthropicProvider(api_key=require_api_key(config), base_url=config.base_url)
    return AnthropicModel(config.model, provider=provider, settings=model_settings(config))


def _google(config: ModelConfig) -> Model:
    try:
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider
    except ImportError as exc:
        raise MissingProviderError(config, "google", exc) from exc
    provider = GoogleProvider(api_key=require_api_key(config), base_url=config.base_url)
    return GoogleModel(config.model, provider=provider, settings=model_settings(config))


def _scripted(config: ModelConfig, role: str | None, base_dir: Path | None) -> Model:
    if config.model == "default":
        return ScriptedModel.default(role=role, settings=model_settings(config))
    path = Path(config.model)
    if not path.is_absolute():
        # a relative scenario is read from the card's folder (``scenario_dir``), else the
        # current one: a missing one says which folder was searched and how to name another
        anchor = base_dir if base_dir is not None else Path.cwd()
        path = path if base_dir is None else base_dir / path
        if not (anchor / config.model).exists():
            raise ScenarioError(
                f"scenario {config.model}: no such file in {anchor} (a relative scenario is "
                "read from the agent's scenario_dir, else the current folder): give its "
                "absolute path, set scenario_dir, or run from the folder that holds it"
            )
    return ScriptedModel.from_file(path, role=role, settings=model_settings(config))


def _endpoint(config: ModelConfig) -> str | None:
    """The endpoint ``config`` names (its ``base_url``, else ``OPENAI_BASE_URL`` for an
    ``openai``/``openai-compatible`` model), checked to be an http(s) URL now, when the
    team is created, rather than at its first request. Offline models use none."""
    if config.provider in OFFLINE_PROVIDERS:
        return None
    if config.base_url is not None:
        return http_url(config.base_url, f"model {config.key!r}: base_url")
    if config.provider not in ("openai", "openai-compatible"):
        return None
    from_env = os.environ.get(BASE_URL_ENV, "").strip()
    if not from_env:
        return None
    return http_url(from_env, f"model {config.key!r}: {BASE_URL_ENV}")


def _single(config: ModelConfig, role: str | None, base_dir: Path | None) -> Model:
    provider = config.provider
    base_url = _endpoint(config)
    if provider == "openai":
        return _openai(config, base_url, require_api_key(config))
    if provider == "openai-compatible":
        if not base_url:
            raise ValueError(
                f"model {config.key!r}: provider 'openai-compatible' needs the server's "
                f"OpenAI-compatible endpoint: --base-url URL (or export {BASE_URL_ENV}=URL, "
                f"or `base_url` in the card), e.g. http://localhost:11434/v1 for Ollama, "
                f"http://localhost:8000/v1 for vLLM"
            )
        return _openai(config, base_url, require_api_key(config))
    if provider == "ollama":
        return _openai(config, base_url or OLLAMA_DEFAULT_BASE_URL, require_api_key(config))
    if provider == "anthropic":
        return _anthropic(config)
    if provider == "google":
        return _google(config)
    if provider == "scripted":
        return _scripted(config, role, base_dir)
    if provider == "test":
        return TestModel(model_name=config.model, settings=model_settings(config))
    if provider == "registered":
        return registered_model(config.model, role)
    raise ValueError(f"model {config.key!r}: unknown provider {provider!r}")  # pragma: no cover


def build_model(
    config: ModelConfig,
    *,
    roster: ModelRoster | None = None,
    role: str | None = None,
    base_dir: str | Path | None = None,
) -> Model:
    """The pydantic-ai model for ``config``, wrapped in a ``FallbackModel`` when it has fallbacks.

    - ``roster`` resolves ``fallback_models`` keys; it is required when there are any.
      Fallbacks are not chained further (a fallback's own fallbacks are ignored).
    - ``role`` picks the script of a ``scripted`` model (the agent's role).
    - ``base_dir`` anchors a relative scenario path (the directory of the team file).

    Raises :class:`MissingApiKeyError`, :class:`MissingProviderError`, ``ValueError`` (an
    ``openai-compatible`` model without ``base_url``, fallbacks without a roster, a
    ``registered`` name nobody registered: :class:`UnknownRegisteredModelError`) or
    :class:`~akgentic.llm.scenario.ScenarioError` (a malformed scenario): all at build time.
    """
    anchor = Path(base_dir) if base_dir is not None else None
    primary = _single(config, role, anchor)
    if not config.fallback_models:
        return primary
    if roster is None:
        raise ValueError(
            f"model {config.key!r} has fallback_models {config.fallback_models}; pass the "
            f"roster that defines them to build_model(..., roster=...)"
        )
    fallbacks = [_single(roster.get(key), role, anchor) for key in config.fallback_models]
    return FallbackModel(*(FinishedResponses(model) for model in (primary, *fallbacks)))


def build_roster_model(
    roster: ModelRoster, *, role: str | None = None, base_dir: str | Path | None = None
) -> Model:
    """The model of the roster's entry in force (``build_model`` on ``roster.active_config``)."""
    return build_model(roster.active_config, roster=roster, role=role, base_dir=base_dir)
