"""A real Ray cluster on this machine — a head and two worker nodes, small (100 MB of
object store and one CPU per node) — and a throwaway Postgres schema per test, for the
placement tests. They are marked ``ray`` (deselected by default: ``pytest -m ray``) and
skip, saying why, without ray or without ``AKGENTIC_TEST_POSTGRES_URL``.

Nothing sleeps: a test waits for a condition of the store or of the cluster, bounded.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from akgentic.core import ActorSystem, EventMessage
from akgentic.storage import StorageBundle, open_storage
from tests.processes import wait_until
from tests.team.placement.lab import Lab, answers, start_cluster

ROOT = Path(__file__).resolve().parents[3]
POSTGRES = os.environ.get("AKGENTIC_TEST_POSTGRES_URL", "")
HAS_RAY = importlib.util.find_spec("ray") is not None
WORKER = "akgentic_worker"
"""The custom resource of the worker nodes (the head has none: it hosts no team)."""

needs_cluster = [
    pytest.mark.ray,
    pytest.mark.skipif(
        not HAS_RAY, reason="ray is not installed: pip install -e '.[dev]' (or akgentic[ray])"
    ),
    pytest.mark.skipif(
        not POSTGRES,
        reason="set AKGENTIC_TEST_POSTGRES_URL=postgresql://user@host:port/db to run the Ray "
        "placement tests (the cluster's workers share a Postgres store)",
    ),
    pytest.mark.timeout(600),
]


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    import ray

    cluster = start_cluster()
    lab = Lab(cluster)
    try:
        for _ in range(2):
            lab.add_worker({WORKER: 100})
        ray.init(address=cluster.address, log_to_driver=False)
        yield lab
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture
def url() -> Iterator[str]:
    """A Postgres URL whose schema is this test's own (dropped afterwards)."""
    import psycopg

    schema = f"ray_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in POSTGRES else "?"
    yield f"{POSTGRES}{sep}schema={schema}"
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@dataclass
class Deployment:
    """What a test built on the cluster; torn down after it (actors of its namespace)."""

    url: str
    namespace: str
    gates: Path
    storage: StorageBundle
    managers: list[Any] = field(default_factory=list)

    def options(self, **fields: Any) -> Any:
        from akgentic.team.placement.ray import RayOptions

        # the tree under test's sources first: a worktree's actors run its akgentic, not
        # the one the venv has installed (another checkout's)
        path = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
        env = {"PYTHONPATH": path, "AKGENTIC_GATE_DIR": str(self.gates)}
        defaults: dict[str, Any] = {
            "namespace": self.namespace,
            "resources": {WORKER: 1},
            "lease_ttl": 10.0,  # a worker slowed by busy cores keeps its teams
            "revive_interval": 0.25,
            "runtime_env": {"env_vars": env},
        }
        return RayOptions(**{**defaults, **fields})

    def manager(self, **fields: Any) -> Any:
        """A TeamManager placing its teams on the cluster with these options."""
        from akgentic.team import TeamManager
        from akgentic.team.placement.ray import RayPlacement

        placement = RayPlacement(self.url, self.options(**fields))
        manager = TeamManager(ActorSystem(), open_storage(self.url), placement=placement)
        self.managers.append(manager)
        return manager

    def open_gate(self, label: str) -> None:
        from tests.team.placement.cards import gate_file

        gate_file(self.gates, label).touch()


@pytest.fixture
def deployment(lab: Lab, url: str, tmp_path: Path) -> Iterator[Deployment]:
    import ray

    gates = tmp_path / "gates"
    gates.mkdir()
    namespace = f"akgentic-test-{uuid.uuid4().hex[:8]}"
    storage = open_storage(url)
    done = Deployment(url, namespace, gates, storage)
    try:
        yield done
    finally:
        for manager in done.managers:
            manager.shutdown(grace_timeout=5)
            manager.storage.close()
        for actor in ray.util.list_named_actors(all_namespaces=True):
            if actor["namespace"] == namespace:
                with contextlib.suppress(ValueError):
                    ray.kill(ray.get_actor(actor["name"], namespace=namespace))
        storage.close()


# -- reading what a team did, from the store --------------------------------------------------


def wait_answer(storage: StorageBundle, team_id: uuid.UUID, content: str, timeout: float) -> None:
    wait_until(
        lambda: content in answers(storage, team_id),
        timeout,
        f"team {team_id} answers {content!r} (answers so far: {answers(storage, team_id)})",
    )


def tool_called(storage: StorageBundle, team_id: uuid.UUID, label: str) -> bool:
    """Whether the team's log holds the gate call for ``label`` (the turn is in the tool)."""
    from akgentic.llm import ToolCallEvent

    return any(
        isinstance(r.message, EventMessage)
        and isinstance(r.message.event, ToolCallEvent)
        and r.message.event.arguments == {"label": label}
        for r in storage.events.read(team_id)
    )
