"""Every test runs away from the real user folder.

The CLI's default store and the workspace trees live in the user's akgentic data folder
(``~/.local/share/akgentic`` on Linux). No test may write there: at import, this file
points ``XDG_DATA_HOME`` at a throwaway folder for the whole session (subprocesses
inherit it) and drops the ``AKGENTIC_*`` variables that would name the developer's own
store or trees; each test then gets a data folder of its own.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.skip_summary"]  # the run ends with why tests were skipped

SESSION_DATA = Path(tempfile.mkdtemp(prefix="akgentic-test-data-"))
os.environ["XDG_DATA_HOME"] = str(SESSION_DATA)
for _name in ("AKGENTIC_STORAGE", "AKGENTIC_WORKSPACES_ROOT"):
    os.environ.pop(_name, None)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(SESSION_DATA, ignore_errors=True)


@pytest.fixture(autouse=True)
def data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data folder of this test's own (``XDG_DATA_HOME``), for the default store."""
    folder = tmp_path_factory.mktemp("xdg-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(folder))
        yield folder
