"""Processes a test needs to point at."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
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


def wait_until(check: Callable[[], Any], timeout: float, what: str) -> Any:
    """``check()``'s first true value, looked at every 50 ms; AssertionError naming
    ``what`` after ``timeout`` seconds."""
    pause, deadline = threading.Event(), time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g}s: {what}")
        pause.wait(0.05)


def killed_when_ready(module: str, *args: str, env: dict[str, str] | None = None) -> UUID:
    """Run ``python -m module args...`` from the repository's root (this checkout's code:
    the root and ``src`` first on its path) until it prints
    ``READY <team id>``, then kill it with SIGKILL (a crash at that very point); return
    the team id. A child that dies first fails the test with its stderr."""
    return UUID(killed_at_ready(module, *args, env=env))


def killed_at_ready(module: str, *args: str, env: dict[str, str] | None = None) -> str:
    """:func:`killed_when_ready` for a child that says anything after ``READY ``: return
    what it said (the rest of that line)."""
    child = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}", **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # blocks until READY (or the child dies)
        assert line.startswith("READY "), (line, child.stderr.read() if child.stderr else "")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    return line.removeprefix("READY ").strip()
