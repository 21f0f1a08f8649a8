"""Restore: rebuild a team from its event log, without re-running side effects.

The log says who was running (a ``StartMessage`` without a later ``StopMessage``, the
stops of a graceful team stop not counting), with
which configuration, under which parent; its ``StateChangedMessage``s give each
member's latest state — for a tool actor whose state is persisted as its deltas (a
``DeltaState``), the last snapshot it can read with the ``ToolStateEvent`` deltas after
it folded on (a corrupt snapshot falls back to the one before, or to every delta from
the empty state) — and its runs (``LlmMessageEvent``, ``ContextReplacedEvent``) each
agent's model context. The state table and the working memory are kept beside the log
for queries; restore trusts the log alone. Restoring:

1. starts the orchestrator again (same id) with its recorder, and replays the log into
   its views inside a ``set_restoring`` bracket (nothing is recorded twice);
2. re-creates the members, parents first and tool actors before the agents that use
   them, each with its own id, name, configuration and latest state, flagged
   ``restoring`` so that ``on_start`` knows; a tool actor that holds messages to send
   (reminders) records as sent those the log shows it sent, where a crash cut the delta
   that said so (``DeltaState.sent_in_log``), so none is sent twice;
3. gives each agent back its model context, and starts the members of the card that
   never started (a crash cut the team's creation: the log has none of their records);
4. delivers again every message that was sent to a member but never received (it was
   accepted, so it is not lost) — except a cancel (``CancelMessage``, ``/stop``): it was
   aimed at the run in progress when it was sent, a run of the process that stopped, and
   delivered now it would cut the first turn of the resumed team instead (that run's
   turn is reported as interrupted, below); and reports every message whose turn was received but
   never processed — or cut by the team's stop (``TurnInterrupted``: Ctrl-C) — as
   *interrupted* (``TeamRuntime.interrupted``) — re-running it could repeat side
   effects, so retrying is the caller's decision, best made at the resume
   (``retry_interrupted=True``): the interrupted turns are then delivered again first,
   in their original order, before the undelivered messages that were queued behind
   them (:meth:`RestorePlan.deliveries`), so each is redone in its place, not after
   what was sent after it (``TeamRuntime.retry_interrupted`` on the resumed team
   retries them later, after those; a turn the team went on without — left unsettled
   by an earlier run, or retried on a running team — cannot be redone in its place, and
   ``TeamRuntime.out_of_order`` says so: :meth:`RestorePlan.overtaken`); a retried turn
   (received again) stays interrupted until it is processed, so a crash in the retry
   leaves it for the next resume; a dismissed one is interrupted no longer.
   A resume that settles neither leaves them on the log as they were: while the resumed
   team runs, :func:`plan_restore` tells them (``interrupted``) from the turns it is on
   (``in_progress``: received since their member's latest start — a restore writes each
   member's start again).

Transient workers (tool actors created by other actors, such as deferred workers) are
not re-created: their work was in flight and their owners ask again.

A resume is all or nothing. Every member's models are built before any actor starts (a
missing API key is a :class:`ResumeError` naming the member and what to set), its MCP
servers' tools are checked as when the team was created — started anew, a server may
serve other tools (:class:`ResumedToolNameClashError`) — and the
recorder holds everything the restored team reports until every member has started:
if one fails, the team is torn down with nothing written, so the stored roster, status
and interrupted turns are exactly as they were, and the next attempt sees the same log.
``model`` resumes every agent on another model (a roster spec); the restored members'
start records carry it, so later resumes keep it.

Unreadable events are skipped (one ERROR line names how many and which seqs), unless
their damage hides the team or its numbering (:func:`unreadable_log`: none reads, none
that reads starts a member of the card, or a damaged event pack or a gap): then the
resume is refused (:class:`UnreadableLogError`), nothing started — the card's members
would otherwise start anew, as after a crash in the team's creation, beside what the log
can no longer say.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from pydantic_ai.messages import ModelMessagesTypeAdapter

from akgentic.agent import AgentConfig, BaseAgent, TurnInterrupted, is_cancel
from akgentic.core import (
    ActorAddress,
    ActorStartError,
    AddressError,
    Akgent,
    BaseConfig,
    BaseState,
    ErrorMessage,
    EventMessage,
    Message,
    Orchestrator,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamStoppingEvent,
)
from akgentic.core.agent import actor_class_for
from akgentic.core.words import counted
from akgentic.llm import ContextReplacedEvent, LlmMessageEvent, ModelRoster
from akgentic.storage import DecodeFailure, EventRecord, corrupt_rows
from akgentic.team.card import TeamCard, member_names, walk
from akgentic.team.mcp import resumed_tool_name_clash
from akgentic.team.runtime import InterruptedTurnsDismissed, TeamRuntime
from akgentic.team.skills import give_stored_skills, stored_skill_rows
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.core.journal import DeltaState, fold_deltas
from akgentic.tool.mcp import MCPToolNameClashError

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager
    from akgentic.team.recorder import EventRecorder

__all__ = [
    "RestorePlan",
    "ResumeError",
    "ResumedToolNameClashError",
    "UnreadableLogError",
    "plan_restore",
    "restore",
    "skipped_summary",
    "unreadable_log",
]

logger = logging.getLogger("akgentic.team")


MEMBER_START_TIMEOUT = 45.0
"""Seconds a team's create or resume waits for each member's ``on_start``: longer than a
member's own wait for a ``#`` tool actor it wires (``START_TIMEOUT``), so that a slow
tool actor is reported as itself, not as a member that did not answer; shorter than what
a client waits for ``POST /teams`` (60 s), so the client gets the reason."""


class ResumeError(ValueError):
    """A resume failed; the stored team is unchanged. The message says what to fix.

    ``member`` names the member or ``#`` tool actor that could not start, when that is
    why (its cause is in the message: another model would not help); else None.
    """

    def __init__(self, message: str, *, member: str | None = None) -> None:
        super().__init__(message)
        self.member = member


class ResumedToolNameClashError(ResumeError, MCPToolNameClashError):
    """A resumed team's agent would be offered one tool name twice: its MCP servers,
    started anew, serve other tools than when the team was created (which refuses such a
    team). The message says what to do; the stored team is unchanged."""


@dataclass
class Member:
    agent_id: UUID
    name: str
    agent_class: str
    config: BaseConfig
    parent: UUID | None


class UnreadableLogError(ResumeError):
    """The team's log has events, but damage hides the team in it (see
    :func:`unreadable_log`): a resume refused it, the stored team unchanged."""


@dataclass
class RestorePlan:
    """What the log says about the team at the moment it stopped or crashed."""

    orchestrator_id: UUID | None = None
    members: list[Member] = field(default_factory=list)
    """Running members, in the order they started (parents before children)."""
    ever_started: set[str] = field(default_factory=set)
    """The name of every member that ever started (running or not): a member of the card
    missing here never did, because a crash cut the team's creation."""
    undelivered: list[Message] = field(default_factory=list)
    """Sent to a running member, never received (cancels aside: see the module docstring)."""
    interrupted: list[Message] = field(default_factory=list)
    """Received by a running member and not processed since its latest receipt (a retry
    receives it again), or cut by the team's stop; not dismissed: what a resume offers."""
    in_progress: list[Message] = field(default_factory=list)
    """Those of ``interrupted`` not processed since their latest receipt, received since
    their recipient's latest start: while a live process holds the team, the turns it is
    on. The others were interrupted even then: cut by the team's stop, or received before
    their recipient started again (an earlier run's: the resume since neither retried nor
    dismissed them). A team no process holds is on none: all of ``interrupted`` were."""
    received_after: dict[UUID, list[UUID]] = field(default_factory=dict)
    """For each of ``interrupted``: the messages its recipient received after it (after its
    latest receipt), cancels aside — newer turns the team took on since (see
    :meth:`overtaken`)."""
    corrupt: list[DecodeFailure] = field(default_factory=list)
    """Rows that could not be decoded (reported, skipped)."""
    replay: list[Message] = field(default_factory=list)
    """The decodable history, for the orchestrator's views."""
    states: dict[UUID, BaseState] = field(default_factory=dict)
    """Each member's state, as the log has it: its last snapshot, with the deltas after
    it folded on for a ``DeltaState``."""
    deltas: dict[UUID, list[ToolStateEvent]] = field(default_factory=dict)
    """Each member's ``ToolStateEvent``s after its last readable snapshot."""
    unrebuilt: dict[UUID, str] = field(default_factory=dict)
    """Members whose state the log cannot rebuild (a delta is missing), and why."""
    contexts: dict[UUID, list[dict[str, Any]]] = field(default_factory=dict)
    """Each agent's model context (pydantic-ai messages as JSON), as the log has it."""
    sent: set[UUID] = field(default_factory=set)
    """The id of every message the log shows as sent: what a state that holds messages
    to send settles with (``DeltaState.sent_in_log``)."""

    def deliveries(self, *, retry_interrupted: bool) -> list[Message]:
        """The messages a resume delivers again, in the order it delivers them.

        Always the undelivered ones. With ``retry_interrupted``, the interrupted turns
        come first, in their original order: each was received before the messages its
        recipient had queued behind it were, so redone first it is redone in its place —
        the person who sent "a" then "b" gets "a" answered before "b", as if the crash had
        not happened. Without it, the undelivered ones alone (the interrupted turns wait
        for the caller's decision)."""
        retried = self.interrupted if retry_interrupted else []
        return [*retried, *self.undelivered]

    def overtaken(self, turns: list[Message], *, waiting: bool) -> dict[UUID, int]:
        """Those of the interrupted ``turns`` that delivered again now would not be redone in
        their place: each one's id, with how many newer messages come before it — those its
        recipient received after it (``turns`` themselves aside: they are delivered again in
        their order) and, with ``waiting`` (a team running: its undelivered messages are in
        its members' inboxes), those waiting for it. A resume delivers the undelivered ones
        after the retried turns (:meth:`deliveries`): it counts only the received ones, which
        a turn an earlier run left unsettled has (the team went on without it)."""
        retried = {m.id for m in turns}
        late: dict[UUID, int] = {}
        for turn in turns:
            recipient = turn.recipient.agent_id if turn.recipient is not None else None
            ahead = [i for i in self.received_after.get(turn.id, []) if i not in retried]
            if waiting:
                ahead += [
                    m.id
                    for m in self.undelivered
                    if m.recipient is not None and m.recipient.agent_id == recipient
                ]
            if ahead:
                late[turn.id] = len(ahead)
        return late


def plan_restore(records: list[EventRecord]) -> RestorePlan:
    """Read a team's log into a :class:`RestorePlan` (pure: no actor is touched)."""
    plan = RestorePlan(corrupt=corrupt_rows(records))
    started: dict[UUID, Member] = {}
    last_start: dict[UUID, int] = {}  # each member's latest start, as a record's index
    sent: dict[UUID, Message] = {}
    received: dict[UUID, int] = {}  # each message's latest receipt, as a record's index
    processed: dict[UUID, int] = {}  # each message's latest processing, as a record's index
    stopping = False  # inside a graceful stop, the members' stops are the teardown's
    dismissed: set[UUID] = set()
    cut: set[UUID] = set()  # turns the team's stop cut (TurnInterrupted), not retried since
    receipts: dict[UUID, list[tuple[int, UUID]]] = {}  # each actor's receipts: (index, id)
    for index, record in enumerate(records):
        msg = record.message
        if msg is None:
            continue
        plan.replay.append(msg)
        sender = msg.sender
        if isinstance(msg, EventMessage) and isinstance(msg.event, TeamStoppingEvent):
            stopping = True
        elif isinstance(msg, EventMessage) and isinstance(msg.event, InterruptedTurnsDismissed):
            dismissed.update(msg.event.message_ids)
        elif isinstance(msg, EventMessage) and isinstance(msg.event, TurnInterrupted):
            cut.add(msg.event.message_id)
        elif isinstance(msg, StartMessage) and sender is not None:
            if _is_orchestrator(sender.agent_class):
                plan.orchestrator_id = sender.agent_id
                stopping = False
                continue
            if isinstance(msg.config, BaseConfig):
                parent = msg.parent
                if parent is not None and _is_orchestrator(parent.agent_class):
                    # The orchestrator's own start precedes any subscriber: its id is
                    # known from the members it created.
                    plan.orchestrator_id = parent.agent_id
                plan.ever_started.add(sender.name)
                last_start[sender.agent_id] = index
                started[sender.agent_id] = Member(
                    agent_id=sender.agent_id,
                    name=sender.name,
                    agent_class=sender.agent_class,
                    config=msg.config,
                    parent=parent.agent_id if parent is not None else None,
                )
        elif isinstance(msg, StopMessage) and sender is not None and not stopping:
            started.pop(sender.agent_id, None)
        elif isinstance(msg, StateChangedMessage) and sender is not None:
            if isinstance(msg.state, BaseState):
                plan.states[sender.agent_id] = msg.state
                pending = plan.deltas.get(sender.agent_id)
                if pending and isinstance(msg.state, DeltaState):  # the snapshot includes them
                    last = msg.state.event_seq
                    plan.deltas[sender.agent_id] = [e for e in pending if e.seq > last]
        elif isinstance(msg, EventMessage) and sender is not None:
            if isinstance(msg.event, ToolStateEvent):
                plan.deltas.setdefault(sender.agent_id, []).append(msg.event)
            else:
                _follow_context(plan.contexts, sender.agent_id, msg.event)
        elif isinstance(msg, SentMessage):
            sent[msg.message.id] = msg.message
        elif isinstance(msg, ReceivedMessage):
            received[msg.message_id] = index
            cut.discard(msg.message_id)  # received again: retried
            if sender is not None:
                receipts.setdefault(sender.agent_id, []).append((index, msg.message_id))
        elif isinstance(msg, ProcessedMessage):
            processed[msg.message_id] = index
    plan.members = list(started.values())
    plan.sent = set(sent)
    for member in plan.members:
        _fold_state(plan, member)
    _own_states(plan)
    running = set(started)
    for message_id, message in sent.items():
        recipient = message.recipient
        if recipient is None or recipient.agent_id not in running:
            continue
        if message_id not in received:
            if not is_cancel(message):  # a cancel dies with the run it was aimed at
                plan.undelivered.append(message)
        elif message_id not in dismissed:
            # not processed since its latest receipt: a retry receives it again
            unfinished = processed.get(message_id, -1) < received[message_id]
            if unfinished or message_id in cut:
                plan.interrupted.append(message)
                since = received[message_id]
                later = (
                    i
                    for at, i in receipts.get(recipient.agent_id, [])
                    if at > since and i != message_id and not _a_cancel(sent.get(i))
                )
                plan.received_after[message_id] = list(dict.fromkeys(later))
            if unfinished and received[message_id] > last_start[recipient.agent_id]:
                plan.in_progress.append(message)
    return plan


def _a_cancel(message: Message | None) -> bool:
    """A cancel aimed at a turn is no turn of its own: received after the turn it cuts, it
    does not overtake it."""
    return message is not None and is_cancel(message)


def unreadable_log(plan: RestorePlan, card: TeamCard) -> str | None:
    """Why the log cannot restore the team, when damage hides the team in it; else None.

    A log with a damaged event pack or a gap (a run of numbers that cannot be read one by
    one: ``EventRecord.through``) is refused whole: the numbers it claims or lacks may be
    the damage, and a resumed team would number its new events after a number nobody can
    vouch for. A log with events none of which reads says nothing of who ran; a card member no
    readable event starts, in a log with unreadable events, may have its start among
    them — started anew it would lose its state and its turns. An empty log (a team
    created and never used) and one only a crash in the team's creation cut (no
    unreadable event) restore as before.
    """
    if not plan.corrupt:
        return None
    runs = [row for row in plan.corrupt if row.through is not None]
    if runs:
        return f"its numbering cannot be vouched for: {runs[0].reason}" + (
            f" (and {counted(len(runs) - 1, 'more run')} of numbers like it)"
            if len(runs) > 1
            else ""
        )
    if not plan.replay:
        unread = len(plan.corrupt)
        which = "its one event cannot" if unread == 1 else f"none of its {unread:,} events can"
        return f"{which} be read ({skipped_range(plan)})"
    unseen = [name for name in member_names(card.members) if name not in plan.ever_started]
    if unseen:
        return (
            f"{len(plan.corrupt)} of its events cannot be read ({skipped_range(plan)}), and "
            f"no readable one starts {', '.join(unseen)}: "
            f"{'its' if len(unseen) == 1 else 'their'} start may be among them"
        )
    return None


def skipped_range(plan: RestorePlan) -> str:
    """The sequence numbers of the log's unreadable events, as ``seq 4-9``."""
    seqs = [seq for row in plan.corrupt for seq in (row.seq, row.through) if seq is not None]
    if not seqs:
        return "seq unknown"
    low, high = min(seqs), max(seqs)
    return f"seq {low}" if low == high else f"seq {low}-{high}"


def skipped_summary(team_id: UUID, plan: RestorePlan) -> str | None:
    """One line for the unreadable events a restore skips (None when there are none)."""
    if not plan.corrupt:
        return None
    return (
        f"team {team_id}: {counted(len(plan.corrupt), 'unreadable event')} skipped on restore "
        f"({skipped_range(plan)}); the first: {plan.corrupt[0].reason}"
    )


def _own_states(plan: RestorePlan) -> None:
    """Give the plan its own copy of each state that is still a replayed snapshot's object.

    ``plan.replay`` hands the very ``StateChangedMessage`` objects to the orchestrator's
    views; the restored actor (and ``settle_with_log`` before it) changes its state in
    place, so sharing one object would let an actor's thread change a view's history
    under it. A folded state is already a copy (``fold_deltas``); only the others are
    copied, once each."""
    snapshots = {id(msg.state) for msg in plan.replay if isinstance(msg, StateChangedMessage)}
    for member in plan.members:
        state = plan.states.get(member.agent_id)
        if state is not None and id(state) in snapshots:
            plan.states[member.agent_id] = copy.deepcopy(state)


def _fold_state(plan: RestorePlan, member: Member) -> None:
    """A ``DeltaState`` member's state: its last readable snapshot (else the empty state)
    with the deltas after it folded on. A missing delta is recorded in ``unrebuilt``."""
    deltas = plan.deltas.get(member.agent_id)
    if not deltas:
        return
    base = plan.states.get(member.agent_id)
    if not isinstance(base, DeltaState):
        try:
            state_class = actor_class_for(member.agent_class).state_class
        except LookupError:
            return
        if not issubclass(state_class, DeltaState):
            return  # a tool that persists whole snapshots: its deltas are for clients only
        base = state_class()
    try:
        plan.states[member.agent_id] = fold_deltas(base, deltas)
    except ValueError as exc:
        plan.unrebuilt[member.agent_id] = str(exc)


def _follow_context(contexts: dict[UUID, list[dict[str, Any]]], agent: UUID, event: Any) -> None:
    """An agent's context is its last replacement followed by every later run — but not a
    run the model never answered (a cut turn, as a log written before the agent stopped
    publishing those has it): its prompt alone would be merged into the next request."""
    if isinstance(event, LlmMessageEvent):
        messages = json.loads(event.messages_json)
        if any(_complete_response(m) for m in messages):
            contexts.setdefault(agent, []).extend(messages)
    elif isinstance(event, ContextReplacedEvent):
        contexts[agent] = json.loads(event.messages_json)


def _complete_response(message: dict[str, Any]) -> bool:
    """A model response that was not cut short (an older log's have no ``state``)."""
    return message.get("kind") == "response" and message.get("state", "complete") == "complete"


def _is_orchestrator(path: str) -> bool:
    try:
        return issubclass(actor_class_for(path), Orchestrator)
    except LookupError:
        return False


def restore(
    manager: TeamManager,
    card: TeamCard,
    team_id: UUID,
    *,
    model: str | ModelRoster | None = None,
    lease_turn: int,
    retry_interrupted: bool = False,
) -> TeamRuntime:
    """Rebuild ``team_id`` in ``manager``'s actor system; see the module docstring.
    ``lease_turn``: the taking of the team's lease the restored team runs under (its stop
    gives that one back). ``retry_interrupted`` delivers the interrupted turns again
    before the undelivered messages (:meth:`RestorePlan.deliveries`): the runtime lists
    none as interrupted, those it delivered again in ``retried``, and those of them
    that newer turns overtook in ``out_of_order`` (:meth:`RestorePlan.overtaken`).

    Raises :class:`ResumeError` (the stored team unchanged) when a member cannot start.
    """
    from akgentic.team.manager import _MemberStartError, check_config_models, check_models

    storage, system = manager.storage, manager.system
    records = storage.events.read(team_id)
    plan = plan_restore(records)
    if (why := unreadable_log(plan, card)) is not None:
        raise UnreadableLogError(why)
    if (skipped := skipped_summary(team_id, plan)) is not None:
        logger.error("%s", skipped)
    for member in plan.members:
        if member.agent_id in plan.unrebuilt:
            raise ResumeError(
                f"{member.name}'s state cannot be rebuilt from the log: "
                f"{plan.unrebuilt[member.agent_id]} (see the unreadable events logged above). "
                f"Nothing was changed; repair the log from a backup before resuming",
                member=member.name,
            )
    # The log is the record: states and contexts come from it, so a crash between the
    # log and the convenience tables (latest states, working memory) loses nothing.
    states = plan.states
    for state in states.values():  # a send whose delta a crash cut is not sent twice
        if isinstance(state, DeltaState):
            state.settle_with_log(plan.sent)
    members = _members_to_start(plan)
    if model is not None:
        roster = ModelRoster.of(model)
        for member in members:
            if isinstance(member.config, AgentConfig):
                member.config = member.config.model_copy(
                    update={"models": roster.model_copy(deep=True)}
                )
    for member in members:  # before any actor starts: nothing to undo
        try:
            check_config_models(member.name, member.config, states.get(member.agent_id))
        except ValueError as exc:
            raise ResumeError(str(exc)) from exc  # another model would help: no member
    try:  # the card's members a crash in its creation left unstarted: started below
        check_models(card, skip=plan.ever_started)
    except ValueError as exc:
        raise ResumeError(str(exc)) from exc
    agents = [(m.name, m.agent_class, m.config) for m in members]
    agents += [
        (name, spec.card.agent_class, spec.card.config)
        for name, spec, _ in walk(card.members)
        if name not in plan.ever_started
    ]
    agents += [(p.config.name or f"@{p.role}", p.agent_class, p.config) for p in card.profiles]
    if (clash := resumed_tool_name_clash(card.name, agents)) is not None:
        raise ResumedToolNameClashError(clash)

    orchestrator, recorder = manager._start_orchestrator(
        card, team_id, plan.orchestrator_id, lease_turn
    )
    try:
        proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=60)
        for msg in plan.replay:
            system.proxy_tell(orchestrator, Orchestrator).restore_message(msg)
        recorder.hold()  # from here, nothing is written until every member has started
        proxy.end_restoration()
        addresses, human = _start_members(manager, plan, members, recorder, orchestrator)
        created = {m.name: addresses[m.agent_id] for m in members}
        try:
            human = manager._start_card_members(card, team_id, created, plan.ever_started) or human
        except _MemberStartError as failed:
            why = failed.reason or "its on_start failed (see the log)"
            raise ResumeError(f"{failed.member.name} could not start: {why}") from None
        _confirm_started(manager, members, addresses, recorder, orchestrator)
    except BaseException as exc:
        recorder.discard()
        system.proxy_tell(orchestrator, Orchestrator).stop(10.0)
        system.wait_stopped(orchestrator, 20.0)
        if isinstance(exc, Exception) and not isinstance(exc, ResumeError):
            raise ResumeError(f"{type(exc).__name__}: {exc}") from exc
        raise
    recorder.release()

    runtime = TeamRuntime(
        team_id, card, system, storage, orchestrator, recorder, human, interrupted=[]
    )
    interrupted = [
        m for m in plan.interrupted if m.recipient is not None and m.recipient.agent_id in addresses
    ]
    for msg in plan.deliveries(retry_interrupted=retry_interrupted):
        target = addresses.get(msg.recipient.agent_id) if msg.recipient else None
        if target is not None:
            runtime._redeliver(target, msg)
    if retry_interrupted:
        runtime.retried = interrupted
        runtime.out_of_order = plan.overtaken(interrupted, waiting=False)
    else:
        runtime.interrupted = interrupted
    return runtime


def _members_to_start(plan: RestorePlan) -> list[Member]:
    """The members to re-create, tool actors first (parents before children otherwise).

    Transient workers are not: their job died with the process and their owners ask
    again.
    """
    orchestrator_id = plan.orchestrator_id

    def team_tool(m: Member) -> bool:  # a # actor the orchestrator owns (not a worker)
        owned = orchestrator_id is not None and m.parent == orchestrator_id
        return m.name.startswith("#") and owned

    members = []
    for member in sorted(plan.members, key=lambda m: 0 if team_tool(m) else 1):
        if actor_class_for(member.agent_class).transient:
            continue
        if member.name.startswith("#") and not team_tool(member):
            continue  # a transient worker
        members.append(
            Member(
                agent_id=member.agent_id,
                name=member.name,
                agent_class=member.agent_class,
                config=member.config.model_copy(deep=True),
                parent=member.parent,
            )
        )
    return members


def _start_members(
    manager: TeamManager,
    plan: RestorePlan,
    members: list[Member],
    recorder: EventRecorder,
    orchestrator: ActorAddress,
) -> tuple[dict[UUID, ActorAddress], ActorAddress | None]:
    """Create every member, giving each agent its context once it has started.

    An agent that does not start is a :class:`ResumeError` at once (its one wait:
    :func:`_confirm_started` finds it started and does not wait for it again).
    """
    system = manager.system
    proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=60)
    addresses: dict[UUID, ActorAddress] = {}
    human: ActorAddress | None = None
    skills = stored_skill_rows(manager.storage.skills)  # the store, not the log, has them

    def config_of(member: Member) -> Any:
        config = member.config.model_copy(deep=True)
        give_stored_skills(config, skills)
        return config

    tools = [m for m in members if m.name.startswith("#")]
    restored = proxy.restore_children(  # in one message: see Orchestrator.restore_children
        [
            (actor_class_for(m.agent_class), config_of(m), m.agent_id, plan.states.get(m.agent_id))
            for m in tools
        ]
    )
    addresses.update(zip((m.agent_id for m in tools), restored, strict=True))
    for member in members:
        if member.name.startswith("#"):
            continue
        actor_class = actor_class_for(member.agent_class)
        state = plan.states.get(member.agent_id)
        config = config_of(member)
        parent = addresses.get(member.parent) if member.parent else None
        if parent is not None:
            creator = system.proxy_ask(parent, Akgent, timeout=60)
            address = creator.createActor(
                actor_class,
                agent_id=member.agent_id,
                config=config,
                restoring=True,
                state=state,
            )
        else:
            address = system.createActor(
                actor_class,
                config=config,
                team_id=orchestrator.team_id,
                agent_id=member.agent_id,
                restoring=True,
                state=state,
            )
        addresses[member.agent_id] = address
        if address.is_user_proxy and human is None:
            human = address
        if issubclass(actor_class, BaseAgent):
            items = plan.contexts.get(member.agent_id)
            if items:
                history = ModelMessagesTypeAdapter.validate_python(items)
                _raise_unless_started(manager, member, address, recorder, orchestrator)
                try:
                    system.proxy_ask(address, BaseAgent, timeout=60).restore_history(history)
                except AddressError:  # it stopped since: _confirm_started says why
                    continue
    return addresses, human


def _confirm_started(
    manager: TeamManager,
    members: list[Member],
    addresses: dict[UUID, ActorAddress],
    recorder: EventRecorder,
    orchestrator: ActorAddress,
) -> None:
    """Every member has run ``on_start`` and is alive; else a ResumeError naming it.

    The agents are checked before the tool actors: an agent that could not wire a
    ``#`` tool actor that failed to start names the card, the actor and the cause.
    """
    for member in sorted(members, key=lambda m: m.name.startswith("#")):
        address = addresses[member.agent_id]
        _raise_unless_started(manager, member, address, recorder, orchestrator)


def _raise_unless_started(
    manager: TeamManager,
    member: Member,
    address: ActorAddress,
    recorder: EventRecorder,
    orchestrator: ActorAddress,
) -> None:
    """Return once ``member`` has run its ``on_start`` and is alive; else a
    :class:`ResumeError` naming it and why.

    Waits at most :data:`MEMBER_START_TIMEOUT`; a member that started returns at once,
    so a member waited on twice (for its context, then confirmed) costs a resume that
    time once, and one that does not start fails the resume at its first wait.
    """
    system = manager.system
    why: str | None = None
    try:
        system.wait_started(address, MEMBER_START_TIMEOUT)
        if address.is_alive():
            return
    except ActorStartError as exc:
        why = exc.reason
    except AddressError:
        pass
    if why is None:  # it stopped: what it reported, if anything
        system.proxy_ask(orchestrator, Orchestrator, timeout=60).get_team()  # drain
        reasons = [
            str(m.content)
            for m in recorder.held()
            if isinstance(m, ErrorMessage)
            and m.sender is not None
            and m.sender.agent_id == member.agent_id
        ]
        why = reasons[-1] if reasons else "it stopped while starting"
    raise ResumeError(f"{member.name} could not start: {why}", member=member.name) from None
