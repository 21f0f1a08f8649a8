"""Events the agent layer adds to the team stream."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

from akgentic.core.serialization import SerializableModel

__all__ = ["ContextReplacedEvent"]


class ContextReplacedEvent(SerializableModel):
    """The agent's model context was replaced wholesale (``/clear``, compaction).

    Until the next one, the context is these messages followed by every later
    ``LlmMessageEvent`` of the agent: the event store's working memory follows this rule.
    """

    agent: str
    messages_json: str = "[]"

    @classmethod
    def from_messages(cls, messages: Sequence[ModelMessage], *, agent: str) -> ContextReplacedEvent:
        return cls(
            agent=agent, messages_json=ModelMessagesTypeAdapter.dump_json(list(messages)).decode()
        )

    def to_messages(self) -> list[ModelMessage]:
        return ModelMessagesTypeAdapter.validate_json(self.messages_json)
