"""Running a command that may not write some paths, even as root.

The tests may run as root, whom file modes do not stop (``chmod 444`` changes nothing
for root), so a read-only store is made real with a read-only bind mount: bubblewrap
binds the whole filesystem as it is, and the given paths read-only over themselves. Where
bubblewrap is missing or cannot make mounts, the tests that need it skip, saying what is
missing (CI installs it), as the sandbox tests do.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

__all__ = ["read_only_run"]


@functools.cache
def _unavailable() -> str | None:
    """Why no read-only mount can be made here; None when one can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (no 'bwrap' on PATH): apt-get install bubblewrap"
    try:
        done = subprocess.run(
            [bwrap, "--bind", "/", "/", "--ro-bind", "/", "/", "--", "/bin/true"],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}"
        return f"bubblewrap cannot make mounts here ({why})"
    return None


def read_only_run(
    read_only: Sequence[Path], argv: Sequence[str], *, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` to its end (bounded) where each of ``read_only`` (a file or a folder)
    is mounted read-only and everything else is as it is; its text output. Skips the test
    when bubblewrap cannot do that here."""
    reason = _unavailable()
    if reason is not None:
        pytest.skip(f"no read-only mount: {reason}")
    mounts = [arg for path in read_only for arg in ("--ro-bind", str(path), str(path))]
    return subprocess.run(
        ["bwrap", "--bind", "/", "/", *mounts, "--", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
