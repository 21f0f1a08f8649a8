"""team_activity: who is working right now, and on what — derived, never tracked.

The report is built from what the orchestrator already keeps: the running members
(``get_team()``) and its bounded window of recent messages (``get_messages(window)``, oldest
first, each stamped with its sender and recipient). Truncation-only, it costs no actor and no
model call.

How "busy" is derived: a member is *busy* when the latest message it received in the window
came after the latest message it sent — it has something it has not answered yet. It is
*idle* otherwise (including when the window holds nothing for it). This is an approximation
bounded by the window: a member whose traffic scrolled out of it reads idle.

Texts are truncated to ``max_chars``: a message's ``content`` when it is text, else its class
name. With an :class:`ActivitySummarizer` configured, a quoted message longer than the
caller's ``summarize_over`` is summarised instead, through the deferred-result pattern
(``akgentic.tool.core.deferred``):

- :class:`TeamActivityActor` — the team's ``#TeamActivity`` cache, one per team, created only
  when a summarizer is configured. Keys are **message ids** (a message never changes, so its
  summary never goes stale); values are summaries. It never calls a model.
- :class:`SummarizerWorker` — one short-lived ``#defer-…`` worker per message id, calling the
  model through pydantic-ai with its budget handed to the request, then stopping.
- :func:`collect_summaries` — the caller's side: look up, request what is missing, poll with
  a bounded budget. Whatever is not ready (or failed) stays truncated: the degraded answer
  always exists.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar
from uuid import UUID

from pydantic import ConfigDict, Field

from akgentic.core.address import ActorAddress
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages import Message
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels
from akgentic.tool.core.deferred import DeferredResultActor, DeferredWorker, poll_deferred
from akgentic.tool.core.params import BaseToolParam

if TYPE_CHECKING:
    from pydantic_ai.models import Model

__all__ = [
    "MAX_SUMMARY_TIMEOUT",
    "POLL_DELAY",
    "TEAM_ACTIVITY_ACTOR_NAME",
    "ActivitySummarizer",
    "GetTeamActivity",
    "MemberActivity",
    "SummarizerConfig",
    "SummarizerWorker",
    "TeamActivityActor",
    "TeamActivityConfig",
    "collect_summaries",
    "derive_activity",
    "render_activity",
    "summary_candidates",
    "truncate",
]

logger = logging.getLogger(__name__)

ELLIPSIS = "…"
SUMMARY_MARK = "(summary) "
"""Prefixes a summary in the report, so a reader never takes it for a quotation."""

TEAM_ACTIVITY_ACTOR_NAME = "#TeamActivity"

MAX_SUMMARY_TIMEOUT = 25.0
"""Ceiling of one model call, in seconds: below the team's default stop grace (30 s)."""

MAX_SUMMARY_INPUT = 20_000
"""Characters of a message handed to the model; the rest is cut (a summary needs no more)."""

POLL_DELAY = 0.25
"""Seconds between two looks at the cache while ``team_activity`` waits for summaries."""

SUMMARY_INSTRUCTIONS = (
    "You summarise one message exchanged inside a team of agents, for a teammate who needs "
    "to know what it is about. Answer with the summary only: one line of at most {max_chars} "
    "characters, in the message's language, saying what it asks, reports or decides."
)


class ActivitySummarizer(SerializableModel):
    """How the ``#TeamActivity`` actor summarises long messages.

    - ``model`` — a pydantic-ai model string (``"openai:gpt-5.2-mini"``; ``"test"`` is
      pydantic-ai's TestModel). Resolved by the worker at each call: a model that cannot be
      built (unknown provider, missing key) is a failed summary, cached negatively.
    - ``max_chars`` — the length a summary aims for; a longer answer is cut to it.
    - ``timeout_seconds`` — the bound on one model call, handed to pydantic-ai (the run, the
      request and the client); at most :data:`MAX_SUMMARY_TIMEOUT`, below the stop grace.
    - ``wait_seconds`` — how long ``team_activity`` waits for summaries before answering with
      truncated text (0: never wait; summaries requested now serve the next report).

    The first card to bind ``#TeamActivity`` decides ``model``, ``max_chars`` and
    ``timeout_seconds`` for the whole team; ``wait_seconds`` stays each card's own, since its
    caller is the one waiting.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    max_chars: int = Field(default=300, ge=20)
    timeout_seconds: float = Field(default=20.0, gt=0, le=MAX_SUMMARY_TIMEOUT)
    wait_seconds: float = Field(default=5.0, ge=0, le=60)

    def poll_attempts(self) -> int:
        """How many looks ``wait_seconds`` buys at :data:`POLL_DELAY` apart."""
        return math.ceil(round(self.wait_seconds / POLL_DELAY, 6))


class GetTeamActivity(BaseToolParam):
    """The ``team_activity()`` capability, on TOOL_CALL and COMMAND.

    - ``max_chars`` — each quoted message is cut to this many characters (plus ``…``).
    - ``window`` — how many of the orchestrator's most recent messages are read.
    - ``summarizer`` — see :class:`ActivitySummarizer`. When set, the callable becomes
      ``team_activity(summarize_over: int = max_chars)`` and ``#TeamActivity`` is created;
      when None, the callable takes no argument and no actor exists.
    """

    expose: set[Channels] = {TOOL_CALL, COMMAND}
    max_chars: int = Field(default=200, ge=20)
    window: int = Field(default=200, ge=1)
    summarizer: ActivitySummarizer | None = None


class MemberActivity(SerializableModel):
    """One member's activity: busy or idle, the last message in and out (quoted or summarised)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str
    role: str = ""
    busy: bool = False
    working_on: str | None = None
    last_said: str | None = None


def flatten(text: str) -> str:
    """``text`` on one line: every run of whitespace becomes one space."""
    return " ".join(text.split())


def truncate(text: str, max_chars: int) -> str:
    """``text`` on one line, cut to ``max_chars`` characters plus ``…`` when longer."""
    flat = flatten(text)
    return flat if len(flat) <= max_chars else flat[:max_chars].rstrip() + ELLIPSIS


def message_text(message: Message) -> str:
    """What a message says: its ``content`` when it is text, else its class name."""
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else f"({type(message).__name__})"


def _quoted(
    member: ActorAddress, messages: Sequence[Message]
) -> tuple[bool, Message | None, Message | None]:
    """``(busy, working_on, last_said)`` for one member: whether it is busy, the last message
    it received when it is, and the last message it sent."""
    last_in: tuple[int, Message] | None = None
    last_out: tuple[int, Message] | None = None
    for index, message in enumerate(messages):
        if message.sender == member:
            last_out = (index, message)
        elif message.recipient == member:
            last_in = (index, message)
    busy = last_in is not None and (last_out is None or last_out[0] < last_in[0])
    working_on = last_in[1] if busy and last_in is not None else None
    return busy, working_on, last_out[1] if last_out is not None else None


def summary_candidates(
    members: Sequence[ActorAddress], messages: Sequence[Message], over: int
) -> dict[UUID, str]:
    """The messages the report quotes whose text (on one line) is longer than ``over``
    characters, as message id → text: what is worth a summary."""
    candidates: dict[UUID, str] = {}
    for member in members:
        _, working_on, last_said = _quoted(member, messages)
        for message in (working_on, last_said):
            if message is not None and len(flatten(text := message_text(message))) > over:
                candidates[message.id] = text
    return candidates


def _quote(message: Message | None, max_chars: int, summaries: Mapping[UUID, str]) -> str | None:
    if message is None:
        return None
    summary = summaries.get(message.id)
    if summary is not None:
        return SUMMARY_MARK + summary
    return truncate(message_text(message), max_chars)


def derive_activity(
    members: Sequence[ActorAddress],
    messages: Sequence[Message],
    max_chars: int,
    summaries: Mapping[UUID, str] | None = None,
) -> list[MemberActivity]:
    """Each member's activity from the message window (oldest first); see the module doc.

    A quoted message whose id is in ``summaries`` reads ``(summary) <summary>``; any other is
    truncated to ``max_chars``.
    """
    known = summaries or {}
    rows: list[MemberActivity] = []
    for member in members:
        busy, working_on, last_said = _quoted(member, messages)
        rows.append(
            MemberActivity(
                name=member.name,
                role=member.role,
                busy=busy,
                working_on=_quote(working_on, max_chars, known),
                last_said=_quote(last_said, max_chars, known),
            )
        )
    return rows


def render_activity(rows: Sequence[MemberActivity]) -> str:
    """``<name> (<role>): busy|idle``, then ``  working on: …`` / ``  last said: …`` lines."""
    if not rows:
        return "Nobody else is on the team."
    lines = ["Team activity (busy = has a message it has not answered yet):"]
    for row in rows:
        lines.append(f"- {row.name} ({row.role or 'no role'}): {'busy' if row.busy else 'idle'}")
        if row.working_on is not None:
            lines.append(f"  working on: {row.working_on}")
        if row.last_said is not None:
            lines.append(f"  last said: {row.last_said}")
    return "\n".join(lines)


# -- summaries on demand: the #TeamActivity cache and its workers -----------------------------


class TeamActivityConfig(BaseConfig):
    """The ``#TeamActivity`` actor's configuration; the first card to bind it decides."""

    name: str = TEAM_ACTIVITY_ACTOR_NAME
    role: str = "TeamActivity"
    summarizer: ActivitySummarizer


class SummarizerConfig(BaseConfig):
    """A :class:`SummarizerWorker`'s configuration: its ``#defer-…`` name (given by the
    cache) and the team's summarizer."""

    role: str = "SummarizerWorker"
    summarizer: ActivitySummarizer


class SummarizerWorker(DeferredWorker[UUID, str]):
    """Summarises one message (the payload: its text) for ``#TeamActivity``, then stops.

    The budget of the call is ``min(timeout, summarizer.timeout_seconds)`` and reaches
    pydantic-ai three ways: the run's deadline, the request's deadline across SDK retries, and
    the client's per-attempt timeout. At most one model request is made. The answer is put on
    one line and cut to ``summarizer.max_chars``. A model that cannot be built, fails, times
    out or answers nothing raises — the cache then holds the failure for its negative TTL.
    """

    timeout: ClassVar[float] = MAX_SUMMARY_TIMEOUT

    def summary_model(self, summarizer: ActivitySummarizer) -> Model | str:
        """The model to call: ``summarizer.model``, resolved by pydantic-ai. A subclass may
        return a model object instead (a ``FunctionModel`` in tests)."""
        return summarizer.model

    def produce(self, key: UUID, payload: Any, timeout: float) -> str:
        """The summary of ``payload`` (a message's text); raises on any failure."""
        from pydantic_ai import Agent
        from pydantic_ai.settings import ModelSettings
        from pydantic_ai.usage import UsageLimits

        config = self.config
        if not isinstance(config, SummarizerConfig):
            raise TypeError(
                f"SummarizerWorker needs a SummarizerConfig, got {type(config).__name__}"
            )
        if not isinstance(payload, str):
            raise TypeError(f"SummarizerWorker summarises text, got {type(payload).__name__}")
        summarizer = config.summarizer
        budget = min(timeout, summarizer.timeout_seconds)
        agent = Agent(
            self.summary_model(summarizer),
            instructions=SUMMARY_INSTRUCTIONS.format(max_chars=summarizer.max_chars),
            name="team-activity-summarizer",
        )
        result = agent.run_sync(
            payload[:MAX_SUMMARY_INPUT],
            model_settings=ModelSettings(timeout=budget, request_timeout=budget),
            usage_limits=UsageLimits(request_limit=1),
            timeout=budget,
        )
        summary = truncate(result.output, summarizer.max_chars)
        if not summary:
            raise ValueError("the model answered with an empty summary")
        return summary


class TeamActivityActor(DeferredResultActor[TeamActivityConfig, BaseState, UUID, str]):
    """The team's ``#TeamActivity``: message id → summary. Summaries are produced by the
    :class:`SummarizerWorker` instances it spawns, never by the actor itself.

    Every method is dict work over the keys it is handed (the inherited ``get``, ``failure``,
    ``request``, plus the batch forms below), so callers never wait behind a model call. The
    cache lives in memory only: after a restore, summaries are simply made again on demand.
    """

    def worker_class(self) -> type[DeferredWorker[UUID, str]]:
        """:class:`SummarizerWorker`: one per message id, calling the model."""
        return SummarizerWorker

    def worker_config(self, key: UUID) -> BaseConfig:
        """A fresh ``#defer-…`` name, and the summarizer this actor was configured with."""
        name = super().worker_config(key).name
        return SummarizerConfig(name=name, summarizer=self.config.summarizer)

    def settled(self, keys: Sequence[UUID]) -> dict[UUID, str | None]:
        """Each of ``keys`` that is settled: its summary, or None while its failure is cached.
        Keys in flight or never requested are absent."""
        found: dict[UUID, str | None] = {}
        for key in keys:
            summary = self.get(key)
            if summary is not None:
                found[key] = summary
            elif self.failure(key) is not None:
                found[key] = None
        return found

    def request_all(self, texts: Mapping[UUID, str]) -> None:
        """``request`` each message id with its text, in one message to this actor."""
        for key, text in texts.items():
            self.request(key, text)


def collect_summaries(
    cache: TeamActivityActor, texts: Mapping[UUID, str], attempts: int, delay: float = POLL_DELAY
) -> dict[UUID, str]:
    """The summaries of ``texts`` (message id → text) that ``cache`` can give in the budget.

    ``cache`` is an ask proxy of ``#TeamActivity``. Every id is looked up once; the missing ones
    are requested in one ask (ids in flight or recently failed spawn nothing); then the
    unsettled ids are looked up at most ``attempts`` times, ``delay`` seconds apart, stopping
    as soon as each has a summary or a failure. Ids that failed or are still pending are
    absent from the result — the caller quotes them truncated. Never raises: a cache that does
    not answer costs the summaries (logged), not the report.
    """
    if not texts:
        return {}
    settled: dict[UUID, str | None] = {}
    try:
        settled.update(cache.settled(list(texts)))
        missing = {key: text for key, text in texts.items() if key not in settled}
        if missing:
            cache.request_all(missing)

            def look() -> bool | None:
                settled.update(cache.settled([key for key in texts if key not in settled]))
                return True if len(settled) == len(texts) else None

            poll_deferred(look, attempts, delay)
    except Exception:
        logger.warning(
            "team_activity: summaries unavailable, quoting truncated text", exc_info=True
        )
    return {key: summary for key, summary in settled.items() if summary is not None}
