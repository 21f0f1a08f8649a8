"""Send and wait: one message to a team, and the answer the team's causal chain ties to it.

:meth:`RemoteTeam.ask <akgentic.client.RemoteTeam.ask>` positions itself on the team's log
first (its last seq), then sends, then follows from that position: a reply committed
before the stream opens is read from the log like any other, so none is missed — never
send-then-subscribe.

What counts, as ``akgentic run -m`` counts it (the CLI's ``Watch``):

- the **answer** is a ``response`` the member the message went to (the entry point unless
  ``to``) sends the person — the card's human proxy, or the outside caller (``@System``)
  of a team without one — that descends from the message: following ``parent_id`` from
  message to message (a reply, or the reply to the delegation it caused) leads back to it;
- the turn the message started ending ``failed`` or ``interrupted`` (a cancel, or the
  team's stop cutting it, or declining it before it started: ``TurnInterrupted``) is
  :class:`TurnFailedError`, at once; so is a ``response`` marked ``failed`` (a
  ``/command`` that failed); a turn it caused (a delegation) failing or cut is one too,
  once the exchange has nothing left to do;
- when no ``response`` came, the exchange having nothing left to do — every message it
  caused handled, no turn of it running, none failed or cut — with the last message the
  person got in it a ``notification`` from that member (it told the person, and
  finished): that notification is the answer, as ``akgentic run -m`` prints the last
  message the person got once the team went quiet;
- the exchange having nothing left to do without an answer (the member asked something
  back, a ``request``; or nothing was sent to the person) is :class:`NoReplyError`, at
  once, naming the last message the person got; so is the team stopping first, and
  ``timeout`` passing (saying what still runs, and how to follow it);
- on a server, a team that is not running when the message is sent (the server's 409 with
  the code ``team_not_running``) is :class:`NoReplyError` too, nothing sent (``asked``
  None), saying to resume it with ``client.resume_team(ID)`` and ask again.

``TeamRuntime.ask`` (a team in this process) and ``RemoteTeam.ask`` (a team on a server)
both feed their records to one :class:`Exchange`: the same message gets the same answer.
"""

from __future__ import annotations

from collections import Counter
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from akgentic.agent import AgentMessage, TurnInterrupted
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent, TurnStartedEvent
from akgentic.core import (
    EXTERNAL_ROLE,
    ActorAddress,
    EventMessage,
    ProcessedMessage,
    SentMessage,
)
from akgentic.core.excerpt import clip
from akgentic.storage import EventRecord

__all__ = ["Answer", "AskError", "Exchange", "NoReplyError", "TurnFailedError"]

QUOTE = 200
"""Characters of a message quoted in an error (the rest is in the log)."""


class Answer(BaseModel):
    """The answer to an asked message: who sent it, its text, where it is in the log."""

    model_config = ConfigDict(frozen=True)

    asked: UUID
    """The id of the message asked (as ``send`` returns it)."""
    sender: str
    content: str
    seq: int
    """The seq of the record that carries the answer."""
    message: AgentMessage
    """The answer itself (its ``id``, ``parent_id``, ``type``...)."""


class AskError(Exception):
    """An asked message got no answer: :class:`NoReplyError` or :class:`TurnFailedError`.
    ``asked`` is the message's id; None when it was not sent (the team was not running)."""

    def __init__(self, asked: UUID | None, words: str) -> None:
        super().__init__(words)
        self.asked = asked


class NoReplyError(AskError):
    """No answer came: ``timeout`` passed, the exchange ended without one, or the team
    stopped first (or was not running: nothing sent). The words say which, and what to do."""


class TurnFailedError(AskError):
    """The team reported the turn failed: ``agent``'s turn ended ``outcome`` (``failed``
    or ``interrupted``), ``error`` saying why when it is known."""

    def __init__(self, asked: UUID, words: str, agent: str, outcome: str) -> None:
        super().__init__(asked, words)
        self.agent = agent
        self.outcome = outcome


class Exchange:
    """What the team did about one message, from its log's records in order (see the
    module docstring). :meth:`take` returns the answer once it is read, and raises once
    the team said the exchange failed or ended without one."""

    def __init__(self, asked: UUID, responder: str, person: str | None) -> None:
        self.asked = asked
        self.responder = responder
        self.person = person
        self.asked_at: int | None = None
        """The seq of the record of the asked message, once read."""
        self._parent: dict[UUID, UUID | None] = {}
        self._pending: dict[UUID, str] = {}  # sent to a member (its name), not handled yet
        self._turns: dict[UUID, tuple[str, int]] = {}  # open turn -> (agent, its start seq)
        self._failed: list[TurnEndedEvent] = []  # turns it caused that failed or were cut
        self._cut_by: dict[UUID, str | None] = {}  # turn -> who cancelled it, when said
        self._to_person: tuple[SentMessage, int] | None = None  # the last the person got, seq

    def take(self, record: EventRecord) -> Answer | None:
        message = record.message
        if isinstance(message, SentMessage):
            answer = self._sent(message, record.seq)
            if answer is not None:
                return answer
        elif isinstance(message, ProcessedMessage):
            self._pending.pop(message.message_id, None)
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnStartedEvent):
            if self._caused(message.event.turn_id):
                self._turns[message.event.turn_id] = (message.event.agent, record.seq)
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnEndedEvent):
            self._ended(message.event)
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnInterruptedEvent):
            self._cut_by[message.event.turn_id] = message.event.by
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnInterrupted):
            self._cut(message.event.message_id, message.sender)
        return self._settle()

    def _sent(self, sent: SentMessage, seq: int) -> Answer | None:
        inner = sent.message
        self._parent[inner.id] = inner.parent_id
        if not self._caused(inner.id):
            return None
        if inner.id == self.asked:
            self.asked_at = seq
        if not self._to_the_person(sent):
            recipient = sent.recipient or inner.recipient
            self._pending[inner.id] = recipient.name if recipient is not None else "a member"
            return None
        sender = sent.sender.name if sent.sender is not None else ""
        if sender == self.responder and isinstance(inner, AgentMessage):
            if inner.type == "response" and inner.failed:
                raise TurnFailedError(
                    self.asked,
                    f"{sender} answered that it failed: {clip(inner.content, QUOTE)}",
                    sender,
                    "failed",
                )
            if inner.type == "response":
                return Answer(
                    asked=self.asked, sender=sender, content=inner.content, seq=seq, message=inner
                )
        self._to_person = (sent, seq)
        return None

    def _ended(self, ended: TurnEndedEvent) -> None:
        self._turns.pop(ended.turn_id, None)
        if ended.outcome == "completed" or not self._caused(ended.turn_id):
            return
        if ended.turn_id == self.asked:
            raise _failure(self.asked, ended, by=self._cut_by.get(ended.turn_id))
        self._failed.append(ended)

    def _cut(self, message_id: UUID, agent: ActorAddress | None) -> None:
        """The team's stop cut the turn of ``message_id`` (or it never started): a resume
        offers it again. Its turn never answers in this run."""
        if not self._caused(message_id):
            return
        who = agent.name if agent is not None else self.responder
        ended = TurnEndedEvent(turn_id=message_id, agent=who, outcome="interrupted")
        if message_id == self.asked:
            raise _failure(self.asked, ended, stopped=True)
        self._failed.append(ended)

    def _settle(self) -> Answer | None:
        """Once the exchange has nothing left to do and no response came: the responder's
        closing notification (the last message the person got), or raise."""
        if self.asked_at is None or self._pending or self._turns:
            return None
        if self._failed:
            raise _failure(self.asked, self._failed[-1])
        closing = self._closing()
        if closing is not None:
            return closing
        raise NoReplyError(
            self.asked,
            f"{self.responder} finished without answering message {self.asked}: "
            f"{self._last_words()}",
        )

    def running(self) -> str:
        """What of the exchange still runs, in words: its turns in progress, the messages
        it caused that wait to be handled."""
        turns = [f"{agent}'s turn (from seq {seq})" for agent, seq in self._turns.values()]
        waiting = Counter(to for m, to in self._pending.items() if m not in self._turns)
        for to, count in sorted(waiting.items()):
            many = f"{count} messages" if count > 1 else "a message"
            turns.append(f"{many} to {to} not handled yet")
        if self.asked_at is None:
            return "nothing of it read yet"
        return ", ".join(turns) if turns else "nothing (no turn of it runs)"

    def _closing(self) -> Answer | None:
        """The last message the person got in the exchange as its answer, when it is a
        ``notification`` from the responder (what it told the person as it finished)."""
        if self._to_person is None:
            return None
        sent, seq = self._to_person
        inner = sent.message
        sender = sent.sender.name if sent.sender is not None else ""
        if sender != self.responder or not isinstance(inner, AgentMessage):
            return None
        if inner.type != "notification":
            return None
        return Answer(
            asked=self.asked, sender=sender, content=inner.content, seq=seq, message=inner
        )

    def _last_words(self) -> str:
        """The last message the person got in the exchange, or that it got none."""
        if self._to_person is None:
            return "nothing was sent to you"
        sent = self._to_person[0]
        who = sent.sender.name if sent.sender is not None else "someone"
        inner = sent.message
        kind = inner.type if isinstance(inner, AgentMessage) else type(inner).__name__
        text = inner.content if isinstance(inner, AgentMessage) else str(inner)
        hint = ", which you may answer with process_human_input" if kind == "request" else ""
        return f"the last message to you was {who}'s {kind}{hint}: {clip(text, QUOTE)!r}"

    def _to_the_person(self, sent: SentMessage) -> bool:
        """Whether ``sent`` goes to the person (no member receives it: it is no work)."""
        recipient = sent.recipient or sent.message.recipient
        if recipient is None:
            return False
        return recipient.role == EXTERNAL_ROLE or (
            self.person is not None and recipient.name == self.person
        )

    def _caused(self, message_id: UUID) -> bool:
        """Whether ``message_id`` is the asked message or descends from it."""
        seen: set[UUID] = set()
        current: UUID | None = message_id
        while current is not None and current not in seen:
            if current == self.asked:
                return True
            seen.add(current)
            current = self._parent.get(current)
        return False


def _failure(
    asked: UUID, ended: TurnEndedEvent, *, stopped: bool = False, by: str | None = None
) -> TurnFailedError:
    """The error of a turn of the exchange that ended failed (why, when known) or
    interrupted (a cancel, ``by`` whom when known; ``stopped``: the team's stop, which a
    resume offers again)."""
    whose = f"{ended.agent}'s turn"
    if ended.turn_id != asked:
        whose += f" (caused by message {asked})"
    if stopped:
        words = (
            f"{whose} was cut by the team's stop before it answered; a resume offers it "
            f"again (resume_team(..., retry_interrupted=True))"
        )
    elif ended.outcome == "interrupted":
        who = f" ({by} cancelled it)" if by else ""
        words = f"{whose} was interrupted before it answered{who}"
    else:
        words = f"{whose} failed: {clip(ended.error or 'no reason given', QUOTE)}"
    return TurnFailedError(asked, words, ended.agent, ended.outcome)
