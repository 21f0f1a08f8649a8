"""The CLI with a server: ``akgentic serve`` (a real subprocess), ``run --server`` and
``events --server`` against the real app."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import struct
import sys
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
import yaml
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from akgentic.agent import AgentMessage
from akgentic.cli import app, interrupt
from akgentic.cli import teams as cli_teams
from akgentic.cli.chat import (
    SERVER_GONE,
    SERVER_SHUTTING_DOWN,
    STOPPED_ON_SERVER,
    server_stop_reason,
)
from akgentic.client import AkgenticClient, RemoteTeam, ServerError
from akgentic.client.models import ResumeTeam, TeamInfo
from akgentic.core import ActorSystem, CancelMessage, SentMessage
from akgentic.server.routes.teams import Ctx
from akgentic.server.routes.teams import resume_team as resume_route
from akgentic.storage import sqlite_url
from akgentic.team import StopWait, TeamManager
from akgentic.tool.mcp import MCPTool
from tests.board_card import BOARD_TEAM, BoardTool  # the client decodes the cards read back
from tests.cli import hang_tool
from tests.cli.conftest import AKGENTIC, HANG, Child, assert_resume_hints, child_env
from tests.core.conftest import eventually
from tests.server import gate_tool
from tests.server.conftest import REPO, RESEARCH, TURNS, Served, kind, until
from tests.server.test_resume_while_stopping import stop_started
from tests.team.gated import cut_once_a_resume_waits


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
    storage = sqlite_url(tmp_path / "serve.db")
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


EXAMPLES = REPO / "examples" / "teams"


@contextmanager
def serving(argv: list[str], env: dict[str, str]) -> Iterator[tuple[Child, AkgenticClient]]:
    """``akgentic serve ARGV`` as a real subprocess, with a client once it listens."""
    child = Child([str(AKGENTIC), "serve", "--port", "0", *argv], env)
    try:
        line = child.wait_for("akgentic serving on ")
        with AkgenticClient(line.split("serving on ")[1].split()[0]) as client:
            yield child, client
    finally:
        child.stop()


def one_error(*args: str) -> str:
    """The one stderr line of a serve that refuses to start."""
    code, out, err = invoke("serve", "--storage", "memory://", *args)
    assert code == 1 and out == "", (out, err)
    assert len(err.splitlines()) == 1, err
    return err.strip()


def test_serve_checks_its_options_before_it_listens_in_one_line_each(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    bad = tmp_path / "bad.mcp.json"
    bad.write_text('{"mcpServers": {"x": {"command": \n')
    typo = tmp_path / "typo.mcp.json"
    typo.write_text('{"mcpServers": {"x": {"comand": "python3"}}}')

    assert one_error("--token", "short") == (
        "error: invalid --token: string should have at least 16 characters"
    )
    assert one_error("--cards", str(missing)) == f"error: {missing}: no such file or folder"
    assert one_error("--skills-dir", str(missing)) == f"error: {missing}: no such file or folder"
    assert one_error("--skills-dir", str(a_file)) == f"error: --skills-dir {a_file}: not a folder"
    assert one_error("--mcp-config", str(bad)).startswith(f"error: {bad}: not valid JSON: ")
    assert one_error("--mcp-config", str(typo)).startswith(
        f"error: {typo}: server 'x': 1 unknown key comand"
    )
    assert one_error("--allow-posted", "everything") == (
        "error: invalid --allow-posted: input should be 'processes', 'paths', 'endpoints' "
        "or 'cards'"
    )
    assert one_error("--allowed-host", "http://x").startswith(
        "error: invalid --allowed-host: 'http://x' is not a host name"
    )
    assert one_error("--cors-origin", "http://localhost:3000/").startswith(
        "error: invalid --cors-origin: 'http://localhost:3000/' is not an origin"
    )


def test_skills_dir_takes_several_folders_as_skill_tool_reads_its_variable(
    tmp_path: Path,
) -> None:
    """AKGENTIC_SKILLS_DIR holds folders separated by os.pathsep (SkillTool reads it so):
    ``serve`` takes each, checks each by name, and ``--skills-dir`` is repeatable."""
    one, two, missing = tmp_path / "one", tmp_path / "two", tmp_path / "missing"
    one.mkdir()
    two.mkdir()

    def serve_with(value: str, *args: str) -> str:
        env = {"AKGENTIC_SERVER": None, "AKGENTIC_SKILLS_DIR": value}
        result = CliRunner().invoke(app, ["serve", "--storage", "memory://", *args], env=env)
        assert result.exit_code == 1, result.output
        return result.stderr.strip()

    assert serve_with(f"{one}{os.pathsep}{missing}") == (
        f"error: {missing}: no such file or folder"
    )
    # both folders pass: the next check, the token's, is the one that stops it
    assert serve_with(f"{one}{os.pathsep}{two}", "--token", "short").startswith(
        "error: invalid --token"
    )
    code, _, err = invoke(
        "serve", "--storage", "memory://", "--skills-dir", str(one), "--skills-dir", str(missing)
    )
    assert code == 1 and err.strip() == f"error: {missing}: no such file or folder"


def test_serve_imports_the_modules_named_with_import_before_it_serves(tmp_path: Path) -> None:
    """A posted card may name the classes of a module the operator imported with
    ``--import`` (its ``imports`` are then loaded, not imported by the post): the team is
    created and its card reads back with the module's tool, after a restart too."""
    board = tmp_path / "board"
    board.mkdir()
    card_yaml = BOARD_TEAM.format(directory=board)
    env = child_env(f"sqlite:///{tmp_path / 'serve.db'}")
    with serving(["--import", "tests.board_card"], env) as (child, client):
        answer = client.request("POST", "/teams", json={"card_yaml": card_yaml})
        assert answer.status_code == 201, answer.text
        team = client.get_team(answer.json()["team_id"])
        [lead] = team.card.configs()
        assert [type(t) for t in lead.tools] == [BoardTool]
        assert [m.name for m in team.members() if m.name.startswith("@")] == ["@Human", "@Lead"]
        os.kill(child.proc.pid, signal.SIGINT)
        code, errors = child.finish(60)
    assert code == 130 and "Traceback" not in errors, errors
    with serving(["--import", "tests.board_card"], env) as (_, client):  # a restart reads it
        [stored] = client.list_teams()
        [lead] = client.get_team(stored.team_id).card.configs()
        assert [type(t) for t in lead.tools] == [BoardTool]


def test_serve_import_of_a_module_that_fails_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "exploding_on_import.py").write_text("raise RuntimeError('no config here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert one_error("--import", "tests.no_such_module") == (
        "error: --import tests.no_such_module: cannot import it: "
        "No module named 'tests.no_such_module'"
    )
    assert one_error("--import", "exploding_on_import") == (
        "error: --import exploding_on_import: importing it failed: RuntimeError: no config "
        "here (rerun with --debug to see the traceback)"
    )
    (tmp_path / "two_lines_on_import.py").write_text("raise RuntimeError('first\\nsecond')\n")
    assert one_error("--import", "two_lines_on_import") == (
        "error: --import two_lines_on_import: importing it failed: RuntimeError: first second "
        "(rerun with --debug to see the traceback)"
    )
    (tmp_path / "a_script.py").write_text("raise SystemExit(4)\n")  # what a script's main does
    assert one_error("--import", "a_script") == (
        "error: --import a_script: the module ended the program while imported (SystemExit: 4): "
        "is it a script? --import names a module of cards, agents or models"
    )
    code, _, err = invoke("serve", "--storage", "memory://", "--import", "nope_xyz", "--debug")
    assert code == 1 and "Traceback (most recent call last)" in err
    assert err.splitlines()[-1] == (
        "error: --import nope_xyz: cannot import it: No module named 'nope_xyz' — Python "
        "looks on sys.path: run from the folder holding nope_xyz, or add that folder to "
        "PYTHONPATH"
    )


def test_serve_reads_team_cards_only_and_warns_once_per_skipped_card(tmp_path: Path) -> None:
    cards = tmp_path / "cards"
    (cards / "sub").mkdir(parents=True)
    tidy = "name: tidy\nentry_point: '@A'\nmembers: [{card: {role: A, config: {name: '@A'}}}]\n"
    (cards / "tidy.yaml").write_text(tidy)
    (cards / "sub" / "nested.yaml").write_text(tidy.replace("tidy", "nested"))
    (cards / "broken.yaml").write_text("name: broken\nmembers: []\n")
    (cards / "long.yaml").write_text(tidy.replace("tidy", "long") + "x: " + "1" * 5000 + "\n")
    (cards / "skill.yaml").write_text("name: a-skill\ndescription: A skill.\ncontent: Be brief.\n")
    (cards / "notes.yml").write_text("- a list\n- not a card\n")
    (cards / "x.scenario.yaml").write_text("default: {text: hi}\n")
    (cards / "mcp.json").write_text("{}")

    env = child_env(f"sqlite:///{tmp_path / 'serve.db'}")
    with serving(["--cards", str(EXAMPLES), "--cards", str(cards)], env) as (child, client):
        assert [c.name for c in client.cards()] == [
            "analyst",
            "coder",
            "glossary",
            "librarian",
            "research",
            "tidy",
        ]
        os.kill(child.proc.pid, signal.SIGINT)
        code, errors = child.finish(60)
    assert code == 130 and "Traceback" not in errors
    warnings = [line for line in errors.splitlines() if "warning" in line.lower()]
    assert len(warnings) == 2, errors
    assert warnings[0].startswith(f"warning: card skipped: {cards / 'broken.yaml'}:")
    assert "entry_point: Field required" in warnings[0]
    assert warnings[1].startswith(
        f"warning: card skipped: {cards / 'long.yaml'}:4: not valid YAML: an integer of 5,000"
    )


def test_serve_gives_every_team_the_servers_of_its_mcp_config(tmp_path: Path) -> None:
    config = tmp_path / "servers.mcp.json"
    server = REPO / "examples" / "mcp" / "glossary_server.py"
    config.write_text(
        json.dumps({"mcpServers": {"glossary": {"command": sys.executable, "args": [str(server)]}}})
    )
    librarian = yaml.safe_load((EXAMPLES / "glossary.yaml").read_text())
    del librarian["mcp_config"]  # the card names no server: the server gives it one
    librarian["name"] = "librarian-without-servers"
    librarian["members"][0]["card"]["config"]["scenario_dir"] = str(EXAMPLES)
    card = tmp_path / "librarian.yaml"
    card.write_text(yaml.safe_dump(librarian))

    env = child_env(f"sqlite:///{tmp_path / 'serve.db'}", AKGENTIC_MCP_CONFIG=str(config))
    with serving(["--cards", str(card), "--cards", str(RESEARCH)], env) as (_, client):
        research = client.create_team("research")
        for config_of in research.card.configs():
            names = [t.server_name for t in config_of.tools if isinstance(t, MCPTool)]
            assert names == ["glossary"], config_of.name
        team = client.create_team("librarian-without-servers")
        team.send("define actor")
        answer = next(
            r.message.message.content
            for r in team.follow(idle_timeout=60)
            if isinstance(r.message, SentMessage)
            and isinstance(r.message.message, AgentMessage)
            and r.message.recipient is not None
            and r.message.recipient.name == "@Human"
        )
        assert answer == (
            "[scripted] actor: an object with a mailbox that handles one message at a time"
        )


def _healthy(url: str) -> bool:
    """Whether ``url``'s ``/health`` answers ``ok`` (a refused connection is a no)."""
    try:
        return bool(httpx.get(f"{url}/health", timeout=5).json().get("status") == "ok")
    except httpx.HTTPError:
        return False


@pytest.mark.parametrize(
    ("sig", "said", "code"),
    [
        (signal.SIGINT, "Ctrl-C", 130),
        (signal.SIGTERM, "SIGTERM", 143),
        (signal.SIGHUP, "SIGHUP", 129),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_serve_exits_with_128_plus_the_signal_that_stopped_it_saying_so(
    tmp_path: Path, sig: signal.Signals, said: str, code: int
) -> None:
    """As ``run`` and ``teams resume`` do: a service manager's SIGTERM is 143, not 130.
    The last line says what stopped the server, and what became of its teams."""
    url = sqlite_url(tmp_path / "s.db")
    child = Child([str(AKGENTIC), "serve", "--port", "0", "--storage", url], child_env())
    try:
        served = child.wait_for("akgentic serving on ").split("serving on ")[1].split()[0]
        eventually(lambda: _healthy(served), timeout=60)
        child.proc.send_signal(sig)
        child.wait_for("stopping: the teams running here finish their turns in progress")
        last = child.output().splitlines()[-1]
        exit_code, errors = child.finish(60)
    finally:
        child.stop()
    assert exit_code == code, errors
    assert errors == ""
    assert last == (
        f"server stopped ({said}); the teams it ran stopped with it: resume one with: "
        f"akgentic teams resume TEAM --storage {url}"
    )


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_a_second_signal_on_serve_stops_at_once_without_a_traceback(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    env = child_env(f"sqlite:///{tmp_path / 'serve.db'}", AKGENTIC_CLI_TEST_HANG="1")
    with serving(["--cards", str(HANG)], env) as (child, client):
        assert hang_tool.HangStep  # defined here too, so the team's records decode
        team = client.create_team("hanging")
        team.send("please hang")
        for record in team.follow(idle_timeout=60):  # until the tool call that never returns
            if kind(record) == "ToolCall":
                break
        child.proc.send_signal(sig)
        child.wait_for("stopping: the teams running here finish their turns in progress")
        child.proc.send_signal(sig)
        exit_code, errors = child.finish(60)
    assert exit_code == code, errors
    assert "interrupted again: stopped at once (the turns in progress were cut)" in errors
    assert "Traceback" not in errors and "Error" not in errors, errors


def test_an_unknown_team_on_a_server_says_how_to_list_the_servers_teams(served: Served) -> None:
    for command in ("usage", "events"):
        code, _, err = invoke(command, "zzzz", "--server", served.url)
        assert code == 1
        assert err.strip() == (
            f"error: no team matches 'zzzz'; list the teams with: akgentic teams list "
            f"--server {served.url} (the page {served.url}/ shows them too)"
        )


def test_teams_list_show_stop_and_delete_work_on_a_servers_teams(served: Served) -> None:
    """Every team command takes --server (env AKGENTIC_SERVER), not only run, resume,
    events and usage: a user with the variable set reaches the server's teams."""
    url = served.url
    running = served.client.create_team("research", name="live")
    code, _, err = invoke("run", str(RESEARCH), "--server", served.url, "-m", "why actors?")
    assert code == 0, err
    [done] = [t for t in served.client.list_teams() if t.team_id != running.team_id]

    code, listing, err = invoke("teams", "list", "--server", served.url)
    assert code == 0, err
    rows = {line.split()[0]: line.split() for line in listing.splitlines()[1:]}
    assert rows[str(running.team_id)][1:3] == ["live", "RUNNING"]
    assert rows[str(running.team_id)][-2:] == ["this", "server"]
    assert rows[str(done.team_id)][1:3] == ["research", "STOPPED"]
    assert rows[str(done.team_id)][3] == str(done.last_seq)

    code, shown, err = invoke("teams", "show", "live", "--server", served.url)
    assert code == 0, err
    assert f"team:     live ({running.team_id})" in shown
    assert "status:   RUNNING" in shown
    assert "@Manager" in shown and "@Worker" in shown  # its members, from the server

    code, stopped, err = invoke("teams", "stop", str(running.team_id)[:8], "--server", served.url)
    assert code == 0, err
    assert stopped.strip() == f"team live ({str(running.team_id)[:8]}) is now STOPPED"
    assert served.client.info(running.team_id).status == "STOPPED"

    code, deleted, err = invoke("teams", "delete", "live", "--server", served.url)
    assert code == 0, err
    assert "deleted; its history is kept" in deleted
    code, listing, err = invoke("teams", "list", "--server", served.url)
    assert str(running.team_id) not in listing and str(done.team_id) in listing
    code, listing, err = invoke("teams", "list", "--all", "--server", served.url)
    rows = {line.split()[0]: line.split() for line in listing.splitlines()[1:]}
    assert rows[str(running.team_id)][1:3] == ["live", "DELETED"]
    code, _, err = invoke("teams", "resume", "live", "--server", served.url)
    assert code == 1
    live = str(running.team_id)[:8]
    assert err.strip() == (
        f"error: team live ({live}) was deleted and cannot be resumed: start a new team from "
        f"its card with: akgentic run TEAM.yaml --server {served.url}; its history still "
        f"reads with: akgentic events {live} --server {served.url}"
    )

    code, _, err = invoke("teams", "delete", "research", "--purge", "--server", served.url)
    assert code == 1
    assert err.strip() == (
        f"error: --purge removes team research ({str(done.team_id)[:8]}) and all its "
        f"history for good; with no terminal to ask, confirm with --yes"
    )
    code, purged, err = invoke("teams", "delete", "research", "--purge", "-y", "--server", url)
    assert code == 0, err
    assert purged.strip() == f"team research ({str(done.team_id)[:8]}) purged from {url}"
    assert served.storage.teams.get(done.team_id) is None
    code, listing, err = invoke("teams", "list", "--server", url)  # only the deleted one left
    assert code == 0, err
    assert listing.strip() == (
        f"no teams but deleted ones (1 team on {url}; list them all with: akgentic teams "
        f"list --all --server {url})"
    )

    both_places = (
        ["teams", "list"],
        ["teams", "show", "x"],
        ["teams", "stop", "x"],
        ["teams", "delete", "x", "--purge", "-y"],
        ["teams", "resume", "x", "-m", "hi"],
        ["run", "research", "-m", "hi"],
        ["events", "x"],
        ["usage", "x"],
    )
    for command in both_places:  # none of them picks one of the two silently
        code, _, err = invoke(*command, "--server", url, "--storage", "memory://")
        assert code == 1
        assert err.strip() == (
            f"error: --server {url} and --storage memory:// name two places (given the same "
            f"way: both on the command line, or both from AKGENTIC_SERVER / "
            f"AKGENTIC_STORAGE): give one"
        )
    # given apart, the command line wins over the environment, as a flag over its variable
    both_from_env = {"AKGENTIC_SERVER": url, "AKGENTIC_STORAGE": "memory://"}
    result = CliRunner().invoke(app, ["teams", "list"], env=both_from_env)
    assert result.exit_code == 1 and "name two places (given the same way" in result.stderr
    server_from_env = {"AKGENTIC_SERVER": url, "AKGENTIC_STORAGE": None}
    result = CliRunner().invoke(
        app, ["teams", "list", "--storage", "memory://"], env=server_from_env
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("no teams yet in memory://")  # the store, not the server
    store_from_env = {"AKGENTIC_SERVER": None, "AKGENTIC_STORAGE": "memory://"}
    result = CliRunner().invoke(app, ["teams", "list", "--server", url], env=store_from_env)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("no teams but deleted ones")  # the server's
    code, _, err = invoke("teams", "list", "--server", "http://127.0.0.1:9")
    assert code == 1 and err.startswith("error: server http://127.0.0.1:9: cannot reach")


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
        stopped = child.wait_for(") stopped; 1 interrupted turn:")
        child.wait_for("  @Human → @Boss: wait here")
        hint = child.wait_for("--retry-interrupted")
        code, errors = child.finish()
    finally:
        child.stop()

    assert code == 130, errors
    assert stopped.startswith("team turns (")
    [team] = served.client.list_teams()
    short = str(team.team_id)[:8]
    assert hint.startswith(f"akgentic teams resume {short} --server {served.url}")
    assert not any("@Boss → @Human" in line for line in child.lines)  # cut, not answered
    assert "Traceback" not in errors
    assert team.status == "STOPPED"

    code, out, err = invoke(
        "teams", "resume", short, "--server", served.url, "--retry-interrupted", "-m", "hello"
    )
    assert code == 0, err
    assert f"team turns ({short}) resumed on {served.url}" in out
    assert "delivered 1 interrupted message again" in out
    assert "@Boss → @Human (response): [scripted] done: here" in out
    assert "answer: [scripted] you said hello;" in out
    assert f"resume it with: akgentic teams resume {short} --server {served.url}" in out
    assert served.client.info(team.team_id).status == "STOPPED"


@pytest.mark.parametrize("settle", ["--dismiss-interrupted", "--retry-interrupted"])
def test_teams_resume_server_of_a_running_team_settles_and_counts_only_its_interrupted_turns(
    served: Served, settle: str
) -> None:
    """A team the server runs, resumed there without settling the turn its stop cut, is
    on a new turn: ``teams resume --server`` with either flag says one turn settled — the
    server's own ``interrupted`` — not the turn in progress too (its log alone lists
    both), and the turn in progress goes on to its answer."""
    team = served.client.create_team("turns")
    cut = team.send("wait one")
    assert gate_tool.ENTERED.wait(60)
    cancelled = gate_tool.OPEN.set  # the cancels are in: the tool call returns, is cut
    served.manager.interrupt_team(team.team_id, 30, cancelled=cancelled)
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    resumed = served.client.resume_team(team.team_id)  # nobody decided yet
    resumed.send("wait two")
    assert gate_tool.ENTERED.wait(60)
    assert resumed.refresh().interrupted == [cut]
    short = str(team.team_id)[:8]
    argv = [str(AKGENTIC), "teams", "resume", short, "--server", served.url, settle]
    argv += ["--import", gate_tool.__name__, "-m", "hello"]
    child = Child(argv, child_env())
    try:
        said = child.wait_for(" interrupted ")
        gate_tool.OPEN.set()  # the turn in progress goes on
        out = child.output()
        code, errors = child.finish()
    finally:
        child.stop()

    assert code == 0, errors
    if settle == "--dismiss-interrupted":
        assert said == "dismissed 1 interrupted turn"
    else:  # "wait two", sent after it, is the turn in progress: it came first
        assert said == (
            "delivered 1 interrupted message again out of order: after 1 newer message its "
            "recipient had taken on since"
        )
        assert "@Boss → @Human (response): [scripted] done: one" in out
    assert "@Boss → @Human (response): [scripted] done: two" in out
    assert "answer: [scripted] you said hello;" in out


WARNED = [
    "1 turn was interrupted:",
    "  @Human → @Boss: wait here",
    "  rerun with --retry-interrupted to deliver it again, or --dismiss-interrupted to give it up",
]


@pytest.mark.parametrize(
    ("settle", "said_then"),
    [
        ((), WARNED),
        (("--retry-interrupted",), ["delivered 1 interrupted message again"]),
        (("--dismiss-interrupted",), ["dismissed 1 interrupted turn"]),
    ],
    ids=["undecided", "retry", "dismiss"],
)
def test_teams_resume_server_that_waited_for_a_stop_shows_nothing_of_that_stop(
    served: Served,
    monkeypatch: pytest.MonkeyPatch,
    settle: tuple[str, ...],
    said_then: list[str],
) -> None:
    """``teams resume --server`` while the server stops the team: the command says it
    waits for the stop (the server's ``stopping``), as a local resume does, and waits for
    it, whose grace runs out meanwhile — its cancel, held until the wait is said, and the
    turn it cuts are written after the session looked at the log, and are the past. The
    session starts at the resumed run's first record (``first_seq``), and warns of that
    turn, which the resume offers again: from its look before the resume, it showed the
    cancel's "grace ran out" line, listed the turn that stop cut as cut by its own stop,
    and said nothing of it as the resume began (with ``--retry-interrupted``, that there
    was none to deliver again, while the resume did)."""
    told = cut_once_a_resume_waits(monkeypatch, gate_tool.OPEN.set)
    say = cli_teams._stop_wait_line

    def said_then_told(*args: Any) -> str:  # the wait here, not the server's: said
        try:
            return say(*args)
        finally:
            told.set()

    monkeypatch.setattr(cli_teams, "_stop_wait_line", said_then_told)
    team = served.client.create_team("turns")
    team.send("wait here")
    assert gate_tool.ENTERED.wait(60)  # the turn holds the stop in its grace
    stopping = threading.Thread(target=served.client.stop_team, args=(team.team_id, 0.5))
    stopping.start()
    try:
        until(team, stop_started)
        short = str(team.team_id)[:8]
        argv = ["teams", "resume", short, "--server", served.url, *settle]
        code, out, err = invoke(*argv, input="")
    finally:
        gate_tool.OPEN.set()
        told.set()
        stopping.join(90)

    assert code == 0, err
    log = served.storage.events.read(team.team_id)
    cancels = [
        r.message.message.reason
        for r in log
        if isinstance(r.message, SentMessage) and isinstance(r.message.message, CancelMessage)
    ]
    assert cancels == ["the team's stop grace of 0.5s ran out"]  # written while it waited
    said = out.splitlines()
    assert re.fullmatch(  # the server's own stop: its process; its grace (0.5s) and margin
        rf"team turns \({short}\) is stopping in process {os.getpid()} on host "
        rf"{re.escape(socket.gethostname())}: waiting for its stop \(up to 15\.5s\)",
        said[0],
    )
    assert said[1 : 2 + len(said_then)] == [
        f"team turns ({short}) resumed on {served.url}: @Boss (entry point)",
        *said_then,
    ]
    assert "ran out" not in out
    assert "@Orchestrator" not in out
    # the session's own stop cut nothing (the turn, unsettled, is offered to the next resume)
    assert said[-1] == (
        f"team turns ({short}) stopped; resume it with: akgentic teams resume {short} "
        f"--server {served.url} --import {gate_tool.__name__}"
    )


def ctrl_c_once_a_stop_wait_is_said(served: Served, monkeypatch: pytest.MonkeyPatch) -> RemoteTeam:
    """A team on the server with a turn at the gate (which holds its stop in its grace);
    a Ctrl-C comes as ``teams resume --server`` says it waits for a stop (the signal
    handler's part: the pending event that the CLI's safe points raise)."""
    say = cli_teams._stop_wait_line

    def said_then_ctrl_c(*args: Any) -> str:
        try:
            return say(*args)
        finally:
            interrupt._quiet[-1].set()  # what the first Ctrl-C does inside interrupt.deferred

    monkeypatch.setattr(cli_teams, "_stop_wait_line", said_then_ctrl_c)
    team = served.client.create_team("turns")
    team.send("wait here")
    assert gate_tool.ENTERED.wait(60)
    return team


def test_ctrl_c_ends_a_teams_resume_server_waiting_for_a_stop_nothing_resumed(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while ``teams resume --server`` waits for the server's stop of the team (held
    in its grace by a turn at the gate, which stays closed): the command gives up there and
    then — one line, ``interrupted before the team was resumed: nothing was changed``, exit
    130 — as a local resume does, rather than hanging until the stop ends. The resume was
    never asked: once the stop has ended, the team is STOPPED and the server does not run
    it. The Ctrl-C comes as the wait is said
    (the signal handler's part: the pending event that the CLI's safe points raise)."""
    team = ctrl_c_once_a_stop_wait_is_said(served, monkeypatch)
    stopping = threading.Thread(target=served.client.stop_team, args=(team.team_id,))
    stopping.start()
    try:
        until(team, stop_started)
        code, out, err = invoke("teams", "resume", str(team.team_id)[:8], "--server", served.url)
        still_stopping = stopping.is_alive()
    finally:
        gate_tool.OPEN.set()
        stopping.join(90)

    assert code == interrupt.EXIT_INTERRUPTED, err
    assert still_stopping  # the command did not wait for the stop's end
    [said] = out.splitlines()
    assert "is stopping in process" in said and "waiting for its stop" in said
    assert err.strip() == "interrupted before the team was resumed: nothing was changed"
    info = served.client.info(team.team_id)
    assert info.status == "STOPPED" and not info.running  # no resume was asked
    assert info.stopping is None


def test_ctrl_c_ends_a_teams_resume_server_whose_resume_met_a_stop_begun_since_its_look(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop that begins between ``teams resume --server``'s look (no stop in progress)
    and its resume (held in its grace by a turn at the gate, which stays closed): the
    server does not wait for it in silence — the resume is refused at once (code
    ``team_stopping``) and the command says it waits for that stop, where Ctrl-C ends it:
    one line, ``interrupted before the team was resumed: nothing was changed``, exit 130.
    The server resumes nothing behind the person's back: once the stop has ended, the team
    is STOPPED and not running."""
    team = ctrl_c_once_a_stop_wait_is_said(served, monkeypatch)
    stopping = threading.Thread(target=served.client.stop_team, args=(team.team_id,))
    resume = AkgenticClient.resume_team

    def stop_then_resume(client: AkgenticClient, *args: Any, **kwargs: Any) -> Any:
        stopping.start()  # after the command looked: it saw no stop in progress
        until(team, stop_started)
        return resume(client, *args, **kwargs)

    monkeypatch.setattr(AkgenticClient, "resume_team", stop_then_resume)
    short = str(team.team_id)[:8]
    try:
        code, out, err = invoke("teams", "resume", short, "--server", served.url)
        still_stopping = stopping.is_alive()
    finally:
        gate_tool.OPEN.set()
        if stopping.is_alive() or stopping.ident is not None:
            stopping.join(90)

    assert code == interrupt.EXIT_INTERRUPTED, out + err
    assert still_stopping  # the command did not wait for the stop's end
    [said] = out.splitlines()
    assert said.startswith(f"team turns ({short}) is stopping in process {os.getpid()} on host ")
    assert said.endswith(": waiting for its stop (up to 45s)")
    assert err.strip() == "interrupted before the team was resumed: nothing was changed"
    info = served.client.info(team.team_id)
    assert info.status == "STOPPED" and not info.running  # nothing resumed behind its back
    assert info.stopping is None


@pytest.mark.parametrize("saving", [False, True], ids=["turns", "saving"])
def test_teams_resume_server_gives_up_on_a_stop_past_its_time_in_one_line(
    served: Served, monkeypatch: pytest.MonkeyPatch, saving: bool
) -> None:
    """A stop the server says goes on past the time it gave (here, one that never ends,
    given 1s): ``teams resume --server`` says it waits, then gives up once that time is
    over, in one line saying who is still stopping the team, what the stop is at (a turn,
    or — ``saving`` — the team's last records a store refuses: it said a turn whatever
    the stop was at) and what to do, as the server's resume would; it never asked the
    resume (the team, running on, is left alone)."""
    team = served.client.create_team("turns")
    holder = served.manager.holder
    monkeypatch.setattr(
        served.manager,
        "stop_in_progress",
        lambda team_id: StopWait(team_id, holder, 1.0, saving),
    )
    short = str(team.team_id)[:8]
    began = team.info.first_seq

    code, out, err = invoke("teams", "resume", short, "--server", served.url)

    assert code == 1
    assert out.splitlines() == [
        f"team turns ({short}) is stopping in process {holder.pid} on host {holder.host}: "
        f"waiting for its stop (up to 1s)"
    ]
    at = (
        "its turns have ended, and its stop there still tries to save the team's last "
        "records, which the store refuses; free the store (disk space, permissions, a "
        "process holding it) and resume it once that stop has ended"
        if saving
        else "a member there has not ended its turn; resume it once that process has "
        "stopped it, or end that process"
    )
    assert err.splitlines() == [
        f"error: team turns ({short}) is still stopping in process {holder.pid} on host "
        f"{holder.host} after 1s of waiting: {at}"
    ]
    info = served.client.info(team.team_id)
    assert info.running and info.first_seq == began  # the same run: no resume was asked


def test_teams_resume_server_refuses_what_a_server_cannot_do(served: Served) -> None:
    team = served.client.create_team("turns")
    short = str(team.team_id)[:8]
    code, _, err = invoke("teams", "resume", short, "--server", served.url)
    assert code == 1 and "is already running" in err, err
    code, _, err = invoke("teams", "resume", short, "--server", served.url, "--model", "test")
    assert code == 1
    assert "error: --model and --base-url do not apply with --server" in err


def test_clients_that_leave_mid_backlog_are_let_go_without_a_warning_per_record(
    tmp_path: Path,
) -> None:
    env = child_env(f"sqlite:///{tmp_path / 'serve.db'}")
    with serving(["--cards", str(EXAMPLES)], env) as (child, client):
        team = client.create_team("research")
        for n in range(6):
            team.send(f"question {n}")
        # a backlog of a hundred and more records
        for backlog, _ in enumerate(team.follow(idle_timeout=60), start=1):
            if backlog >= 200:
                break
        port = int(client.base_url.rsplit(":", 1)[1])
        for _ in range(5):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as gone:
                gone.sendall(
                    f"GET /teams/{team.team_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
                )
                assert gone.recv(16_384)  # the first bytes, then the client is gone (a reset)
                gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        assert next(iter(team.follow(idle_timeout=30))).seq == 1  # the server still streams
        os.kill(child.proc.pid, signal.SIGINT)
        code, errors = child.finish(60)
    assert code == 130, errors
    logged = errors + "\n".join(child.lines)  # the server's log goes to its stdout
    assert "socket.send() raised exception" not in logged


def test_events_follow_server_says_once_that_the_team_was_deleted_and_exits_1(
    served: Served,
) -> None:
    team = served.client.create_team("turns")
    team.stop()
    last = served.storage.events.last_seq(team.team_id)
    argv = [str(AKGENTIC), "events", str(team.team_id), "--follow", "--server", served.url]
    child = Child(argv, child_env())
    try:
        for _ in range(last):  # every record printed: the stream is open and caught up
            child.wait_for("")
        served.client.delete_team(team.team_id)
        code, errors = child.finish(60)
    finally:
        child.stop()
    assert code == 1, errors
    assert errors.splitlines() == [
        f"error: team turns ({str(team.team_id)[:8]}) was deleted on the server"
    ]
    assert len(child.lines) == last


def test_a_chat_on_a_server_ends_saying_once_that_its_team_was_deleted(served: Served) -> None:
    child = Child([str(AKGENTIC), "run", str(TURNS), "--server", served.url], child_env())
    try:
        child.write("hello")
        child.wait_for("[scripted] you said hello")
        [team] = served.client.list_teams()
        served.client.delete_team(team.team_id)  # the session waits for a typed line
        code, errors = child.finish(60)
    finally:
        child.stop()
    assert code == 1, errors
    short = str(team.team_id)[:8]
    assert errors.splitlines() == [f"error: team turns ({short}) was deleted on the server"]
    assert not any("resume it with" in line for line in child.lines)  # nothing to resume
    assert served.client.info(team.team_id).status == "DELETED"


def test_run_server_exits_1_when_the_command_is_unknown(served: Served) -> None:
    code, out, err = invoke("run", str(RESEARCH), "--server", served.url, "-m", "/nope")
    assert code == 1, (out, err)
    [error] = [line for line in err.splitlines() if line.startswith("error:")]
    assert error.startswith("error: @Manager: Unknown command /nope. Commands: /")
    assert "answer:" not in out


def test_run_server_starts_the_servers_card_of_that_name_when_there_is_no_such_file(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no file named research here
    code, out, err = invoke("run", "research", "--server", served.url, "-m", "why actors?")
    assert code == 0, err
    assert "started on " + served.url in out
    assert "answer: Here is what @Worker found: [scripted] On why actors?" in out
    [team] = served.client.list_teams()
    assert team.card_name == "research" and team.status == "STOPPED"


def test_run_server_with_neither_a_file_nor_a_servers_card_lists_the_servers_cards(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke("run", "nope", "--server", served.url, "-m", "hi")
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"error: nope: no such card file here, and server {served.url} has no card of that "
        f"name (its cards: analyst, research, turns): give one of its card names, or the path "
        f"of a card file to post it (akgentic run path/to/card.yaml --server {served.url})"
    ]
    assert served.client.list_teams() == []


def test_run_server_checks_a_servers_card_before_it_starts_a_team(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke("run", "research", "--server", served.url, "-m", "@Nobody hi")
    assert code == 1
    assert err.startswith("error: @Nobody is not a member of this team (members: @Manager,")
    code, _, err = invoke(
        "run", "research", "--server", served.url, "--base-url", "http://127.0.0.1:9/v1"
    )
    assert code == 1 and len(err.splitlines()) == 1
    assert "--base-url changes a card file, not the server's card 'research'" in err
    assert served.client.list_teams() == []


def test_run_server_posts_a_local_file_even_when_a_servers_card_has_its_name(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file here wins over the server's card of the same name: it is posted."""
    card = yaml.safe_load(TURNS.read_text())
    card["name"] = "posted-turns"
    card["members"][0]["card"]["config"]["models"] = "scripted:default"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "turns").write_text(yaml.safe_dump(card))
    code, _, err = invoke("run", "turns", "--server", served.url, "-m", "hello")
    assert code == 0, err
    [team] = served.client.list_teams()
    assert team.card_name == "posted-turns"


def test_a_session_on_a_server_says_a_team_stopped_by_the_servers_shutdown_stopped_so(
    served: Served,
) -> None:
    """Only the server knows why a team stopped under a ``--server`` session; its health
    tells a stop asked of it (the server runs on) from its own shutdown (draining), and a
    server that no longer answers from both."""
    assert server_stop_reason(served.client) == STOPPED_ON_SERVER
    context = served.app.state.context
    context.draining = True  # as serve's first Ctrl-C or SIGTERM sets it, before the stops
    try:
        assert server_stop_reason(served.client) == SERVER_SHUTTING_DOWN
    finally:
        context.draining = False
    with socket.socket() as probe:  # a port nothing listens on any more
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    with AkgenticClient(f"http://127.0.0.1:{closed}") as gone:
        assert server_stop_reason(gone) == SERVER_GONE


def _cut_on_the_server(
    served: Served, child: Child, typed: str | None = None
) -> tuple[UUID, str, int, str]:
    """Once the turn of ``child``'s session is held in its tool call (the person typing
    ``typed`` meanwhile), the server stops the team, cutting the turn (as ``teams stop
    --server`` of a stuck team ends up doing); the team's id, the session's output, exit
    code and errors."""
    try:
        assert gate_tool.ENTERED.wait(60)
        if typed is not None:
            child.write(typed)  # in the pipe: the session takes no line meanwhile
        [team] = served.client.list_teams()
        stopper = threading.Thread(
            target=lambda: served.client.stop_team(team.team_id, 30, interrupt=True), daemon=True
        )
        stopper.start()
        child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")
        gate_tool.OPEN.set()  # the tool call returns: its step boundary finds the cancel
        out = child.output()
        code, errors = child.finish()
        stopper.join(60)
    finally:
        child.stop()
    return team.team_id, out, code, errors


def test_run_m_server_of_a_team_stopped_on_the_server_says_why_and_how_to_get_the_answer(
    served: Served,
) -> None:
    """``run -m --server`` whose team the server stops (cutting the turns in progress, as
    ``teams stop --server`` of a stuck team ends up doing): the error says why the team
    stopped and to resume it with --retry-interrupted; the cut turn is listed."""
    argv = [str(AKGENTIC), "run", str(TURNS), "--server", served.url, "-m", "wait here"]
    team_id, out, code, errors = _cut_on_the_server(served, Child(argv, child_env()))

    assert code == 1, errors
    short = str(team_id)[:8]
    assert errors.splitlines() == [
        "error: the team stopped before answering: it was stopped on the server (akgentic "
        "teams stop --server, or its page); a turn the answer needs was cut: to get the "
        f"answer, resume it with: akgentic teams resume {short} --server {served.url} "
        f"--import {gate_tool.__name__} --retry-interrupted"  # the card's module, carried on
    ]
    last = out.splitlines()[-6:]
    assert last[0] == f"team turns ({short}) stopped; 1 interrupted turn:"
    assert last[1] == "  @Human → @Boss: wait here"
    assert_resume_hints(last[2:], f"akgentic teams resume {short} --server {served.url} ")


def test_run_server_of_a_card_built_from_a_module_asks_for_its_import_before_starting(
    tmp_path: Path,
) -> None:
    """A session reads its team's messages, so it needs the modules the server's card is
    built from: without them it starts nothing and says which ``--import`` to add; with
    them it runs, and its resume line carries them on."""
    cards = tmp_path / "cards"
    cards.mkdir()
    for source in (HANG, HANG.with_name("hang.scenario.yaml")):
        (cards / source.name).write_text(source.read_text())
    env = child_env(f"sqlite:///{tmp_path / 'serve.db'}")
    serve = ["--cards", str(cards), "--import", hang_tool.__name__]
    with serving(serve, env) as (_, client):
        [info] = client.cards()
        assert info.imports == [hang_tool.__name__]
        session = [str(AKGENTIC), "run", "hanging", "--server", client.base_url, "-m", "hi"]

        refusal = [
            f"error: the server's card 'hanging' is built from classes of {hang_tool.__name__}, "
            f"which this session needs to read its team's messages: add --import "
            f"{hang_tool.__name__} (the module must be installed here too)"
        ]
        refused = Child(session, env)
        code, errors = refused.finish(60)
        assert code == 1 and refused.output() == ""
        assert errors.splitlines() == refusal
        assert client.list_teams() == []  # nothing was started

        ran = Child([*session, "--import", hang_tool.__name__], env)
        code, errors = ran.finish(60)
        out = ran.output()
        assert code == 0, errors
        assert "answer: [scripted] done: hi" in out
        [team] = client.list_teams()
        assert team.imports == [hang_tool.__name__]
        line = (
            f"resume it with: akgentic teams resume {str(team.team_id)[:8]} --server "
            f"{client.base_url} --import {hang_tool.__name__}"
        )
        assert line in out

        # a resume reads the team's log: the same refusal before anything is resumed
        short = str(team.team_id)[:8]
        resume = [str(AKGENTIC), "teams", "resume", short, "--server", client.base_url]
        resume += ["-m", "again"]
        refused = Child(resume, env)
        code, errors = refused.finish(60)
        assert code == 1 and errors.splitlines() == refusal
        assert client.get_team(team.team_id).info.status == "STOPPED"
        # given twice (by the card, by --import), carried on once
        resumed = Child([*resume, "--import", hang_tool.__name__], env)
        code, errors = resumed.finish(60)
        assert code == 0, errors
        out = resumed.output()
        assert "answer: [scripted] done: again" in out
        assert out.count(f"{line}\n") == 1 and f"{line} --import" not in out


def test_a_line_typed_while_a_team_on_a_server_works_is_said_unsent_when_the_server_stops_it(
    served: Served,
) -> None:
    """As without a server: the session ends (the server stopped the team) before it took
    the line typed meanwhile, and says so; the line the team got is not reported."""
    child = Child([str(AKGENTIC), "run", str(TURNS), "--server", served.url], child_env())
    child.write("wait here")
    _, out, code, errors = _cut_on_the_server(served, child, typed="typed meanwhile")

    assert code == 0, errors
    assert "stopped: it was stopped on the server" in out
    unsent = [line for line in out.splitlines() if line.startswith("the message was not sent")]
    assert unsent == ["the message was not sent: typed meanwhile"]


def test_teams_matching_a_name_on_a_server_are_listed_with_the_servers_statuses(
    served: Served, tmp_path: Path
) -> None:
    """A server's records carry no card: among teams a name matches, each is shown with
    the status the server says (a damaged one DAMAGED), not called damaged for want of
    a card."""
    running = served.client.create_team("research", name="twin")
    stopped = served.client.create_team("research", name="twin")
    served.client.stop_team(stopped.team_id)
    damaged = served.client.create_team("research", name="twin")
    served.client.stop_team(damaged.team_id)
    with closing(sqlite3.connect(tmp_path / "server.db")) as conn, conn:  # the served store
        conn.execute(
            "UPDATE akgentic_teams SET status = 'garbage' WHERE team_id = ?",
            (str(damaged.team_id),),
        )

    code, _, err = invoke("teams", "show", "twin", "--server", served.url)

    assert code == 1
    shown = {
        f"{str(running.team_id)[:8]} (twin, RUNNING)",
        f"{str(stopped.team_id)[:8]} (twin, STOPPED)",
        f"{str(damaged.team_id)[:8]} (twin, DAMAGED)",
    }
    [line] = err.splitlines()
    assert line.startswith("error: 3 teams are named 'twin': ")
    for team in shown:
        assert team in line
    assert line.endswith("; give more of the id")


def test_a_stop_of_a_team_its_server_is_stopping_says_it_is_stopping(
    served: Served, tmp_path: Path
) -> None:
    """Marked STOPPED in the store (``teams stop`` without ``--server``), the team is
    stopped by the server that runs it, which waits for its turn in progress: a stop
    through the server meanwhile says so — not that it is stopped already."""
    team = served.client.create_team("turns")
    team.send("wait here")
    assert gate_tool.ENTERED.wait(60)
    store = sqlite_url(tmp_path / "server.db")
    short = str(team.team_id)[:8]
    try:
        code, _, err = invoke("teams", "stop", short, "--storage", store)
        assert code == 0, err
        code, out, err = invoke("teams", "stop", short, "--server", served.url)
    finally:
        gate_tool.OPEN.set()  # the turn ends; the server's stop completes

    assert code == 0, err
    assert out == (
        f"team turns ({short}) is stopping on {served.url}: the server waits for the turns "
        f"in progress; nothing more to do\n"
    )
    eventually(lambda: not served.client.info(team.team_id).running)
    code, out, err = invoke("teams", "stop", short, "--server", served.url)
    assert code == 0, err
    assert out == f"team turns ({short}) is already stopped\n"


def test_a_second_signal_on_serve_says_no_turn_was_cut_when_no_team_runs_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second Ctrl-C said 'the turns in progress were cut' whatever ran: also on a
    server with no team running here (all stopped, or on a cluster). It reads the
    server's own teams now; what it says of a running team's turns, or of a stop saving
    its last records, is ``chat.ended_at_once``'s (tests/cli/test_store_down.py)."""
    import akgentic.server

    monkeypatch.setattr(interrupt, "at_once", interrupt.at_once)  # the command sets it
    said: list[str] = []

    def serving_no_team(bundle: Any, settings: Any, **options: Any) -> None:
        system = ActorSystem()
        manager = TeamManager(system, bundle)
        try:
            options["on_manager"](manager)
            said.append(interrupt._at_once())  # what a second Ctrl-C would print now
        finally:
            manager.shutdown()
            system.shutdown()

    monkeypatch.setattr(akgentic.server, "serve", serving_no_team)
    code, _, err = invoke("serve", "--port", "0", "--storage", sqlite_url(tmp_path / "s.db"))
    assert code == 0, err
    assert said == [
        "interrupted again: stopped at once (no team was running here); resume a team with: "
        f"akgentic teams resume TEAM --storage {sqlite_url(tmp_path / 's.db')}"
    ]


class _ResumeBeforeWaitForStop(BaseModel):
    """``ResumeTeam`` as a server older than ``wait_for_stop`` has it (extra fields
    forbidden, as every request body)."""

    model_config = ConfigDict(extra="forbid")
    retry_interrupted: bool = False
    dismiss_interrupted: bool = False


def test_teams_resume_on_a_server_older_than_wait_for_stop_resumes_without_it(
    served: Served,
) -> None:
    """``teams resume --server`` asks ``wait_for_stop: false``; a server from before that
    field refused the body (422, an extra field) and the resume failed. Refused so, it
    asks again without the field, as the older CLI did. Another 422 is said as before."""
    old = APIRouter()
    asked: list[_ResumeBeforeWaitForStop] = []

    @old.post("/teams/{team_id}/resume")
    def resume_as_before(team_id: UUID, ctx: Ctx, body: _ResumeBeforeWaitForStop) -> TeamInfo:
        asked.append(body)
        return resume_route(team_id, ctx, ResumeTeam(**body.model_dump()))

    served.app.router.routes.insert(0, old.routes[0])  # in front of today's route
    team = served.client.create_team("research")
    served.client.stop_team(team.team_id)
    code, out, err = invoke("teams", "resume", str(team.team_id), "--server", served.url)
    assert (code, err) == (0, ""), out + err
    assert asked == [_ResumeBeforeWaitForStop()]
    with pytest.raises(ServerError) as refused:  # a 422 that is not about the field
        served.client.resume_team(
            team.team_id, retry_interrupted=True, dismiss_interrupted=True, wait_for_stop=False
        )
    assert refused.value.status == 422 and "wait_for_stop" not in str(refused.value)
