"""Every test runs away from the real user folder.

The CLI's default store and the workspace trees live in the user's akgentic data folder
(``~/.local/share/akgentic`` on Linux). No test may write there: at import, this file
points ``XDG_DATA_HOME`` at a throwaway folder for the whole session (subprocesses
inherit it) and drops the ``AKGENTIC_*`` variables that would name the developer's own
store or trees; each test then gets a data folder of its own.

It also makes the loggers' registry safe to read while a thread adds to it
(:class:`_LoggerRegistry`), and gives ``storage_url``: a test taking it runs on SQLite,
and on Postgres too when ``AKGENTIC_TEST_POSTGRES_URL`` names a database (a schema of
its own each time).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.skip_summary"]  # the run ends with why tests were skipped


class _LoggerRegistry(dict[str, object]):
    """``logging``'s registry of loggers, whose ``values()`` is a snapshot.

    pytest's log capture walks ``loggerDict.values()`` as each test starts, while a
    thread an earlier test left running (an actor finishing its stop, a server's worker)
    may import a module and so create its logger: the walk then fails the test being set
    up with "dictionary changed size during iteration". The snapshot is one C-level copy,
    which no other thread interleaves."""

    def values(self) -> list[object]:  # type: ignore[override]
        return list(super().values())


logging.Logger.manager.loggerDict = _LoggerRegistry(logging.Logger.manager.loggerDict)

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


POSTGRES = os.environ.get("AKGENTIC_TEST_POSTGRES_URL")


def _postgres_url() -> str:
    assert POSTGRES is not None
    sep = "&" if "?" in POSTGRES else "?"
    return f"{POSTGRES}{sep}schema=test_{uuid.uuid4().hex[:12]}"


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(
            "postgres",
            marks=pytest.mark.skipif(
                POSTGRES is None,
                reason="set AKGENTIC_TEST_POSTGRES_URL to run the tests that take storage_url "
                "on Postgres too",
            ),
        ),
    ]
)
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty store: SQLite, then Postgres when configured."""
    from akgentic.storage import sqlite_url  # here: this file imports no akgentic module

    if request.param == "sqlite":
        return sqlite_url(tmp_path / "store.db")
    return _postgres_url()
