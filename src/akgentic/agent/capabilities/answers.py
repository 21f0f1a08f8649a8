"""RecordAnswers: which model answered each of the agent's model requests.

A run's usage is booked to the models that answered it (``llm.usage_by_model``), and a
request is accounted under the one that answered it, with its provider's cache rules: a
fallback's when the model in force failed, never the chain's ``fallback:a,b``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from akgentic.llm import Answer, answer_of

__all__ = ["RecordAnswers"]


@dataclass
class RecordAnswers(AbstractCapability[Any]):
    """Keeps an :class:`~akgentic.llm.Answer` per answered request, until :meth:`take`n.

    One instance serves the agent's runs and its summaries' (a summary within a run is
    the run's usage, so its answers are the run's too). Listed after the prompt
    accounting: after-hooks run last-listed first, so the accounting reads (:attr:`last`)
    the answer of the request it accounts."""

    answers: list[Answer] = field(default_factory=list)

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        self.answers.append(answer_of(request_context.model, response))
        return response

    @property
    def last(self) -> Answer | None:
        """The latest answer recorded (None: none since the last :meth:`take`)."""
        return self.answers[-1] if self.answers else None

    def take(self) -> list[Answer]:
        """The answers recorded since the last take, forgotten here."""
        taken, self.answers = self.answers, []
        return taken

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None
