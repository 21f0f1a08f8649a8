"""akgentic.llm: the model half of an LLM agent — configs, roster, providers, usage, events,
compaction, and the scripted model that runs everything offline.

The public surface is flat: everything below is importable from ``akgentic.llm``. See
``README.md`` beside this file for the configuration and the scenario format.
"""

from akgentic.llm.compaction import (
    SUMMARY_ASK,
    SUMMARY_ASK_KEY,
    SUMMARY_INSTRUCTIONS,
    CompactionPlan,
    apply_summary,
    asks_for_summary,
    compact,
    context_tokens,
    estimate_tokens,
    needs_compaction,
    plan_compaction,
    safe_cut,
    summary_prompt,
    with_summary_ask,
    without_summary_ask,
)
from akgentic.llm.config import (
    BASE_URL_ENV,
    BASE_URL_PROVIDERS,
    DEFAULT_API_KEY_ENV,
    ModelConfig,
    ModelRoster,
    ProviderName,
    RosterRow,
    UnknownModelError,
)
from akgentic.llm.events import (
    ContextReplacedEvent,
    LlmEvent,
    LlmMessageEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
    from_stream_event,
    sound_message,
)
from akgentic.llm.failures import describe_model_failure
from akgentic.llm.providers import (
    MissingApiKeyError,
    MissingProviderError,
    api_key_env,
    build_model,
    build_roster_model,
    require_api_key,
)
from akgentic.llm.registry import (
    ModelFactory,
    Registration,
    UnknownRegisteredModelError,
    register_model,
    registered_models,
)
from akgentic.llm.scenario import Scenario, ScenarioError, load_scenario, scenario_from_dict
from akgentic.llm.scripted import ScriptedModel
from akgentic.llm.tokens import TokenCounter, count_tokens, token_counter
from akgentic.llm.usage import (
    UsageLimitReached,
    UsageLimitsConfig,
    UsageLimitSet,
    UsageTracker,
)

__all__ = [
    "BASE_URL_ENV",
    "BASE_URL_PROVIDERS",
    "DEFAULT_API_KEY_ENV",
    "SUMMARY_ASK",
    "SUMMARY_ASK_KEY",
    "SUMMARY_INSTRUCTIONS",
    "CompactionPlan",
    "ContextReplacedEvent",
    "LlmEvent",
    "LlmMessageEvent",
    "LlmTextDeltaEvent",
    "LlmUsageEvent",
    "MissingApiKeyError",
    "MissingProviderError",
    "ModelConfig",
    "ModelFactory",
    "ModelRoster",
    "ProviderName",
    "Registration",
    "RosterRow",
    "Scenario",
    "ScenarioError",
    "ScriptedModel",
    "TokenCounter",
    "ToolCallEvent",
    "ToolReturnEvent",
    "UnknownModelError",
    "UnknownRegisteredModelError",
    "UsageLimitReached",
    "UsageLimitSet",
    "UsageLimitsConfig",
    "UsageTracker",
    "api_key_env",
    "apply_summary",
    "asks_for_summary",
    "build_model",
    "build_roster_model",
    "compact",
    "context_tokens",
    "count_tokens",
    "describe_model_failure",
    "estimate_tokens",
    "from_stream_event",
    "load_scenario",
    "needs_compaction",
    "plan_compaction",
    "register_model",
    "registered_models",
    "require_api_key",
    "safe_cut",
    "scenario_from_dict",
    "sound_message",
    "summary_prompt",
    "token_counter",
    "with_summary_ask",
    "without_summary_ask",
]
