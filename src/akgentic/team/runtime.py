"""TeamRuntime: a running team, as its users drive it.

``send`` and friends return only once the message they accepted is committed to the
team's event log: an accepted message survives a crash. ``follow(from_seq)`` yields the
team's events in order from any sequence number — the backfill comes from storage and
the live part waits on the recorder, both by sequence number, so there is no gap and no
duplicate across the boundary.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Generator
from dataclasses import dataclass, field
from uuid import UUID

from akgentic.agent import HumanProxy
from akgentic.core import (
    ActorAddress,
    ActorSystem,
    AddressError,
    CancelMessage,
    Message,
    Orchestrator,
    UserMessage,
    address_name,
    is_tool_actor,
)
from akgentic.core.serialization import SerializableModel
from akgentic.core.surrogates import replace_lone_surrogates
from akgentic.core.words import counted, did_you_mean
from akgentic.storage import (
    EventRecord,
    LeaseLostError,
    StorageBundle,
    StorageClosedError,
)
from akgentic.team.ask import Answer, Exchange, NoReplyError
from akgentic.team.card import TeamCard
from akgentic.team.recorder import LOSS_ADVICE, EventRecorder
from akgentic.team.replay import ReplayResult, initial_state, replay_tool_states

__all__ = [
    "STOPPED_ELSEWHERE",
    "InterruptedTurnsDismissed",
    "NotCommittedError",
    "TeamRuntime",
    "UnknownToolError",
    "UnreadableToolStateError",
    "follow_log",
    "logged_tools",
    "read_history",
    "tool_state",
]


def read_history(
    storage: StorageBundle, team_id: UUID, after: int = 0, offset: int = 0, limit: int = 100
) -> list[EventRecord]:
    """Records of ``team_id`` with ``seq > after``, skipping the first ``offset``, at most
    ``limit``, in order. Sequence numbers have no gap, so this is one ranged read."""
    start = max(after, 0) + max(offset, 0) + 1
    return storage.events.read(team_id, from_seq=start, limit=max(limit, 0))


class UnknownToolError(LookupError):
    """The team has no tool actor ``tool_id``: the message (:meth:`naming`) names the
    ones it has, in one line; the server's 404 says the same words, and
    ``RemoteTeam.tool_state`` raises this with them, so a script reads one error either
    way."""

    def __init__(self, message: str, *, team_id: UUID, tool_id: str) -> None:
        super().__init__(message)
        self.team_id = team_id
        self.tool_id = tool_id

    @classmethod
    def naming(cls, team_id: UUID, tool_id: str, tools: Collection[str]) -> UnknownToolError:
        """The error for ``tool_id``, saying which tool actors (``tools``) to ask for."""
        known = sorted(tools)
        near = did_you_mean(tool_id, known)
        has = f"its tool actors are {', '.join(known)}" if known else "it has none"
        return cls(
            f"team {team_id} has no tool actor {tool_id}{f' ({near})' if near else ''}: "
            f"ask for one it has ({has})",
            team_id=team_id,
            tool_id=tool_id,
        )


class UnreadableToolStateError(LookupError):
    """The team's tool actor ``tool_id`` published state this process cannot rebuild: its
    deltas are in the log, but no reducer is registered for it and no snapshot of its state
    decodes here (the module defining it is not imported). The message (:meth:`naming`)
    says what to import; the server's 422 ``tool_state_unreadable`` carries the same words
    and ``RemoteTeam.tool_state`` raises this with them, so a script reads one error
    either way — never an empty state it could take for the real one."""

    def __init__(self, message: str, *, team_id: UUID, tool_id: str) -> None:
        super().__init__(message)
        self.team_id = team_id
        self.tool_id = tool_id

    @classmethod
    def naming(cls, team_id: UUID, tool_id: str) -> UnreadableToolStateError:
        """The error for ``tool_id``, saying where to import what its state needs."""
        return cls(
            f"team {team_id}'s {tool_id} publishes state, but this process cannot rebuild it: "
            f"no reducer is registered for it and the log holds no snapshot of its state that "
            f"decodes here; import the module that defines that state in the process that "
            f"reads it (a server: `akgentic serve --import MODULE`, or a team card's imports)",
            team_id=team_id,
            tool_id=tool_id,
        )


def logged_tools(records: list[EventRecord]) -> list[str]:
    """The tool actors of the team's last run, as its log says: the ``#`` members a resume
    starts (:func:`~akgentic.team.restorer.plan_restore`; one fired is not one)."""
    from akgentic.team.restorer import plan_restore

    return [m.name for m in plan_restore(records).members if m.name.startswith("#")]


def tool_state(
    storage: StorageBundle,
    team_id: UUID,
    tool_id: str,
    tools: Callable[[], Collection[str] | None] | None = None,
) -> ReplayResult:
    """``tool_id``'s state (e.g. ``#PlanningTool``) rebuilt by replaying the whole log
    (:func:`replay_tool_states`: its reducer, or its ``DeltaState``'s last snapshot and
    ``apply_delta``): ``states`` holds it when it can be rebuilt, ``gaps`` any missed delta.

    A tool actor that has published nothing yet has the state it starts from
    (:func:`initial_state`; none for a tool this package does not ship) and ``last_seq``
    0, when the team has it: ``tools()`` names the running team's tool actors (None, or
    no ``tools``: the team is not running here, and its log's last run says,
    :func:`logged_tools`). Else :class:`UnknownToolError` naming the ones it has. This is
    what the server's ``GET /teams/{id}/state/{tool}`` answers (a 404 then), so a local
    and a remote team agree, running or stopped.

    A tool whose deltas are in the log but whose state this process cannot rebuild (no
    reducer, no snapshot that decodes: ``replay_tool_states``'s ``unknown_tools``) is an
    :class:`UnreadableToolStateError` saying what to import (the server's 422), not an
    empty result: the ``ReplayResult`` returned always holds ``tool_id``'s state or the
    state it starts from."""
    records = storage.events.read(team_id)
    replayed = replay_tool_states(records)
    if tool_id in replayed.unknown_tools:
        raise UnreadableToolStateError.naming(team_id, tool_id)
    result = ReplayResult(
        states={k: v for k, v in replayed.states.items() if k == tool_id},
        last_seq={k: v for k, v in replayed.last_seq.items() if k == tool_id},
        gaps=[g for g in replayed.gaps if g.tool_id == tool_id],
    )
    if tool_id in result.last_seq:
        return result
    listed = tools() if tools is not None else None
    if listed is None:
        listed = logged_tools(records)
    if tool_id not in listed:
        raise UnknownToolError.naming(team_id, tool_id, listed)
    start = initial_state(tool_id)
    result.states = {} if start is None else {tool_id: start}
    result.last_seq = {tool_id: 0}
    return result


READ_RETRY_FOR = 30.0
"""Seconds :func:`follow_log` keeps trying a read the store fails before it raises (as
long as the recorder tries its commits when a team stops: ``CLOSING_TRIES_FOR``)."""

READ_RETRY_EVERY = 1.0
"""Seconds between :func:`follow_log`'s tries of a read the store failed."""


def follow_log(
    storage: StorageBundle,
    team_id: UUID,
    from_seq: int,
    *,
    wait_past: Callable[[int, float], bool],
    ended: Callable[[int], bool],
    stop: threading.Event | None = None,
    idle_timeout: float | None = None,
    upto: Callable[[], int] | None = None,
) -> Generator[EventRecord, None, None]:
    """A team's records from ``from_seq`` on: what the store has, then what comes.

    Every step goes by sequence number, so there is no gap and no duplicate wherever the
    team runs. ``wait_past(seq, timeout)`` waits for the log to go past ``seq`` (the
    recorder of a team running here, an :class:`~akgentic.storage.EventWatch` otherwise);
    ``ended(next_seq)`` says the team has stopped and its log ends before ``next_seq``.
    Ends then, when ``stop`` is set, or after ``idle_timeout`` seconds with nothing new.
    ``upto()``, when given, is the last record to yield for now (a record past it is
    read again once ``wait_past`` says the log went past it); while it is below the next
    record the store is not read at all. A read the store fails (a dropped connection, a
    Postgres restarting) — the log's, or the status ``ended`` reads — is tried again
    every :data:`READ_RETRY_EVERY` seconds and raised only once it has failed for
    :data:`READ_RETRY_FOR`: the recorder keeps what the team
    does meanwhile and commits it when the store is back, so the follower must outlast
    the outage rather than end the session at its first failed read.
    """
    next_seq = max(from_seq, 1)
    failing_since: float | None = None
    pause = stop if stop is not None else threading.Event()
    while True:
        last = upto() if upto is not None else None
        try:
            if last is not None and last < next_seq:
                batch = []  # nothing committed past what was yielded: nothing to read
            else:
                batch = storage.events.read(team_id, from_seq=next_seq, limit=500)
            over = not batch and not (stop is not None and stop.is_set()) and ended(next_seq)
        except StorageClosedError:
            raise
        except Exception:  # the log's read, or the team's status ``ended`` reads
            now = time.monotonic()
            failing_since = now if failing_since is None else failing_since
            if now - failing_since >= READ_RETRY_FOR:
                raise
            if pause.wait(READ_RETRY_EVERY):
                return
            continue
        failing_since = None
        if upto is not None:
            last = upto()
            batch = [record for record in batch if record.seq <= last]
        for record in batch:
            yield record
            next_seq = record.last + 1
        if batch:
            continue
        if stop is not None and stop.is_set():
            return
        if over:
            return
        arrived = wait_past(next_seq - 1, idle_timeout or 0.5)
        if not arrived and idle_timeout is not None:
            return


logger = logging.getLogger("akgentic.team")

STOPPED_ELSEWHERE = "it was stopped from elsewhere (akgentic teams stop)"
"""``TeamRuntime.stop_reason`` when another process marked the team STOPPED."""

STOP_SLACK = 10.0
"""Seconds :meth:`TeamRuntime.stop` waits past the grace (the members left running given
up on, the tool actors stopped, the last records written), and past the recorder's last
try when the store refuses them."""


class NotCommittedError(TimeoutError):
    """A message was delivered (the team works on it) but the store did not commit it in
    time — a disk full, a read-only file, a dropped connection: the recorder keeps it, with
    what the team does after it, in memory and commits them once the store takes writes
    again. ``message_id`` is the message's id, to wait for its answer as for any other."""

    def __init__(self, message_id: UUID, timeout: float) -> None:
        super().__init__(f"message {message_id} was delivered but not committed within {timeout}s")
        self.message_id = message_id


class InterruptedTurnsDismissed(SerializableModel):
    """Event payload: these interrupted turns will not be retried (``dismiss_interrupted``);
    a later restore no longer reports them."""

    message_ids: list[UUID]


@dataclass
class TeamRuntime:
    """Handle on a team running in this process (built by ``TeamManager``)."""

    team_id: UUID
    card: TeamCard
    system: ActorSystem
    storage: StorageBundle
    orchestrator: ActorAddress
    recorder: EventRecorder
    human: ActorAddress | None
    interrupted: list[Message] = field(default_factory=list)
    """Messages whose turn a crash interrupted (received, never processed); see
    :meth:`retry_interrupted`."""
    retried: list[Message] = field(default_factory=list)
    """The interrupted turns the resume that built this runtime delivered again
    (``resume_team(..., retry_interrupted=True)``), in the order it delivered them: before
    the messages queued behind them. Empty otherwise."""
    out_of_order: dict[UUID, int] = field(default_factory=dict)
    """Of the interrupted turns this run delivered again (its resume's ``retried``, or
    :meth:`retry_interrupted`'s), those not redone in their place: each one's id, with how
    many newer messages its recipient took on before it (received, or waiting in its
    inbox), which are answered first. A turn the team went on without cannot be put back
    before them: it is redone all the same, and said to be out of order here."""

    commit_timeout: float = 30.0
    """Seconds a send waits for its message to be committed before it raises
    :class:`NotCommittedError` (the message is delivered, and kept to be committed)."""

    stop_reason: str | None = None
    """Why the team stopped when nobody in this process asked it to (another process
    stopped it: :data:`STOPPED_ELSEWHERE`; its lease was lost); None otherwise."""

    on_stopping: Callable[[float], None] | None = field(default=None, repr=False)
    """Called with the grace as :meth:`stop` starts the team's stop (once): the manager
    says in the store that the stop is in progress, so that a resume meanwhile waits for
    it instead of being refused. Never raises."""

    @property
    def first_seq(self) -> int:
        """The seq of the first record this run of the team wrote (its creation, or the
        resume that built this runtime): ``follow(first_seq)`` shows what this run does and
        nothing of the runs before it — nor of a stop in progress that the resume waited
        for, which wrote its last records (the cancel of a grace that ran out) meanwhile."""
        return self.recorder.first_seq

    @property
    def lease_lost(self) -> LeaseLostError | None:
        """Set once this process lost the team's lease (another process took the team
        over): nothing more is recorded, the team stops here, and its log goes on
        without this process."""
        return self.recorder.lost

    # -- talking to the team ------------------------------------------------------------------
    def send(self, content: str) -> UUID:
        """Send the person's words to the entry point; returns the message id once committed."""
        return self.send_to(self.card.entry_point, content)

    def send_to(self, member: str, content: str) -> UUID:
        """Send the person's words to ``member`` (e.g. ``"@Worker"``); committed on return.

        An :class:`AddressError` saying whom to address instead when ``member`` is no
        member, a ``#`` tool actor (it does not converse: its ``/commands`` go through a
        member that uses it) or the person (a user proxy) — nothing is sent."""
        target = self.member(member)
        if target is None or is_tool_actor(target) or target.is_user_proxy:
            raise AddressError(self._not_addressable(member, target))
        return self._deliver(target, UserMessage(content=replace_lone_surrogates(content)))

    def ask(self, content: str, *, to: str | None = None, timeout: float = 120.0) -> Answer:
        """Send ``content`` (to the entry point, or to ``to``) and return the answer to it,
        as :meth:`RemoteTeam.ask <akgentic.client.RemoteTeam.ask>` does for a team on a
        server: the same :class:`~akgentic.team.ask.Exchange` decides what the answer is
        (:mod:`akgentic.team.ask` says what counts), so a script runs unchanged on both.

        The log's position is read before the message is sent, and followed from there:
        an answer recorded before the follow starts is not missed. Raises
        :class:`~akgentic.team.TurnFailedError` when the team says the turn failed (or was
        interrupted); :class:`~akgentic.team.NoReplyError` when ``timeout`` seconds pass
        first (saying what still runs and how to follow it), when the exchange ends
        without an answer, or when the team stops first; :class:`AddressError` as
        :meth:`send_to` does (nothing is sent)."""
        if not timeout > 0:  # NaN too: it would wait for nothing, the message sent
            raise ValueError(f"ask's timeout is in seconds, more than 0, not {timeout!r}")
        name = self.card.entry_point if to is None else to
        position = self.recorder.last_seq
        asked = self.send_to(name, content)
        target = self.member(name)
        responder = target.name if target is not None else name
        exchange = Exchange(asked, responder, self.human.name if self.human else None)
        stop = threading.Event()
        deadline = threading.Timer(timeout, stop.set)
        deadline.daemon = True
        deadline.start()
        try:
            with contextlib.closing(self.follow(position + 1, stop=stop)) as records:
                for record in records:
                    answer = exchange.take(record)
                    if answer is not None:
                        return answer
        finally:
            deadline.cancel()
        follow = f"follow({exchange.asked_at or position + 1})"
        if stop.is_set():
            raise NoReplyError(
                asked,
                f"no answer from {responder} to message {asked} within {timeout:g}s; still "
                f"running: {exchange.running()}; follow it with {follow}, or ask with a "
                f"longer timeout",
            )
        raise NoReplyError(
            asked,
            f"team {self.card.name} ({self.team_id}) stopped before {responder} answered "
            f"message {asked} (still running then: {exchange.running()}); resume it with "
            f"TeamManager.resume_team({str(self.team_id)!r}) and read {follow}",
        )

    def _not_addressable(self, name: str, target: ActorAddress | None) -> str:
        members = [a.name for a in self.members() if not is_tool_actor(a) and not a.is_user_proxy]
        known = ", ".join(sorted(members)) or "none"
        if target is None:
            near = did_you_mean(name, sorted(members))
            near += " " if near else ""
            return f"{name} is not a member of this team ({near}members: {known})"
        if target.is_user_proxy:
            return f"{name} is the person writing, not a member: address one of {known}"
        return (
            f"{name} is a tool actor, not a member: send its /commands to a member that "
            f"uses it (/help lists a member's commands; members: {known})"
        )

    def process_human_input(self, content: str, message: Message | None = None) -> UUID:
        """Answer ``message`` (its sender gets the reply) or, without one, the entry point.

        The answer's ``parent_id`` is the message it answers, so the log tells which
        question a reply settled."""
        if message is None or message.sender is None:
            return self.send(content)
        target = self.system.get_address(message.sender.agent_id)
        if target is None:
            raise AddressError(f"{message.sender.name} is no longer running")
        content = replace_lone_surrogates(content)
        return self._deliver(target, UserMessage(content=content, parent_id=message.id))

    def _deliver(self, target: ActorAddress, msg: Message) -> UUID:
        if self.human is not None and self.human.is_alive():
            self.system.proxy_ask(self.human, HumanProxy, timeout=10).send(target, msg)
        else:
            self.system.tell(target, msg)
        if not self.saved(msg.id, self.commit_timeout):
            raise NotCommittedError(msg.id, self.commit_timeout)
        return msg.id

    def saved(self, message_id: UUID, timeout: float) -> bool:
        """Whether the message ``message_id`` (delivered) is committed, waiting up to
        ``timeout``: a caller may wait on in slices after :class:`NotCommittedError`. An
        :class:`AddressError` once the lease was lost: it never will be."""
        if self.recorder.wait_committed(message_id, timeout) is not None:
            return True
        if self.lease_lost is not None:
            raise AddressError(
                f"team {self.team_id} was taken over by another process: the message was not kept"
            )
        return False

    def retry_interrupted(self) -> list[UUID]:
        """Deliver the interrupted messages again, as new turns; returns their ids.

        This settles the turns of a team already running: they are delivered now, after
        whatever their recipients have received since (the messages the resume delivered
        again included) or have waiting; those that thereby lose their place are listed in
        :attr:`out_of_order`, with how many messages come first. To redo them in their
        original place, before the messages that were queued behind them, ask at the
        resume instead (``TeamManager.resume_team(..., retry_interrupted=True)``)."""
        from akgentic.team.restorer import plan_restore

        late: dict[UUID, int] = {}
        if self.interrupted:  # read before they are delivered: what is ahead of them now
            plan = plan_restore(self.storage.events.read(self.team_id))
            late = plan.overtaken(self.interrupted, waiting=True)
        retried = []
        for msg in self.interrupted:
            recipient = msg.recipient
            target = self.system.get_address(recipient.agent_id) if recipient else None
            if target is None:
                continue
            retried.append(self._redeliver(target, msg))
            if msg.id in late:
                self.out_of_order[msg.id] = late[msg.id]
        self.interrupted = []
        return retried

    def _redeliver(self, target: ActorAddress, msg: Message) -> UUID:
        """Deliver ``msg`` again from its original sender when that sender still runs
        (so the reply goes back to it), else from outside; same message id."""
        copy = msg.model_copy()
        sender = self.system.get_address(msg.sender.agent_id) if msg.sender else None
        try:
            if sender is None:
                raise AddressError("no live sender")
            sender.send(target, copy)
        except AddressError:
            self.system.tell(target, copy)
        self.recorder.wait_committed(copy.id, self.commit_timeout)
        return copy.id

    def dismiss_interrupted(self) -> list[UUID]:
        """Give up the interrupted turns: recorded on the team stream, so no later restore
        reports them again; returns their ids."""
        ids = [msg.id for msg in self.interrupted]
        if ids:
            event = InterruptedTurnsDismissed(message_ids=ids)
            self.system.proxy_ask(self.orchestrator, Orchestrator, timeout=10).notify_event(event)
        self.interrupted = []
        return ids

    def interrupt(self) -> list[str]:
        """Cancel the turns in progress (seed 004's ``/stop``, for every member at once).

        Each agent member gets a ``CancelMessage`` (from the human proxy when there is one):
        a run in progress stops at its next step boundary and reports itself interrupted;
        an idle member ignores it. Returns the names of the members told.
        """
        told = []
        for address in self.members():
            if address.name.startswith("#") or address.is_user_proxy:
                continue
            cancel = CancelMessage(reason="interrupted by the person")
            if self.human is not None and self.human.is_alive():
                self.system.proxy_ask(self.human, HumanProxy, timeout=10).send(address, cancel)
            else:
                self.system.tell(address, cancel)
            told.append(address.name)
        return told

    def history(self, after: int = 0, offset: int = 0, limit: int = 100) -> list[EventRecord]:
        """A page of the team's event log: records past sequence number ``after``, skipping
        ``offset`` of them, at most ``limit`` (see :func:`read_history`)."""
        return read_history(self.storage, self.team_id, after, offset, limit)

    def tool_state(self, tool_id: str) -> ReplayResult:
        """A tool actor's state rebuilt from the log (see :func:`tool_state`): one the team
        has that published nothing yet is the state it starts from; one it does not have
        is an :class:`UnknownToolError` — as the server says, running or stopped."""
        return tool_state(self.storage, self.team_id, tool_id, self._tool_actors)

    def _tool_actors(self) -> list[str] | None:
        """The running team's tool actors; None once it stopped (its log says then)."""
        try:
            return [a.name for a in self.members() if is_tool_actor(a)]
        except AddressError:
            return None

    # -- looking at the team ---------------------------------------------------------------
    @property
    def _orchestrator(self) -> Orchestrator:
        return self.system.proxy_ask(self.orchestrator, Orchestrator, timeout=10)

    def members(self) -> list[ActorAddress]:
        """The running members (tool actors included)."""
        return self._orchestrator.get_team()

    def member(self, name: str) -> ActorAddress | None:
        return self._orchestrator.get_team_member(address_name(name))

    def follow(
        self,
        from_seq: int = 1,
        *,
        stop: threading.Event | None = None,
        idle_timeout: float | None = None,
    ) -> Generator[EventRecord, None, None]:
        """The team's events from ``from_seq`` on, in order: the stored ones, then live ones.

        Ends when ``stop`` is set, or after ``idle_timeout`` seconds with nothing new, or
        when the team has stopped and everything is read. Only what this runtime's
        recorder committed is followed: once another process took the team over (its
        lease lost), what that process writes to the log is not this runtime's.
        """
        return follow_log(
            self.storage,
            self.team_id,
            from_seq,
            wait_past=lambda seq, timeout: self._wait_past(seq, stop, timeout),
            ended=lambda next_seq: (
                not self.orchestrator.is_alive() and self.recorder.last_seq < next_seq
            ),
            stop=stop,
            idle_timeout=idle_timeout,
            upto=lambda: self.recorder.last_seq,
        )

    def _wait_past(self, seq: int, stop: threading.Event | None, timeout: float) -> bool:
        """Wait until the log goes past ``seq``, ``stop`` is set or the team stops."""

        def ready() -> bool:
            return (
                self.recorder.last_seq > seq
                or (stop is not None and stop.is_set())
                or not self.orchestrator.is_alive()
            )

        with self.recorder.subscribe_live():
            return self.recorder.subscribe_live().wait_for(ready, timeout)

    def committed_seq(self, message_id: UUID) -> int | None:
        """The sequence number of a message this runtime accepted (None: not committed)."""
        return self.recorder.wait_committed(message_id, 0)

    def is_running(self) -> bool:
        """Whether the team still runs (its orchestrator is alive)."""
        return self.orchestrator.is_alive()

    # -- stopping --------------------------------------------------------------------------------
    def interrupt_and_stop(self, grace_timeout: float = 30.0) -> bool:
        """Ctrl-C: cancel every turn at its next step boundary (:meth:`cancel_turns`), then
        stop gracefully, waiting for them (bounded by ``grace_timeout``). True once the
        team has stopped."""
        self.cancel_turns()
        return self.stop(grace_timeout)

    def cancel_turns(self) -> list[str]:
        """Tell each regular member an interrupting ``CancelMessage``: an agent cuts its run
        at the next step boundary (a model request in flight at once) and starts no new
        turn, reporting the turns it cut or declined as interrupted (``TurnInterrupted``),
        so that a resume offers them again. When this returns, every cancel is in its
        member's inbox: a step the member takes from then on is cut. The names told: none
        once the members have stopped (the stop writing the team's last records: its
        orchestrator, asked for them, would answer only once they are written)."""
        if not self.orchestrator.is_alive() or self.recorder.closing:
            return []
        cancel_reason = "the team is stopping (interrupted)"
        told = []
        for member in self.members():
            if member.name.startswith("#") or member.is_user_proxy:
                continue
            with contextlib.suppress(AddressError):
                self.system.tell(member, CancelMessage(reason=cancel_reason, interrupt=True))
                told.append(member.name)
        return told

    def stop(self, grace_timeout: float = 30.0) -> bool:
        """Stop the team gracefully; True once it has stopped — its recorder's outcome
        then known (``recorder.end_saved``: whether it may be marked STOPPED).

        It waits for the grace and a margin (:data:`STOP_SLACK`), and past them only
        while the stop is writing the team's last records to a store that refuses them,
        as long as the recorder still tries (``recorder.tries_left``): whether any are
        lost is known only then. False when it has not stopped even so: the caller must
        not mark the team STOPPED — its recorder, which alone learns whether the team's
        end reached the log, marks it once it knows (``EventRecorder.on_stop``)."""
        if not self.orchestrator.is_alive():
            return True
        on_stopping, self.on_stopping = self.on_stopping, None  # the first stop's grace holds
        if on_stopping is not None and self.lease_lost is None:  # a lost team is another's
            on_stopping(grace_timeout)
        self.system.proxy_tell(self.orchestrator, Orchestrator).stop(grace_timeout)
        if self.system.wait_stopped(self.orchestrator, grace_timeout + STOP_SLACK):
            return True
        left = self.recorder.tries_left()  # None: its last records not yet being written
        if left is not None and self.system.wait_stopped(self.orchestrator, left + STOP_SLACK):
            return True
        self._say_not_ended()
        return False

    def _say_not_ended(self) -> None:
        """The one line of a stop that did not end in its wait: how many records are not
        saved yet — lost if the process ends first, as a command's does now — and what
        to do (the team is not marked STOPPED: ``EventRecorder.on_stop``)."""
        recorder = self.recorder
        unwritten = recorder.unwritten()
        logger.error(
            "team %s: its stop did not end in time: %s not saved yet%s, lost if the "
            "process ends before they are; %s",
            self.team_id,
            counted(unwritten, "record") if unwritten else "its last records",
            " (the store refuses them)" if recorder.refused() else "",
            LOSS_ADVICE,
        )
