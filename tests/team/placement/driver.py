"""Another process driving a team a test placed on the cluster: it connects to the
cluster and the store, finds the team through its lease, sends one message and prints
``SENT <message id> <seq> <pid>``.

    python -m tests.team.placement.driver ADDRESS URL NAMESPACE TEAM_ID TEXT
"""

from __future__ import annotations

import os
import sys
from uuid import UUID

import ray

from akgentic.core import ActorSystem
from akgentic.storage import open_storage
from akgentic.team import TeamManager
from akgentic.team.placement.ray import RayOptions, RayPlacement
from tests.team.placement import cards  # noqa: F401  (the team's card decodes here)


def main(address: str, url: str, namespace: str, team_id: str, text: str) -> None:
    ray.init(address=address, log_to_driver=False)
    placement = RayPlacement(url, RayOptions(namespace=namespace, revive=False))
    manager = TeamManager(ActorSystem(), open_storage(url), placement=placement)
    try:
        team = manager.get_team(UUID(team_id))
        assert team is not None, "the team is not running on the cluster"
        message_id = team.send(text)
        print(f"SENT {message_id} {team.committed_seq(message_id)} {os.getpid()}", flush=True)
    finally:
        manager.shutdown()
        ray.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:6])
