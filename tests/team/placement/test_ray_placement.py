"""Teams on a real Ray cluster (two worker nodes on this machine) over a shared Postgres:
where they land, who talks to them, and one runner per team."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from typer.testing import CliRunner

from akgentic.cli import app
from akgentic.core import ActorSystem, SentMessage, UserMessage
from akgentic.storage import TeamStatus, open_storage
from akgentic.team import TeamManager, TeamRunningElsewhereError, team_resource
from tests.team.placement.cards import gate_card
from tests.team.placement.conftest import (
    ROOT,
    Deployment,
    Lab,
    answers,
    needs_cluster,
    tool_called,
    wait_answer,
    wait_until,
)

pytestmark = needs_cluster


def holder(deployment: Deployment, team_id: UUID) -> Any:
    lease = deployment.storage.leases.inspect(team_resource(team_id))
    assert lease is not None and not lease.expired
    return lease.holder


def node_of(deployment: Deployment, team_id: UUID) -> str:
    from akgentic.team.placement.ray.wire import parse_owner

    found = parse_owner(holder(deployment, team_id).owner)
    assert found is not None
    return found[0]


def team_actors(namespace: str, team_id: UUID) -> list[str]:
    import ray

    return [
        a["name"]
        for a in ray.util.list_named_actors(all_namespaces=True)
        if a["namespace"] == namespace and a["name"].startswith(f"team-{team_id}-")
    ]


def test_teams_land_on_both_workers_up_to_the_cap_and_answer_there(
    lab: Lab, deployment: Deployment
) -> None:
    from akgentic.team.placement.ray import NoWorkerError, RayTeam

    manager = deployment.manager(max_teams_per_worker=1)
    first = manager.create_team(gate_card())
    second = manager.create_team(gate_card())
    assert isinstance(first, RayTeam) and isinstance(second, RayTeam)
    workers = {node.node_id for node in lab.workers}
    assert {node_of(deployment, first.team_id), node_of(deployment, second.team_id)} == workers
    for team in (first, second):  # run by a Ray worker process, not this one
        assert holder(deployment, team.team_id).pid != os.getpid()
        team.send(f"hello {team.team_id}")
        wait_answer(deployment.storage, team.team_id, f"[scripted] done: hello {team.team_id}", 60)
        assert [m.name for m in team.members()] == ["@Human", "@Boss"]
    # the worker froze what its imports left, as the console script does (core/heap.py)
    import ray

    frozen = ray.get(first._host().__ray_call__.remote(lambda host: gc.get_freeze_count()))
    assert frozen > 10_000
    assert {t.team_id for t in manager.running()} == {first.team_id, second.team_id}

    with pytest.raises(NoWorkerError, match="at most 1 per worker"):
        manager.create_team(gate_card())

    freed = node_of(deployment, first.team_id)
    manager.stop_team(first.team_id)
    record = deployment.storage.teams.get(first.team_id)
    assert record is not None and record.status == TeamStatus.STOPPED
    assert manager.get_team(first.team_id) is None
    assert deployment.storage.leases.inspect(team_resource(first.team_id)) is None
    wait_until(lambda: not team_actors(deployment.namespace, first.team_id), 30, "the actor ends")
    third = manager.create_team(gate_card())  # the slot it gave back
    assert node_of(deployment, third.team_id) == freed
    # `akgentic teams stop` from any machine: the worker sees the stored status and stops it
    stopped = CliRunner().invoke(
        app, ["teams", "stop", str(second.team_id), "--storage", deployment.url]
    )
    assert stopped.exit_code == 0, stopped.stderr
    wait_until(
        lambda: deployment.storage.leases.inspect(team_resource(second.team_id)) is None,
        30,
        "the worker stops the team and gives its lease back",
    )
    wait_until(lambda: not team_actors(deployment.namespace, second.team_id), 30, "its actor ends")


def test_an_interrupt_cuts_a_turn_held_on_a_worker_at_its_next_step(
    lab: Lab, deployment: Deployment
) -> None:
    """Ctrl-C on a team a Ray worker runs: every member has its cancel when the
    ``cancelled`` call comes (the CLI says "cancelling the turns" then), so the tool call
    let go there returns into a turn cut at its next step; the turn is listed as
    interrupted, never answered, and the team is STOPPED."""
    manager = deployment.manager()
    team = manager.create_team(gate_card())
    held = f"hold {team.team_id}"
    message_id = team.send(held)
    wait_until(
        lambda: tool_called(deployment.storage, team.team_id, held),
        60,
        "the held turn is inside its tool call",
    )
    opened: list[bool] = []

    def cancelled() -> None:
        opened.append(team.is_running())
        deployment.open_gate(held)

    cut = manager.interrupt_team(team.team_id, grace_timeout=60, cancelled=cancelled)
    assert opened == [True]
    assert [m.id for m in cut] == [message_id]
    assert answers(deployment.storage, team.team_id) == []
    record = deployment.storage.teams.get(team.team_id)
    assert record is not None and record.status == TeamStatus.STOPPED

    # resumed undecided, the team answers a newer message first: the cut turn retried on
    # the running team comes after it, and the worker says so
    stopped_at = deployment.storage.events.last_seq(team.team_id)
    resumed = manager.resume_team(team.team_id)
    assert resumed.first_seq == stopped_at + 1  # the worker's run, from its first record
    assert [m.id for m in resumed.interrupted] == [message_id]
    resumed.send("later")
    wait_answer(deployment.storage, team.team_id, "[scripted] done: later", 120)
    assert resumed.retry_interrupted() == [message_id]
    assert resumed.out_of_order == {message_id: 1}
    wait_answer(deployment.storage, team.team_id, f"[scripted] done: {held}", 120)
    manager.stop_team(team.team_id)


def test_a_message_sent_from_another_process_is_answered_on_a_worker(
    lab: Lab, deployment: Deployment
) -> None:
    manager = deployment.manager()
    team = manager.create_team(gate_card())
    child = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.team.placement.driver",
            lab.address,
            deployment.url,
            deployment.namespace,
            str(team.team_id),
            "from afar",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    sent = [line for line in child.stdout.splitlines() if line.startswith("SENT ")]
    assert child.returncode == 0 and sent, child.stderr[-3000:]
    _, message_id, seq, driver_pid = sent[0].split()
    # accepted: committed at the seq the other process was told
    record = deployment.storage.events.read(team.team_id, int(seq), int(seq))[0]
    assert isinstance(record.message, SentMessage)
    assert isinstance(record.message.message, UserMessage)
    assert record.message.message.id == UUID(message_id)
    # answered by the worker that runs the team, seen here through the store
    for found in team.follow(int(seq), idle_timeout=60):
        if "[scripted] done: from afar" in answers(deployment.storage, team.team_id):
            break
        assert found.seq >= int(seq)
    assert answers(deployment.storage, team.team_id) == ["[scripted] done: from afar"]
    runner = holder(deployment, team.team_id).pid
    assert runner not in (os.getpid(), int(driver_pid))


def test_two_placements_racing_to_resume_one_team_exactly_one_wins(
    deployment: Deployment,
) -> None:
    first, second = deployment.manager(revive=False), deployment.manager(revive=False)
    team = first.create_team(gate_card())
    team_id = team.team_id
    local = TeamManager(ActorSystem(), open_storage(deployment.url))
    try:
        for rivals in ((first, second), (first, local)):
            first.stop_team(team_id)
            barrier = threading.Barrier(2)
            won: list[Any] = []
            lost: list[BaseException] = []

            threads = [
                threading.Thread(target=race, args=(m, team_id, barrier, won, lost)) for m in rivals
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(180)
            assert len(won) == 1 and len(lost) == 1, (won, lost)
            assert "is running in another process" in str(lost[0])
            winner = won[0]
            runner = holder(deployment, team_id)
            assert lost[0].lease.holder.owner == runner.owner  # the loser names the winner
            if winner.__class__.__name__ == "RayTeam":
                wait_until(
                    lambda: len(team_actors(deployment.namespace, team_id)) == 1,
                    30,
                    "the losing placement's actor ends",
                )
            else:
                assert runner.pid == os.getpid()
                wait_until(
                    lambda: not team_actors(deployment.namespace, team_id),
                    30,
                    "the losing placement's actor ends",
                )
            label = f"race {len(answers(deployment.storage, team_id))}"
            winner.send(label)
            wait_answer(deployment.storage, team_id, f"[scripted] done: {label}", 60)
    finally:
        local.shutdown(grace_timeout=5)


def race(
    manager: TeamManager,
    team_id: UUID,
    barrier: threading.Barrier,
    won: list[Any],
    lost: list[BaseException],
) -> None:
    """Resume the team as soon as the rival does."""
    barrier.wait()
    try:
        won.append(manager.resume_team(team_id))
    except TeamRunningElsewhereError as exc:
        lost.append(exc)


def test_a_worker_that_stops_renewing_loses_its_team_to_another_worker(
    deployment: Deployment,
) -> None:
    manager = deployment.manager(lease_ttl=3.0)
    team = manager.create_team(gate_card())
    team.send("before")
    wait_answer(deployment.storage, team.team_id, "[scripted] done: before", 60)
    stalled = holder(deployment, team.team_id)
    os.kill(stalled.pid, signal.SIGSTOP)  # alive for Ray, silent for the store
    try:
        taken = wait_until(
            lambda: (
                (lease := deployment.storage.leases.inspect(team_resource(team.team_id)))
                is not None
                and not lease.expired
                and lease.holder.owner != stalled.owner
                and lease.holder
            ),
            90,
            "another worker takes the team over once the lease lapses",
        )
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stalled.pid, signal.SIGCONT)
    assert taken.pid != stalled.pid
    wait_until(lambda: not _alive(stalled.pid), 60, "the stalled worker's actor ends")
    again = manager.get_team(team.team_id)
    assert again is not None
    again.send("after")
    wait_answer(deployment.storage, team.team_id, "[scripted] done: after", 60)
    assert answers(deployment.storage, team.team_id) == [
        "[scripted] done: before",
        "[scripted] done: after",
    ]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (killed, not yet reaped by its raylet) is gone too
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_resume_while_the_team_stops_on_its_worker_waits_for_the_stop_then_resumes_it(
    deployment: Deployment,
) -> None:
    """The stop is held in its grace by a turn at the gate on the worker: a resume then,
    from the driver, waits for the stop (it was refused: running elsewhere), saying so to
    ``on_stop_wait``, and resumes the team on the cluster once the stop has ended."""
    from akgentic.team.placement.ray import RayTeam

    manager = deployment.manager()
    team = manager.create_team(gate_card())
    team_id = team.team_id
    team.send("hold on")
    wait_until(lambda: tool_called(deployment.storage, team_id, "hold on"), 60, "in the tool")
    worker = holder(deployment, team_id)
    stopping = threading.Thread(target=team.stop)
    stopping.start()
    wait_until(lambda: manager.stopping(team_id), 60, "the stop has started on the worker")
    notices: list[Any] = []
    manager.on_stop_wait = notices.append
    outcome: list[Any] = []

    def resume() -> None:
        try:
            outcome.append(manager.resume_team(team_id))
        except Exception as exc:
            outcome.append(exc)

    resuming = threading.Thread(target=resume)
    resuming.start()
    wait_until(lambda: notices or outcome, 60, "the resume waits for the stop")
    assert outcome == []  # neither refused nor resumed: waiting
    deployment.open_gate("hold on")
    stopping.join(60)
    resuming.join(90)
    assert not stopping.is_alive() and not resuming.is_alive()

    [resumed] = outcome
    assert isinstance(resumed, RayTeam), resumed
    assert [notice.holder for notice in notices] == [worker]  # the worker stopping it
    resumed.send("after")
    wait_answer(deployment.storage, team_id, "[scripted] done: after", 60)
