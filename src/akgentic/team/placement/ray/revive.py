"""Failover: the teams whose worker was lost are resumed on another worker.

Every ``revive_interval`` seconds the reviver of a :class:`RayPlacement` reads the teams'
leases (one query) and Ray's table of nodes. A RUNNING team held by a Ray host is
orphaned when its lease lapsed (the worker stopped renewing: dead, stalled or cut off
from the store), when Ray reports its node dead, when its actor no longer exists, or when
its holder ran on this host and its pid is gone. An orphan is resumed on a live worker
from the store, as a local restore does: accepted messages never received are delivered
again, turns in progress are listed as interrupted (or retried, with
``RayOptions.retry_interrupted``: delivered again first, before the messages queued
behind them). The new actor takes the lease from the lost owner
only, in one atomic statement, so of several placements reviving one team exactly one
wins; and a stalled worker that wakes up finds its lease gone at its next renewal and
stops its team.

A worker that is alive for Ray but cut off keeps running until its next renewal fails
(``lease_ttl / 3``): what it records meanwhile is appended to the same log, as with a
local process that stalls past its lease.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING
from uuid import UUID

import ray

from akgentic.storage import Lease, TeamStatus
from akgentic.team.manager import TeamRunningElsewhereError
from akgentic.team.placement.ray.wire import live_nodes, parse_owner

if TYPE_CHECKING:
    from akgentic.team.placement.ray.placement import RayPlacement

__all__ = ["Reviver"]

logger = logging.getLogger("akgentic.team.placement")

PARALLEL = 4
"""Teams revived at once (each starts a Ray actor: a process)."""


class Reviver:
    """Resumes a placement's orphaned teams elsewhere; see the module docstring."""

    def __init__(self, placement: RayPlacement) -> None:
        self._placement = placement
        self._closed = threading.Event()
        self._reviving: set[UUID] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(PARALLEL, thread_name_prefix="akgentic-revive")
        self.revived: list[UUID] = []
        """The teams this reviver resumed, in order (for operators and tests)."""
        self._thread = threading.Thread(target=self._run, name="akgentic-reviver", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(self._placement.options.revive_interval):
            try:
                self.scan()
            except Exception:
                logger.exception("reviver: looking for lost teams failed; trying again")

    def orphans(self) -> list[Lease]:
        """The leases of RUNNING teams whose Ray worker is lost (see the module doc)."""
        placement = self._placement
        alive = set(live_nodes())
        lost = []
        for lease in placement.storage.leases.list("team/"):
            found = parse_owner(lease.holder.owner)
            if found is None:
                continue
            node, name = found
            if not (
                not lease.alive()
                or node not in alive
                or not _exists(name, placement.options.namespace)
            ):
                continue
            record = placement.storage.teams.get(UUID(lease.resource.removeprefix("team/")))
            if record is not None and record.status == TeamStatus.RUNNING:
                lost.append(lease)
        return lost

    def scan(self) -> None:
        """Revive every orphan not already being revived (up to PARALLEL at once)."""
        for lease in self.orphans():
            team_id = UUID(lease.resource.removeprefix("team/"))
            with self._lock:
                if team_id in self._reviving or self._closed.is_set():
                    continue
                self._reviving.add(team_id)
            self._pool.submit(self._revive, team_id, lease.holder.owner)

    def _revive(self, team_id: UUID, owner: str) -> None:
        try:
            logger.warning("team %s lost its worker (%s): resuming it elsewhere", team_id, owner)
            self._placement.revive(team_id, owner)
            self.revived.append(team_id)
        except TeamRunningElsewhereError as exc:
            logger.info("team %s: revived by another placement (%s)", team_id, exc)
        except Exception:
            logger.exception("team %s: reviving it failed; trying again later", team_id)
        finally:
            with self._lock:
                self._reviving.discard(team_id)

    def close(self) -> None:
        self._closed.set()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _exists(name: str, namespace: str) -> bool:
    try:
        ray.get_actor(name, namespace=namespace)
    except ValueError:
        return False
    return True
