"""PromptAccounting: the pydantic-ai capability that accounts every model request.

It sits last among the agent's capabilities and acts in ``after_model_request``: by then
every ``before_model_request`` hook has shaped the request (the toolsets capability has
filtered the tools, the mailbox has added its messages), so what is accounted is what was
sent, and the provider's usage for it is in the response. The record goes on the team
stream as a :class:`~akgentic.agent.accounting.event.PromptAccountingEvent`.

The hook only *captures* the request (:meth:`RequestAccountant.capture`: references and
a few numbers); the record is counted and modelled by a builder it hands to ``publish``,
which the agent gives to ``notify_event_later`` — so the orchestrator's thread builds the
records, a batch at a time, and the agent's turn does not wait for them.

Accounting is observation: a failure in it is logged — one in building a record also takes
the record's place on the stream as a ``WarningMessage`` — and the run goes on untouched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from pydantic import ConfigDict, Field
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from akgentic.agent.accounting.accountant import RequestAccountant
from akgentic.agent.accounting.event import PromptAccountingEvent
from akgentic.agent.accounting.prefix_cache import PrefixCacheRules
from akgentic.core.serialization import SerializableModel

__all__ = ["PromptAccounting", "PromptAccountingConfig"]

logger = logging.getLogger("akgentic.agent.accounting")


class PromptAccountingConfig(SerializableModel):
    """Whether an agent accounts its model requests (``enabled``), and the prefix-cache
    rules it models (``cache``; None: the published rules of the provider of the model in
    force, see ``akgentic.agent.accounting.rules_for``)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="Whether model requests are accounted.")
    cache: PrefixCacheRules | None = Field(
        default=None,
        description="The prefix-cache rules modelled; None: the published rules of the "
        "provider of the model in force.",
    )


@dataclass(eq=False)
class PromptAccounting(AbstractCapability[Any]):
    """Accounts each request of agent ``agent`` with ``accountant``: ``publish`` receives
    the builder of each request's record, and must call each builder once, in the order
    received, on one thread at a time (the agent: ``notify_event_later``; at once:
    ``lambda build: events.append(build())``). ``rules`` is asked at each request (the
    model in force may have changed); ``clock`` (seconds) dates requests for the cache's
    TTL: the wall clock by default, as the last request before a resume is dated by its
    response's timestamp (:meth:`RequestAccountant.resume`)."""

    accountant: RequestAccountant
    publish: Callable[[Callable[[], PromptAccountingEvent]], None]
    agent: str
    rules: Callable[[], PrefixCacheRules]
    clock: Callable[[], float] = time.time

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        try:
            capture = self.accountant.capture(
                request_context,
                response,
                agent=self.agent,
                run_id=ctx.run_id or "",
                now=self.clock(),
                rules=self.rules(),
            )
        except Exception:  # observation never breaks the run it observes
            logger.warning("%s: a model request could not be accounted", self.agent, exc_info=True)
            return response
        self.publish(partial(self.accountant.record, capture))
        return response

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
