"""Processes a test needs to point at."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from uuid import UUID

ROOT = Path(__file__).resolve().parents[1]


def a_dead_pid() -> int:
    """The pid of a process of this host that has ended (and was reaped)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def killed_when_ready(module: str, *args: str, env: dict[str, str] | None = None) -> UUID:
    """Run ``python -m module args...`` from the repository's root until it prints
    ``READY <team id>``, then kill it with SIGKILL (a crash at that very point); return
    the team id. A child that dies first fails the test with its stderr."""
    child = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # blocks until READY (or the child dies)
        assert line.startswith("READY "), (line, child.stderr.read() if child.stderr else "")
        team_id = UUID(line.split()[1])
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    return team_id
