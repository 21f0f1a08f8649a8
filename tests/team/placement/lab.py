"""A local Ray cluster for the placement tests and bench/scale.py: worker nodes added and
lost (a machine's loss: its processes killed at once) on this machine."""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from akgentic.agent import AgentMessage
from akgentic.core import SentMessage
from akgentic.storage import EventRecord, StorageBundle

NODE_STORE = 100 * 2**20
"""Bytes of object store per node: the teams pass no objects through it."""

HEALTH_CHECKS = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 1000,
    "health_check_failure_threshold": 4,
}
"""A lost node is declared dead within ~4 s (Ray's defaults take ~15 s); a node merely
slowed by busy cores is not."""


def start_cluster() -> Any:
    """A head node that hosts no team (no CPU, no dashboard), and no worker yet."""
    from ray.cluster_utils import Cluster

    return Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 0,
            "object_store_memory": NODE_STORE,
            "include_dashboard": False,
            "_system_config": HEALTH_CHECKS,
        },
    )


def said_to_human(record: EventRecord) -> str | None:
    """What the team said to @Human in this record (None if it is something else)."""
    said = _to_human(record)
    return said.content if said is not None else None


def answers(storage: StorageBundle, team_id: UUID) -> list[str]:
    """What the team said to @Human, in order, from the store. A message delivered again
    after a restore (sent, not yet received when its worker was lost: the same message
    id) was said once; a turn run twice says its answer twice (two ids)."""
    said: dict[UUID, str] = {}
    for record in storage.events.read(team_id):
        message = _to_human(record)
        if message is not None:
            said.setdefault(message.id, message.content)
    return list(said.values())


def _to_human(record: EventRecord) -> AgentMessage | None:
    msg = record.message
    if (
        isinstance(msg, SentMessage)
        and isinstance(msg.message, AgentMessage)
        and msg.recipient is not None
        and msg.recipient.name == "@Human"
    ):
        return msg.message
    return None


@dataclass
class Lab:
    """The cluster of the session."""

    cluster: Any
    workers: list[Any] = field(default_factory=list)

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def add_worker(self, resources: dict[str, float]) -> Any:
        node = self.cluster.add_node(
            num_cpus=1, object_store_memory=NODE_STORE, resources=resources
        )
        self.cluster.wait_for_nodes()
        self.workers.append(node)
        return node

    def kill_worker(self, node: Any) -> list[int]:
        """Lose ``node`` as a machine is lost: its raylet's processes (the teams' actors)
        killed at once, then the node. Returns the pids killed."""
        raylet = node.all_processes["raylet"][0].process.pid
        children = _children(raylet)
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.cluster.remove_node(node, allow_graceful=False)
        self.workers.remove(node)
        return children


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent:
            found.append(int(entry.name))
    return found
