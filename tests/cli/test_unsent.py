"""A line the person types while the team works is never lost without a word: when the
session ends before taking it — Ctrl-C, SIGTERM, the team stopped from another terminal —
it says ``the message was not sent: <the line>``, as for the message of a Ctrl-C during
the start-up. The line the team got (its turn cut) is not reported. A real ``akgentic
run`` process, its input a pipe; each test waits on its output, never on time."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.cli import chat
from akgentic.cli.handle import TeamHandle
from akgentic.storage import TeamStatus, open_storage
from tests.core.conftest import eventually

from .conftest import AKGENTIC, HANG, RESEARCH, Child, Invoke, child_env
from .test_ctrl_c import Spawn

NOT_SENT = "the message was not sent: "


def _typed_while_working(spawn: Spawn, storage_url: str, hang: str, **env: str) -> Child:
    """A session whose turn hangs in its tool call, and lines typed meanwhile."""
    child = spawn(
        [str(AKGENTIC), "run", str(HANG)],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=hang, **env),
    )
    child.write("please hang")
    child.wait_for("⚙ @Boss → hang_step(label=please hang)")
    child.write("typed while it works")  # in the pipe: the session takes no line meanwhile
    child.write("")
    child.write("/quit")  # no message: not reported
    child.write("@Boss and this one")
    return child


@pytest.mark.parametrize(
    ("sent", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_lines_typed_while_the_team_works_are_said_unsent_after_a_signal(
    storage_url: str, spawn: Spawn, tmp_path: Path, sent: signal.Signals, exit_code: int
) -> None:
    release = tmp_path / "release"
    os.mkfifo(release)
    child = _typed_while_working(spawn, storage_url, str(release))

    child.proc.send_signal(sent)
    child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")
    with open(release, "w"):  # the tool call returns: its step boundary finds the cancel
        pass
    out = child.output()
    code, errors = child.finish()

    assert code == exit_code, errors
    unsent = [line for line in out.splitlines() if line.startswith(NOT_SENT)]
    assert unsent == [f"{NOT_SENT}typed while it works", f"{NOT_SENT}@Boss and this one"]
    assert out.splitlines().index(unsent[-1]) < out.splitlines().index(
        next(line for line in out.splitlines() if ") stopped; 1 interrupted turn:" in line)
    )


def test_lines_typed_while_the_team_works_are_said_unsent_when_it_is_stopped_elsewhere(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    child = _typed_while_working(spawn, storage_url, "1", AKGENTIC_CLI_TEST_STOP_GRACE="0.2")
    [team] = (store := open_storage(storage_url)).teams.list()
    store.close()

    stopped = cli("teams", "stop", str(team.team_id)[:8])
    out = child.output()
    code, errors = child.finish()

    assert stopped.exit_code == 0, stopped.output
    assert code == 0, errors
    assert "stopped: it was stopped from elsewhere (akgentic teams stop)" in out
    unsent = [line for line in out.splitlines() if line.startswith(NOT_SENT)]
    assert unsent == [f"{NOT_SENT}typed while it works", f"{NOT_SENT}@Boss and this one"]


def test_a_line_the_team_stopped_before_it_took_is_said_unsent(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's line was read just as the team was stopped from another terminal:
    the send finds no member to take it, and the session says it was not sent."""
    send = chat.send_line

    def stopped_first(runtime: TeamHandle, line: str) -> tuple[UUID, str]:
        store = open_storage(storage_url)
        store.teams.set_status(runtime.team_id, TeamStatus.STOPPED)  # as teams stop does
        store.close()
        eventually(lambda: not runtime.is_running())
        return send(runtime, line)

    monkeypatch.setattr(chat, "send_line", stopped_first)
    run = cli("run", str(RESEARCH), input="too late\n")

    assert run.exit_code == 0, run.output
    assert "stopped: it was stopped from elsewhere (akgentic teams stop)" in run.stdout
    assert f"{NOT_SENT}too late" in run.stdout.splitlines()
