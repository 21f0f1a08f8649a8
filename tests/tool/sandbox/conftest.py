"""The bubblewrap backend for the tests that run commands for real (here and in workspace/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.tool.sandbox import BubblewrapBackend

_BWRAP = BubblewrapBackend()


@pytest.fixture
def bwrap() -> BubblewrapBackend:
    """The bubblewrap backend, or a skip naming what is missing (CI installs bubblewrap)."""
    reason = _BWRAP.unavailable_reason()
    if reason is not None:
        pytest.skip(f"bubblewrap sandbox unavailable: {reason}")
    return _BWRAP


def running(marker: str) -> bool:
    """Whether a process whose command line holds ``marker`` is alive (not a zombie)."""
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # not a process, or it ended meanwhile
        if marker.encode() in cmdline.replace(b"\0", b" ") and state != "Z":
            return True
    return False
