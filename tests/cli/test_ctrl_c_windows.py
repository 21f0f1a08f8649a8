"""Ctrl-C at each moment of a real ``akgentic`` process that no session handles: while the
command line is parsed, once the command is over. Each says in one line what happened,
exits with the signal's code, never a traceback, never in silence.

Each test holds the process at its moment (``tests/cli/held.py``: it says ``held:
POINT`` there) and sends the signal once it reads that line: nothing is timed.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from .conftest import HANG, Child, child_env
from .test_ctrl_c import Spawn


def held(spawn: Spawn, points: str, argv: list[str], storage_url: str, **env: str) -> Child:
    """``akgentic ARGV...`` held at ``points`` (see tests/cli/held.py)."""
    return spawn(
        [sys.executable, "-m", "tests.cli.held", points, *argv], child_env(storage_url, **env)
    )


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
