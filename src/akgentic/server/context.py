"""What every route works with: the team manager, the feeds, the cards, the settings."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from fastapi import HTTPException, Request

from akgentic.client.models import TEAM_NOT_FOUND, TEAM_NOT_RUNNING, StopInProgress, TeamInfo
from akgentic.core import AddressError
from akgentic.core.orchestrator import DEFAULT_MAX_AGENT_HOPS
from akgentic.server.cards import CardRegistry
from akgentic.server.errors import CodedError
from akgentic.server.feed import Hub
from akgentic.server.posted import PostedCardPolicy
from akgentic.server.roster import RosterIndex, member_kind
from akgentic.server.settings import ServerSettings
from akgentic.storage import StorageBundle, TeamRecord, TeamStatus
from akgentic.team import HostedTeam, TeamManager, plan_restore
from akgentic.tool import ToolCard
from akgentic.tool.core.installed import load_named_by
from akgentic.tool.mcp import MCPTool

__all__ = [
    "DRAINING",
    "SHUTTING_DOWN",
    "ServerContext",
    "accepting_work",
    "context",
    "deleted_team",
]

logger = logging.getLogger("akgentic.server")

SHUTTING_DOWN = (
    "the server is shutting down and accepts no new work (its teams are stopping); "
    "try again once it is back, or use another server"
)
"""The 503 detail of a request that would start work on a draining server."""

DRAINING: dict[int | str, dict[str, Any]] = {
    503: {"description": "The server is shutting down: it accepts no new work."}
}
"""The OpenAPI answer of a route guarded by :func:`accepting_work`."""


class ListedMember(NamedTuple):
    """A member as the roster lists it (:meth:`ServerContext.listed_members`)."""

    name: str
    agent_id: UUID
    role: str
    kind: str
    """``human``, ``tool`` or ``agent`` (:func:`~akgentic.server.roster.member_kind`)."""


@dataclass
class ServerContext:
    manager: TeamManager
    cards: CardRegistry
    settings: ServerSettings
    hub: Hub | None = None
    rosters: RosterIndex = field(default_factory=RosterIndex)
    mcp_servers: list[MCPTool] = field(default_factory=list)
    """The servers of ``settings.mcp_config``, which every team created here gets."""
    started_cards: frozenset[type[ToolCard]] | None = None
    """The card classes defined when the app was made (the shipped ones, and those the
    operator's ``--cards`` and ``--import`` loaded): a posted card's tools may be of these
    only, unless ``--allow-posted cards`` (see :mod:`akgentic.server.posted`)."""
    draining: bool = False
    """The server is stopping (``akgentic serve``'s first Ctrl-C or SIGTERM): ``/health``
    answers 503 ``draining`` and what would start work is refused (:func:`accepting_work`);
    reads go on."""
    _interrupted: dict[UUID, tuple[int, bool, list[UUID]]] = field(
        default_factory=dict, init=False, repr=False
    )
    """Interrupted turns read from the logs of teams not running here, by their last seq
    and whether another live process held them (a crash changes that, not the log)."""
    _classes_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _classes_loaded: set[UUID] = field(default_factory=set, init=False, repr=False)
    """Teams whose stored card's classes are loaded (``load_named_by``): a team made of
    cards an installed distribution declares reads back after the server restarts."""

    @property
    def nameable_cards(self) -> frozenset[type[ToolCard]] | None:
        """The card classes a posted card's tools may name: those the server started
        with, or every one defined (None) when the operator allows ``--allow-posted
        cards``."""
        return None if "cards" in self.settings.allow_posted else self.started_cards

    @property
    def posted(self) -> PostedCardPolicy:
        """What posted cards may reach: the settings' ``allow_posted``; the cards folders
        and what the registered cards read."""
        cards = [card for card, _ in self.cards.items()]
        return PostedCardPolicy.for_cards(
            self.settings.allow_posted, self.cards.folders(), cards, self.started_cards
        )

    @property
    def live(self) -> Hub:
        if self.hub is None:
            raise HTTPException(503, "the server is starting or stopping; try again")
        return self.hub

    def record(self, team_id: UUID) -> TeamRecord:
        """The team's record; 404 saying how to list the teams, with the code
        ``team_not_found`` (a client's sign that the team is gone, not the route)."""
        record = self.manager.storage.teams.get(team_id)
        if record is None:
            raise CodedError(
                404, f"no team {team_id}; list the teams with GET /teams", TEAM_NOT_FOUND
            )
        if team_id not in self._classes_loaded:  # once: its log names its cards' classes
            with self._classes_lock:  # a request racing this one waits for the classes
                if team_id not in self._classes_loaded:
                    try:
                        load_named_by(record.card)
                    except Exception:  # a malformed entry point: the rows say what is missing
                        logger.warning("team %s: its cards' entry points", team_id, exc_info=True)
                    self._classes_loaded.add(team_id)
        return record

    def listed_members(self, team_id: UUID) -> list[ListedMember]:
        """The members the roster (``GET /teams/{id}/members``) lists: a team running
        here, its running members (tool actors included), as its orchestrator says; else
        its last run's, as its log says (the ones a resume starts; a member fired is not
        one) — as for a team that stops while its orchestrator is asked (another client's
        stop or delete got there first). Whether a team has a tool actor is read here
        too, so both agree."""
        runtime = self.manager.get_team(team_id)
        if runtime is not None:
            try:
                running = runtime.members()
            except AddressError:  # it stopped meanwhile: its log has the run that ended
                pass
            else:
                return [ListedMember(a.name, a.agent_id, a.role, member_kind(a)) for a in running]
        facts = self.rosters.read(self.manager.storage, team_id)
        return [
            ListedMember(m.name, agent_id, m.role, m.kind)
            for agent_id, m in facts.items()
            if m.present
        ]

    def runtime(self, team_id: UUID) -> HostedTeam:
        """The team running here; 404 or 409 (saying how to resume it) otherwise."""
        runtime = self.manager.get_team(team_id)
        if runtime is not None:
            return runtime
        record = self.record(team_id)
        if record.status == TeamStatus.DELETED:
            raise deleted_team(team_id)
        elsewhere = self.manager.running_elsewhere(team_id)
        if elsewhere is not None:  # a resume here would be refused: say so now
            raise HTTPException(
                409,
                f"team {team_id} is running in another process: {elsewhere.lease.describe()}; "
                f"talk to it there (send, interrupt), or stop it there and resume it here",
            )
        raise CodedError(
            409,
            f"team {team_id} is not running in this server "
            f"({record.status.value if record.status else 'DAMAGED'}); resume "
            f"it with POST /teams/{team_id}/resume",
            TEAM_NOT_RUNNING,
        )

    def undelivered(self, team_id: UUID, runtime: HostedTeam, error: Exception) -> HTTPException:
        """The answer to a message or command ``runtime`` could not deliver (an
        ``AddressError``): a 422 when the address was wrong (no such member, the person, a
        tool actor); a 409 when the team stopped, is stopping or was deleted while the
        message was on its way — a stop or a delete from another request got there first,
        no fault of the client's. Either way nothing was sent; the 409 says how to send
        it again. A team purged meanwhile is the 404 of any team the server lacks."""
        moved = self.manager.get_team(team_id) is not runtime or not runtime.is_running()
        if not moved and not self.manager.stopping(team_id):
            return HTTPException(422, str(error))
        if self.record(team_id).status == TeamStatus.DELETED:
            return deleted_team(team_id)
        return CodedError(
            409,
            f"team {team_id} stopped while the message was on its way, so nothing was sent; "
            f"resume it with POST /teams/{team_id}/resume, then send the message again",
            TEAM_NOT_RUNNING,
        )

    def info(self, record: TeamRecord, *, read_log: bool = False) -> TeamInfo:
        """The team as the API shows it. ``interrupted`` lists the turns a resume would offer
        again: a running team's from its runtime; with ``read_log`` (one team asked for)
        a team not running here has its log read for them, as ``akgentic teams show``
        does — a list of teams leaves them out rather than read every log. Never the
        turns a live team is on: a team another process runs lists only those an earlier
        run left (see :meth:`_interrupted_in_log`)."""
        card: dict[str, Any] = record.card or {}
        runtime = self.manager.get_team(record.team_id)
        last = self.manager.storage.events.last_seq(record.team_id)
        out_of_order: dict[UUID, int] = {}
        if runtime is not None:  # those its resume left unsettled, never a turn taken since
            interrupted = [m.id for m in runtime.interrupted]
            out_of_order = runtime.out_of_order
        elif read_log and last:
            interrupted = self._interrupted_in_log(record.team_id, last)
        else:
            interrupted = []
        return TeamInfo(
            team_id=record.team_id,
            name=record.name,
            card_name=str(card.get("name", record.name)),
            status=record.status.value if record.ok and record.status is not None else "DAMAGED",
            running=runtime is not None,
            created_at=record.created_at,
            updated_at=record.updated_at,
            entry_point=card.get("entry_point"),
            human=card.get("human", "@Human"),
            last_seq=last,
            last_activity=_time_of(self.manager.storage, record.team_id, last),
            interrupted=interrupted,
            out_of_order=out_of_order,
            first_seq=runtime.first_seq if runtime is not None else None,
            max_agent_hops=_max_agent_hops(card),
            imports=[m for m in card.get("imports") or () if isinstance(m, str)],
            stopping=self._stop_in_progress(record.team_id) if read_log else None,
        )

    def _stop_in_progress(self, team_id: UUID) -> StopInProgress | None:
        """The team's stop in progress (:meth:`TeamManager.stop_in_progress`), as the API
        shows it: what a client says and waits for before it asks for a resume."""
        stop = self.manager.stop_in_progress(team_id)
        if stop is None:
            return None
        holder = stop.holder
        return StopInProgress(
            pid=holder.pid, host=holder.host, up_to=stop.up_to, saving=stop.saving
        )

    def _interrupted_in_log(self, team_id: UUID, last: int) -> list[UUID]:
        """The turns a resume of ``team_id`` would offer again, from its log (read once per
        ``last`` seq). A team another live process holds is on the turns its members
        received since they last started (``RestorePlan.in_progress``): those are left out,
        and what is listed are the turns an earlier run left, which the next resume
        offers (a team no process holds is on none: its ``in_progress`` are interrupted)."""
        live = self.manager.running_elsewhere(team_id) is not None
        known = self._interrupted.get(team_id)
        if known is not None and known[:2] == (last, live):
            return known[2]
        plan = plan_restore(self.manager.storage.events.read(team_id))
        on = {m.id for m in plan.in_progress} if live else set()
        found = [m.id for m in plan.interrupted if m.id not in on]
        if len(self._interrupted) >= 1024:
            self._interrupted.clear()
        self._interrupted[team_id] = (last, live, found)
        return found


def _max_agent_hops(card: dict[str, Any]) -> int | None:
    """The stored card's ``max_agent_hops`` (its default when the card does not say: a card
    stored before it had one); the default too for a value out of shape (a damaged card)."""
    value = card.get("max_agent_hops", DEFAULT_MAX_AGENT_HOPS)
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    return DEFAULT_MAX_AGENT_HOPS


def _time_of(storage: StorageBundle, team_id: UUID, seq: int) -> datetime | None:
    found = storage.events.read(team_id, seq, seq, limit=1) if seq else []
    return found[0].timestamp if found else None


def deleted_team(team_id: UUID) -> HTTPException:
    """The 409 of a verb a DELETED team takes no more (a message, a command, an interrupt,
    a stop, a resume): what to do instead, and where its history still reads."""
    return HTTPException(
        409,
        f"team {team_id} is deleted and runs no more: start a new team from its card "
        f"(POST /teams); its history still reads at GET /teams/{team_id}/messages",
    )


def context(request: Request) -> ServerContext:
    ctx: ServerContext = request.app.state.context
    return ctx


def accepting_work(request: Request) -> None:
    """A route's dependency for requests that start work (create or resume a team, a
    message, a command): 503 with :data:`SHUTTING_DOWN` (and ``Retry-After``) while the
    server drains."""
    if context(request).draining:
        raise HTTPException(503, SHUTTING_DOWN, headers={"Retry-After": "5"})
