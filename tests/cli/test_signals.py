"""SIGTERM, SIGHUP and a closed output in a real ``akgentic`` process, taken as Ctrl-C
(the first SIGTERM's graceful stop: ``test_ctrl_c``).

SIGTERM (``kill PID``, a service manager) and SIGHUP (the terminal closed) stop the team
as the first Ctrl-C does — the turn cut at its next step, the team stopped, the resume
hint — with exit code 128 + the signal's number. An output whose reader went (``| head
-1``) stops it the same way, silently, exit code 141. Each test waits on output (or on
the store), never on time.
"""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from .conftest import AKGENTIC, HANG, HANG_UNCUT, Invoke, child_env, signals_at_their_defaults
from .test_ctrl_c import HANG_MODULE, Spawn, assert_the_cut_turn_is_retried, hang_in_a_turn


def test_a_second_signal_after_sigterm_exits_at_once(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    # uncuttable: the turn still runs at the second signal (a bounded call is cut by the
    # first signal's interrupt, and the second then says the turns had ended)
    child = hang_in_a_turn(spawn, storage_url, "1", HANG_UNCUT)

    child.proc.send_signal(signal.SIGTERM)
    child.wait_for("interrupted by SIGTERM: cancelling the turns in progress")
    child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")
    child.proc.send_signal(signal.SIGHUP)
    code, errors = child.finish(timeout=30)

    assert code == 143  # the first signal's
    assert "interrupted again: stopped at once (the turns in progress were cut)" in errors


@contextmanager
def held_exchange(
    storage_url: str, release: Path, stdout: int, **env: str
) -> Iterator[subprocess.Popen[str]]:
    """``akgentic run hang.yaml -m "please hang"`` writing to ``stdout``, its turn held in
    its tool call until ``release`` (a FIFO) is opened; killed on the way out if still
    running."""
    proc = subprocess.Popen(
        [str(AKGENTIC), "run", str(HANG), "-m", "please hang"],
        env=child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release), **env),
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=signals_at_their_defaults,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


class Terminal:
    """A pseudo-terminal a child writes its stdout to; closing it hangs the terminal up
    (the child's writes then fail with EIO), as closing a terminal window does."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        self.text = ""
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        os.close(self.slave)  # the child holds it
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the child closed its side; EBADF: hung up here
                chunk = b""
            with self._changed:
                self.text += chunk.decode("utf-8", "replace")
                self._changed.notify_all()
            if not chunk:
                return

    def wait_for(self, needle: str, timeout: float = 60.0) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: needle in self.text, timeout):
                pytest.fail(f"no {needle!r} on the terminal within {timeout}s: {self.text!r}")

    def hang_up(self) -> None:
        os.close(self.master)


def test_sighup_stops_the_team_as_ctrl_c_does_though_the_terminal_is_gone(
    cli: Invoke, storage_url: str, tmp_path: Path
) -> None:
    """SIGHUP, then the terminal goes (its master side closed): the rest of the stop —
    the turn cut, the team stopped, the interrupted turns and the hint printed — writes to
    a terminal that answers EIO, and completes all the same."""
    release = tmp_path / "release"
    os.mkfifo(release)
    terminal = Terminal()
    with held_exchange(storage_url, release, terminal.slave, NO_COLOR="1") as proc:
        terminal.start()
        terminal.wait_for("⚙ @Boss → hang_step(label=please hang)")

        proc.send_signal(signal.SIGHUP)
        terminal.wait_for("interrupted by SIGHUP: cancelling the turns in progress")
        terminal.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")
        terminal.hang_up()
        with open(release, "w"):  # the tool call returns: its step boundary finds the cancel
            pass
        _, errors = proc.communicate(timeout=60)

    assert proc.returncode == 129, errors  # 128 + SIGHUP
    assert "Traceback" not in errors and "Exception ignored" not in errors, errors
    assert_the_cut_turn_is_retried(cli)


def test_a_closed_output_stops_the_team_quietly(
    cli: Invoke, storage_url: str, tmp_path: Path
) -> None:
    """``akgentic run CARD -m ... | head -3``: the reader closes early (here once the turn
    is in its tool call, held until then, so the session certainly writes after it): exit
    code 141, nothing on stderr — no traceback, no "Exception ignored" at exit — and the
    team stored STOPPED."""
    release = tmp_path / "release"
    os.mkfifo(release)
    with held_exchange(storage_url, release, subprocess.PIPE) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        for line in proc.stdout:
            if "⚙ @Boss → hang_step(label=please hang)" in line:
                break
        else:
            pytest.fail("the output ended before the tool call")
        proc.stdout.close()  # the reader is gone
        with open(release, "w"):  # the turn goes on, and the session writes
            pass
        _, errors = proc.communicate(timeout=60)

    assert first.startswith("team hanging (")
    assert proc.returncode == 141, errors  # 128 + SIGPIPE
    assert errors == ""
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert "status:   STOPPED" in shown.stdout.splitlines(), shown.stdout


def test_a_listing_into_a_closed_pipe_ends_quietly(cli: Invoke, storage_url: str) -> None:
    """``akgentic teams list | head -1`` with more lines than the reader takes."""
    for _ in range(3):
        assert cli("run", str(HANG), "-m", "hi").exit_code == 0
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the listing is written
    try:
        done = subprocess.run(
            [str(AKGENTIC), "teams", "list"],
            env=child_env(storage_url),
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=90,
        )
    finally:
        os.close(write)

    assert done.returncode == 141, done.stderr
    assert done.stderr == ""
