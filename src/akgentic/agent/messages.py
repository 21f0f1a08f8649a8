"""What agents say to each other, and the structured reply that addresses several members."""

from __future__ import annotations

from typing import ClassVar, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from akgentic.core.messages import DisplayType
from akgentic.core.messages.orchestrator import WarningMessage
from akgentic.core.serialization import SerializableModel
from akgentic.tool.mailbox import MailboxMessage

__all__ = [
    "AgentHopLimitReached",
    "AgentMessage",
    "AgentReply",
    "MessageType",
    "Outgoing",
    "TurnInterrupted",
]

MessageType = Literal["request", "response", "notification", "instruction", "acknowledgment"]


class AgentMessage(MailboxMessage):
    """A message between team members (and from an agent to a human).

    ``type`` says what the sender expects: a ``request`` wants a ``response``; a
    ``notification`` or an ``acknowledgment`` wants nothing; an ``instruction`` is a
    request the receiver must act on. Being a ``MailboxMessage``, it may be absorbed
    into a run that is already in progress.

    ``failed`` marks a ``response`` that reports a failure rather than a result: the
    answer to a ``/command`` that is unknown, refused its arguments or raised (the
    ``content`` says why). A client tells a failed command from a successful one by it,
    never by the wording.

    ``agent_hops`` counts the messages between agents in a row this one ends, since a
    person (or a program: the API, the CLI) last wrote: 1 for an agent's message sent on a
    person's, 2 for the answer to that one, and so on. A message from a person (any other
    class, or one from a user proxy) counts 0; a ``#`` tool actor's (a reminder) does not
    start the count again. The sending agent stamps it — one more than the message it
    answers — and holds it to the team's ``max_agent_hops``.
    """

    content: str
    type: MessageType = "request"
    display_type: DisplayType = "ai"
    failed: bool = False
    agent_hops: int = Field(default=0, ge=0)

    def rendering(self) -> str:
        who = self.sender.name if self.sender is not None else "someone"
        return f"{self.type.capitalize()} from {who}:\n{self.content}"

    def rendering_preview(self) -> str:
        who = self.sender.name if self.sender is not None else "someone"
        line = " ".join(self.content.split())
        return f"{self.type} from {who}: {line[:120]}{'…' if len(line) > 120 else ''}"


class Outgoing(BaseModel):
    """One message of a structured reply."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    to: str = Field(description="The recipient's name, e.g. '@Writer' (a current member).")
    content: str = Field(description="What to tell them.")
    type: MessageType = Field(default="request", description="What you expect back.")


class AgentReply(BaseModel):
    """The structured output of a turn: several messages to several members at once.

    A recipient must be a current member (or whoever wrote to you). To add a member, hire
    through the team tools first; a misspelt name is an error you are told about, never
    a hire.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    messages: list[Outgoing] = Field(min_length=1)


class AgentHopLimitReached(WarningMessage):
    """Reported when an agent is refused a message to another agent: the messages between
    agents since the person last wrote reached the team's ``max_agent_hops`` (``limit``).
    ``to`` names the agents it tried to write to. A warning, so a client shows it as one:
    the person watching sees why the conversation stopped."""

    limit: int
    to: list[str] = Field(default_factory=list)


class TurnInterrupted(SerializableModel):
    """Event payload: the turn of ``message_id`` was cut by the team's stop (an
    interrupting ``CancelMessage``) — cancelled at a step boundary, or never started.
    A resume lists it as interrupted until it is retried or dismissed."""

    message_id: UUID
    reason: str = ""
