"""The server and the CLI with the Ray placement: a team created over HTTP runs on a
worker, its events reach the client's SSE stream through Postgres LISTEN/NOTIFY, and
``akgentic serve --placement ray`` does the same from the command line."""

from __future__ import annotations

import os
import signal

from typer.testing import CliRunner

from akgentic.cli import app
from akgentic.client import AkgenticClient
from akgentic.core import SentMessage
from akgentic.server import BackgroundServer, ServerSettings, create_app
from akgentic.storage import TeamStatus
from akgentic.team import team_resource
from tests.cli.conftest import AKGENTIC, Child, child_env
from tests.server.conftest import RESEARCH
from tests.team.placement.cards import gate_card
from tests.team.placement.conftest import WORKER, Deployment, Lab, needs_cluster, wait_until
from tests.team.placement.lab import said_to_human

pytestmark = needs_cluster


def test_a_team_created_over_http_runs_on_a_worker_and_streams_to_the_client(
    deployment: Deployment,
) -> None:
    from akgentic.storage import Lease
    from akgentic.team.placement.ray.wire import parse_owner

    manager = deployment.manager()
    server = BackgroundServer(create_app(manager, ServerSettings(port=0), cards=[gate_card()]))
    with server, AkgenticClient(server.url) as client:
        team = client.create_team("gate")
        lease = deployment.storage.leases.inspect(team_resource(team.team_id))
        assert isinstance(lease, Lease) and parse_owner(lease.holder.owner) is not None
        assert lease.holder.pid != os.getpid()
        assert team.is_running()
        assert [m.name for m in team.members()] == ["@Human", "@Boss"]
        message_id = team.send("over http")
        answer = None
        for record in team.follow(1, idle_timeout=60):  # the server's SSE stream
            answer = said_to_human(record)
            if answer is not None:
                break
        assert answer == "[scripted] done: over http"
        sent = {
            r.message.message.id
            for r in team.history(limit=1000)
            if isinstance(r.message, SentMessage)
        }
        assert message_id in sent  # accepted: in the log, wherever the team runs
        assert team.stop()
        record = deployment.storage.teams.get(team.team_id)
        assert record is not None and record.status == TeamStatus.STOPPED


def test_serve_with_the_ray_placement_runs_a_team_on_the_cluster(
    lab: Lab, deployment: Deployment
) -> None:
    env = child_env(deployment.url)
    child = Child(
        [
            str(AKGENTIC),
            "serve",
            "--port",
            "0",
            "--cards",
            str(RESEARCH),
            "--placement",
            "ray",
            "--ray-address",
            lab.address,
            "--team-resource",
            f"{WORKER}=1",
            "--max-teams-per-worker",
            "4",
        ],
        env,
    )
    try:
        line = child.wait_for("akgentic serving on ", timeout=120)
        assert "teams on the Ray cluster" in line
        url = line.split("serving on ")[1].split()[0]
        result = CliRunner().invoke(
            app,
            ["run", str(RESEARCH), "--server", url, "-m", "why actors?"],
            env={"AKGENTIC_SERVER": None},
        )
        assert result.exit_code == 0, result.stderr
        assert "answer: Here is what @Worker found:" in result.stdout
        [record] = deployment.storage.teams.list()  # the shared store has the team
        team_id = record.team_id
        assert deployment.storage.events.last_seq(team_id) > 0
        wait_until(
            lambda: deployment.storage.leases.inspect(team_resource(team_id)) is None,
            30,
            "the team stopped by 'run' gives its lease back",
        )
        os.kill(child.proc.pid, signal.SIGINT)
        last = child.output(60).splitlines()[-1]
        code, errors = child.finish(60)
        assert code in (0, 130), errors
        assert "Traceback" not in errors
        assert last == "server stopped (Ctrl-C); its teams run on in the Ray cluster"
    finally:
        child.stop()
