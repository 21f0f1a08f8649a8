"""Placement: where a team runs — in this process, or on a cluster.

``TeamManager`` creates, finds, resumes and lists its teams through its placement;
whatever the placement, the team card is the same and the team it gives back is a
:class:`HostedTeam`: sending, following, interrupting and stopping have the same verbs
(``TeamRuntime`` in this process, ``RayTeam`` on a Ray cluster). What a team keeps is
in the store either way, so its log, its history and its tool states read the same.

Rules every placement keeps:

- **One runner.** A team runs in at most one place at a time, by the store's lease on
  ``team/<id>`` (:mod:`akgentic.storage.lease`); a placement that cannot take it raises
  ``TeamRunningElsewhereError`` naming the holder.
- **Accepted means committed.** ``send`` returns once the message is in the team's log,
  wherever the team runs.
- **All or nothing.** A create or resume that fails leaves nothing running and the stored
  team as it was, and raises the error the local one would (``ValueError`` for a card that
  cannot start, ``ResumeError`` naming what to fix).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol, runtime_checkable
from uuid import UUID

from pydantic import BaseModel

from akgentic.core import ActorAddress, Message
from akgentic.llm import ModelRoster
from akgentic.storage import EventRecord, StorageBundle
from akgentic.team.card import TeamCard
from akgentic.team.replay import ReplayResult

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager

__all__ = ["HostedTeam", "Placement", "PlacementError"]


class PlacementError(RuntimeError):
    """The placement cannot do it now (no worker has room, a team's worker is gone):
    nothing was changed; the message says what to do."""


@runtime_checkable
class HostedTeam(Protocol):
    """A running team, wherever its placement runs it: the verbs of ``TeamRuntime``."""

    @property
    def team_id(self) -> UUID: ...

    @property
    def card(self) -> TeamCard: ...

    @property
    def storage(self) -> StorageBundle: ...

    @property
    def interrupted(self) -> list[Message]:
        """Turns a crash interrupted (received, never processed), offered for a retry."""
        ...

    @property
    def out_of_order(self) -> dict[UUID, int]:
        """The interrupted turns this run delivered again out of their place, each with how
        many newer messages came before it (``TeamRuntime.out_of_order``)."""
        ...

    @property
    def first_seq(self) -> int:
        """The seq of the first record this run of the team wrote (``TeamRuntime.first_seq``):
        what it did is from there on, nothing of a stop a resume waited for."""
        ...

    @property
    def stop_reason(self) -> str | None:
        """Why the team stopped when nobody asked it here (None otherwise)."""
        ...

    def send(self, content: str) -> UUID: ...

    def send_to(self, member: str, content: str) -> UUID: ...

    def process_human_input(self, content: str, message: Message | None = None) -> UUID: ...

    def committed_seq(self, message_id: UUID) -> int | None:
        """The log's sequence number of a message this handle accepted."""
        ...

    def retry_interrupted(self) -> list[UUID]: ...

    def dismiss_interrupted(self) -> list[UUID]: ...

    def interrupt(self) -> list[str]: ...

    def members(self) -> list[ActorAddress]: ...

    def member(self, name: str) -> ActorAddress | None: ...

    def history(self, after: int = 0, offset: int = 0, limit: int = 100) -> list[EventRecord]: ...

    def tool_state(self, tool_id: str) -> ReplayResult: ...

    def follow(
        self,
        from_seq: int = 1,
        *,
        stop: threading.Event | None = None,
        idle_timeout: float | None = None,
    ) -> Iterator[EventRecord]: ...

    def is_running(self) -> bool: ...

    def cancel_turns(self) -> list[str]: ...

    def stop(self, grace_timeout: float = 30.0) -> bool: ...


@runtime_checkable
class Placement(Protocol):
    """Where a :class:`TeamManager`'s teams run; see the module docstring."""

    def create(
        self, manager: TeamManager, card: TeamCard, team_id: UUID, metadata: BaseModel | None
    ) -> HostedTeam:
        """Record and start a new team from ``card`` (already prepared by the manager)."""
        ...

    def resume(
        self,
        manager: TeamManager,
        team_id: UUID,
        model: str | ModelRoster | None,
        retry_interrupted: bool = False,
        wait_for_stop: bool = True,
    ) -> HostedTeam:
        """Rebuild a stopped (or crashed) team from its log, and run it.
        ``retry_interrupted``: its interrupted turns are delivered again first, before
        the messages queued behind them; not ``wait_for_stop``: a stop in progress is
        ``TeamStoppingError`` at once, not waited for (``TeamManager.resume_team``)."""
        ...

    def find(self, manager: TeamManager, team_id: UUID) -> HostedTeam | None:
        """The team if it runs where this placement runs teams."""
        ...

    def running(self, manager: TeamManager) -> list[HostedTeam]:
        """The teams running where this placement runs teams."""
        ...

    def close(self) -> None:
        """Let go of what the placement holds (teams on a cluster keep running)."""
        ...
