"""Usage limits per run and per agent lifetime, and the soft stop when one is reached.

The contract:

- :class:`UsageLimitsConfig` declares limits on requests, tool calls and input / output / total
  tokens, twice: ``per_run`` (one ``Agent.run``) and ``lifetime`` (everything the agent ever ran,
  across restores if the tracker's totals are persisted).
- :class:`UsageTracker` accumulates pydantic-ai ``RunUsage`` across runs and hands each run a
  pydantic-ai ``UsageLimits`` that enforces both at once: every per-run limit is tightened to what
  the lifetime budget still allows. pydantic-ai then stops the run at the right request or tool
  call, so nothing here polls.
- Reaching a limit is a **soft stop**, never a crash: :class:`UsageLimitReached` is an
  ``akgentic.core.WarningError`` (reported as a warning, the actor keeps running) whose message
  names the limit, its scope, the value and what to change. :meth:`UsageTracker.track` turns
  pydantic-ai's ``UsageLimitExceeded`` into it and records the run's usage either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.usage import RunUsage, UsageLimits

from akgentic.core import WarningError
from akgentic.core.error_pickle import reduce_by_fields
from akgentic.core.serialization import SerializableModel

__all__ = [
    "LimitName",
    "UsageLimitReached",
    "UsageLimitSet",
    "UsageLimitsConfig",
    "UsageTracker",
]

LimitName = Literal["requests", "tool_calls", "input_tokens", "output_tokens", "total_tokens"]
Scope = Literal["per_run", "lifetime"]

_LIMITS: tuple[LimitName, ...] = (
    "requests",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
)
_WORDS: dict[str, str] = {
    "requests": "model requests",
    "tool_calls": "tool calls",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "total_tokens": "total tokens",
}
# pydantic-ai names its limits in its messages: "... the request_limit of 3 ...".
_PYDANTIC_AI_NAMES: dict[str, LimitName] = {
    "request_limit": "requests",
    "tool_calls_limit": "tool_calls",
    "input_tokens_limit": "input_tokens",
    "output_tokens_limit": "output_tokens",
    "total_tokens_limit": "total_tokens",
}
_PYDANTIC_AI_NAME = re.compile(r"\b(" + "|".join(_PYDANTIC_AI_NAMES) + r")\b")


class UsageLimitSet(SerializableModel):
    """One set of limits; ``None`` means unlimited."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    requests: int | None = Field(default=None, ge=1)
    """Model requests."""
    tool_calls: int | None = Field(default=None, ge=0)
    """Tool calls the model makes."""
    input_tokens: int | None = Field(default=None, ge=1)
    """Tokens sent to the model."""
    output_tokens: int | None = Field(default=None, ge=1)
    """Tokens the model writes."""
    total_tokens: int | None = Field(default=None, ge=1)
    """Input and output tokens together."""


class UsageLimitsConfig(SerializableModel):
    """Limits for one run and for the agent's lifetime.

    ``per_run.requests`` defaults to 50, pydantic-ai's own guard against a model that never stops
    calling tools; everything else is unlimited unless configured.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    per_run: UsageLimitSet = Field(
        default_factory=lambda: UsageLimitSet(requests=50),
        description="The limits of one run (one message answered); None in a field: unlimited.",
    )
    lifetime: UsageLimitSet = Field(
        default_factory=UsageLimitSet,
        description="The limits over the agent's whole life; None in a field: unlimited.",
    )


class UsageLimitReached(WarningError):  # noqa: N818 -- the spec's name
    """A usage limit stopped the agent: a soft stop, reported as a warning.

    ``limit`` is the limit's name (``"requests"``, ``"total_tokens"``...), ``scope`` is
    ``"per_run"`` or ``"lifetime"``, ``value`` the configured limit and ``used`` the usage that
    reached it (when known).
    """

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, limit: LimitName, scope: Scope, value: int, used: int | None) -> None:
        self.limit = limit
        self.scope = scope
        self.value = value
        self.used = used
        where = "per-run" if scope == "per_run" else "lifetime"
        so_far = f" ({used} used)" if used is not None else ""
        advice = (
            "the run stopped; the next run starts a fresh per-run budget"
            if scope == "per_run"
            else "the agent takes no further runs until the limit is raised"
        )
        super().__init__(
            f"usage limit reached: the {where} limit of {value} {_WORDS[limit]}{so_far}; "
            f"{advice} (usage_limits.{scope}.{limit})"
        )


def _used(usage: RunUsage, limit: LimitName) -> int:
    if limit == "total_tokens":
        return usage.total_tokens
    value: int = getattr(usage, limit)
    return value


class UsageTracker:
    """Accumulates usage across an agent's runs and enforces its limits.

    Typical use by the agent layer::

        run_usage = RunUsage()
        with tracker.track(run_usage) as limits:       # raises UsageLimitReached (soft stop)
            agent.run_sync(prompt, usage_limits=limits, usage=run_usage)

    ``total`` is the lifetime usage; persist it with the agent's state and pass it back to
    the constructor on restore to keep lifetime limits across restarts.
    """

    def __init__(self, limits: UsageLimitsConfig | None = None, total: RunUsage | None = None):
        self.limits = limits if limits is not None else UsageLimitsConfig()
        self.total = total if total is not None else RunUsage()
        self.runs = 0
        self._bound_by: dict[LimitName, Scope] = {}

    def remaining(self, limit: LimitName) -> int | None:
        """What the lifetime budget still allows for ``limit`` (``None``: unlimited)."""
        value: int | None = getattr(self.limits.lifetime, limit)
        if value is None:
            return None
        return max(0, value - _used(self.total, limit))

    def check(self) -> None:
        """Raise :class:`UsageLimitReached` if a lifetime budget is used up.

        A used-up ``tool_calls`` budget does not block a run (a run may need no tool); the
        run's limits then allow no tool call and pydantic-ai stops it at the first one.
        """
        for limit in _LIMITS:
            value = getattr(self.limits.lifetime, limit)
            if value is None or limit == "tool_calls":
                continue
            used = _used(self.total, limit)
            if used >= value:
                raise UsageLimitReached(limit, "lifetime", value, used)

    def usage_limits(self) -> UsageLimits:
        """The pydantic-ai limits for the next run: per-run limits tightened by the lifetime budget.

        Raises :class:`UsageLimitReached` when the lifetime budget is already used up.
        """
        self.check()
        effective: dict[LimitName, int | None] = {}
        self._bound_by = {}
        for limit in _LIMITS:
            per_run = getattr(self.limits.per_run, limit)
            left = self.remaining(limit)
            if left is not None and (per_run is None or left < per_run):
                effective[limit] = left
                self._bound_by[limit] = "lifetime"
            else:
                effective[limit] = per_run
                self._bound_by[limit] = "per_run"
        return UsageLimits(
            request_limit=effective["requests"],
            tool_calls_limit=effective["tool_calls"],
            input_tokens_limit=effective["input_tokens"],
            output_tokens_limit=effective["output_tokens"],
            total_tokens_limit=effective["total_tokens"],
        )

    def record(self, run_usage: RunUsage) -> None:
        """Add one run's usage to the lifetime total."""
        self.total = self.total + run_usage
        self.runs += 1

    def soft_stop(
        self, exc: UsageLimitExceeded, run_usage: RunUsage | None = None
    ) -> UsageLimitReached:
        """The :class:`UsageLimitReached` for pydantic-ai's ``exc`` (raised by a run using
        :meth:`usage_limits`), naming the limit and whether the run's or the lifetime's budget
        ran out. Does not record usage.
        """
        found = _PYDANTIC_AI_NAME.search(str(exc))
        limit: LimitName = _PYDANTIC_AI_NAMES[found.group(1)] if found else "requests"
        scope = self._bound_by.get(limit, "per_run")
        value = getattr(self.limits.lifetime if scope == "lifetime" else self.limits.per_run, limit)
        used = None
        if run_usage is not None:
            used = _used(run_usage, limit)
            if scope == "lifetime":
                used += _used(self.total, limit)
        return UsageLimitReached(limit, scope, value if value is not None else 0, used)

    @contextmanager
    def track(self, run_usage: RunUsage) -> Iterator[UsageLimits]:
        """Guard one run: yield its limits, record ``run_usage`` when the run ends (however it
        ends), and turn pydantic-ai's ``UsageLimitExceeded`` into :class:`UsageLimitReached`.

        Pass the same ``run_usage`` to ``Agent.run(..., usage=run_usage)`` so the usage of a run
        stopped midway is still counted.
        """
        limits = self.usage_limits()
        try:
            yield limits
        except UsageLimitExceeded as exc:
            stop = self.soft_stop(exc, run_usage)
            raise stop from exc
        finally:
            self.record(run_usage)
