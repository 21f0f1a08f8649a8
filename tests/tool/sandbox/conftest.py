"""The bubblewrap backend for the tests that run commands for real (here and in workspace/)."""

from __future__ import annotations

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
