"""The CLI with a server: ``akgentic serve`` (a real subprocess), ``run --server`` and
``events --server`` against the real app."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
from typer.testing import CliRunner

from akgentic.cli import app
from tests.cli.conftest import AKGENTIC, Child, child_env
from tests.server import gate_tool
from tests.server.conftest import RESEARCH, TURNS, Served


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), input=input, env={"AKGENTIC_SERVER": None})
    return result.exit_code, result.stdout, result.stderr


def test_serve_refuses_off_loopback_without_a_token(tmp_path: Path) -> None:
    code, _, err = invoke("serve", "--host", "0.0.0.0", "--storage", "memory://")
    assert code == 1
    assert "error: host 0.0.0.0 is reachable from other machines: set a token" in err
    code, _, err = invoke("serve", "--token", "short", "--storage", "memory://")
    assert code == 1 and "token" in err


def test_serve_runs_teams_from_its_cards(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'serve.db'}"
    skills = tmp_path / "skills"
    skills.mkdir()
    (skills / "SKILL.md").write_text("---\nname: tidy\ndescription: Keep it tidy.\n---\nBe tidy.")
    env = child_env(storage)
    child = Child(
        [
            str(AKGENTIC),
            "serve",
            "--port",
            "0",
            "--cards",
            str(RESEARCH),
            "--cards",
            str(TURNS),
            "--skills-dir",
            str(skills),
        ],
        env,
    )
    try:
        line = child.wait_for("akgentic serving on ")
        url = line.split("serving on ")[1].split()[0]
        assert httpx.get(f"{url}/health").json()["status"] == "ok"
        cards = [c["name"] for c in httpx.get(f"{url}/team-cards").json()]
        assert cards == ["research", "turns"]
        code, out, err = invoke("run", str(RESEARCH), "--server", url, "-m", "why actors?")
        assert code == 0, err
        assert "answer: Here is what @Worker found:" in out
        os.kill(child.proc.pid, signal.SIGINT)
        code, errors = child.finish(60)
        assert code in (0, 130), errors
        assert "Traceback" not in errors
    finally:
        child.stop()
    from akgentic.storage import TeamStatus, open_storage

    bundle = open_storage(storage)
    try:
        assert [s.name for s in bundle.skills.list()] == ["tidy"]
        assert [t.status for t in bundle.teams.list()] == [TeamStatus.STOPPED]
    finally:
        bundle.close()


def test_run_and_events_with_server(served: Served) -> None:
    code, out, err = invoke("run", str(RESEARCH), "--server", served.url, "-m", "why actors?")
    assert code == 0, err
    assert "started on " + served.url in out
    assert "answer: Here is what @Worker found: [scripted] On why actors?" in out
    assert "--server " + served.url in out
    team = served.client.list_teams()[0]
    assert team.status == "STOPPED"
    code, listing, err = invoke("events", str(team.team_id)[:8], "--server", served.url)
    assert code == 0, err
    lines = listing.splitlines()
    assert len(lines) == served.storage.events.last_seq(team.team_id)
    assert lines[0].split()[0] == "1" and any("TurnStartedEvent" in x for x in lines)
    code, _, err = invoke("events", "nope", "--server", served.url)
    assert code == 1 and "no team matches 'nope'" in err
    code, _, err = invoke("events", "x", "--server", "http://127.0.0.1:9")
    assert code == 1 and "error: server http://127.0.0.1:9: cannot reach" in err


def test_ctrl_c_of_run_server_lists_the_cut_turn_and_teams_resume_server_retries_it(
    served: Served,
) -> None:
    """As without a server: the turn is cut at its next step and listed as interrupted,
    and the hint resumes the team on the server."""
    child = Child([str(AKGENTIC), "run", str(TURNS), "--server", served.url], child_env())
    try:
        child.write("wait here")
        assert gate_tool.ENTERED.wait(60)
        child.proc.send_signal(signal.SIGINT)
        child.wait_for("interrupted: cancelling the turns in progress at their next step")
        child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")
        gate_tool.OPEN.set()  # the tool call returns: its step boundary finds the cancel
        stopped = child.wait_for(") stopped; 1 interrupted turn(s):")
        child.wait_for("  @Human → @Boss: wait here")
        hint = child.wait_for("--retry-interrupted")
        code, errors = child.finish()
    finally:
        child.stop()

    assert code == 130, errors
    assert stopped.startswith("team turns (")
    [team] = served.client.list_teams()
    short = str(team.team_id)[:8]
    assert hint.startswith(f"resume it with: akgentic teams resume {short} --server {served.url}")
    assert not any("@Boss → @Human" in line for line in child.lines)  # cut, not answered
    assert "Traceback" not in errors
    assert team.status == "STOPPED"

    code, out, err = invoke(
        "teams", "resume", short, "--server", served.url, "--retry-interrupted", "-m", "hello"
    )
    assert code == 0, err
    assert f"team turns ({short}) resumed on {served.url}" in out
    assert "delivered 1 interrupted message(s) again" in out
    assert "@Boss → @Human (response): [scripted] done: here" in out
    assert "answer: [scripted] you said hello;" in out
    assert f"resume it with: akgentic teams resume {short} --server {served.url}" in out
    assert served.client.info(team.team_id).status == "STOPPED"


def test_teams_resume_server_refuses_what_a_server_cannot_do(served: Served) -> None:
    team = served.client.create_team("turns")
    short = str(team.team_id)[:8]
    code, _, err = invoke("teams", "resume", short, "--server", served.url)
    assert code == 1 and "is already running" in err, err
    code, _, err = invoke("teams", "resume", short, "--server", served.url, "--model", "test")
    assert code == 1
    assert "error: --model does not apply with --server" in err
