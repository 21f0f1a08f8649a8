"""Watch: follows a team (here or on a server), and tells when an exchange is over.

A thread reads ``runtime.follow(from_seq)`` and hands each record to the live view, then
updates what it knows of the conversation. :meth:`Watch.wait_reply` blocks the caller
until the exchange started by one message of the person's ends:

- ``answer``: the member it was sent to sent the person (the human proxy; with none, the
  outside caller, ``@System``: :func:`~akgentic.cli.describe.to_person`) a ``response``
  that descends from it (following ``parent_id`` from message to message: a reply, or
  the reply to the delegation it caused...);
- ``cut``: the turn it started ended cut by a cancel while the team went on (the page's
  interrupt button, a ``/stop`` from another client: ``TurnInterruptedEvent`` then an
  ``interrupted`` end, with no ``TurnInterrupted``), at once; or, with nothing left to do
  (or the team stopped) and no answer, a turn it caused was — the reply's ``failure``
  says whose turn and who cut it. A cancel's cut is not listed as interrupted: nothing
  of it is kept for ``--retry-interrupted``;
- ``failed``: the turn it started ended failed (``TurnEndedEvent``), at once; or a turn
  it caused (a delegation) failed, or a member's handler failed (``ErrorMessage``) while
  handling what it caused, and then nothing was left to do — the reply's ``failure``
  says who and why (``@Worker: <what went wrong>``);
- ``quiet``: nothing is left to do — every message sent has been received (or its
  recipient stopped: it waits on the log for a resume) and every message received has
  been processed — and nothing was recorded for ``idle`` seconds; the reply is then the
  last message the person got after it, if any;
- ``stopped``: the team stopped (its log is read to the end); the reply's ``owed`` says
  whether the exchange still had work left then — ``cut``: a turn it caused had not
  ended, or ended interrupted (the stop cut it; a resume lists it as interrupted);
  ``waiting``: a message it caused was not received (a resume delivers it) — the last
  message the person got (an acknowledgment) is then not its answer;
- ``timeout``: ``timeout`` seconds passed first.

A team on a server that is deleted meanwhile ends the follower: :meth:`Watch.wait_reply`
raises :class:`~akgentic.client.TeamDeletedError` and :attr:`Watch.deleted` says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from uuid import UUID

from akgentic.agent import TurnInterrupted, is_cancel
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent
from akgentic.cli import interrupt
from akgentic.cli.describe import name_of, text_of, to_person, who_of
from akgentic.cli.handle import TeamHandle
from akgentic.cli.live import LiveView
from akgentic.cli.output import member_name
from akgentic.client import RemoteTeam, ServerError, TeamDeletedError
from akgentic.core import (
    ErrorMessage,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StopMessage,
)
from akgentic.storage import EventRecord

__all__ = ["Reply", "Watch"]

Ending = Literal["answer", "cut", "failed", "quiet", "stopped", "timeout"]


@dataclass(frozen=True)
class Reply:
    """How an exchange ended, and the message that answers it (None when there is none)."""

    how: Ending
    message: Message | None = None
    sender: str | None = None
    failure: str | None = None
    """``@Worker: <what went wrong>``: the last failure in the exchange, if any."""
    owed: Literal["", "cut", "waiting"] = ""
    """``stopped``: the work the exchange still had when the team stopped (see the module
    docstring); "" when none."""


class Watch:
    """Follows ``runtime`` from ``from_seq`` in a thread, rendering into ``view``."""

    def __init__(
        self,
        runtime: TeamHandle,
        view: LiveView,
        from_seq: int,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self.runtime = runtime
        self.on_end = on_end
        """Called (from the follower's thread) once the team has stopped and its log is
        read to the end — how a session waiting for a typed line learns it."""
        self.view = view
        self.from_seq = from_seq
        self.human = runtime.card.human
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, name="akgentic-cli-watch", daemon=True)
        self._seq_of: dict[UUID, int] = {}  # message id -> seq of its SentMessage
        self._parent: dict[UUID, UUID | None] = {}  # message id -> parent message id
        self._to_human: list[tuple[int, SentMessage]] = []
        self._unreceived: dict[UUID, SentMessage] = {}  # sent to a member, not yet received
        self._waiting: dict[UUID, SentMessage] = {}  # sent to a member that stopped first
        self._gone: set[UUID] = set()  # members that stopped (a message to one waits)
        self._in_turn: set[UUID] = set()  # received, not yet processed
        self._cut: set[UUID] = set()  # turns a stop cut (TurnInterrupted): a resume lists them
        self._cut_by: dict[UUID, str | None] = {}  # turn id -> who cut it (TurnInterruptedEvent)
        self._cancelled: dict[UUID, str] = {}  # turn id -> "@W's turn was cut ...": a cancel's
        self._failed: dict[UUID, TurnEndedEvent] = {}  # turn id (its message) -> failed End
        self._errors: list[tuple[int, str, UUID | None]] = []  # seq, "who: what", handling
        self._last_record = time.monotonic()
        self._read_to = from_seq - 1  # the seq of the last record read
        self._ended = False
        self._team_stopped = False
        self._failure: BaseException | None = None
        self.stop_reason: str | None = None
        """Why the team stopped, once the session found out (kept: every line it prints
        gives the same reason)."""

    def start(self) -> Watch:
        self._thread.start()
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Stop following: at once while the team runs, else once its log is read to the end
        (waiting at most ``timeout`` seconds). A follower that has ended (the team stopped,
        or was deleted) is not asked about the team again."""
        if not self._ended and self.runtime.is_running():
            self._stop.set()  # else the follower ends by itself at the end of the log
        self._thread.join(timeout)
        self._stop.set()
        self.view.finish()

    @property
    def deleted(self) -> bool:
        """Whether the follower ended because the team (on a server) was deleted."""
        return isinstance(self._failure, TeamDeletedError)

    @property
    def team_stopped(self) -> bool:
        """Whether the follower ended by itself: the team stopped and its log was read to
        the end (not deleted, not closed while the team ran)."""
        with self._cond:
            return self._team_stopped

    # -- the follower thread ---------------------------------------------------------------
    def _pump(self) -> None:
        try:
            for record in self.runtime.follow(self.from_seq, stop=self._stop):
                self.view.render(record)
                with self._cond:
                    self._track(record)
                    self._cond.notify_all()
            self._team_stopped = not self._stop.is_set()
        except ServerError as exc:
            if exc.status == 0 and self._server_gone():
                self._team_stopped = True  # with its server: the session says so, and resume
            else:
                self._failure = exc
        except BaseException as exc:  # handed to the waiting caller
            self._failure = exc
        finally:
            with self._cond:
                self._ended = True
                self._cond.notify_all()
            if self.on_end is not None:
                self.on_end()

    def _server_gone(self) -> bool:
        """Whether the team's server no longer answers at all (its event stream failed past
        its reconnections: killed, or unreachable): the team is taken as stopped with it,
        as when the server shuts down — not as a failure of the session."""
        if not isinstance(self.runtime, RemoteTeam):
            return False
        try:
            self.runtime.client.health()
        except ServerError as exc:
            return exc.status == 0
        return False

    def _track(self, record: EventRecord) -> None:
        self._last_record = time.monotonic()
        self._read_to = record.last  # a range record (a damaged pack, a gap) reads to its end
        message = record.message
        if isinstance(message, SentMessage):
            self._seq_of[message.message.id] = record.seq
            self._parent[message.message.id] = message.message.parent_id
            recipient = message.recipient
            if to_person(message, self.human):
                self._to_human.append((record.seq, message))  # the person takes no turn
            elif recipient is not None and recipient.agent_id in self._gone:
                self._waiting[message.message.id] = message
            elif recipient is not None:
                self._unreceived[message.message.id] = message
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnEndedEvent):
            ended = message.event
            self._in_turn.discard(ended.turn_id)  # over: only its receipt follows
            if ended.outcome == "failed":
                self._failed[ended.turn_id] = ended
            elif ended.outcome == "interrupted" and ended.turn_id not in self._cut:
                by = self._cut_by.pop(ended.turn_id, None)
                self._cancelled[ended.turn_id] = self._cut_text(ended.agent, by)
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnInterruptedEvent):
            self._cut_by[message.event.turn_id] = message.event.by
        elif isinstance(message, EventMessage) and isinstance(message.event, TurnInterrupted):
            # the team's stop cut it (or it never started): a resume lists it; a cancel's
            # cut (a /stop, the page's button; the team goes on) is not one
            self._cut.add(message.event.message_id)
            self._cut_by.pop(message.event.message_id, None)
        elif isinstance(message, ReceivedMessage):
            self._unreceived.pop(message.message_id, None)
            self._waiting.pop(message.message_id, None)
            self._in_turn.add(message.message_id)
        elif isinstance(message, ProcessedMessage):
            self._in_turn.discard(message.message_id)
        elif isinstance(message, ErrorMessage):
            handling = message.current_message.id if message.current_message else None
            self._errors.append(
                (record.seq, f"{who_of(message.sender)}: {text_of(message)}", handling)
            )
        elif isinstance(message, StopMessage) and message.sender is not None:
            gone = message.sender.agent_id
            self._gone.add(gone)
            for left in [m for m, s in self._unreceived.items() if _to(s) == gone]:
                self._waiting[left] = self._unreceived.pop(left)
        elif isinstance(message, StartMessage) and message.sender is not None:
            self._gone.discard(message.sender.agent_id)  # restored under its id

    # -- for the caller ----------------------------------------------------------------------
    def busy(self, after: Reply | None = None) -> bool:
        """Whether members have work left (as far as the log read so far says), besides
        the turn that sent the answer ``after`` ends (its end is recorded just after the
        answer, and may not be read yet)."""
        with self._cond:
            done = after.message.parent_id if after and after.message else None
            return self._working(done)

    def _working(self, done: UUID | None = None) -> bool:
        return bool(self._unreceived or self._in_turn - {done})

    def catch_up(self, seq: int, timeout: float) -> None:
        """Block until the log read so far reaches ``seq`` (or the follower ended, or
        ``timeout`` seconds passed): how a caller that had messages sent another way than
        :meth:`wait_reply` (a retry of interrupted turns) makes :meth:`busy` count them.
        Ctrl-C interrupts the wait, as :meth:`wait_reply`'s."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._ended and self._read_to < seq:
                interrupt.check()
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(min(left, interrupt.SLICE))

    def wait_reply(self, message_id: UUID, responder: str, timeout: float, idle: float) -> Reply:
        """Block until the exchange ``message_id`` started ends; see the module docstring.
        Ctrl-C interrupts the wait (at an :func:`interrupt.check`, within
        :func:`interrupt.deferred`)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                interrupt.check()
                if self._failure is not None:
                    raise self._failure
                now = time.monotonic()
                seq = self._seq_of.get(message_id)
                after = self._after(seq)
                answer = self._answer_in(after, message_id, responder)
                if answer is not None:
                    return answer
                failed = self._failed.get(message_id)
                if failed is not None:
                    return Reply("failed", None, failed.agent, _said(failed))
                cancelled = self._cancelled.get(message_id)
                if cancelled is not None:
                    return Reply("cut", None, None, cancelled)
                last = after[-1] if after else None
                latest = (last.message, name_of(last.sender)) if last else (None, None)
                failure = self._failure_in(message_id, seq)
                quiet_at = self._last_record + idle
                if failure is not None and not self._working():
                    return Reply("failed", latest[0], latest[1], failure)
                if seq is not None and not self._working() and now >= quiet_at:
                    caused = [e for t, e in self._failed.items() if self._descends(t, message_id)]
                    if caused:
                        return Reply("failed", latest[0], caused[-1].agent, _said(caused[-1]))
                    cut = self._cancelled_in(message_id)
                    if cut is not None:
                        return Reply("cut", latest[0], latest[1], cut)
                    return Reply("quiet", *latest)
                if self._ended:
                    owed = self._owes(message_id)
                    cut = self._cancelled_in(message_id)
                    if not owed and failure is None and cut is not None:
                        return Reply("cut", latest[0], latest[1], cut)
                    return Reply("stopped", latest[0], latest[1], failure, owed)
                if now >= deadline:
                    return Reply("timeout", latest[0], latest[1], failure)
                wake = deadline if self._working() or seq is None else min(deadline, quiet_at)
                self._cond.wait(min(max(wake - now, 0.01), interrupt.SLICE))

    def answered(self, message_id: UUID, responder: str) -> Reply | None:
        """The ``answer`` to the exchange ``message_id`` started, if the log read so far
        holds it: how an answer that came while the team stopped (after the wait's
        ``timeout``) still counts, once :meth:`close` has read the log to its end."""
        with self._cond:
            after = self._after(self._seq_of.get(message_id))
            return self._answer_in(after, message_id, responder)

    def _after(self, seq: int | None) -> list[SentMessage]:
        """The messages to the person recorded after ``seq`` (none while it is unknown)."""
        return [m for s, m in self._to_human if seq is not None and s > seq]

    def _answer_in(
        self, after: list[SentMessage], message_id: UUID, responder: str
    ) -> Reply | None:
        for sent in after:
            inner = sent.message
            if (
                name_of(sent.sender) == responder
                and getattr(inner, "type", "") == "response"
                and self._descends(inner.id, message_id)
            ):
                return Reply("answer", inner, responder)
        return None

    def cut(self) -> bool:
        """Whether a turn ended interrupted, or had not ended, when the log read so far
        ends: once the team has stopped and :meth:`close` read its log to the end, a turn
        the stop cut (a resume lists it as interrupted) — at its grace's end, say."""
        with self._cond:
            return bool(self._in_turn or self._cut)

    def waiting(self) -> list[SentMessage]:
        """The messages sent to a member that stopped before it received them, as far as
        the log read so far says: they wait on the log, and a resume delivers them (not
        a cancel: it dies with the run it was aimed at)."""
        with self._cond:
            return [s for s in self._waiting.values() if not is_cancel(s.message)]

    def caused(self, message_id: UUID, ancestor: UUID) -> bool:
        """Whether the message ``message_id`` descends from ``ancestor`` (is it, or was
        caused by it: a reply, a delegation...), as far as the log read so far says."""
        with self._cond:
            return self._descends(message_id, ancestor)

    def _cut_text(self, agent: str, by: str | None) -> str:
        """``@W's turn was cut before it answered: <who cut it>`` for a turn a cancel cut
        while the team went on. The person's own cancel did not come from this session,
        which sends none: it came from another client of the team."""
        if by is not None and by == self.human:
            who = (
                f"interrupted from another client (the web page's interrupt button, or a "
                f"/stop sent as {member_name(by)} elsewhere)"
            )
        elif by is not None:
            who = f"{member_name(by)} cancelled it"
        else:
            who = "a cancel stopped it"
        return f"{member_name(agent)}'s turn was cut before it answered: {who}"

    def _cancelled_in(self, message_id: UUID) -> str | None:
        """What cut the last turn ``message_id`` caused that a cancel cut (the team going
        on), if any."""
        cut = [text for t, text in self._cancelled.items() if self._descends(t, message_id)]
        return cut[-1] if cut else None

    def _owes(self, message_id: UUID) -> Literal["", "cut", "waiting"]:
        """``cut`` when a turn the exchange ``message_id`` caused has not ended, else
        ``waiting`` when a message it caused is not received yet, else ""."""
        if any(self._descends(m, message_id) for m in self._in_turn | self._cut):
            return "cut"
        if any(self._descends(m, message_id) for m in [*self._unreceived, *self._waiting]):
            return "waiting"
        return ""

    def _failure_in(self, message_id: UUID, seq: int | None) -> str | None:
        """The last failure recorded after ``seq`` while a member handled ``message_id`` or
        a message it caused."""
        if seq is None:
            return None
        for at, failure, handling in reversed(self._errors):
            if at > seq and handling is not None and self._descends(handling, message_id):
                return failure
        return None

    def _descends(self, message_id: UUID, ancestor: UUID) -> bool:
        """Whether ``ancestor`` is on the ``parent_id`` chain of ``message_id``."""
        seen: set[UUID] = set()
        current: UUID | None = message_id
        while current is not None and current not in seen:
            if current == ancestor:
                return True
            seen.add(current)
            current = self._parent.get(current)
        return False


def _to(sent: SentMessage) -> UUID | None:
    return sent.recipient.agent_id if sent.recipient is not None else None


def _said(ended: TurnEndedEvent) -> str:
    """``@Worker: <why>`` for a failed turn, as an ``ErrorMessage`` reads."""
    return f"{member_name(ended.agent)}: {ended.error or 'its turn failed, no reason given'}"
