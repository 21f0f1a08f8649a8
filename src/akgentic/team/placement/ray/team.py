"""RayTeam: a team running in a Ray actor, driven from any process with the verbs of
``TeamRuntime``.

What it says and does goes to the team's actor; what the team did is read from the
shared store: ``history``, ``tool_state`` and ``follow`` (woken by the store's
``LISTEN/NOTIFY``, see :mod:`akgentic.storage.watch`) work the same wherever the team
runs, and go on across a failover, since the log is the one thing both workers share.

The actor is found through the team's lease (its owner names the actor), so a handle
built by one process drives a team another process placed, and a handle whose worker was
lost reaches the team again once the placement has resumed it elsewhere. A call that
finds no live actor raises :class:`TeamUnreachableError` (a ``PlacementError``): the
team is between two workers; nothing was sent.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from uuid import UUID

import ray
from ray.actor import ActorHandle

from akgentic.core import ActorAddress, Message
from akgentic.core.serialization import deserialize, serialize
from akgentic.storage import EventRecord, StorageBundle, TeamStatus
from akgentic.team.card import TeamCard
from akgentic.team.manager import team_resource
from akgentic.team.placement.protocol import PlacementError
from akgentic.team.placement.ray.wire import TeamUnreachableError, answer, parse_owner
from akgentic.team.replay import ReplayResult
from akgentic.team.runtime import follow_log, read_history, tool_state

if TYPE_CHECKING:
    from akgentic.team.placement.ray.placement import RayPlacement

__all__ = ["RayTeam", "TeamUnreachableError"]

_REMEMBERED = 1_000


class RayTeam:
    """Handle on a team a :class:`RayPlacement` runs; see the module docstring."""

    def __init__(self, placement: RayPlacement, team_id: UUID, card: TeamCard) -> None:
        self.team_id = team_id
        self.card = card
        self._placement = placement
        self._actor: ActorHandle[Any] | None = None
        self._owner: str | None = None
        self._committed: OrderedDict[UUID, int] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def storage(self) -> StorageBundle:
        return self._placement.storage

    def __repr__(self) -> str:
        return f"<RayTeam {self.card.name} {self.team_id}>"

    # -- reaching the actor ---------------------------------------------------------------------
    def _host(self) -> ActorHandle[Any]:
        """The actor that holds the team's lease now."""
        with self._lock:
            if self._actor is not None:
                return self._actor
        lease = self.storage.leases.inspect(team_resource(self.team_id))
        found = parse_owner(lease.holder.owner) if lease is not None else None
        if lease is None or found is None or lease.expired:
            raise TeamUnreachableError(self._between(lease is not None and lease.expired))
        try:
            actor = ray.get_actor(found[1], namespace=self._placement.options.namespace)
        except ValueError:
            raise TeamUnreachableError(self._between(True)) from None
        with self._lock:
            self._actor, self._owner = actor, lease.holder.owner
        return actor

    def _between(self, lost: bool) -> str:
        if not lost:
            return f"team {self.team_id} is not running on the cluster; resume it"
        how = (
            "the placement resumes it on another worker"
            if self._placement.options.revive
            else "resume it"
        )
        return (
            f"team {self.team_id} is between two workers (its worker was lost): {how} "
            f"(its lease lapses {self._placement.options.lease_ttl:g}s after the loss), "
            f"then try again"
        )

    def _call(self, method: str, *args: Any, timeout: float | None = None) -> Any:
        actor = self._host()
        try:
            return answer(
                getattr(actor, method).remote(*args),
                timeout or self._placement.options.call_timeout,
                gone=self._between(True),
                late=f"team {self.team_id}: its worker did not answer {method} in time",
            )
        except TeamUnreachableError:
            with self._lock:
                self._actor = None  # the next call looks for the team's new actor
            raise

    # -- talking to the team --------------------------------------------------------------------
    def send(self, content: str) -> UUID:
        """Send the person's words to the entry point; returns the id once committed."""
        return self._sent(self._call("send", None, content))

    def send_to(self, member: str, content: str) -> UUID:
        """Send the person's words to ``member``; committed on return."""
        return self._sent(self._call("send", member, content))

    def process_human_input(self, content: str, message: Message | None = None) -> UUID:
        """Answer ``message`` (its sender gets the reply) or, without one, the entry point."""
        if message is None or message.sender is None:
            return self.send(content)
        return self._sent(self._call("reply", content, serialize(message)))

    def _sent(self, answer: tuple[str, int | None]) -> UUID:
        message_id, seq = UUID(answer[0]), answer[1]
        if seq is not None:
            with self._lock:
                self._committed[message_id] = seq
                while len(self._committed) > _REMEMBERED:
                    self._committed.popitem(last=False)
        return message_id

    def committed_seq(self, message_id: UUID) -> int | None:
        with self._lock:
            return self._committed.get(message_id)

    @property
    def interrupted(self) -> list[Message]:
        """The turns a crash interrupted, as the team's actor has them."""
        return [m for m in map(deserialize, self._call("interrupted")) if isinstance(m, Message)]

    @property
    def out_of_order(self) -> dict[UUID, int]:
        """The retried turns the team's actor redid out of their place."""
        return {UUID(i): n for i, n in self._call("out_of_order").items()}

    @property
    def first_seq(self) -> int:
        """The seq of the first record the team's run on its worker wrote (a revival on
        another worker begins a new run)."""
        return int(self._call("first_seq"))

    def retry_interrupted(self) -> list[UUID]:
        return [UUID(i) for i in self._call("retry_interrupted")]

    def dismiss_interrupted(self) -> list[UUID]:
        return [UUID(i) for i in self._call("dismiss_interrupted")]

    def interrupt(self) -> list[str]:
        return list(self._call("interrupt"))

    @property
    def stop_reason(self) -> str | None:
        try:
            return self._call("status")[1]  # type: ignore[no-any-return]
        except PlacementError:
            return None

    # -- looking at the team --------------------------------------------------------------------
    def members(self) -> list[ActorAddress]:
        """The running members (snapshots of their addresses)."""
        return [ActorAddress.deserialize(data) for data in self._call("members")]

    def member(self, name: str) -> ActorAddress | None:
        wanted = name if name.startswith(("@", "#")) else f"@{name}"
        return next((a for a in self.members() if a.name == wanted), None)

    def history(self, after: int = 0, offset: int = 0, limit: int = 100) -> list[EventRecord]:
        return read_history(self.storage, self.team_id, after, offset, limit)

    def tool_state(self, tool_id: str) -> ReplayResult:
        return tool_state(self.storage, self.team_id, tool_id)

    def follow(
        self,
        from_seq: int = 1,
        *,
        stop: threading.Event | None = None,
        idle_timeout: float | None = None,
    ) -> Iterator[EventRecord]:
        """The team's events from ``from_seq`` on, from the store: the stored ones, then
        live ones as their commits are notified. Ends when ``stop`` is set, after
        ``idle_timeout`` seconds with nothing new, or once the team is no longer RUNNING
        (stopped, not lost: a team between two workers is still RUNNING) and all is read."""
        watch, events = self._placement.watch, self.storage.events
        return follow_log(
            self.storage,
            self.team_id,
            from_seq,
            wait_past=lambda seq, timeout: watch.wait_past(self.team_id, seq, timeout),
            ended=lambda next_seq: (
                not self.is_running() and events.last_seq(self.team_id) < next_seq
            ),
            stop=stop,
            idle_timeout=idle_timeout,
        )

    def is_running(self) -> bool:
        """Whether the team is RUNNING on the cluster (a team between two workers, whose
        placement resumes it, still is)."""
        record = self.storage.teams.get(self.team_id)
        return record is not None and record.status == TeamStatus.RUNNING

    # -- stopping -------------------------------------------------------------------------------
    def stop(self, grace_timeout: float = 30.0) -> bool:
        """Stop the team gracefully (STOPPED); True once it has stopped."""
        return self._stopping("stop", grace_timeout)

    def cancel_turns(self) -> list[str]:
        """Cancel every turn at its next step boundary (the members told, once each has
        the cancel in its inbox); none when the team no longer runs there."""
        try:
            return list(self._call("cancel_turns"))
        except TeamUnreachableError:
            return []

    def _stopping(self, method: str, grace_timeout: float) -> bool:
        try:
            return bool(self._call(method, grace_timeout, timeout=grace_timeout + 30.0))
        except TeamUnreachableError:
            # the actor ended with the team, or the worker is lost: the team no longer
            # runs there (the manager marks it STOPPED)
            return True
