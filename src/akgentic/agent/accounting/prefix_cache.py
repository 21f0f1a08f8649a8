"""The prefix-cache model: how much of a request a provider's prompt cache would serve.

Providers cache the **prefix** of a request: a request whose beginning is byte-identical to
a recent one is served that beginning from cache, cheaper and faster; the first difference
ends it. This module models that per agent, against the agent's previous request to the
same model (a provider keeps a prefix per model):

- the **shared prefix** — the segments (tools, system prompt, messages, in wire order) the
  two requests have in common from the start, in tokens; within the first segment that
  differs, its leading spans that did not change count too;
- **what broke it** — when the previous request is not a prefix of this one, the first part
  that differs, named by channel, card and item, as ``changed`` (its text differs),
  ``added`` (a part came in before the rest) or ``removed``; with the tokens of the previous
  request after the shared prefix, which a warm cache could have served (``lost_tokens``);
- **what is served from cache** — the shared prefix, in whole cache blocks, when it is at
  least the rules' minimum and the previous request is no older than their TTL.

The default rules are the published ones (see :data:`PROVIDER_RULES` and the README beside
this file for the sources): a minimum of 1,024 tokens and five minutes for the common case,
OpenAI's 128-token blocks, larger minimums for the models that have them. The model is an
idealisation: a real cache may be evicted sooner, may serve requests from other agents
with the same prefix, and caches only at breakpoints on Anthropic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, count
from operator import attrgetter, is_not
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from akgentic.agent.accounting.segments import Counted
from akgentic.agent.accounting.source import Channel, Source
from akgentic.core.serialization import SerializableModel

__all__ = [
    "DEFAULT_RULES",
    "PROVIDER_RULES",
    "CacheBreak",
    "CacheOutcome",
    "CacheStatus",
    "PrefixCacheModel",
    "PrefixCacheRules",
    "rules_for",
]

CacheStatus = Literal["cold", "hit", "short", "expired"]
"""``cold``: no previous request; ``hit``: a prefix served from cache; ``short``: the shared
prefix is below the minimum; ``expired``: the previous request is older than the TTL."""

Change = Literal["changed", "added", "removed"]

_TOKENS = attrgetter("tokens")


class PrefixCacheRules(SerializableModel):
    """How a prompt cache behaves: ``min_prefix_tokens`` (a shorter prefix is not cached),
    ``ttl_seconds`` (how long an unused prefix stays), ``block_tokens`` (a prefix is served
    in whole blocks: OpenAI's 128; 1 means any length). ``name`` says whose rules they are."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(default="custom", description="Whose rules they are (a provider).")
    min_prefix_tokens: int = Field(
        default=1024, ge=0, description="The shortest prefix cached, in tokens."
    )
    ttl_seconds: float = Field(
        default=300.0, gt=0, description="How long an unused prefix stays cached, in seconds."
    )
    block_tokens: int = Field(
        default=1,
        ge=1,
        description="A prefix is served in whole blocks of this many tokens (OpenAI: 128; "
        "1: any length).",
    )

    def describe(self) -> str:
        blocks = f", {self.block_tokens}-token blocks" if self.block_tokens > 1 else ""
        return (
            f"{self.name}: prefix >= {self.min_prefix_tokens} tokens{blocks}, "
            f"ttl {self.ttl_seconds:g} s"
        )


DEFAULT_RULES = PrefixCacheRules(name="default", min_prefix_tokens=1024, ttl_seconds=300)
"""What OpenAI and Anthropic's common models share: 1,024 tokens, five minutes."""

PROVIDER_RULES: dict[str, PrefixCacheRules] = {
    # Anthropic: >= 1,024 tokens (Sonnet, Opus 4 / 4.1); 5 minutes, refreshed on each use.
    "anthropic": PrefixCacheRules(name="anthropic", min_prefix_tokens=1024, ttl_seconds=300),
    # OpenAI: automatic from 1,024 tokens, hits in 128-token blocks; cleared after 5 to 10
    # minutes of inactivity (the lower bound is modelled).
    "openai": PrefixCacheRules(
        name="openai", min_prefix_tokens=1024, ttl_seconds=300, block_tokens=128
    ),
    # Gemini implicit caching: 4,096 tokens on the current models; no TTL is published for
    # implicit caching ("send requests with a similar prefix in a short amount of time").
    "google": PrefixCacheRules(name="google", min_prefix_tokens=4096, ttl_seconds=300),
}
"""The published rules by provider (``ModelConfig.provider``); see the README's sources."""

_MODEL_MINIMUMS: tuple[tuple[str, str, int], ...] = (
    ("anthropic", "claude-opus-4-5", 4096),
    ("anthropic", "claude-opus-4-6", 4096),
    ("anthropic", "claude-haiku-4-5", 4096),
    ("anthropic", "claude-3-5-haiku", 2048),
    ("anthropic", "claude-3-haiku", 2048),
    ("google", "gemini-2.5", 2048),
)
"""Models whose minimum differs from their provider's (provider, model prefix, minimum)."""


def rules_for(provider: str, model: str = "") -> PrefixCacheRules:
    """The published rules for ``model`` of ``provider`` (:data:`DEFAULT_RULES` for a
    provider that publishes none: ``scripted``, ``test``, ``ollama``...)."""
    rules = PROVIDER_RULES.get(provider, DEFAULT_RULES)
    for owner, prefix, minimum in _MODEL_MINIMUMS:
        if owner == provider and model.startswith(prefix):
            return rules.model_copy(update={"min_prefix_tokens": minimum})
    return rules


class CacheBreak(SerializableModel):
    """The first part of a request that differs from the previous request: by ``channel``,
    ``card`` and ``name``, how (``change``), and the tokens of the previous request after
    the shared prefix (``lost_tokens``)."""

    channel: Channel
    card: str = ""
    name: str = ""
    change: Change = "changed"
    lost_tokens: int = 0

    @classmethod
    def of(cls, source: Source, change: Change, lost: int) -> CacheBreak:
        return cls(
            channel=source.channel,
            card=source.card,
            name=source.name,
            change=change,
            lost_tokens=lost,
        )

    def describe(self) -> str:
        return f"{self.change} {Source(self.channel, self.card, self.name).describe()}"


@dataclass(frozen=True)
class CacheOutcome:
    """One request against the previous one: the ``shared`` prefix in tokens, what the
    rules let the cache serve (``cached``), the ``status``, what broke the prefix
    (``breaker``, None when the previous request is a prefix of this one) and the seconds
    since the previous request (None for the first)."""

    shared: int
    cached: int
    status: CacheStatus
    breaker: CacheBreak | None
    since_previous: float | None


@dataclass(frozen=True)
class _Request:
    counted: Sequence[Counted]
    tokens: int
    at: float


def _first_source(counted: Counted) -> Source:
    return counted.segment.spans[0][0]


class PrefixCacheModel:
    """One agent's modelled cache: each request is compared with the one before it on the
    same model.

    A provider keeps a prefix per model: a request to another model (the agent switched,
    or a fallback answered) is not served what the first one read, and a switch back finds
    the first model's prefix as it was left, while the TTL has not run out. So the
    previous request is kept per ``model`` (the name the provider answered as); the
    default ``""`` is one model for callers that name none.
    """

    def __init__(self, rules: PrefixCacheRules = DEFAULT_RULES) -> None:
        self.rules = rules
        self._previous: dict[str, _Request] = {}

    def reset(self) -> None:
        """Forget the previous requests (the next one is ``cold``, on every model)."""
        self._previous.clear()

    @property
    def has_previous(self) -> bool:
        """Whether a request was observed (or given by :meth:`seed`) to compare the next with."""
        return bool(self._previous)

    def seed(self, counted: Sequence[Counted], at: float, model: str = "") -> None:
        """Take ``counted``, sent to ``model`` at ``at`` (seconds, on the clock
        :meth:`observe` is given), as the previous request without modelling it: the last
        request before a resume, so the first one after it is compared with it, not
        ``cold``."""
        tokens = sum(map(_TOKENS, counted))
        self._previous[model] = _Request(counted=counted, tokens=tokens, at=at)

    def observe(
        self, counted: Sequence[Counted], now: float, model: str = "", *, extend: bool = True
    ) -> CacheOutcome:
        """Model request ``counted`` (its segments in wire order) sent to ``model`` at
        ``now`` (seconds): compared with the previous request to the same model, which it
        then replaces — unless not ``extend``: a request made on that prefix that the next
        is not to be compared with (a compaction's summary)."""
        current = _Request(counted=counted, tokens=sum(map(_TOKENS, counted)), at=now)
        previous = self._previous.get(model)
        if extend:
            self._previous[model] = current
        if previous is None:
            return CacheOutcome(0, 0, "cold", None, None)
        shared, breaker = _compare(previous, current)
        since = now - previous.at
        rules = self.rules
        if since > rules.ttl_seconds:
            return CacheOutcome(shared, 0, "expired", breaker, since)
        if shared < max(rules.min_prefix_tokens, 1):
            return CacheOutcome(shared, 0, "short", breaker, since)
        cached = shared // rules.block_tokens * rules.block_tokens
        return CacheOutcome(shared, cached, "hit", breaker, since)


def _compare(previous: _Request, current: _Request) -> tuple[int, CacheBreak | None]:
    """The shared prefix in tokens, and what broke it (None: ``previous`` is a prefix)."""
    before, after = previous.counted, current.counted
    limit = min(len(before), len(after))
    # a segment kept from request to request is the very same object: skip those at C speed
    index = next(compress(count(), map(is_not, before, after)), limit)
    shared = sum(map(_TOKENS, after[:index]))
    while index < limit and before[index].key == after[index].key:
        shared += after[index].tokens
        index += 1
    if index == len(before):
        return shared, None
    old = [c.key for c in before]
    new = [c.key for c in after]
    if index == len(new) or _found(new, old[index], index + 1) is None:
        if index < len(new) and _found(old, new[index], index + 1) is None:
            extra, source = _within(previous.counted[index], current.counted[index])
            shared += extra
            return shared, CacheBreak.of(source, "changed", previous.tokens - shared)
        removed = _first_source(previous.counted[index])
        return shared, CacheBreak.of(removed, "removed", previous.tokens - shared)
    added = _first_source(current.counted[index])
    return shared, CacheBreak.of(added, "added", previous.tokens - shared)


def _found(keys: list[tuple[str, bool, str]], key: tuple[str, bool, str], start: int) -> int | None:
    try:
        return keys.index(key, start)
    except ValueError:
        return None


def _within(old: Counted, new: Counted) -> tuple[int, Source]:
    """The tokens of ``new``'s leading spans equal to ``old``'s, and the first span that
    differs (its source)."""
    a, b = old.segment, new.segment
    if a.role != b.role or a.opens_message != b.opens_message:
        return 0, b.spans[0][0]
    tokens = new.framing
    old_texts, new_texts = a.span_texts(), b.span_texts()
    for index, text in enumerate(new_texts):
        if index >= len(old_texts) or old_texts[index] != text:
            return tokens, b.spans[index][0]
        tokens += new.counts[index]
    return tokens, b.spans[-1][0]  # old had more spans after these: the last one changed
