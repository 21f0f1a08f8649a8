"""RayPlacement: each team in a Ray actor of its own, on a cluster sharing a Postgres store.

- **Where.** A team's actor asks Ray for the options' resources (CPUs, GPUs, memory,
  custom resources). Without a cap, Ray spreads the actors over the nodes that have them
  (``SPREAD``); with ``max_teams_per_worker``, the placement tries the nodes that have
  them from the least loaded, and the actor takes one of its node's slot leases
  (``worker/<node>/<n>``) before its team starts: a full node refuses it and the next is
  tried, whoever else is placing teams at the same time. No node with room:
  :class:`NoWorkerError`.
- **Who.** An actor is one incarnation of a team (``team-<id>-<8 hex>``); the team's lease
  names the actor that runs it, so any process connected to the cluster finds it
  (:meth:`find`), and two placements racing to start or resume one team both start an
  actor, but only the one whose actor takes the lease wins: the other's actor is ended
  and it raises ``TeamRunningElsewhereError``.
- **Failover.** See :mod:`.revive`.
- **What it holds.** Its own connection to the store (the manager's store must be the
  same database), one ``LISTEN`` connection for followers, and its Ray connection (made
  here when the process had none, and then closed by :meth:`close`). Teams are detached
  actors: they outlive the process that placed them.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID, uuid4

import ray
from pydantic import BaseModel
from ray import ObjectRef
from ray.actor import ActorHandle
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from akgentic.core.serialization import deserialize, serialize
from akgentic.llm import ModelRoster
from akgentic.storage import TeamStatus, open_storage, open_watch
from akgentic.team.card import TeamCard
from akgentic.team.manager import TeamRunningElsewhereError, team_resource
from akgentic.team.placement.protocol import HostedTeam, PlacementError
from akgentic.team.placement.ray.host import TeamHost
from akgentic.team.placement.ray.options import RayOptions
from akgentic.team.placement.ray.revive import Reviver
from akgentic.team.placement.ray.team import RayTeam
from akgentic.team.placement.ray.wire import actor_name, answer, node_resources, parse_owner
from akgentic.tool.core.installed import deserialize_installed

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager

__all__ = ["NoWorkerError", "RayPlacement", "host_imports"]

logger = logging.getLogger("akgentic.team.placement")


def host_imports(options: RayOptions, card: TeamCard) -> list[str]:
    """The modules a team's actor imports before its team starts: the options' ``imports``
    (the operator's ``--import``), then the card's, once each — those this process has
    imported only. Stored data never imports a module it names: the placing process
    vouches for what it imported itself (and decoded the card with)."""
    wanted = dict.fromkeys([*options.imports, *card.imports])
    return [module for module in wanted if module in sys.modules]


class NoWorkerError(PlacementError):
    """No live worker node has the team's resources and a free slot."""


class RayPlacement:
    """Teams on a Ray cluster over a shared Postgres store; see the module docstring."""

    def __init__(self, storage_url: str, options: RayOptions | None = None) -> None:
        if not storage_url.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "a Ray placement needs a store every worker reaches: give a postgresql:// "
                f"storage URL (got {storage_url.split(':', 1)[0]}://...)"
            )
        self.options = options or RayOptions()
        self.storage_url = storage_url
        self.storage = open_storage(storage_url)
        self.watch = open_watch(self.storage)
        self._connected_here = not ray.is_initialized()
        if self._connected_here:
            ray.init(
                address=self.options.address,
                namespace=self.options.namespace,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        self._host_class = ray.remote(TeamHost)
        self._cards: dict[UUID, TeamCard] = {}
        self.reviver = Reviver(self) if self.options.revive else None

    # -- the Placement protocol -----------------------------------------------------------------
    def create(
        self, manager: TeamManager, card: TeamCard, team_id: UUID, metadata: BaseModel | None
    ) -> HostedTeam:
        data = serialize(metadata) if metadata is not None else None
        self._start(team_id, card, lambda host: host.create.remote(serialize(card), data))
        self._cards[team_id] = card
        return RayTeam(self, team_id, card)

    def resume(
        self,
        manager: TeamManager,
        team_id: UUID,
        model: str | ModelRoster | None,
        retry_interrupted: bool = False,
        wait_for_stop: bool = True,
    ) -> HostedTeam:
        """A team whose live holder is stopping it (on a worker, or in another process) is
        waited for as a local resume waits (:meth:`TeamManager._await_stop`: said to
        ``on_stop_wait``, at most ``RESUME_WAIT``; not ``wait_for_stop``: refused at
        once); one it runs is refused at once (the actor would say the same)."""
        wait = None
        while True:
            lease = self.storage.leases.inspect(team_resource(team_id))
            if lease is None or not lease.alive():
                break
            held = TeamRunningElsewhereError(team_id, lease)
            wait = manager._await_stop(team_id, wait, held, wait_for_stop)
        card = self.card_of(team_id)
        self._start(team_id, card, lambda host: host.resume.remote(model, None, retry_interrupted))
        return RayTeam(self, team_id, card)

    def find(self, manager: TeamManager, team_id: UUID) -> HostedTeam | None:
        lease = self.storage.leases.inspect(team_resource(team_id))
        if lease is None or parse_owner(lease.holder.owner) is None:
            return None
        if lease.expired:  # its worker was lost: RUNNING still, until resumed elsewhere
            record = self.storage.teams.get(team_id)
            if record is None or record.status != TeamStatus.RUNNING:
                return None
        return RayTeam(self, team_id, self.card_of(team_id))

    def running(self, manager: TeamManager) -> list[HostedTeam]:
        teams: list[HostedTeam] = []
        for lease in self.storage.leases.list("team/"):
            if lease.expired or parse_owner(lease.holder.owner) is None:
                continue
            team_id = UUID(lease.resource.removeprefix("team/"))
            try:
                teams.append(RayTeam(self, team_id, self.card_of(team_id)))
            except ValueError as exc:
                logger.warning("team %s runs on the cluster, but: %s", team_id, exc)
        return teams

    def close(self) -> None:
        """Stop reviving, let go of the store and of Ray (the teams keep running)."""
        if self.reviver is not None:
            self.reviver.close()
        self.watch.close()
        self.storage.close()
        if self._connected_here and ray.is_initialized():
            ray.shutdown()

    # -- failover (called by the reviver) -------------------------------------------------------
    def revive(self, team_id: UUID, lost_owner: str) -> list[UUID]:
        """Resume ``team_id`` on a live worker, taking its lease from ``lost_owner`` (whose
        worker is known gone, or whose lease lapsed); the interrupted turns' ids.

        Raises ``TeamRunningElsewhereError`` when another placement revived it first.
        """
        found = parse_owner(lost_owner)
        if found is not None:  # a stalled actor that lost its lease must not come back
            with contextlib.suppress(ValueError):  # gone already
                ray.kill(ray.get_actor(found[1], namespace=self.options.namespace))
        card = self.card_of(team_id)
        retry = self.options.retry_interrupted
        interrupted = self._start(
            team_id, card, lambda host: host.resume.remote(None, lost_owner, retry)
        )
        return [deserialize(m).id for m in interrupted]

    # -- placing one actor ----------------------------------------------------------------------
    def card_of(self, team_id: UUID) -> TeamCard:
        """The team's card, from the store (decoded once); ValueError if it cannot be."""
        card = self._cards.get(team_id)
        if card is not None:
            return card
        record = self.storage.teams.get(team_id)
        if record is None:
            raise LookupError(f"no team {team_id} in this storage")
        try:
            decoded = deserialize_installed(record.require().card)
        except Exception as exc:
            raise ValueError(
                f"team {team_id}'s card cannot be read here ({exc}); import its card's "
                f"modules in this process"
            ) from None
        if not isinstance(decoded, TeamCard):
            raise ValueError(f"team {team_id} has no team card")
        self._cards[team_id] = decoded
        return decoded

    def _start(
        self,
        team_id: UUID,
        card: TeamCard,
        begin: Callable[[ActorHandle[Any]], ObjectRef[Any]],
    ) -> Any:
        """Start an actor for the team on the first node with room, and ``begin`` its team
        there; the actor is ended if anything fails."""
        cap = self.options.max_teams_per_worker
        for node in self._nodes():
            name = actor_name(team_id, uuid4().hex[:8])
            actor = self._spawn(team_id, name, card, node)
            try:
                if not self._wait(actor.claim_slot.remote(cap), team_id, "take a slot"):
                    ray.kill(actor)
                    continue
                return self._wait(begin(actor), team_id, "start")
            except BaseException:
                ray.kill(actor)
                raise
        raise NoWorkerError(self._no_room())

    def _wait(self, ref: ObjectRef[Any], team_id: UUID, what: str) -> Any:
        timeout = self.options.start_timeout
        return answer(
            ref,
            timeout,
            gone=f"team {team_id}'s actor could not {what}",
            late=f"team {team_id}'s actor did not {what} within {timeout:g}s: does a live "
            f"node have its resources ({self._request()})?",
        )

    def _spawn(
        self, team_id: UUID, name: str, card: TeamCard, node: str | None
    ) -> ActorHandle[Any]:
        o = self.options
        options: dict[str, Any] = {
            "name": name,
            "namespace": o.namespace,
            "lifetime": "detached",
            "max_restarts": 0,
            "max_concurrency": o.max_concurrency,
            "num_cpus": o.num_cpus,
            "num_gpus": o.num_gpus,
            "scheduling_strategy": (
                NodeAffinitySchedulingStrategy(node, soft=False) if node is not None else "SPREAD"
            ),
        }
        if o.resources:
            options["resources"] = dict(o.resources)
        if o.memory is not None:
            options["memory"] = o.memory
        if o.runtime_env is not None:
            options["runtime_env"] = o.runtime_env
        actor = self._host_class.options(**options).remote(
            self.storage_url,
            str(team_id),
            name,
            host_imports(o, card),
            o.lease_ttl,
            o.start_timeout,
        )
        return cast("ActorHandle[Any]", actor)

    def _request(self) -> dict[str, float]:
        o = self.options
        wanted = {"CPU": o.num_cpus, "GPU": o.num_gpus, "memory": float(o.memory or 0)}
        wanted.update(o.resources)
        return {k: v for k, v in wanted.items() if v > 0}

    def _nodes(self) -> list[str | None]:
        """The nodes to try, least loaded first (one try, Ray's choice, without a cap)."""
        cap = self.options.max_teams_per_worker
        if cap is None:
            return [None]
        wanted = self._request()
        used = Counter(
            lease.resource.split("/")[1]
            for lease in self.storage.leases.list("worker/")
            if not lease.expired
        )
        fitting: list[str] = [
            node
            for node, has in node_resources().items()
            if all(has.get(k, 0) >= v for k, v in wanted.items()) and used[node] < cap
        ]
        fitting.sort(key=lambda node: (used[node], node))
        return list(fitting)

    def _no_room(self) -> str:
        return (
            f"no live worker node has room for one more team (at most "
            f"{self.options.max_teams_per_worker} per worker, each asking {self._request()}): "
            f"add a worker node, stop a team, or raise max_teams_per_worker"
        )
