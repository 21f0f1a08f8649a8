"""Processes a test needs to point at."""

from __future__ import annotations

import subprocess
import sys


def a_dead_pid() -> int:
    """The pid of a process of this host that has ended (and was reaped)."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)
