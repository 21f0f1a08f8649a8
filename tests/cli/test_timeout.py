"""``run -m ... --timeout``: what the timeout's ending says, waiting on output, never on time.

After the timeout the turns in progress are cut as by a Ctrl-C (a model request in flight
at once, a tool call let finish) and listed as interrupted; the team is then stopped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from akgentic.cli import chat

from .conftest import AKGENTIC, HANG, Invoke, assert_resume_hints, child_env
from .test_ctrl_c import Spawn


@contextmanager
def released(fifo: Path) -> Iterator[None]:
    """Let a ``hang_step`` blocked on ``fifo`` return, whenever it opens it — or never
    start, on a machine so busy that the timeout cut the turn before its tool call: a
    writer waits for the reader on a thread, and is let go at the end if none came."""
    writer = threading.Thread(target=lambda: open(fifo, "w").close(), daemon=True)
    writer.start()
    try:
        yield
    finally:
        if writer.is_alive():  # no reader came: be the reader, so the writer returns
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(10)


def test_the_timeout_cuts_a_turn_at_its_next_step_and_lists_it(
    storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """When ``--timeout`` runs out the turns in progress are cut as by a Ctrl-C: a tool call
    is let finish (its side effects and its result stay together), the turn then stops at
    its next step and is kept for ``--retry-interrupted``; the command says so and exits 1."""
    release = tmp_path / "release"
    os.mkfifo(release)
    child = spawn(
        [str(AKGENTIC), "run", str(HANG), "-m", "slow", "--timeout", "1"],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release)),
    )
    child.wait_for("no answer within 1s: cancelling the turns in progress at their next step")
    with released(release):  # the tool call returns (if it started): the turn stops
        output = child.output()
        code, errors = child.finish()

    assert code == 1, errors
    assert "(response): [scripted] done: slow" not in output
    lines = output.splitlines()
    assert lines[-6].endswith(") stopped; 1 interrupted turn:")
    assert lines[-5] == "  @Human → @Boss: slow"
    assert_resume_hints(lines[-4:], "akgentic teams resume ")
    assert "error: no answer within 1s" in errors
    assert "ran out" not in output + errors  # cut at its next step, not by the grace


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
    assert lines[-6].endswith(") stopped; 1 interrupted turn:")
    assert lines[-5] == "  @Human → @Boss: slow"
    assert_resume_hints(lines[-4:], "akgentic teams resume ")
    assert "error: no answer within 1s" in result.stderr
