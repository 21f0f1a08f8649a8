"""What the log says about each member: its role, its model, its commands, whether it is
in a turn now.

The roster route must answer while members work: asking a busy agent would wait for its
turn to end (an actor handles one message at a time). So it never asks an agent; it folds
the team's log instead — ``StartMessage`` (role, kind, model roster), ``StopMessage``
(a member that left: fired, or stopped outside the team's own stop), ``State`` (the model
a ``/switch_model`` put in force, the usage so far), ``Commands``, and the turn
protocol's started/ended — the same records every client sees, so what the roster says agrees with
the stream a client has read up to the same record. Each team's fold is kept and
advanced from where it stopped, so a request reads only the records appended since.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from uuid import UUID

from akgentic.agent import AgentConfig, AgentState
from akgentic.agent.turn import TurnEndedEvent, TurnStartedEvent
from akgentic.core import (
    ActorAddress,
    EventMessage,
    Message,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamStoppingEvent,
)
from akgentic.storage import StorageBundle
from akgentic.tool.core import CommandsAnnouncedEvent

__all__ = ["MemberFacts", "MemberView", "RosterIndex", "TeamRoster", "member_kind"]

BATCH = 500


def member_kind(address: ActorAddress) -> str:
    """``human`` (the user proxy), ``tool`` (a ``#`` tool actor) or ``agent``."""
    if address.is_user_proxy:
        return "human"
    return "tool" if address.name.startswith("#") else "agent"


@dataclass
class MemberFacts:
    """One member as its records describe it (``agent_id`` keys it: names may be reused)."""

    name: str
    role: str
    kind: str
    """``human`` (the user proxy), ``tool`` (a ``#`` tool actor) or ``agent``."""
    model: str | None = None
    commands: list[str] = field(default_factory=list)
    turns: set[UUID] = field(default_factory=set)
    """Turns started and not yet ended: the member is busy while this is not empty."""
    usage: dict[str, int] = field(default_factory=dict)
    """Its lifetime usage, as its latest state says (saved before its turn's end)."""
    present: bool = True
    """In the team: false once it stopped outside a stop of the whole team (fired); the
    stops of the team's own stop leave it in, as a resume starts it again."""

    @property
    def busy(self) -> bool:
        return bool(self.turns)


@dataclass(frozen=True)
class MemberView:
    """A member's facts as one request reads them (a copy: the fold goes on)."""

    name: str
    role: str
    kind: str
    model: str | None
    commands: tuple[str, ...]
    busy: bool
    usage: dict[str, int]
    present: bool


@dataclass
class TeamRoster:
    """The fold of one team's log up to ``seq``."""

    seq: int = 0
    members: dict[UUID, MemberFacts] = field(default_factory=dict)
    stopping: bool = False
    """The team's own stop has begun (``TeamStoppingEvent``): the members' stops that
    follow do not take them out of the team (as the restorer reads them)."""

    def fold(self, message: Message) -> None:
        sender = message.sender
        if sender is None:
            return
        if isinstance(message, EventMessage) and isinstance(message.event, TeamStoppingEvent):
            self.stopping = True
            return
        if isinstance(message, StartMessage):
            self.stopping = False  # started again: a resume
            config = message.config
            model = config.models.active_key if isinstance(config, AgentConfig) else None
            before = self.members.get(sender.agent_id)
            # a restart is in no turn (one its crash cut short never ends); a restored
            # member keeps its usage and the model its state put back in force
            self.members[sender.agent_id] = MemberFacts(
                sender.name,
                sender.role,
                member_kind(sender),
                before.model if before and before.model else model,
                usage=before.usage if before else {},
            )
            return
        facts = self.members.get(sender.agent_id)
        if facts is None:
            return
        if isinstance(message, StopMessage):
            facts.turns.clear()
            facts.present = self.stopping
        elif isinstance(message, StateChangedMessage) and isinstance(message.state, AgentState):
            facts.model = message.state.tool_state.active_model or facts.model
            facts.usage = dict(message.state.lifetime_usage)
        elif isinstance(message, EventMessage):
            event = message.event
            if isinstance(event, CommandsAnnouncedEvent):
                facts.commands = [c.name for c in event.commands]
            elif isinstance(event, TurnStartedEvent):
                facts.turns.add(event.turn_id)
            elif isinstance(event, TurnEndedEvent):
                facts.turns.discard(event.turn_id)


class RosterIndex:
    """Each team's :class:`TeamRoster`, advanced on demand from the store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._teams: dict[UUID, TeamRoster] = {}

    def read(self, storage: StorageBundle, team_id: UUID) -> dict[UUID, MemberView]:
        """Every member that started, by agent id, as of the team's last record (a
        purged log is folded again from its start)."""
        with self._lock:
            roster = self._teams.get(team_id)
            last = storage.events.last_seq(team_id)
            if roster is None or last < roster.seq:
                roster = self._teams[team_id] = TeamRoster()
            while roster.seq < last:
                batch = storage.events.read(team_id, roster.seq + 1, last, limit=BATCH)
                if not batch:
                    break
                for record in batch:
                    if record.message is not None:
                        roster.fold(record.message)
                    roster.seq = record.last
            return {
                agent_id: MemberView(
                    f.name,
                    f.role,
                    f.kind,
                    f.model,
                    tuple(f.commands),
                    f.busy,
                    dict(f.usage),
                    f.present,
                )
                for agent_id, f in roster.members.items()
            }

    def forget(self, team_id: UUID) -> None:
        with self._lock:
            self._teams.pop(team_id, None)
