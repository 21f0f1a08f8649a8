"""TeamHost: one team in one Ray actor, in an ``ActorSystem`` of its own.

The actor is a ``TeamManager`` over the shared store with the default local placement:
the team it hosts starts, records, restores and stops exactly as it would in a process
of its own, so a team card runs unchanged. Its lease holder is the actor itself
(``ray:<node id>:<actor name>``, the host name and the worker's pid); the manager's
heartbeat renews the team's lease, and a lease it loses stops the team here.

Its life:

1. Ray starts it (named ``team-<team id>-<incarnation>``, on the node the placement chose);
   ``__init__`` imports the modules the driver vouched for (the operator's ``imports``
   option and the card's: ``host_imports`` in :mod:`.placement`), freezes what the imports
   left (:func:`akgentic.core.freeze_import_heap`, as the console script does: a Ray actor
   has its worker process to itself) and queues :meth:`serve`.
2. :meth:`claim_slot` takes one of its node's worker slots when teams per worker are capped.
3. :meth:`create` or :meth:`resume` starts the team; a failure leaves nothing running (the
   driver kills the actor).
4. :meth:`serve` waits for the team to stop — stopped by someone, stopped from another
   process, its lease lost — lets the calls in flight answer, gives its slot back and ends
   the actor. An actor given no team within ``start_timeout`` ends too.

Every method answers plain data (:mod:`.wire`) and raises only :class:`HostError`.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar
from uuid import UUID

import ray

from akgentic.core import ActorSystem, Message, freeze_import_heap
from akgentic.core.serialization import deserialize, serialize
from akgentic.llm import ModelRoster
from akgentic.storage import (
    Heartbeat,
    LeaseHeldError,
    LeaseHolder,
    LeaseLostError,
    StorageBundle,
    open_storage,
)
from akgentic.team.card import TeamCard
from akgentic.team.manager import (
    TeamManager,
    TeamNotRunningError,
    TeamRunningElsewhereError,
    team_resource,
)
from akgentic.team.placement.local import LocalPlacement
from akgentic.team.placement.ray.wire import HostError, host_owner
from akgentic.team.runtime import TeamRuntime
from akgentic.tool.core.installed import deserialize_installed

__all__ = ["TeamHost", "slot_resource"]

logger = logging.getLogger("akgentic.team.placement")

P = ParamSpec("P")
R = TypeVar("R")

DRAIN = 10.0
"""Seconds a stopped team's actor lets the calls in flight answer before it ends."""


def slot_resource(node_id: str, slot: int) -> str:
    """The lease of one of a worker node's team slots: ``worker/<node id>/<n>``."""
    return f"worker/{node_id}/{slot}"


def _answered(method: Callable[P, R]) -> Callable[P, R]:
    """Run a host method as a call in flight; any error crosses as a HostError."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        host = args[0]
        assert isinstance(host, TeamHost)
        with host._calls:
            host._in_flight += 1
        try:
            return method(*args, **kwargs)
        except HostError:
            raise
        except Exception as exc:
            raise HostError.of(exc, host.team_id) from None
        finally:
            with host._calls:
                host._in_flight -= 1
                host._calls.notify_all()

    return call


class TeamHost:
    """One team in this Ray actor; see the module docstring."""

    def __init__(
        self,
        storage_url: str,
        team_id: str,
        name: str,
        imports: list[str],
        lease_ttl: float,
        start_timeout: float,
    ) -> None:
        for module in imports:  # the driver imported them (and decoded the card): it vouches
            importlib.import_module(module)
        context = ray.get_runtime_context()
        self.team_id = UUID(team_id)
        self.node_id = context.get_node_id()
        self.holder = LeaseHolder.here(owner=host_owner(self.node_id, name))
        self.ttl = lease_ttl
        self.start_timeout = start_timeout
        self.storage: StorageBundle = open_storage(storage_url)
        freeze_import_heap()  # after the store's driver is imported, before the team exists
        self.system = ActorSystem()
        self.manager = TeamManager(
            self.system, self.storage, holder=self.holder, lease_ttl=lease_ttl
        )
        self.team: TeamRuntime | None = None
        self.slot: str | None = None
        self._slots = Heartbeat(self.storage.leases, lease_ttl, self._slot_lost)
        self._started = threading.Event()
        self._calls = threading.Condition()
        self._in_flight = 0
        context.current_actor.serve.remote()

    # -- starting -------------------------------------------------------------------------------
    @_answered
    def claim_slot(self, cap: int | None) -> bool:
        """Take a free team slot of this node (always True without a cap)."""
        if cap is None:
            return True
        for slot in range(cap):
            resource = slot_resource(self.node_id, slot)
            try:
                self.storage.leases.acquire(resource, self.holder, self.ttl)
            except LeaseHeldError:
                continue
            self.slot = resource
            self._slots.keep(resource, self.holder.owner)
            return True
        return False

    @_answered
    def create(self, card: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        """Record and start the new team ``card`` describes (prepared by the driver)."""
        team_card = deserialize_installed(card)
        if not isinstance(team_card, TeamCard):
            raise ValueError("the placement was given no team card")
        data = deserialize(metadata) if metadata is not None else None
        runtime = LocalPlacement().create(self.manager, team_card, self.team_id, data)
        assert isinstance(runtime, TeamRuntime)
        self._run(runtime)

    @_answered
    def resume(
        self, model: str | ModelRoster | None, take_over: str | None, retry_interrupted: bool
    ) -> list[dict[str, Any]]:
        """Restore the team from its log here; the interrupted turns, serialized (none
        with ``retry_interrupted``: the restore delivers them again, before the messages
        queued behind them).

        ``take_over`` names the owner of a lease whose holder the placement knows is gone
        (its node or actor is dead): the lease is taken from that owner only, atomically —
        of several placements reviving the team, exactly one wins.
        """
        resource = team_resource(self.team_id)
        if take_over is not None:
            try:
                self.storage.leases.acquire(resource, self.holder, self.ttl, take_over=take_over)
            except LeaseHeldError as held:
                raise TeamRunningElsewhereError(self.team_id, held.lease) from None
        try:
            runtime = self.manager.resume_team(
                self.team_id, model=model, retry_interrupted=retry_interrupted
            )
        except BaseException:
            self.storage.leases.release(resource, self.holder.owner)
            raise
        assert isinstance(runtime, TeamRuntime)
        self._run(runtime)
        return [serialize(m) for m in runtime.interrupted]

    def _run(self, runtime: TeamRuntime) -> None:
        self.team = runtime
        self._started.set()

    # -- the team's verbs -----------------------------------------------------------------------
    def _team(self) -> TeamRuntime:
        self._started.wait(self.start_timeout)  # a call may come while the team starts
        team = self.team
        if team is None or not team.is_running():
            raise TeamNotRunningError(f"team {self.team_id} is not running in this worker")
        return team

    @_answered
    def send(self, member: str | None, content: str) -> tuple[str, int | None]:
        """The person's words to ``member`` (the entry point when None); committed."""
        team = self._team()
        message_id = team.send_to(member or team.card.entry_point, content)
        return str(message_id), team.committed_seq(message_id)

    @_answered
    def reply(self, content: str, message: dict[str, Any]) -> tuple[str, int | None]:
        """The person's answer to ``message`` (serialized); committed."""
        team = self._team()
        asked = deserialize(message)
        if not isinstance(asked, Message):
            raise ValueError("a reply answers a message")
        message_id = team.process_human_input(content, asked)
        return str(message_id), team.committed_seq(message_id)

    @_answered
    def interrupt(self) -> list[str]:
        return self._team().interrupt()

    @_answered
    def members(self) -> list[dict[str, Any]]:
        return [address.serialize() for address in self._team().members()]

    @_answered
    def interrupted(self) -> list[dict[str, Any]]:
        team = self.team
        return [serialize(m) for m in team.interrupted] if team is not None else []

    @_answered
    def out_of_order(self) -> dict[str, int]:
        team = self.team
        return {str(i): n for i, n in team.out_of_order.items()} if team is not None else {}

    @_answered
    def first_seq(self) -> int:
        """The seq of the run's first record: asked while the team starts, once it has."""
        self._started.wait(self.start_timeout)
        team = self.team
        if team is None:
            raise TeamNotRunningError(f"team {self.team_id} is not running in this worker")
        return team.first_seq

    @_answered
    def retry_interrupted(self) -> list[str]:
        return [str(i) for i in self._team().retry_interrupted()]

    @_answered
    def dismiss_interrupted(self) -> list[str]:
        return [str(i) for i in self._team().dismiss_interrupted()]

    @_answered
    def status(self) -> tuple[bool, str | None]:
        """Whether the team runs here, and why it stopped when nobody asked it to."""
        team = self.team
        if team is None:
            return False, None
        return team.is_running(), team.stop_reason

    @_answered
    def owner(self) -> str:
        """This actor's lease owner id."""
        return self.holder.owner

    @_answered
    def stop(self, grace_timeout: float) -> bool:
        """Stop the team gracefully (STOPPED); the actor ends once it has."""
        if self.team is not None:
            self.manager.stop_team(self.team_id, grace_timeout)
        return True

    @_answered
    def cancel_turns(self) -> list[str]:
        team = self.team
        return team.cancel_turns() if team is not None else []

    # -- living and ending --------------------------------------------------------------------
    def serve(self) -> None:
        """Queued by ``__init__``: returns — ending the actor — once the team has stopped
        (or was never given within ``start_timeout``)."""
        if self._started.wait(self.start_timeout) and self.team is not None:
            team = self.team
            while not self.system.wait_stopped(team.orchestrator, 1.0):
                continue
        with self._calls:  # the call that stopped the team answers first
            self._calls.wait_for(lambda: self._in_flight == 0, DRAIN)
        self._end()
        ray.actor.exit_actor()  # type: ignore[no-untyped-call]

    def _end(self) -> None:
        self._slots.close()
        if self.slot is not None:
            try:
                self.storage.leases.release(self.slot, self.holder.owner)
            except Exception:  # it expires by itself
                logger.exception("could not give back the worker slot %s", self.slot)
        try:
            self.manager.shutdown(grace_timeout=10.0)
            self.system.shutdown()
        finally:
            self.storage.close()

    def _slot_lost(self, resource: str, error: LeaseLostError) -> None:
        logger.warning("team %s: its worker slot %s was lost: %s", self.team_id, resource, error)
