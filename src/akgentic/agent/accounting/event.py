"""PromptAccountingEvent: the record of one model request, published on the team stream.

One per request an agent makes (a turn with two tool calls makes three; the request that
writes a compaction's summary is one more, of ``kind`` ``summary``). It says where the
request's input tokens came from — per channel and card (:class:`PartTokens`), with how
many of them the modelled prefix cache served — what broke the cache if anything did, and,
beside our count, the usage the provider reported for the same request
(:class:`ProviderUsage`, cache reads and writes included where the provider reports them).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from akgentic.agent.accounting.prefix_cache import CacheBreak, CacheStatus, PrefixCacheRules
from akgentic.agent.accounting.source import Channel
from akgentic.core.serialization import SerializableModel

__all__ = ["REQUEST_KINDS", "PartTokens", "PromptAccountingEvent", "ProviderUsage", "RequestKind"]

RequestKind = Literal["turn", "summary"]
REQUEST_KINDS: tuple[RequestKind, ...] = ("turn", "summary")
"""What a request was for: ``turn``, a step of the agent's run on a message (the turn's
prompt, or a step's tool returns); ``summary``, the request that writes a compaction's
summary of the older conversation (``/compact``, or before a turn when the history is full).
A record stored before kinds were told apart reads as ``turn``: only turns were accounted."""


class PartTokens(SerializableModel):
    """The tokens one card sent on one channel in one request (``card`` empty for history
    and the new message): ``tokens``, of which ``cached`` in the modelled cache; ``items``
    is how many parts they are (tools, prompt parts, context sections, message parts)."""

    channel: Channel
    card: str = ""
    tokens: int = 0
    cached: int = 0
    items: int = 0


class ProviderUsage(SerializableModel):
    """What the provider reported for the request (pydantic-ai's ``RequestUsage``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


class PromptAccountingEvent(SerializableModel):
    """One model request of ``agent``, accounted.

    - ``kind`` says what the request was for (:data:`RequestKind`): a turn's, or a
      summary's. A summary's request is modelled apart from the turns' (its instructions
      and prompt are not theirs, so it neither extends their prefix nor breaks it): it is
      compared with the agent's previous summary's.
    - ``request`` numbers the agent's requests since it started, turns' and summaries'
      alike; ``run_id`` is the run's.
    - ``input_tokens`` is our count of the whole request: the sum of ``parts`` and
      ``framing_tokens``, counted with ``encoding`` (``exact`` False: the 4-characters
      estimate, bpe-openai missing).
    - ``shared_prefix_tokens``, ``cached_tokens``, ``cache_status`` and ``breaker`` are the
      prefix-cache model's verdict under ``cache_rules`` (see
      :mod:`akgentic.agent.accounting.prefix_cache`); ``seconds_since_previous`` is the gap
      to the agent's previous request.
    - ``provider`` is the provider's own usage for this request.
    """

    agent: str
    kind: RequestKind = "turn"
    run_id: str = ""
    request: int = 0
    model: str = ""
    encoding: str = ""
    exact: bool = True
    input_tokens: int = 0
    framing_tokens: int = 0
    parts: list[PartTokens] = Field(default_factory=list)
    shared_prefix_tokens: int = 0
    cached_tokens: int = 0
    cache_status: CacheStatus = "cold"
    breaker: CacheBreak | None = None
    seconds_since_previous: float | None = None
    cache_rules: PrefixCacheRules = Field(default_factory=PrefixCacheRules)
    provider: ProviderUsage = Field(default_factory=ProviderUsage)

    def channel_tokens(self, channel: Channel) -> int:
        """The tokens this request sent on ``channel``."""
        return sum(p.tokens for p in self.parts if p.channel == channel)

    @property
    def tool_schema_tokens(self) -> int:
        """The tokens of the tool definitions this request carried."""
        return self.channel_tokens("tool_call")

    def summary(self) -> str:
        """One line: the request, its tokens, the cache's share, what broke it."""
        share = self.cached_tokens / self.input_tokens * 100 if self.input_tokens else 0.0
        what = "request" if self.kind == "turn" else f"{self.kind} request"
        line = (
            f"{what} {self.request}: {self.input_tokens:,} input tokens, "
            f"{self.cached_tokens:,} cached ({share:.0f}%, {self.cache_status}), "
            f"{self.tool_schema_tokens:,} in tool schemas"
        )
        return line if self.breaker is None else f"{line}; broken by {self.breaker.describe()}"
