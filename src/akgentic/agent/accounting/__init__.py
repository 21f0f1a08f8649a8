"""akgentic.agent.accounting — prompt economy you can see.

For every model request an agent makes, a :class:`PromptAccountingEvent` on the team
stream: its input tokens split by channel and by the card that served each part (from the
factory's wiring: :class:`PromptWiring`), the prefix a provider's cache would serve and
what broke it (:class:`PrefixCacheModel`, under :class:`PrefixCacheRules`), and the
provider's own usage beside our count — a compaction's summary request too, of its own
``kind``. :func:`usage_report` adds a team's records up per member and per card
(``akgentic usage``, ``GET /teams/{id}/usage``). See README.md.
"""

from akgentic.agent.accounting.accountant import RequestAccountant, RequestCapture
from akgentic.agent.accounting.capability import PromptAccounting, PromptAccountingConfig
from akgentic.agent.accounting.event import (
    REQUEST_KINDS,
    PartTokens,
    PromptAccountingEvent,
    ProviderUsage,
    RequestKind,
)
from akgentic.agent.accounting.prefix_cache import (
    DEFAULT_RULES,
    PROVIDER_RULES,
    CacheBreak,
    CacheOutcome,
    CacheStatus,
    PrefixCacheModel,
    PrefixCacheRules,
    rules_for,
)
from akgentic.agent.accounting.report import (
    BreakerUsage,
    CardUsage,
    KindUsage,
    MemberUsage,
    UsageReport,
    accounting_events,
    render_usage,
    usage_report,
)
from akgentic.agent.accounting.segments import (
    MESSAGE_FRAMING,
    REPLY_PRIMING,
    Counted,
    Segment,
    tool_json,
    tool_wire,
)
from akgentic.agent.accounting.source import (
    AGENT,
    CONTEXT_MARKER,
    TOOLSETS,
    UNATTRIBUTED,
    Channel,
    Source,
)
from akgentic.agent.accounting.wiring import CARD_METADATA, PromptWiring

__all__ = [
    "AGENT",
    "CARD_METADATA",
    "CONTEXT_MARKER",
    "DEFAULT_RULES",
    "MESSAGE_FRAMING",
    "PROVIDER_RULES",
    "REPLY_PRIMING",
    "REQUEST_KINDS",
    "TOOLSETS",
    "UNATTRIBUTED",
    "BreakerUsage",
    "CacheBreak",
    "CacheOutcome",
    "CacheStatus",
    "CardUsage",
    "Channel",
    "Counted",
    "KindUsage",
    "MemberUsage",
    "PartTokens",
    "PrefixCacheModel",
    "PrefixCacheRules",
    "PromptAccounting",
    "PromptAccountingConfig",
    "PromptAccountingEvent",
    "PromptWiring",
    "ProviderUsage",
    "RequestAccountant",
    "RequestCapture",
    "RequestKind",
    "Segment",
    "Source",
    "UsageReport",
    "accounting_events",
    "render_usage",
    "rules_for",
    "tool_json",
    "tool_wire",
    "usage_report",
]
