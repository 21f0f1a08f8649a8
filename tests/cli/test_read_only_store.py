"""The commands that only read work on a store this process may not write (a backup, a
read-only mount); one that writes is refused in one line saying what to do.

The store is made read-only by a read-only mount (``tests.read_only``): file modes do not
stop root, and these tests may run as root.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from akgentic.core import serialize
from akgentic.storage import TeamStatus, open_storage, sqlite_path, sqlite_url
from akgentic.storage.sqlite import readonly_hint
from akgentic.team import TeamCard
from tests.read_only import read_only_run

from .conftest import AKGENTIC, RESEARCH, Child, Invoke, child_env
from .test_events import rows, run_once
from .test_teams import HANG_MODULE, kill_in_a_turn, status_of

Spawn = Callable[[list[str], dict[str, str]], Child]


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


def test_the_read_commands_of_a_read_only_store_suggest_no_command_that_writes_it(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """``teams show`` of a team with an interrupted turn, and of one whose card is
    damaged, would suggest ``teams resume`` or ``teams delete``, which this store refuses:
    they say instead that doing so needs a writable copy of the store."""
    kill_in_a_turn(spawn, storage_url)  # a turn cut: a resume would offer it again
    assert cli("teams", "stop", "hanging").exit_code == 0
    storage = open_storage(storage_url)
    try:
        bad = storage.teams.create("bad", card=serialize(TeamCard.from_yaml(RESEARCH))).team_id
        storage.teams.set_status(bad, TeamStatus.STOPPED)
    finally:
        storage.close()
    store = sqlite_path(storage_url)
    with closing(sqlite3.connect(store)) as conn, conn:
        conn.execute("UPDATE akgentic_teams SET card = '{}' WHERE name = 'bad'")
    env = child_env(storage_url)
    writable_copy = f"needs a writable copy of the store {store} (it is read-only here)"

    for team, imports in (("hanging", ["--import", HANG_MODULE]), (str(bad), [])):
        done = read_only_run(
            [store.parent], [str(AKGENTIC), "teams", "show", team, *imports], env=env
        )
        assert done.returncode == 0, done.stderr
        assert writable_copy in done.stdout, done.stdout
        for write in ("teams resume", "teams delete", "teams stop"):
            assert write not in done.stdout, done.stdout


def test_an_empty_read_only_store_is_not_said_to_take_a_new_team(
    storage_url: str,
) -> None:
    open_storage(storage_url).close()  # the store made, with no team
    store = sqlite_path(storage_url)

    done = read_only_run(
        [store.parent], [str(AKGENTIC), "teams", "list"], env=child_env(storage_url)
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"no teams in {storage_url}; starting one needs a writable copy of the store {store} "
        f"(it is read-only here)"
    ]
