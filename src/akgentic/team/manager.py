"""TeamManager: create, find, stop, resume and delete teams.

Creating a team records it, starts its orchestrator with an ``EventRecorder``
subscribed, hires the card's profiles, and creates the human proxy and the members
(parents first; a member's ``members`` are created as its children). Models are built
once before any actor starts, so a missing API key or a broken scenario is an error at
team creation naming what to fix.

Resuming rebuilds the team from its event log (see ``restorer``), all or nothing.

Where a team runs is its :class:`~akgentic.team.placement.Placement`'s choice: this
process by default (:class:`~akgentic.team.placement.LocalPlacement`), or one Ray actor
per team on a cluster (``RayPlacement``). Creating, resuming, finding and listing teams
go through it, and give back a :class:`~akgentic.team.placement.HostedTeam` with the
same verbs wherever the team runs.

One process runs a team at a time. The manager holds a lease on ``team/<id>`` in the
store (:mod:`akgentic.storage.lease`) from creation or resume until the team stops,
renewed by a heartbeat: a second process asking to resume it gets
:class:`TeamRunningElsewhereError` naming the holder (host, pid, since), unless the lease
expired — the holder crashed — or the holder ran on this host and its pid is gone.

A stop says in the store that it is in progress (a lease on
:func:`~akgentic.storage.stopping_resource`, held for its grace and a margin, released
once the team has stopped): a resume that lands while a team is stopping, in any
process, waits for the stop to finish, then takes the team (see :meth:`resume_team`).
A stop still trying to write the team's last records a store refuses keeps that marker
fresh at each try, and says so beside it (:func:`~akgentic.storage.saving_resource`):
a resume refused meanwhile says the stop is saving them, not that a turn still runs.

The manager watches the stored status of the teams it runs: a team another process
marked STOPPED (``akgentic teams stop``) is stopped here within ``watch_interval``, and
its runtime says so (``TeamRuntime.stop_reason``). A team whose lease was lost (this
process stalled past its expiry and another took it over) stops recording and stops:
its recorder commits under the lease's ``Fence``, so the store refuses the first group
written after the take-over, whenever the stall fell; its working memory, its
STOPPED mark and a resume's RUNNING mark are written under the fence too, and this
process leaves the team (its status is the new holder's). A resume whose RUNNING mark
fails stops the team it restored and gives its lease back: never running unowned.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, NamedTuple
from uuid import UUID, uuid4

from pydantic import BaseModel

from akgentic.agent import AgentConfig, AgentState, HumanProxy, HumanProxyConfig
from akgentic.catalog import (
    CatalogError,
    CatalogService,
    bind_catalog,
    catalog_tools,
    named_services,
)
from akgentic.core import (
    ActorAddress,
    ActorStartError,
    ActorSystem,
    AddressError,
    Akgent,
    BaseConfig,
    BaseState,
    ErrorMessage,
    Message,
    Orchestrator,
    OrchestratorConfig,
    TelemetryBatch,
    serialize,
)
from akgentic.core.error_pickle import reduce_by_fields
from akgentic.core.excerpt import exception_line
from akgentic.core.serialization import SerializationError
from akgentic.llm import ModelRoster, build_roster_model
from akgentic.storage import (
    LEASE_LOST,
    READ_FAILED,
    Fence,
    Heartbeat,
    Lease,
    LeaseHeldError,
    LeaseHolder,
    LeaseLostError,
    StorageBundle,
    TeamNotFoundError,
    TeamRecord,
    TeamStatus,
    holder_is_gone,
    live_lease,
    saving_resource,
    stopping_resource,
    team_resource,
)
from akgentic.team.card import TeamCard, TeamCardError, walk
from akgentic.team.mcp import attach_mcp_servers
from akgentic.team.placement.local import LocalPlacement
from akgentic.team.placement.protocol import HostedTeam, Placement
from akgentic.team.recorder import EventRecorder
from akgentic.team.restorer import MEMBER_START_TIMEOUT
from akgentic.team.runtime import STOPPED_ELSEWHERE, TeamRuntime
from akgentic.team.skills import give_stored_skills, stored_skill_rows
from akgentic.team.workspaces import remove_team_workspaces
from akgentic.tool.core.installed import deserialize_installed

__all__ = [
    "LEASE_TTL",
    "STOP_GRACE",
    "TeamManager",
    "TeamNotRunningError",
    "TeamRunningElsewhereError",
    "TeamStillStoppingError",
    "TeamStoppingError",
    "still_stopping_words",
    "team_resource",
]

LEASE_TTL = 30.0
"""Seconds a team's lease lasts without a heartbeat (renewed every third of it)."""
STOP_GRACE = 30.0
"""Seconds the turns in progress get to end when a team this process runs is stopped from
elsewhere (marked STOPPED in its storage); a turn still running then is cut."""
STOP_MARGIN = 15.0
"""Seconds a stop may take past its grace: the members left running are given up on, the
tool actors stop, the last records are written. A resume that finds the team stopping
waits for the stop that long past its grace at most (see :meth:`TeamManager.resume_team`)."""
RESUME_WAIT = STOP_GRACE + STOP_MARGIN
"""The longest a resume waits for a stop in progress (a stop given a longer grace is
still stopping then: the resume is refused, saying so), within a client's timeout."""
RESUME_POLL = 0.1
"""Seconds between two looks at the store of a resume waiting for a stop to finish."""
CLOCK_SLACK = timedelta(seconds=1)
"""How close to a team's STOPPED mark a lease taken on it still counts as taken after it
(a resume's, not the stopping holder's): the store keeps a lease's times to the
millisecond, by the database's clock (Postgres), and the mark's by its writer's. Too
generous errs on the safe side: a holder taken for a resume is not said to be stopping
the team until its stop marker says so."""


logger = logging.getLogger("akgentic.team")


class TeamNotRunningError(LookupError):
    """The team is not running in this process (resume it first)."""


class TeamStartError(ValueError):
    """A member of a new team could not start (its ``on_start`` failed: a tool it cannot
    wire, a setting it refuses); ``member`` names it. The team is stopped and removed.

    ``args`` are the constructor's (what pickling rebuilds an exception from), so it
    pickles whole: a Ray placement may carry it across processes.
    """

    def __init__(self, card: str, member: str, reason: str) -> None:
        super().__init__(card, member, reason)
        self.card = card
        self.member = member
        self.reason = reason

    def __str__(self) -> str:
        return f"team {self.card}: {self.member} could not start: {self.reason}"


class _MemberStartError(Exception):
    """Raised inside :meth:`TeamManager._start`: ``reason`` is why (one line), or None
    when the member could not say (it is then read from the team's log)."""

    def __init__(self, member: ActorAddress, reason: str | None = None) -> None:
        super().__init__(member.name)
        self.member = member
        self.reason = reason


def _not_data(card: TeamCard, exc: Exception) -> str:
    """Why ``card`` could not be copied (``exc``), in the words the store would use: a
    card is data — kept, sent and resumed — so a field holding an open file or a lock
    is refused when the team is created, saying what a field may hold."""
    try:
        serialize(card)
    except SerializationError as refused:
        return f"the card holds a value that is not data: {refused}"
    return f"the card could not be copied: {exception_line(exc)}"


class TeamRunningElsewhereError(LeaseHeldError):
    """Another live process holds the team's lease; ``lease`` names it."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, team_id: UUID, lease: Lease) -> None:
        super().__init__(lease)
        self.team_id = team_id
        self.args = (
            f"team {team_id} is running in another process: {lease.describe()}; stop it "
            f"there first (its lease expires {LEASE_TTL:g}s after that process dies)",
        )


class TeamStillStoppingError(TeamRunningElsewhereError):
    """A resume waited for the team's stop in progress (in another process, ``lease``
    names it) and the stop did not finish in time: a member there is still in its turn,
    or — ``saving`` — its turns have ended and the stop still tries to write the team's
    last records a store refuses (ending that process would lose them)."""

    __reduce__ = reduce_by_fields

    def __init__(self, team_id: UUID, lease: Lease, waited: float, saving: bool = False) -> None:
        super().__init__(team_id, lease)
        self.waited = waited
        self.saving = saving
        self.args = (
            f"team {team_id} is still stopping in another process ({lease.describe()}) "
            f"after {waited:.0f}s of waiting: {still_stopping_words(saving, elsewhere=True)}",
        )


def still_stopping_words(saving: bool, elsewhere: bool, verb: str | None = "resume") -> str:
    """What a stop in progress is at — a member's turn, or (``saving``) the team's last
    records a store refuses — and what to do: ``verb`` the team (resume, delete) once the
    stop has ended; None: only what would end it sooner. ``elsewhere``: another process
    stops the team."""
    there = " there" if elsewhere else ""
    if saving:
        then = "" if verb is None else f" and {verb} it once that stop has ended"
        return (
            f"its turns have ended, and its stop{there} still tries to save the team's "
            f"last records, which the store refuses; free the store (disk space, "
            f"permissions, a process holding it){then}"
        )
    if verb is None:
        return f"a member{there} has not ended its turn yet; the stop waits for it"
    if elsewhere:
        return (
            f"a member there has not ended its turn; {verb} it once that process has "
            f"stopped it, or end that process"
        )
    return f"a member has not ended its turn; {verb} it once it has stopped"


class TeamStoppingError(ValueError):
    """A resume asked not to wait for a stop (``resume_team(wait_for_stop=False)``) found
    the team being stopped (here or in another process): nothing was leased or written;
    the caller waits for the stop as it chooses (``stop_in_progress``) and asks again."""

    __reduce__ = reduce_by_fields

    def __init__(self, team_id: UUID) -> None:
        super().__init__(
            f"team {team_id} is stopping: resume it once its stop has ended (its stop in "
            f"progress says for how long at most)"
        )
        self.team_id = team_id


class _StopWait(NamedTuple):
    """A resume waiting for the team's stop: since when, until when, for which holder;
    ``by_status``: only its STOPPED status said it was stopping (no stop marker);
    ``told``: :attr:`TeamManager.on_stop_wait` was told (not while the holder is one that
    took the team after it was marked STOPPED: a resume there, not a stop)."""

    began: float
    deadline: float
    owner: str
    by_status: bool = False
    told: bool = True


class StopWait(NamedTuple):
    """What :attr:`TeamManager.on_stop_wait` is told when a resume begins to wait for the
    team's stop in progress."""

    team_id: UUID
    holder: LeaseHolder
    """The process stopping the team (this manager's own holder when it is this one)."""
    up_to: float
    """How long the resume waits for it at most (seconds)."""
    saving: bool = False
    """Its turns have ended: the stop still tries to write the team's last records a
    store refuses (:func:`~akgentic.storage.saving_resource`)."""


class TeamManager:
    """Teams of one ``ActorSystem`` over one storage bundle."""

    def __init__(
        self,
        actor_system: ActorSystem,
        storage: StorageBundle,
        *,
        watch_interval: float = 1.0,
        catalog: CatalogService | None = None,
        lease_ttl: float = LEASE_TTL,
        holder: LeaseHolder | None = None,
        placement: Placement | None = None,
    ) -> None:
        self.system = actor_system
        self.storage = storage
        self.placement: Placement = placement if placement is not None else LocalPlacement()
        """Where this manager's teams run (this process unless given)."""
        # The tool catalog its agents resolve CatalogTool instances from (akgentic.catalog).
        self.catalog = catalog if catalog is not None else CatalogService(storage)
        bind_catalog(actor_system, self.catalog)
        self.holder = holder or LeaseHolder.here()
        """Who this manager is in the teams' leases (this process, a fresh owner id)."""
        self.on_stop_wait: Callable[[StopWait], None] | None = None
        """Called when a resume begins to wait for the team's stop in progress (up to
        :data:`RESUME_WAIT`, in silence otherwise): a front end says so. It must not block;
        what it raises is logged, the resume goes on."""
        self.stop_wait_check: Callable[[], None] | None = None
        """Called at each look (every :data:`RESUME_POLL`) of a resume waiting for the
        team's stop in progress, on the resuming thread, holding no lock: what it raises
        ends the wait and the resume, nothing leased and nothing written — how the CLI's
        Ctrl-C (:func:`akgentic.cli.interrupt.check`) gives up a resume without waiting
        out another process's stop."""
        self._running: dict[UUID, TeamRuntime] = {}
        # teams whose lease this process lost (taken over): another's now, whatever it asks
        self._lost: set[UUID] = set()
        # teams whose stop here lost records the store refused, or had not ended when
        # stop_team stopped waiting (records may still be lost): not marked STOPPED here
        # (their log may lack their end), by whichever stop_team comes — a stop that ends
        # with all its records written is marked by its recorder (under _adopting)
        self._unsaved: set[UUID] = set()
        # of those, the ones whose stop had not ended when stop_team stopped waiting
        self._unended: dict[UUID, TeamRuntime] = {}
        self._refresh_failed: set[UUID] = set()  # teams whose stop marker a refresh failed
        self._watch_interval = watch_interval
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()
        self._adopting = threading.Lock()  # shutdown's list of teams misses no late start
        self._resuming: set[UUID] = set()  # teams a resume here is starting (under _adopting)
        self._marking: set[UUID] = set()  # of those, the ones a stop here is marking STOPPED
        self._stops_here: dict[UUID, int] = {}  # teams stop_team is stopping (how many calls)
        # which taking of each team's lease is this process's latest (see _lease)
        self._lease_turns: dict[UUID, int] = {}
        self._next_turn = itertools.count(1)
        self._lease_lock = threading.Lock()
        self._heartbeat = Heartbeat(
            storage.leases,
            lease_ttl,
            self._lease_lost,
            interval=max(lease_ttl / 3, watch_interval),
        )

    def _adopt(self, runtime: TeamRuntime) -> TeamRuntime:
        """Run ``runtime`` here, and watch its stored status (see :meth:`_watch`). A team
        that finished starting after :meth:`shutdown` began is stopped, not left running
        behind its back (RuntimeError)."""
        runtime.on_stopping = lambda grace: self._stopping(runtime.team_id, grace)
        with self._adopting:
            closed = self._closed.is_set()
            if not closed:
                self._running[runtime.team_id] = runtime
        if closed:
            saved = runtime.stop(5.0) and runtime.recorder.end_saved  # else: as stop_team
            with contextlib.suppress(LookupError):  # purged meanwhile: nothing to mark
                if saved and self.record(runtime.team_id).status in (TeamStatus.RUNNING, None):
                    # its own stop did not mark it; the team is this start's (claimed)
                    self._mark_stopped(runtime.team_id, ran_here=True, claimed=True)
            raise RuntimeError(
                f"this process is shutting down: team {runtime.team_id} was stopped as it "
                f"started; resume it once the process is back"
            )
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(
                target=self._watch, name="akgentic-team-watch", daemon=True
            )
            self._watcher.start()
        return runtime

    def _watch(self) -> None:
        """Stop the teams whose stored status another process set to STOPPED or DELETED.

        The store is what processes share, so ``akgentic teams stop`` in one terminal
        stops a team that ``akgentic run`` runs in another, within ``watch_interval``.
        """
        while not self._closed.wait(self._watch_interval):
            for team_id, runtime in list(self._running.items()):
                if not runtime.orchestrator.is_alive():
                    continue
                try:
                    record = self.storage.teams.get(team_id)
                except Exception:
                    logger.exception(
                        "team %s: could not read its status", team_id, extra={READ_FAILED: True}
                    )
                    continue
                if record is not None and record.status != TeamStatus.RUNNING:
                    logger.info("team %s is %s in storage: stopping it", team_id, record.status)
                    runtime.stop_reason = STOPPED_ELSEWHERE
                    runtime.stop(STOP_GRACE)

    # -- leases ---------------------------------------------------------------------------------
    def _lease(self, team_id: UUID) -> int:
        """Hold the team's lease (and keep it alive); TeamRunningElsewhereError if held.
        Returns the taking's turn: whoever took it gives back that one only
        (:meth:`_unlease_turn`), so a late stop never releases a later taking's lease."""
        resource = team_resource(team_id)
        leases, ttl = self.storage.leases, self._heartbeat.ttl
        with self._lease_lock:
            try:
                leases.acquire(resource, self.holder, ttl)
            except LeaseHeldError as held:
                gone = held.lease.holder
                if not holder_is_gone(gone):
                    raise TeamRunningElsewhereError(team_id, held.lease) from None
                # a recovery, not a fault: the CLI and the server's record tell the person
                logger.info("team %s: its last holder (%s) is gone", team_id, gone.describe())
                try:
                    leases.acquire(resource, self.holder, ttl, take_over=gone.owner)
                except LeaseHeldError as again:
                    raise TeamRunningElsewhereError(team_id, again.lease) from None
            turn = self._lease_turns[team_id] = next(self._next_turn)
            self._heartbeat.keep(resource, self.holder.owner)
        return turn

    def _unlease_turn(self, team_id: UUID, turn: int) -> None:
        """Give the lease back if it is still the one taken at ``turn``. Every taking in
        this process has the same owner, so the store cannot tell them apart: a team
        whose stop finished late (past a timed-out wait) must not release the lease a
        later resume here took meanwhile — the resumed team would run on unleased."""
        with self._lease_lock:  # no taking interleaves
            if self._lease_turns.get(team_id) != turn:
                return
            del self._lease_turns[team_id]
            resource = team_resource(team_id)
            self._heartbeat.drop(resource)
            try:
                self.storage.leases.release(resource, self.holder.owner)
            except Exception:  # it expires by itself
                logger.exception("team %s: could not release its lease", team_id)

    def _lease_lost(self, resource: str, error: LeaseLostError) -> None:
        """Another process took the team over: stop recording into its log, and stop.
        The team is no longer one this process runs: :meth:`shutdown` leaves it alone
        (its ``stop_team`` would mark the new holder's team STOPPED)."""
        for team_id, runtime in list(self._running.items()):
            if team_resource(team_id) == resource:
                logger.error(
                    "team %s: %s; stopping it here", team_id, error, extra={LEASE_LOST: True}
                )
                with self._adopting:
                    self._lost.add(team_id)
                    if self._running.get(team_id) is runtime:
                        del self._running[team_id]
                runtime.recorder.discard(error)
                runtime.stop_reason = f"its lease was lost ({error})"
                runtime.stop()

    def lease_of(self, team_id: UUID) -> Lease | None:
        """The team's lease as stored (None when no process holds one)."""
        return self.storage.leases.inspect(team_resource(team_id))

    def running_elsewhere(self, team_id: UUID) -> TeamRunningElsewhereError | None:
        """Why the team cannot be run here when another live process runs it (its lease
        unexpired, its holder not known dead), else None. A team in this process is
        not elsewhere."""
        if team_id in self._running:
            return None
        lease = self.lease_of(team_id)
        if lease is None or lease.holder.owner == self.holder.owner or not lease.alive():
            return None
        return TeamRunningElsewhereError(team_id, lease)

    # -- creating ---------------------------------------------------------------------------
    def create_team(
        self,
        card: TeamCard,
        *,
        team_id: UUID | None = None,
        model: str | ModelRoster | None = None,
        metadata: BaseModel | None = None,
    ) -> HostedTeam:
        """Start a new team from ``card``, where the placement runs teams.

        ``model`` (a roster spec, or a roster) overrides every member's; ``metadata`` is the team's
        business context (``Orchestrator.set_metadata``), set before any member starts so
        MetadataTool renders it into every prompt. A card listing two profiles of one role
        is a :class:`TeamCardError` (the later would replace the earlier unseen).
        """
        if (duplicate := card.duplicate_profile()) is not None:
            raise TeamCardError(f"team {card.name}: {duplicate[1]}")
        try:
            card = card.model_copy(deep=True)
        except Exception as exc:  # a field holding what cannot be copied: an open file
            raise TeamCardError(f"team {card.name}: {_not_data(card, exc)}") from exc
        if model is not None:
            override_models(card, model)
        attach_mcp_servers(card)
        return self.placement.create(self, card, team_id or uuid4(), metadata)

    def _create_here(
        self, card: TeamCard, team_id: UUID, metadata: BaseModel | None
    ) -> TeamRuntime:
        """Check ``card`` (prepared by :meth:`create_team`), record it and run it here."""
        check_models(card)
        check_catalog_tools(card, self.catalog)
        self.storage.teams.create(card.name, card=serialize(card), team_id=team_id)
        turn = self._lease(team_id)
        try:
            return self._adopt(self._start(card, team_id, metadata, turn))
        except TeamStartError:  # it never ran: nothing to resume, nothing left behind
            self._unlease_turn(team_id, turn)
            self.storage.teams.purge(team_id)
            raise
        except BaseException:
            self._unlease_turn(team_id, turn)
            raise

    def _start(
        self, card: TeamCard, team_id: UUID, metadata: BaseModel | None, turn: int
    ) -> TeamRuntime:
        """Start the team's actors. A failure stops those already started (none is left
        running unowned); a member whose ``on_start`` failed is a :class:`TeamStartError`
        with the failure it reported on the team stream."""
        orchestrator, recorder = self._start_orchestrator(card, team_id, None, turn)
        try:
            return self._start_members(card, team_id, metadata, orchestrator, recorder)
        except _MemberStartError as failed:
            self._abandon(orchestrator)
            reason = failed.reason or self._start_failure(team_id, failed.member)
            raise TeamStartError(card.name, failed.member.name, reason) from None
        except BaseException:
            self._abandon(orchestrator)
            raise

    def _abandon(self, orchestrator: ActorAddress) -> None:
        """Stop a team that did not finish starting; its records are written once it has."""
        with contextlib.suppress(Exception):
            self.system.proxy_tell(orchestrator, Orchestrator).stop(5.0)
            self.system.wait_stopped(orchestrator, 15.0)

    def _start_failure(self, team_id: UUID, member: ActorAddress) -> str:
        """What ``member`` reported when its start failed (the ``ErrorMessage`` it put on
        the team stream), without the framing every such report shares."""
        with contextlib.suppress(Exception):
            for record in reversed(self.storage.events.read(team_id)):
                message = record.message
                if not isinstance(message, ErrorMessage) or message.sender is None:
                    continue
                if message.sender.name == member.name:
                    return str(message.content).split("the actor is stopping: ", 1)[-1]
        return "its on_start failed (see the log)"

    def _answers(self, member: ActorAddress) -> None:
        """Return once ``member`` has run its ``on_start``; a member that failed there (or
        did not finish it within :data:`MEMBER_START_TIMEOUT`) is a
        :class:`_MemberStartError` with why."""
        try:
            self.system.wait_started(member, MEMBER_START_TIMEOUT)
        except ActorStartError as exc:
            raise _MemberStartError(member, exc.reason) from None
        except AddressError:
            raise _MemberStartError(member) from None
        if not member.is_alive():  # started, then stopped: what it reported says why
            raise _MemberStartError(member)

    def _start_members(
        self,
        card: TeamCard,
        team_id: UUID,
        metadata: BaseModel | None,
        orchestrator: ActorAddress,
        recorder: EventRecorder,
    ) -> TeamRuntime:
        if metadata is not None:
            self.system.proxy_ask(orchestrator, Orchestrator, timeout=30).set_metadata(metadata)
        human = self._start_card_members(card, team_id, {}, skip=set())
        # durable before it is returned: the members' start records are on disk, so a
        # resume from another process (a take-over) rebuilds the whole roster
        self.system.proxy_ask(orchestrator, Orchestrator, timeout=30).get_team()  # drains
        recorder.flush()
        if not recorder.written(TeamRuntime.commit_timeout):
            logger.warning("team %s: its creation is not yet on disk", team_id)
        return TeamRuntime(team_id, card, self.system, self.storage, orchestrator, recorder, human)

    def _start_card_members(
        self, card: TeamCard, team_id: UUID, created: dict[str, ActorAddress], skip: set[str]
    ) -> ActorAddress | None:
        """Create the card's person proxy and members whose names are not in ``skip``,
        parents first, each once the one before has run its ``on_start``
        (:class:`_MemberStartError` if it failed). ``created`` names the members already
        running (a parent may be one) and gains the new ones. Returns the person's proxy
        when it was created here.

        A new team starts them all; a resume starts those a crash in the team's creation
        left unstarted (the log never saw them) — but not one whose parent is no longer
        running (it started, and was stopped since): the child would have gone with it.
        """
        human = None
        if card.human and card.human not in skip:
            human = self.system.createActor(
                HumanProxy,
                config=HumanProxyConfig(name=card.human, default_recipient=card.entry_point),
                team_id=team_id,
            )
        skills = stored_skill_rows(self.storage.skills)
        for name, spec, parent in walk(card.members):
            if name in skip or (parent is not None and parent not in created):
                continue
            config = spec.card.get_config_copy()
            config.name = name
            give_stored_skills(config, skills)
            if not config.role:
                config.role = spec.card.role
            actor_class = spec.card.get_agent_class()
            if parent is None:
                created[name] = self.system.createActor(actor_class, config=config, team_id=team_id)
            else:
                creator = self.system.proxy_ask(created[parent], Akgent, timeout=30)
                created[name] = creator.createActor(actor_class, config=config)
            self._answers(created[name])
        return human

    def _start_orchestrator(
        self, card: TeamCard, team_id: UUID, agent_id: UUID | None, turn: int
    ) -> tuple[ActorAddress, EventRecorder]:
        """The team's orchestrator, its recorder subscribed, and the release of the lease
        taken at ``turn`` (:meth:`_lease`) once the team has stopped."""
        orchestrator = self.system.createActor(
            Orchestrator,
            config=OrchestratorConfig(
                entry_point=card.entry_point, max_agent_hops=card.max_agent_hops
            ),
            team_id=team_id,
            agent_id=agent_id,
            restoring=agent_id is not None,
        )
        recorder = EventRecorder(self.storage, team_id, self._fence(team_id), self._heartbeat.lost)
        recorder.on_retrying = lambda left: self._saving(team_id, left)
        proxy = self.system.proxy_ask(orchestrator, Orchestrator, timeout=30)
        proxy.subscribe(recorder)
        proxy.subscribe(_ReleaseOnStop(self, team_id, turn))
        profiles = [profile.model_copy(deep=True) for profile in card.profiles]
        skills = stored_skill_rows(self.storage.skills)
        for profile in profiles:
            give_stored_skills(profile.config, skills)
        proxy.register_agent_profiles(profiles)
        return orchestrator, recorder

    # -- finding ------------------------------------------------------------------------------
    def get_team(self, team_id: UUID) -> HostedTeam | None:
        """The team if it runs where the placement runs teams (by default: this process)."""
        return self.placement.find(self, team_id)

    def running(self) -> list[HostedTeam]:
        """The teams running where the placement runs teams (by default: this process)."""
        return self.placement.running(self)

    def _local_team(self, team_id: UUID) -> TeamRuntime | None:
        """The team if it runs in this process."""
        runtime = self._running.get(team_id)
        if runtime is not None and not runtime.orchestrator.is_alive():
            del self._running[team_id]
            return None
        return runtime

    def local_teams(self) -> list[TeamRuntime]:
        """The teams running in this process (not those its placement runs elsewhere)."""
        return [r for r in list(self._running.values()) if self._local_team(r.team_id) is r]

    def list_teams(self, status: TeamStatus | None = None) -> list[TeamRecord]:
        return self.storage.teams.list(status)

    def record(self, team_id: UUID) -> TeamRecord:
        record = self.storage.teams.get(team_id)
        if record is None:
            raise TeamNotFoundError(f"no team {team_id} in this storage")
        return record

    # -- stopping, resuming, deleting ------------------------------------------------------------
    def stop_team(self, team_id: UUID, grace_timeout: float = 30.0) -> None:
        """Stop a running team gracefully (status STOPPED). A team not running here is
        marked STOPPED, which the process running it (if any) notices and obeys; the lease
        of a process that crashed is cleared (nobody runs the team). A team whose stop
        here lost records the store refused stays RUNNING (see ``EventRecorder.on_stop``):
        its resume says it did not stop cleanly.

        A team run here is marked only once its stop has ended with every record written
        (``EventRecorder.end_saved``), which only its recorder knows, and only once the
        orchestrator has stopped. A stop still writing its last records when the wait
        for it ends (``TeamRuntime.stop`` is False) is not marked here, whatever this
        call or a later one sees: records may yet be lost, and a STOPPED mark would tell
        a resume the log holds the team's end. Its recorder marks it STOPPED once they
        are all written, and leaves it RUNNING (as after a crash) if they are not."""
        team = self.get_team(team_id)
        # a team taken over from here is marked under the fence too (refused: it is the
        # new holder's), however this process learned of the loss
        ran_here = self._local_team(team_id) is not None or team_id in self._lost
        with self._adopting:  # a resume here waits for this stop to end, its mark too
            self._stops_here[team_id] = self._stops_here.get(team_id, 0) + 1
        try:
            if team is not None:
                stopped = team.stop(grace_timeout)  # its lease goes once it has stopped
                with self._adopting:
                    if isinstance(team, TeamRuntime) and not (stopped and team.recorder.end_saved):
                        self._unsaved.add(team_id)  # lost, or may yet be: not marked here
                    if isinstance(team, TeamRuntime) and not stopped:
                        self._unended[team_id] = team
                    if self._running.get(team_id) is team:
                        del self._running[team_id]
            record = self.record(team_id)
            with self._adopting:  # else its log lacks its end: left RUNNING, as after a crash
                clean = team_id not in self._unsaved
            if clean and record.status in (TeamStatus.RUNNING, None):  # None: rewritten
                self._mark_stopped(team_id, ran_here)
            if team is None:
                self._clear_stale_lease(team_id)
        finally:
            with self._adopting:
                self._stops_here[team_id] -= 1
                if not self._stops_here[team_id]:
                    del self._stops_here[team_id]

    def stops_unended(self) -> set[UUID]:
        """The teams whose stop here had not ended when :meth:`stop_team` stopped waiting
        and still goes on (their recorder at their last records): a process that exits now
        leaves their actors behind — none of them stuck in a call, and the stop's own
        ``error:`` line said what may be lost (``TeamRuntime.stop``)."""
        with self._adopting:
            return {i for i, team in self._unended.items() if team.orchestrator.is_alive()}

    def _mark_stopped(self, team_id: UUID, ran_here: bool, claimed: bool = False) -> None:
        """Mark the team STOPPED, its own stop having not. One that ran here is marked
        under this process's fence: taken over meanwhile (found lost while it stopped),
        it is the new holder's, which would stop it on seeing STOPPED. Its lease released
        by its stop (nobody holds it), the lease is taken again for the mark and given
        back: a resume by another process that comes in between holds it, and its
        RUNNING team is left alone — never check-then-write. A resume in this process
        would hold a lease of the same owner: the team is claimed against one meanwhile
        (as a resume claims it), unless the caller has it ``claimed`` already (a start
        that is stopping it)."""
        teams = self.storage.teams
        if not ran_here:
            teams.set_status(team_id, TeamStatus.STOPPED)
            return
        fence = self._fence(team_id)
        try:
            teams.set_status(team_id, TeamStatus.STOPPED, fence=fence)
            return
        except LeaseLostError as lost:
            if lost.lease is not None:
                self._not_marked(team_id, lost.lease)
                return
        if claimed:
            self._mark_under_lease(team_id, fence)
            return
        with self._adopting:  # the lease is this process's whoever takes it: no resume here
            if self._local_team(team_id) is not None or team_id in self._resuming:
                return  # a resume here runs it again: it is that resume's to mark
            self._resuming.add(team_id)
            self._marking.add(team_id)  # a resume here meanwhile waits for the mark
        try:
            self._mark_under_lease(team_id, fence)
        finally:
            with self._adopting:
                self._resuming.discard(team_id)
                self._marking.discard(team_id)

    def _mark_under_lease(self, team_id: UUID, fence: Fence) -> None:
        """:meth:`_mark_stopped` once its lease is free: taken for the mark, given back."""
        with self._lease_lock:
            try:
                self.storage.leases.acquire(fence.resource, self.holder, self._heartbeat.ttl)
            except LeaseHeldError as held:
                self._not_marked(team_id, held.lease)
                return
            turn = self._lease_turns[team_id] = next(self._next_turn)  # a late stop leaves it
        try:
            self.storage.teams.set_status(team_id, TeamStatus.STOPPED, fence=fence)
        except LeaseLostError as lost:  # taken over since (a stall past the lease's life)
            self._not_marked(team_id, lost.lease)
        finally:
            self._unlease_turn(team_id, turn)

    @staticmethod
    def _not_marked(team_id: UUID, lease: Lease | None) -> None:
        """Log that the team is another holder's (``lease``): its mark is theirs to make."""
        holder = lease.describe() if lease is not None else "nobody"
        logger.info("team %s is %s's now: not marked STOPPED here", team_id, holder)

    def _fence(self, team_id: UUID) -> Fence:
        """This process's fence on the team: a write under it is refused once another
        process holds the team's lease."""
        return Fence(resource=team_resource(team_id), owner=self.holder.owner)

    def _clear_stale_lease(self, team_id: UUID) -> None:
        """Release the lease of a holder that is gone (expired, or its pid on this host no
        longer runs); a live holder's is left alone (it stops the team itself)."""
        lease = self.lease_of(team_id)
        if lease is None or lease.alive():
            return
        resource = team_resource(team_id)
        try:  # atomic: only while that holder still holds it
            self.storage.leases.acquire(resource, self.holder, 0, take_over=lease.holder.owner)
        except LeaseHeldError:
            return  # taken meanwhile by a live process
        self.storage.leases.release(resource, self.holder.owner)

    def interrupt_team(
        self,
        team_id: UUID,
        grace_timeout: float = 30.0,
        *,
        cancelled: Callable[[], None] | None = None,
    ) -> list[Message]:
        """Cancel the team's turns at their next step boundary, wait for them, stop the
        team (status STOPPED) and return every turn a resume would list as interrupted
        (see :meth:`TeamRuntime.cancel_turns`). ``cancelled`` is called once every member
        has its cancel, before the wait: what a caller says then is already true."""
        team = self.get_team(team_id)
        try:
            if team is not None:
                team.cancel_turns()
            if cancelled is not None:
                cancelled()
        finally:  # whatever the caller's call did: the team closed to turns must stop
            self.stop_team(team_id, grace_timeout)
        return self.interrupted_turns(team_id)

    def interrupted_turns(self, team_id: UUID) -> list[Message]:
        """The turns a resume of the team would list as interrupted (received, never
        processed), read from its log: after a stop, the ones it cut."""
        from akgentic.team.restorer import plan_restore

        return plan_restore(self.storage.events.read(team_id)).interrupted

    def resume_team(
        self,
        team_id: UUID,
        *,
        model: str | ModelRoster | None = None,
        retry_interrupted: bool = False,
        wait_for_stop: bool = True,
    ) -> HostedTeam:
        """Rebuild a stopped (or crashed) team from its event log, where the placement
        runs teams; see ``restorer``.

        ``model`` (a roster spec, or a roster) resumes every agent on that model.
        ``retry_interrupted`` delivers the turns the crash (or stop) interrupted again,
        first, in their original order, then the messages queued behind them: each turn is
        redone in its place (a turn may repeat its side effects). Without it they are
        listed in ``interrupted``, for the caller to retry (after the queued messages) or
        dismiss. All or nothing: a
        resume that fails raises ``ResumeError`` saying what to fix and leaves the stored
        team exactly as it was (roster, status, interrupted turns); a team another live
        process runs raises :class:`TeamRunningElsewhereError`.

        A team being stopped — here or in another process, from its stop's start until
        it is marked STOPPED and let go (:meth:`stopping`) — is waited for, then resumed:
        as long as that stop may take (its grace and :data:`STOP_MARGIN`), at most
        :data:`RESUME_WAIT`; a stop still going on then is
        :class:`TeamStillStoppingError` (``ValueError`` in this process), saying so. Not
        ``wait_for_stop`` (a caller whose person must be able to give up the wait: the
        server's client), it is :class:`TeamStoppingError` at once, nothing leased or
        written — at whichever look finds the stop, so no stop that begins while the
        resume starts is waited out either.
        """
        return self.placement.resume(
            self, team_id, model, retry_interrupted=retry_interrupted, wait_for_stop=wait_for_stop
        )

    def _resume_here(
        self,
        team_id: UUID,
        model: str | ModelRoster | None,
        retry_interrupted: bool = False,
        wait_for_stop: bool = True,
    ) -> TeamRuntime:
        """:meth:`resume_team` in this process. A team this process is stopping (its stop
        started, or its STOPPED mark being written) is waited for, as one another process
        stops (:meth:`_await_stop`)."""
        wait: _StopWait | None = None
        while True:
            with self._adopting:  # one resume of a team at a time in this process
                busy = self._resuming.union(self._stops_here)
                if self._local_team(team_id) is None and team_id not in busy:
                    self._resuming.add(team_id)
                    self._unsaved.discard(team_id)  # its next stop is its own
                    self._unended.pop(team_id, None)
                    break
            wait = self._await_stop(team_id, wait, None, wait_for_stop)
        try:
            return self._resume_claimed(team_id, model, retry_interrupted, wait_for_stop)
        finally:
            with self._adopting:
                self._resuming.discard(team_id)

    def _resume_claimed(
        self,
        team_id: UUID,
        model: str | ModelRoster | None,
        retry_interrupted: bool,
        wait_for_stop: bool = True,
    ) -> TeamRuntime:
        """:meth:`_resume_here` once no other resume of the team runs in this process: the
        lease is this process's whichever resume takes it, so a second one racing the
        first would release the first's lease when its own restore fails."""
        from akgentic.team.restorer import restore

        record = self.record(team_id).require()  # a damaged row: CorruptRecordError
        if record.status == TeamStatus.DELETED:
            raise ValueError(f"team {team_id} was deleted and cannot be resumed")
        try:
            card = deserialize_installed(record.card)
        except SerializationError as exc:
            raise SerializationError(f"team {team_id}: its stored team card: {exc}") from exc
        if not isinstance(card, TeamCard):
            raise ValueError(f"team {team_id} has no readable team card")
        if model is not None:
            card = card.model_copy(deep=True)
            override_models(card, model)  # the profiles hired from now on
        turn = self._lease_once_stopped(team_id, wait_for_stop)
        try:
            runtime = restore(
                self,
                card,
                team_id,
                model=model,
                lease_turn=turn,
                retry_interrupted=retry_interrupted,
            )
        except BaseException:
            self._unlease_turn(team_id, turn)
            raise
        try:
            self.storage.teams.set_status(team_id, TeamStatus.RUNNING, fence=self._fence(team_id))
        except BaseException:
            # restored and running, but not marked so (the store refused, or another
            # process took the team over meanwhile): stopped here rather than left
            # running unowned, its lease given back; its log says it ran and stopped
            stopped = False
            with contextlib.suppress(Exception):
                stopped = runtime.stop(5.0)
            if stopped:  # else its stop gives the lease back once done (_ReleaseOnStop)
                self._unlease_turn(team_id, turn)
            raise
        return self._adopt(runtime)

    def _lease_once_stopped(self, team_id: UUID, wait_for_stop: bool = True) -> int:
        """:meth:`_lease` for a resume: a team another process is stopping — its stop
        started (:func:`~akgentic.storage.stopping_resource` held), or it is marked
        STOPPED and its process still holds it — is waited for (:meth:`_await_stop`), then
        leased here; a team running elsewhere is :class:`TeamRunningElsewhereError` at
        once."""
        wait: _StopWait | None = None
        while True:
            try:
                return self._lease(team_id)
            except TeamRunningElsewhereError as held:
                wait = self._await_stop(team_id, wait, held, wait_for_stop)

    def _await_stop(
        self,
        team_id: UUID,
        wait: _StopWait | None,
        held: TeamRunningElsewhereError | None,
        wait_for_stop: bool = True,
    ) -> _StopWait:
        """Wait a moment (:data:`RESUME_POLL`) for the team's stop in progress — here when
        ``held`` is None, else in the process ``held`` names — and return the wait, for
        the next look (None at the first look: it lasts as long as the stop may still
        take, :meth:`_stopping_for`). A team not stopping raises ``held`` (running
        elsewhere) or ``ValueError`` (running here); a stop past its time raises
        :class:`TeamStillStoppingError` (or ``ValueError`` here), one line saying what
        to do.

        A STOPPED team whose holder took its lease after the mark is being resumed there
        (a resume racing this one, its restore not done), not stopped: the wait goes on in
        silence (:attr:`on_stop_wait` is not told) until that holder decides — it runs the
        team (``held`` raised), lets it go (leased here), or begins to stop it after all
        (told then). Not ``wait_for_stop``, a stop in progress raises
        :class:`TeamStoppingError` instead of being waited for (a resume racing this one is
        still waited for: it is no stop)."""
        now = time.monotonic()
        lease = held.lease if held is not None else None
        owner = lease.holder.owner if lease is not None else self.holder.owner
        # here, a STOPPED status says a stop only of a team still running here (its
        # watcher's): another resume here is starting it, not stopping it
        holds = held is not None or self._local_team(team_id) is not None
        left = self._stopping_for(team_id, holds, lease)
        if left is None and (team_id in self._marking or team_id in self._stops_here):
            left = STOP_MARGIN  # stopped here, being marked STOPPED
        resuming = (
            left is None and lease is not None and self._held_for(team_id, lease) == "resuming"
        )
        if wait is None or wait.owner != owner:  # a first look, or another holder now
            if left is None and not resuming:
                if held is not None:
                    raise held
                raise ValueError(f"team {team_id} is already running (or resuming) in this process")
            wait = _StopWait(now, now + RESUME_WAIT, owner, told=False)
        elif (
            held is not None and left is None and not resuming and (wait.by_status or not wait.told)
        ):
            # STOPPED no more, and no stop started: that holder resumed it (a resume racing
            # this one had leased it, its restore not yet done), it runs it
            raise held
        if left is not None and not wait_for_stop:
            raise TeamStoppingError(team_id)
        if left is not None and not wait.told:  # a stop in progress: said as the wait for it begins
            up_to = min(left, RESUME_WAIT)
            by_status = held is not None and self._stop_marker(team_id) is None
            wait = _StopWait(wait.began, now + up_to, owner, by_status)
            holder = lease.holder if lease is not None else self.holder
            self._tell_stop_wait(StopWait(team_id, holder, up_to))
        # the stopping holder still holds it (its marker may have just run out): until
        # the wait's end, it is still stopping
        if now >= wait.deadline:
            if held is not None and not wait.told:  # its resume there took that long
                raise held
            if held is not None:
                saving = self._stop_saving(team_id)
                raise TeamStillStoppingError(team_id, held.lease, now - wait.began, saving)
            raise ValueError(
                f"team {team_id} is still stopping in this process after "
                f"{now - wait.began:.0f}s of waiting: "
                f"{still_stopping_words(self._stop_saving(team_id), elsewhere=False)}"
            )
        if self.stop_wait_check is not None:
            self.stop_wait_check()
        self._closed.wait(min(RESUME_POLL, wait.deadline - now))
        return wait

    def _tell_stop_wait(self, notice: StopWait) -> None:
        """:attr:`on_stop_wait`, if set: a failing one does not fail the resume."""
        if self.on_stop_wait is None:
            return
        try:
            self.on_stop_wait(notice)
        except Exception:
            logger.exception("team %s: on_stop_wait failed", notice.team_id)

    def stopping(self, team_id: UUID) -> bool:
        """Whether a stop of the team is in progress, in this process or another: a
        resume now waits for it (:meth:`resume_team`)."""
        return self.stop_in_progress(team_id) is not None

    def stop_in_progress(self, team_id: UUID) -> StopWait | None:
        """The team's stop in progress, in this process or another — who stops it, and
        how long a resume now would wait for it at most — or None when none is (a team
        another process took after it was marked STOPPED is being resumed there, not
        stopped)."""
        with self._adopting:
            here = team_id in self._marking or team_id in self._stops_here
        local = self._local_team(team_id) is not None
        elsewhere = None if local else self.running_elsewhere(team_id)
        lease = elsewhere.lease if elsewhere is not None else None
        left = self._stopping_for(team_id, local or lease is not None, lease)
        if left is None and here:
            left = STOP_MARGIN  # stopped here, being marked STOPPED
        if left is None:
            return None
        holder = lease.holder if lease is not None else self.holder
        return StopWait(team_id, holder, min(left, RESUME_WAIT), self._stop_saving(team_id))

    def _stop_marker(self, team_id: UUID) -> Lease | None:
        """The team's live stop marker, if any (an unreadable store: none)."""
        return self._live_marker(stopping_resource(team_id), "whether it is stopping")

    def _live_marker(self, resource: str, what: str) -> Lease | None:
        """The marker on ``resource`` while its holder still counts (``Lease.alive``): a
        stop whose process died (killed mid-stop, on this host) is no stop in progress,
        and a resume does not wait out its marker. An unreadable store: none."""
        try:
            return live_lease(self.storage.leases, resource)
        except Exception:
            logger.exception("team %s: could not read %s", resource.rsplit("/", 1)[-1], what)
            return None

    def _stopping_for(self, team_id: UUID, held: bool, lease: Lease | None = None) -> float | None:
        """How long the team's stop in progress may still take at most (seconds), or None
        when no stop of it is in progress: its stop marker is held (the stop's grace and
        :data:`STOP_MARGIN` from its start), or — when a process still holds it
        (``held``: ``lease`` when another process does) — it is marked STOPPED
        (:data:`STOP_GRACE`, the grace its watcher gives it, and the margin), unless that
        process took it after the mark (:meth:`_held_for`)."""
        marker = self._stop_marker(team_id)
        if marker is not None:
            return (marker.expires_at - marker.renewed_at).total_seconds()
        if held and self._held_for(team_id, lease) == "stopping":
            return STOP_GRACE + STOP_MARGIN
        return None

    def _held_for(
        self, team_id: UUID, lease: Lease | None
    ) -> Literal["stopping", "resuming"] | None:
        """What a STOPPED team's holder (``lease``; None: this process, which runs it) holds
        it for: ``stopping`` (it held the team when it was marked: its watcher stops it),
        ``resuming`` (it took the lease after the mark, within
        :data:`CLOCK_SLACK`: a resume of its own, its restore not done); None when the
        team is not STOPPED (or the store does not read: nothing says it is stopping)."""
        try:
            record = self.storage.teams.get(team_id)
        except Exception:
            logger.exception("team %s: could not read whether it is stopping", team_id)
            return None
        if record is None or record.status != TeamStatus.STOPPED:
            return None
        marked = record.updated_at
        if lease is not None and marked is not None and lease.since >= marked - CLOCK_SLACK:
            return "resuming"
        return "stopping"

    def _stopping(self, team_id: UUID, grace: float) -> None:
        """The team's stop starts here: say so in the store (its stop marker, held for the
        grace and :data:`STOP_MARGIN`, released once it has stopped), so that a resume
        meanwhile, from any process, waits for it rather than being refused."""
        try:
            self._mark(stopping_resource(team_id), grace + STOP_MARGIN)
        except LeaseHeldError:  # an earlier stop's elsewhere, never released: it expires
            pass
        except Exception:  # the stop goes on; a resume meanwhile is refused, as before
            logger.exception("team %s: could not record that it is stopping", team_id)

    def _saving(self, team_id: UUID, left: float) -> None:
        """The team's stop still tries, for up to ``left`` seconds, to write its last
        records the store refuses (its turns have ended): its stop marker is kept fresh
        for that long and :data:`STOP_MARGIN` — it would otherwise run out mid-try, its
        grace past, and a resume meanwhile would no longer wait for the stop — and its
        saving marker says so (a resume refused then says what the stop is at). Tried at
        each of the stop's tries: a store that refuses these too is said once a stop."""
        ttl = left + STOP_MARGIN
        for resource in (stopping_resource(team_id), saving_resource(team_id)):
            try:
                self._mark(resource, ttl)
            except LeaseHeldError:  # an earlier stop's elsewhere, never released: it expires
                pass
            except Exception:  # it runs out by itself; a resume then is refused, as before
                with self._adopting:
                    said = team_id in self._refresh_failed
                    self._refresh_failed.add(team_id)
                if not said:
                    logger.exception("team %s: could not record that it is stopping", team_id)

    def _mark(self, resource: str, ttl: float) -> None:
        """Hold a stop's marker on ``resource`` for ``ttl`` seconds. One a process left
        behind as it died (killed mid-stop: ``Lease.alive`` false) is taken over — this
        stop must be seen, not hidden behind a marker everyone ignores; a live holder's
        raises ``LeaseHeldError``."""
        leases = self.storage.leases
        try:
            leases.acquire(resource, self.holder, ttl)
        except LeaseHeldError as held:
            if held.lease.alive():
                raise
            leases.acquire(resource, self.holder, ttl, take_over=held.lease.holder.owner)

    def _stop_saving(self, team_id: UUID) -> bool:
        """Whether the team's stop in progress is writing its last records (its saving
        marker is live: :meth:`_saving`), its turns over; an unreadable store: no."""
        return self._live_marker(saving_resource(team_id), "what its stop is at") is not None

    def _stopped(self, team_id: UUID) -> None:
        """The team's stop has finished: its stop and saving markers go."""
        with self._adopting:
            self._refresh_failed.discard(team_id)
        try:
            for resource in (saving_resource(team_id), stopping_resource(team_id)):
                self.storage.leases.release(resource, self.holder.owner)
        except Exception:  # they expire by themselves
            logger.exception("team %s: could not release its stop marker", team_id)

    def delete_team(self, team_id: UUID, *, purge: bool = False) -> None:
        """Stop the team if it runs here, then mark it DELETED. ``purge`` removes its rows
        and its own workspace trees (see :mod:`akgentic.team.workspaces`).

        A team another live process runs is refused (:class:`TeamRunningElsewhereError`),
        deleted or purged alike: that process would go on writing events into a team
        marked DELETED (or into rows that are gone), and its session would offer to resume
        a team that can no longer be resumed. Stop it first (:meth:`stop_team`), then
        delete it. A team whose process is gone (its lease expired, its pid dead) is not
        running anywhere: it is deleted."""
        if self.get_team(team_id) is not None:
            self.stop_team(team_id)
        elif (elsewhere := self.running_elsewhere(team_id)) is not None:
            raise elsewhere
        self.record(team_id)
        if purge:
            self.storage.teams.purge(team_id)
            remove_team_workspaces(team_id)
        else:
            self.storage.teams.delete(team_id)

    def shutdown(self, grace_timeout: float = 30.0) -> None:
        """Stop every team this manager runs in this process, its status watcher and its
        heartbeat, and close the placement (teams on a cluster keep running there)."""
        with self._adopting:
            self._closed.set()
            running = list(self._running)
        for team_id in running:
            with contextlib.suppress(LookupError):  # purged meanwhile
                self.stop_team(team_id, grace_timeout)
        self._heartbeat.close()
        self.placement.close()


class _ReleaseOnStop:
    """Subscribed after the recorder: once the team has stopped — its last records
    written, before anyone waiting sees its orchestrator stopped — the lease goes, unless
    a later start of the team here took it meanwhile (a stop that outlasted its wait)."""

    def __init__(self, manager: TeamManager, team_id: UUID, turn: int) -> None:
        self._manager = manager
        self._team_id = team_id
        self._turn = turn  # which taking of the lease this team runs under

    def on_message(self, msg: Message) -> None:
        return None

    batched = True  # it needs no record at once: the team is not woken on its account

    def on_batch(self, batch: TelemetryBatch) -> None:
        return None  # nothing to read: no record's message is ever built for it

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        return None

    def on_stop_request(self, team_id: UUID) -> None:
        return None

    def on_stop(self, team_id: UUID) -> None:
        self._manager._unlease_turn(self._team_id, self._turn)
        self._manager._stopped(self._team_id)  # after the lease: no gap a resume reads as running


def override_models(card: TeamCard, spec: str | ModelRoster) -> None:
    """Give every agent member and profile the roster ``spec`` (``--model``)."""
    roster = ModelRoster.of(spec)
    for config in card.configs():
        if isinstance(config, AgentConfig):
            config.models = roster.model_copy(deep=True)


def check_models(card: TeamCard, skip: set[str] | None = None) -> None:
    """Build every member's models once (but those named in ``skip``): a missing key or
    scenario fails here, clearly."""
    for name, spec, _ in walk(card.members):
        if skip and name in skip:
            continue
        config = spec.card.config
        if isinstance(config, AgentConfig) and not config.role:
            config = config.model_copy(update={"role": spec.card.role})
        check_config_models(name, config)


def check_config_models(name: str, config: BaseConfig, state: BaseState | None = None) -> None:
    """Build the models an agent configured by ``config`` (with the model its ``state``
    switched to, if any) would build; ``ValueError`` naming ``name`` and what to fix."""
    if not isinstance(config, AgentConfig):
        return
    roster = config.models
    active = state.tool_state.active_model if isinstance(state, AgentState) else None
    known = roster.keys()  # a stale preference is dropped by the agent (restore_active)
    if active is not None and active in known and active != roster.active_key:
        roster = roster.model_copy(deep=True)
        roster.switch(active)
    base = Path(config.scenario_dir) if config.scenario_dir else None
    try:
        build_roster_model(roster, role=config.role, base_dir=base)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from exc


def check_catalog_tools(card: TeamCard, catalog: CatalogService) -> None:
    """Resolve every catalog instance the card names — tools, and the services a card's
    vector store names (a cluster, an embeddings endpoint): an unknown, disabled or
    orphaned instance, a missing key or credential fails here, naming the member and what
    to do."""
    configs: list[Any] = [(name, s.card.config) for name, s, _ in walk(card.members)]
    configs += [(p.config.name or p.role, p.config) for p in card.profiles]
    for name, config in configs:
        tools = getattr(config, "tools", ())
        try:
            for tool in catalog_tools(tools):
                catalog.resolve_card(tool.instance)
        except CatalogError as exc:
            raise ValueError(f"{name}: {exc}") from exc
        for field, service in named_services(tools):
            try:
                catalog.resolve(service, "agents")
            except CatalogError as exc:
                raise ValueError(f"{name}: {field}: {exc}") from exc
