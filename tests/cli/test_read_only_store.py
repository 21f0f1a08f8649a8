"""The commands that only read work on a store this process may not write (a backup, a
read-only mount); one that writes is refused in one line saying what to do.

The store is made read-only by a read-only mount (``tests.read_only``): file modes do not
stop root, and these tests may run as root.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from akgentic.storage import TeamStatus, sqlite_path, sqlite_url
from akgentic.storage.sqlite import readonly_hint
from tests.read_only import read_only_run

from .conftest import AKGENTIC, Invoke, child_env
from .test_events import rows, run_once
from .test_teams import status_of


@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_read_only_store_is_listed_shown_and_printed_and_a_write_refused(
    cli: Invoke, storage_url: str, tmp_path: Path, what: str
) -> None:
    """``folder``: the store's folder is a read-only mount, where SQLite can make no
    ``-shm`` file to read the WAL-mode store by. ``file``: a backup made by ``VACUUM
    INTO`` (rollback mode, which opening it switched to WAL: a write) is a read-only file
    in a folder that is not."""
    team_id, last = run_once(cli, storage_url)
    store = sqlite_path(storage_url)
    if what == "file":
        backup = tmp_path / "backup" / "teams.db"
        backup.parent.mkdir()
        with closing(sqlite3.connect(store)) as conn:
            conn.execute("VACUUM INTO ?", (str(backup),))
        store, mounted = backup, backup
    else:
        mounted = store.parent
    url = sqlite_url(store)
    env = child_env(url)

    def run(*args: str) -> tuple[int, str, str]:
        done = read_only_run([mounted], [str(AKGENTIC), *args], env=env)
        return done.returncode, done.stdout, done.stderr

    code, listed, errors = run("teams", "list")
    assert code == 0, errors
    assert listed.splitlines()[1].split()[:3] == [str(team_id), "research", "STOPPED"]
    code, shown, errors = run("teams", "show", str(team_id)[:8])
    assert code == 0, errors
    assert str(team_id) in shown
    code, printed, errors = run("events", str(team_id)[:8])
    assert code == 0, errors
    assert [seq for seq, _, _ in rows(printed)] == list(range(1, last + 1))

    code, _, errors = run("teams", "delete", str(team_id)[:8])
    assert code != 0
    [line] = errors.splitlines()
    assert line.startswith(f"error: cannot open storage {url}: {store}: "), line
    assert line.endswith(readonly_hint(store, False, what == "file")), line
    assert status_of(url, team_id) == TeamStatus.STOPPED  # nothing written
