"""Ctrl-C at each moment of a real ``akgentic`` process that no session handles: while the
command line is parsed, before the team starts, as it starts, while its interrupt stops
it, once the command is over. Each says in one line what happened and what to do, exits
with the signal's code, never a traceback, never in silence, and loses no message
without a word.

Each test holds the process at its moment (``tests/cli/held.py``: it says ``held:
POINT`` there) and sends the signal once it reads that line: nothing is timed.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from uuid import UUID

import pytest
from typer.testing import CliRunner

from akgentic.cli import app, interrupt, usage
from akgentic.storage import open_storage

from .conftest import HANG, Child, Invoke, child_env
from .test_ctrl_c import HANG_MODULE, Spawn

NOT_SENT = "the message was not sent: "


def held(spawn: Spawn, points: str, argv: list[str], storage_url: str, **env: str) -> Child:
    """``akgentic ARGV...`` held at ``points`` (see tests/cli/held.py)."""
    return spawn(
        [sys.executable, "-m", "tests.cli.held", points, *argv], child_env(storage_url, **env)
    )


def stored_teams(storage_url: str) -> list[UUID]:
    store = open_storage(storage_url)
    try:
        return [team.team_id for team in store.teams.list()]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("sent", "said", "exit_code"),
    [(signal.SIGINT, "interrupted", 130), (signal.SIGTERM, "interrupted by SIGTERM", 143)],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_while_the_command_line_is_parsed_is_said_and_ends_it(
    storage_url: str,
    spawn: Spawn,
    tmp_path: Path,
    sent: signal.Signals,
    said: str,
    exit_code: int,
) -> None:
    """The command's module is imported, its command line not yet parsed: the parser's
    own handling ended the command there in silence, with 130 whatever the signal."""
    storage_url = f"sqlite:///{tmp_path / 'never.db'}"
    child = held(spawn, "parsing", ["run", str(HANG), "-m", "please hang"], storage_url)
    child.wait_for("held: parsing")

    child.proc.send_signal(sent)
    code, errors = child.finish()

    assert code == exit_code
    assert errors == f"{said} before the command started: nothing was done\n"
    assert not (tmp_path / "never.db").exists()


@pytest.mark.parametrize("interactive", [False, True], ids=["message", "interactive"])
def test_ctrl_c_before_the_team_starts_stores_nothing_and_says_what_was_not_sent(
    storage_url: str, spawn: Spawn, interactive: bool
) -> None:
    """Taken while the store is opened (``interrupt.deferred``: raised at the session's
    next safe point): no team is made only to be stopped again; the message — or the line
    typed meanwhile — is said unsent."""
    argv = ["run", str(HANG), *([] if interactive else ["-m", "please hang"])]
    child = held(spawn, "storage", argv, storage_url)
    child.wait_for("held: storage")
    if interactive:
        child.write("typed while it started")

    child.proc.send_signal(signal.SIGINT)
    out = child.output()
    code, errors = child.finish()

    assert code == 130
    assert errors == "interrupted before the team started: nothing was stored\n"
    typed = "typed while it started" if interactive else "please hang"
    assert out.splitlines() == ["held: storage", f"{NOT_SENT}{typed}"]
    assert stored_teams(storage_url) == []


def test_a_second_ctrl_c_as_the_team_starts_says_how_to_resume_it_and_what_was_not_sent(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """Both Ctrl-Cs come as the team is being created: the process ends at once, maybe
    with the team stored, as after a crash. The line names the team and how to resume it,
    and the message it never sent."""
    child = held(spawn, "creating*2", ["run", str(HANG), "-m", "please hang"], storage_url)
    child.wait_for("held: creating")

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("taken: 1")
    child.proc.send_signal(signal.SIGINT)
    code, errors = child.finish()

    assert code == 130
    first, message = errors.strip("\n").splitlines()
    assert first.startswith("interrupted again: stopped at once as team hanging (")
    assert first.endswith(
        ") was starting (it may be stored as a team that crashed); resume it with: akgentic "
        f"teams resume {first.split('(')[1][:8]} --storage {storage_url} --import {HANG_MODULE}"
    )
    assert message == f"{NOT_SENT}please hang"
    assert "Traceback" not in errors


def test_a_second_ctrl_c_while_the_first_stops_the_team_says_the_message_was_not_sent(
    storage_url: str, spawn: Spawn
) -> None:
    """The first Ctrl-C comes as the team is being created (taken at the session's first
    safe point: the message is never sent), the second while the team's interrupt runs:
    the line that says what it cut says the message was not sent too."""
    child = held(spawn, "creating,stopping", ["run", str(HANG), "-m", "please hang"], storage_url)
    child.wait_for("held: creating")
    child.proc.send_signal(signal.SIGINT)
    child.wait_for("held: stopping")

    child.proc.send_signal(signal.SIGINT)
    code, errors = child.finish()

    assert code == 130
    lines = errors.strip("\n").splitlines()
    assert lines[-2].startswith("interrupted again: stopped at once (")
    assert "; resume it with: akgentic teams resume " in lines[-2]
    assert lines[-1] == f"{NOT_SENT}please hang"
    assert "Traceback" not in errors


def test_ctrl_c_before_a_resume_restores_the_team_changes_nothing(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """Taken as the resume is about to restore the team: nothing is resumed only to be
    stopped again — the log is as it was, the team STOPPED — and the message is said
    unsent."""
    assert cli("run", str(HANG), "-m", "hi").exit_code == 0
    [team_id] = stored_teams(storage_url)
    store = open_storage(storage_url)
    before = store.events.last_seq(team_id)
    store.close()
    short = str(team_id)[:8]
    argv = ["teams", "resume", short, "-m", "go on", "--import", HANG_MODULE]
    child = held(spawn, "resuming", argv, storage_url)
    child.wait_for("held: resuming")

    child.proc.send_signal(signal.SIGINT)
    out = child.output()
    code, errors = child.finish()

    assert code == 130
    assert errors == "interrupted before the team was resumed: nothing was changed\n"
    assert out.splitlines() == ["held: resuming", f"{NOT_SENT}go on"]
    shown = cli("teams", "show", short, "--import", HANG_MODULE)
    assert "status:   STOPPED" in shown.stdout.splitlines()
    store = open_storage(storage_url)
    try:
        assert store.events.last_seq(team_id) == before
    finally:
        store.close()


@pytest.mark.parametrize("point", ["leaving", "exiting"])
def test_ctrl_c_once_the_command_is_over_is_said_and_ends_the_process_at_once(
    storage_url: str, spawn: Spawn, point: str
) -> None:
    """The command has printed all it had to (``leaving``: the process waits for the
    threads still running; ``exiting``: the interpreter's exit, its ``atexit`` callbacks):
    a Ctrl-C there raised into that code — a traceback — or was lost in Python's exit."""
    child = held(spawn, point, ["teams", "list"], storage_url)
    child.wait_for(f"held: {point}")

    child.proc.send_signal(signal.SIGINT)
    code, errors = child.finish()

    assert code == 130
    assert errors == "interrupted while exiting: the command had already ended\n"


def test_a_ctrl_c_a_command_lets_out_of_its_reporting_is_said_not_swallowed(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C raised in a command's body outside its ``reporting`` blocks (between two of
    them): typer's own handling ended the command with 130 in silence."""

    def escaping() -> None:
        """A command that lets Ctrl-C out."""
        raise KeyboardInterrupt

    monkeypatch.setattr(interrupt, "_state", {"count": 1, "signal": int(signal.SIGINT)})
    monkeypatch.setattr(usage, "usage", escaping)  # the root's lazy table names it
    ran = CliRunner().invoke(app, ["usage"])

    assert ran.exit_code == 130
    assert capfd.readouterr().err == "interrupted\n"
