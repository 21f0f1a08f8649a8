"""Teams on a Ray cluster (the Ray placement) against the same teams in one process.

    python bench/scale.py [--postgres URL] [--teams 6] [--messages 8]

Everything runs on this machine: a local Ray cluster (a head that hosts no team, and one
or two worker nodes) over a throwaway schema of a Postgres database (``--postgres``, else
``AKGENTIC_TEST_POSTGRES_URL``). The team is the research example (two scripted agents,
a manager asking a worker). Baseline: the same work with the default local placement, in
this process, over the same store.

1. **Teams per GiB of worker memory.** ``--teams`` teams, each having answered one
   message. Ray: the proportional set size (PSS) of each team's actor process. Local: the
   growth of this process's PSS per team, after a first team has loaded what every
   process loads once (a Ray actor pays that for each team).
2. **Events per second**, one and two worker nodes: ``--teams`` teams each sent
   ``--messages`` messages at once; events recorded (all teams) from the first send until
   every answer is in the store.
3. **Resume time after a node loss**: ``--teams`` teams on one worker node, each having
   answered once; the node's processes are killed; the clock runs until every team has
   answered a new message from the other node. Baseline: the same teams, stopped, resumed
   in this process and answering one message each.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.team.placement.lab import Lab, answers, start_cluster, wait_until  # noqa: E402

from akgentic.core import ActorSystem  # noqa: E402
from akgentic.storage import StorageBundle, open_storage  # noqa: E402
from akgentic.team import HostedTeam, TeamCard, TeamManager, team_resource  # noqa: E402

RESEARCH = ROOT / "examples" / "teams" / "research.yaml"
WORKER = "akgentic_worker"
FOUND = "Here is what @Worker found:"
GIB = 2**30


def pss(pid: int | str = "self") -> int:
    """Bytes of the process's proportional set size (shared pages split among sharers)."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no Pss in /proc/{pid}/smaps_rollup")


def finished(storage: StorageBundle, team: HostedTeam) -> int:
    """How many final answers the team gave @Human."""
    return sum(said.startswith(FOUND) for said in answers(storage, team.team_id))


def answered(storage: StorageBundle, teams: list[HostedTeam], each: int, timeout: float) -> None:
    wait_until(
        lambda: all(finished(storage, t) >= each for t in teams),
        timeout,
        f"every team gives {each} answer(s)",
    )


SCHEMAS: list[str] = []
"""The throwaway schemas this run made (dropped at its end)."""


def schema_url(base: str) -> str:
    SCHEMAS.append(f"scale_{uuid.uuid4().hex[:10]}")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}schema={SCHEMAS[-1]}"


def drop_schemas(base: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        for name in SCHEMAS:
            conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


class Bench:
    def __init__(self, postgres: str, teams: int, messages: int) -> None:
        self.postgres = postgres
        self.teams = teams
        self.messages = messages
        self.card = TeamCard.from_yaml(RESEARCH)

    # -- placements ------------------------------------------------------------------------------
    def local(self) -> TeamManager:
        url = schema_url(self.postgres)
        return TeamManager(ActorSystem(), open_storage(url))

    def ray(self, url: str | None = None, **options: Any) -> TeamManager:
        from akgentic.team.placement.ray import RayOptions, RayPlacement

        url = url or schema_url(self.postgres)
        settings = {"resources": {WORKER: 1}, "lease_ttl": 3.0, "revive_interval": 0.25}
        placement = RayPlacement(url, RayOptions(**{**settings, **options}))
        return TeamManager(ActorSystem(), open_storage(url), placement=placement)

    def create(self, manager: TeamManager) -> list[HostedTeam]:
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda _: manager.create_team(self.card), range(self.teams)))

    def warm(self, manager: TeamManager, teams: list[HostedTeam]) -> None:
        for team in teams:
            team.send("why actors?")
        answered(manager.storage, teams, 1, 300)

    @staticmethod
    def close(manager: TeamManager, teams: list[HostedTeam]) -> None:
        for team in teams:
            manager.stop_team(team.team_id, grace_timeout=10)
        manager.shutdown(10)
        manager.storage.close()

    # -- 1. memory ---------------------------------------------------------------------------------
    def memory_local(self) -> float:
        manager = self.local()
        first = manager.create_team(self.card)  # what the first team loads, once per process
        self.warm(manager, [first])
        manager.stop_team(first.team_id)
        gc.collect()
        before = pss()
        teams = self.create(manager)
        self.warm(manager, teams)
        gc.collect()
        grown = (pss() - before) / self.teams
        self.close(manager, teams)
        return grown

    def memory_ray(self) -> float:
        manager = self.ray()
        teams = self.create(manager)
        self.warm(manager, teams)
        sizes = []
        for team in teams:
            lease = manager.storage.leases.inspect(team_resource(team.team_id))
            assert lease is not None
            sizes.append(pss(lease.holder.pid))
        self.close(manager, teams)
        return sum(sizes) / len(sizes)

    # -- 2. throughput -----------------------------------------------------------------------------
    def throughput(self, manager: TeamManager) -> float:
        teams = self.create(manager)
        self.warm(manager, teams)
        storage = manager.storage
        before = sum(storage.events.last_seq(t.team_id) for t in teams)
        start = time.perf_counter()

        def load(team: HostedTeam) -> None:
            for n in range(self.messages):
                team.send(f"why actors, {n}?")

        with ThreadPoolExecutor(len(teams)) as pool:
            list(pool.map(load, teams))
        answered(storage, teams, 1 + self.messages, 600)
        elapsed = time.perf_counter() - start
        events = sum(storage.events.last_seq(t.team_id) for t in teams) - before
        self.close(manager, teams)
        return events / elapsed

    # -- 3. resume ---------------------------------------------------------------------------------
    def resume_local(self) -> float:
        manager = self.local()
        teams = self.create(manager)
        self.warm(manager, teams)
        for team in teams:
            manager.stop_team(team.team_id)
        start = time.perf_counter()
        resumed = [manager.resume_team(t.team_id) for t in teams]
        for team in resumed:
            team.send("and now?")
        answered(manager.storage, resumed, 2, 300)
        elapsed = time.perf_counter() - start
        self.close(manager, resumed)
        return elapsed

    def resume_ray(self, lab: Lab) -> tuple[float, float]:
        """(seconds until every team is held by a live worker again, until every team
        answered a new message), from the moment the node is lost."""
        from akgentic.team.placement.ray.wire import parse_owner

        doomed = lab.add_worker({"doomed": 100})
        url = schema_url(self.postgres)  # one store: the placing and the reviving process
        placing = self.ray(url, resources={"doomed": 1}, revive=False)
        reviving = self.ray(url, resources={WORKER: 1})
        teams = self.create(placing)
        self.warm(placing, teams)
        survivors = {node.node_id for node in lab.workers if node is not doomed}
        storage = reviving.storage
        start = time.perf_counter()
        lab.kill_worker(doomed)

        def held(team: HostedTeam) -> bool:
            lease = storage.leases.inspect(team_resource(team.team_id))
            owner = parse_owner(lease.holder.owner) if lease is not None else None
            return (
                lease is not None
                and not lease.expired
                and owner is not None
                and (owner[0] in survivors)
            )

        wait_until(lambda: all(held(t) for t in teams), 300, "every team is resumed")
        taken = time.perf_counter() - start
        again: list[HostedTeam] = []
        for team in teams:
            found = reviving.get_team(team.team_id)
            assert found is not None
            found.send("and now?")
            again.append(found)
        answered(storage, again, 2, 300)
        elapsed = time.perf_counter() - start
        placing.shutdown(10)
        placing.storage.close()
        self.close(reviving, again)
        return taken, elapsed


def timed(what: str, run: Callable[[], Any]) -> Any:
    print(f"  {what} ...", end="", flush=True)
    start = time.perf_counter()
    result = run()
    print(f" {time.perf_counter() - start:.0f}s", flush=True)
    return result


def on_ray(bench: Bench) -> tuple[float, float, float, float, float]:
    """Memory, events/s (one node, two nodes), resume (held, answered) on a local cluster."""
    import ray

    lab = Lab(start_cluster())
    try:
        lab.add_worker({WORKER: 100})
        ray.init(address=lab.address, log_to_driver=False)
        ray_memory = timed("memory, Ray", bench.memory_ray)
        one_node = timed("events/s, Ray, one worker node", lambda: bench.throughput(bench.ray()))
        lab.add_worker({WORKER: 100})
        two_nodes = timed("events/s, Ray, two worker nodes", lambda: bench.throughput(bench.ray()))
        taken, back = timed("resume after a node loss, Ray", lambda: bench.resume_ray(lab))
    finally:
        ray.shutdown()
        lab.cluster.shutdown()
    return ray_memory, one_node, two_nodes, taken, back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=os.environ.get("AKGENTIC_TEST_POSTGRES_URL"))
    parser.add_argument("--teams", type=int, default=6)
    parser.add_argument("--messages", type=int, default=8)
    args = parser.parse_args()
    if not args.postgres:
        sys.exit("give --postgres postgresql://... (or set AKGENTIC_TEST_POSTGRES_URL)")

    bench = Bench(args.postgres, args.teams, args.messages)
    print(f"{args.teams} teams of {RESEARCH.name}; {args.messages} messages per team")
    try:
        local_memory = timed("memory, local", bench.memory_local)
        local_rate = timed("events/s, local", lambda: bench.throughput(bench.local()))
        local_resume = timed("resume, local", bench.resume_local)
        ray_memory, one_node, two_nodes, taken, back = on_ray(bench)
    finally:
        drop_schemas(args.postgres)

    per_gib = {"local": GIB / local_memory, "ray": GIB / ray_memory}
    print()
    print("| memory per team | MiB | teams per GiB | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| local (this process) | {local_memory / 2**20:.1f} | {per_gib['local']:.0f} | 1.00 |")
    ratio = per_gib["ray"] / per_gib["local"]
    print(
        f"| Ray (one actor per team) | {ray_memory / 2**20:.1f} | {per_gib['ray']:.1f} | "
        f"**{ratio:.3f}** |"
    )
    print()
    print("| events per second | events/s | ratio |")
    print("|---|---:|---:|")
    print(f"| local (this process) | {local_rate:,.0f} | 1.00 |")
    print(f"| Ray, one worker node | {one_node:,.0f} | **{one_node / local_rate:.2f}** |")
    print(f"| Ray, two worker nodes | {two_nodes:,.0f} | **{two_nodes / local_rate:.2f}** |")
    print()
    print("| resume | seconds | ratio |")
    print("|---|---:|---:|")
    print(f"| local: resume {args.teams} stopped teams, each answers | {local_resume:.2f} | 1.00 |")
    print(
        f"| Ray: node lost → every team held by the other node | {taken:.2f} | "
        f"{taken / local_resume:.2f} |"
    )
    print(
        f"| Ray: node lost → every team answered again | {back:.2f} | "
        f"**{back / local_resume:.2f}** |"
    )


if __name__ == "__main__":
    main()
