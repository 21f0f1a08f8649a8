"""One process runs a team: ``teams list/show`` say which, a second ``resume`` is refused
naming it, ``teams stop`` from another terminal ends its ``run`` session, and a resume
that fails changes nothing and says what to fix."""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Callable
from uuid import uuid4

import pytest

from akgentic.core import ActorAddressProxy, SentMessage, UserMessage
from akgentic.storage import LeaseHolder, TeamStatus, open_storage, team_resource

from .conftest import AKGENTIC, HANG, RESEARCH, Child, Invoke, child_env, run_child
from .test_teams import run_once

Spawn = Callable[[list[str], dict[str, str]], Child]


def test_a_running_team_is_shown_refused_elsewhere_and_stopped_from_another_terminal(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    child = spawn([str(AKGENTIC), "run", str(RESEARCH)], child_env(storage_url))
    started = child.wait_for("started: @Manager (entry point), @Worker")
    match = re.match(r"team research \((\w{8})\) started", started)
    assert match, started
    short = match[1]
    holder = f"pid {child.proc.pid} on host {socket.gethostname()} since "

    listed = cli("teams", "list")
    [row] = [line for line in listed.stdout.splitlines() if line.startswith(short)]
    assert holder in row and "RUNNING" in row
    shown = cli("teams", "show", short)
    assert f"run by:   {holder}" in shown.stdout

    refused = cli("teams", "resume", short, "-m", "hello?")
    assert refused.exit_code == 1
    [line] = refused.stderr.splitlines()
    assert "is running in another process: " + holder in line and "stop it there first" in line
    assert line.endswith(f"; or from here: akgentic teams stop {short} --storage {storage_url}")

    stopped = cli("teams", "stop", short)
    assert stopped.exit_code == 0, stopped.output
    assert f"the process running it ({holder}" in stopped.stdout
    child.wait_for(f"team research ({short}) stopped: it was stopped from elsewhere")
    child.wait_for(
        f"team research ({short}) stopped; resume it with: akgentic teams resume {short}"
    )
    code, errors = child.finish()
    assert code == 0
    assert errors == ""
    assert "run by:   no process" in cli("teams", "show", short).stdout


def test_a_failed_resume_changes_nothing_and_says_what_to_fix(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    team_id = run_once(cli)
    short = str(team_id)[:8]
    before = cli("teams", "show", short).stdout
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    failed = cli("teams", "resume", short, "--model", "openai:gpt-5.2", "-m", "and then?")

    assert failed.exit_code == 1
    [line] = failed.stderr.splitlines()
    assert line == (
        f"error: team research ({short}) was not resumed, nothing changed: @Manager's model "
        "'openai:gpt-5.2' needs an API key in OPENAI_API_KEY, which is not set here: export "
        "OPENAI_API_KEY=<your key> and resume again, or resume it on another model: akgentic "
        f"teams resume {short} --storage {storage_url} --model SPEC (scripted:default runs "
        "offline)"
    )
    assert cli("teams", "show", short).stdout == before  # status, members, log: the same
    again = cli("teams", "resume", short, "--model", "scripted:default", "-m", "and then?")
    assert again.exit_code == 0, again.output
    assert "\nanswer: [scripted] This is akgentic's offline scripted model" in again.stdout


@pytest.mark.parametrize("how", [[], ["--purge", "--yes"]], ids=["delete", "purge"])
def test_a_delete_of_a_team_another_process_runs_is_refused_and_loses_nothing(
    cli: Invoke, storage_url: str, spawn: Spawn, how: list[str]
) -> None:
    """Deleting a team under a live ``run`` — marked DELETED, or purged — would leave that
    process writing into a deleted team (or rows that are gone), and its session would
    offer a resume that cannot be: refused, naming the process and how to stop it; once
    stopped, the delete goes through."""
    child = spawn([str(AKGENTIC), "run", str(RESEARCH)], child_env(storage_url))
    started = child.wait_for("started: @Manager (entry point), @Worker")
    match = re.match(r"team research \((\w{8})\) started", started)
    assert match, started
    short = match[1]

    refused = cli("teams", "delete", short, *how)

    assert refused.exit_code == 1
    [line] = refused.stderr.splitlines()
    assert f"is running in another process: pid {child.proc.pid} on host " in line
    assert line.endswith(f"; or from here: akgentic teams stop {short} --storage {storage_url}")
    assert "RUNNING" in cli("teams", "show", short).stdout
    child.write("still there?")
    child.wait_for("@Manager → @Human (response): ")

    assert cli("teams", "stop", short).exit_code == 0
    child.wait_for(f"team research ({short}) stopped; resume it with")
    assert child.finish()[0] == 0
    done = cli("teams", "delete", short, *how)
    assert done.exit_code == 0, done.output
    said = "purged" if how else "deleted; its history is kept"
    assert f"team research ({short}) {said}" in done.stdout


def test_a_session_whose_team_is_taken_over_says_so_in_one_line_and_shows_nothing_of_it(
    storage_url: str, spawn: Spawn
) -> None:
    """Another process took the lease (as after a SIGSTOP longer than its time to live)
    and wrote to the log: the session's next write finds the lease lost. It shows none of
    the other process's records, says so in one line, and leaves the team alone (it is
    the other process's now: not marked STOPPED)."""
    child = spawn([str(AKGENTIC), "run", str(HANG)], child_env(storage_url))
    started = child.wait_for("started: @Boss (entry point)")
    child.wait_for("Write to @Boss")
    storage = open_storage(storage_url)
    try:
        [team] = storage.teams.list()
        resource = team_resource(team.team_id)
        lease = storage.leases.inspect(resource)
        assert lease is not None
        thief = LeaseHolder(owner="thief", host="elsewhere", pid=4242)
        storage.leases.acquire(resource, thief, 60, take_over=lease.holder.owner)
        human, boss = (
            ActorAddressProxy(agent_id=uuid4(), name=name) for name in ("@Human", "@Boss")
        )
        said = UserMessage(content="from B")
        storage.events.append(team.team_id, SentMessage(sender=human, recipient=boss, message=said))

        child.write("nod from A")
        code, errors = child.finish()
        output = child.output()

        title = started.split(" started")[0]
        assert code == 1, errors
        assert errors.splitlines() == [
            f"error: {title} was taken over by another process (pid 4242 on host "
            f"elsewhere); this session stopped"
        ]
        assert "from B" not in output
        record = storage.teams.get(team.team_id)
        assert record is not None and record.status == TeamStatus.RUNNING
    finally:
        storage.close()


STEALING_SEND = """
import sys
from akgentic.cli import chat
from akgentic.storage import LeaseHolder, open_storage, team_resource

sent, url = chat.send_line, sys.argv[1]

def send_line(runtime, line):
    # another process takes the team over as the message is sent
    storage = open_storage(url)
    resource = team_resource(runtime.team_id)
    lease = storage.leases.inspect(resource)
    thief = LeaseHolder(owner="thief", host="elsewhere", pid=4242)
    storage.leases.acquire(resource, thief, 60, take_over=lease.holder.owner)
    storage.close()
    return sent(runtime, line)

chat.send_line = send_line
sys.argv = ["akgentic", "run", *sys.argv[2:]]
from akgentic.cli.entry import main
main()
"""


def test_a_one_message_run_whose_team_is_taken_over_during_the_send_says_so_in_one_line(
    storage_url: str,
) -> None:
    """``run -m``: the lease is taken over as the message is sent, so the send itself
    finds it lost. The session says what a loss found later says, in the same one line
    and nothing else on stderr, and leaves the team to the other process."""
    argv = [sys.executable, "-c", STEALING_SEND, storage_url, str(HANG), "-m", "nod from A"]
    done = run_child(argv, env=child_env(storage_url))

    assert done.returncode == 1, done.stderr
    storage = open_storage(storage_url)
    try:
        [team] = storage.teams.list()
        title = f"team hanging ({str(team.team_id)[:8]})"
        assert done.stderr.splitlines() == [
            f"error: {title} was taken over by another process (pid 4242 on host "
            f"elsewhere); this session stopped"
        ]
        assert f"{title} started: @Boss (entry point)" in done.stdout
        assert team.status == TeamStatus.RUNNING  # the other process's now: not stopped
    finally:
        storage.close()
