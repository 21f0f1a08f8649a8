"""``run -m ... --timeout``: what the timeout's ending says, waiting on output, never on time.

After the timeout the team is stopped gracefully: an answer that comes while it stops is
the answer; a turn the stop's grace cut is listed as interrupted, as after Ctrl-C.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from akgentic.cli import chat

from .conftest import AKGENTIC, HANG, Invoke, child_env
from .test_ctrl_c import Spawn


def test_an_answer_that_comes_while_the_team_stops_after_the_timeout_counts(
    storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    os.mkfifo(release)
    child = spawn(
        [str(AKGENTIC), "run", str(HANG), "-m", "slow", "--timeout", "1"],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release)),
    )
    child.wait_for("stopping the team: waiting for the turns in progress")  # timed out
    with open(release, "w"):  # the tool call returns: the turn answers during the stop
        pass
    output = child.output()
    code, errors = child.finish()

    assert code == 0, errors
    assert "@Boss → @Human (response): [scripted] done: slow" in output
    assert output.splitlines()[-1] == "answer: [scripted] done: slow"
    assert "no answer" not in errors


def test_a_turn_the_stop_after_the_timeout_cut_is_listed_as_after_ctrl_c(
    cli: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = tmp_path / "release"
    os.mkfifo(release)
    monkeypatch.setenv("AKGENTIC_CLI_TEST_HANG", str(release))
    monkeypatch.setattr(chat, "GRACE", 0.2)  # the turn waits on the FIFO: the grace runs out
    try:
        result = cli("run", str(HANG), "-m", "slow", "--timeout", "1")
    finally:  # let the hung tool call return (its reader holds the FIFO open)
        os.close(os.open(release, os.O_WRONLY | os.O_NONBLOCK))

    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[-3].endswith(") stopped; 1 interrupted turn(s):")
    assert lines[-2] == "  @Human → @Boss: slow"
    assert lines[-1].startswith("resume it with: akgentic teams resume ")
    assert lines[-1].endswith(
        "--retry-interrupted (deliver them again; a turn may repeat its side effects) or "
        "--dismiss-interrupted"
    )
    assert "error: no answer within 1s" in result.stderr
