"""Where teams are kept: one default store per user (the data folder), named in the help;
commands that only read never create a store or a folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from akgentic.cli import app
from akgentic.core import user_data_dir
from akgentic.storage import SqliteStorage, open_storage, sqlite_url

from .conftest import AKGENTIC, RESEARCH, child_env, run_child

READ_ONLY = (
    ["teams", "list"],
    ["teams", "list", "--all"],
    ["teams", "show", "abc"],
    ["teams", "stop", "abc"],
    ["teams", "delete", "abc"],
    ["teams", "resume", "abc"],
    ["events", "abc"],
    ["usage", "abc"],
    ["catalog", "list"],
    ["catalog", "show", "planning"],
    ["catalog", "audit"],
)


def invoke(*args: str, env: dict[str, str | None] | None = None, cwd: Path | None = None) -> Result:
    """Run the CLI in-process with the default storage (no AKGENTIC_STORAGE)."""
    base: dict[str, str | None] = {"AKGENTIC_STORAGE": None, "AKGENTIC_MODEL": None}
    if cwd is not None:
        old = Path.cwd()
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args), env={**base, **(env or {})})
    finally:
        if cwd is not None:
            os.chdir(old)


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_the_data_folder_follows_each_platform(platform: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = {
        "linux": home / ".local" / "share" / "akgentic",
        "darwin": home / "Library" / "Application Support" / "akgentic",
        "win32": home / "AppData" / "Local" / "akgentic",
    }[platform]
    assert user_data_dir(environ={}, platform=platform, home=home) == expected


def test_the_platform_variables_move_the_data_folder(tmp_path: Path) -> None:
    xdg, local = tmp_path / "xdg", tmp_path / "local"
    env = {"XDG_DATA_HOME": str(xdg), "LOCALAPPDATA": str(local)}
    assert user_data_dir(environ=env, platform="linux", home=tmp_path) == xdg / "akgentic"
    assert user_data_dir(environ=env, platform="win32", home=tmp_path) == local / "akgentic"
    # the XDG rule: a relative XDG_DATA_HOME is ignored
    relative = {"XDG_DATA_HOME": "data"}
    assert user_data_dir(environ=relative, platform="linux", home=tmp_path) == (
        tmp_path / ".local" / "share" / "akgentic"
    )


def test_no_home_folder_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home(cls: type[Path]) -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", classmethod(no_home))
    with pytest.raises(RuntimeError, match="set HOME, or XDG_DATA_HOME, or name a store"):
        user_data_dir(environ={}, platform="linux")


def test_one_store_per_user_whatever_the_folder(tmp_path: Path, data_home: Path) -> None:
    """A team run in one folder is listed, shown and resumed from another."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    env = child_env()
    done = run_child([str(AKGENTIC), "run", str(RESEARCH), "-m", "hi"], env=env, cwd=first)
    assert done.returncode == 0, done.stderr
    store = data_home / "akgentic" / "akgentic.db"
    assert store.is_file()
    assert list(first.iterdir()) == []
    listed = run_child([str(AKGENTIC), "teams", "list"], env=env, cwd=second)
    assert listed.returncode == 0, listed.stderr
    assert " research " in listed.stdout
    resumed = run_child(
        [str(AKGENTIC), "teams", "resume", "research", "-m", "again"], env=env, cwd=second
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[-1].startswith("answer: ")
    assert list(second.iterdir()) == []


def test_akgentic_storage_and_storage_override_the_default(tmp_path: Path, data_home: Path) -> None:
    by_env = tmp_path / "env.db"
    by_flag = tmp_path / "flag.db"
    env = child_env(sqlite_url(by_env))
    done = run_child([str(AKGENTIC), "run", str(RESEARCH), "-m", "hi"], env=env)
    assert done.returncode == 0, done.stderr
    flagged = run_child(
        [str(AKGENTIC), "run", str(RESEARCH), "-m", "hi", "--storage", sqlite_url(by_flag)],
        env=env,
    )
    assert flagged.returncode == 0, flagged.stderr
    assert by_env.is_file() and by_flag.is_file()
    assert not (data_home / "akgentic").exists()
    assert f"--storage {sqlite_url(by_flag)}" in flagged.stdout  # the resume hint names it


def test_the_help_prints_the_real_default_path(tmp_path: Path) -> None:
    data = tmp_path / "some where"
    env = child_env(XDG_DATA_HOME=str(data), COLUMNS="80")
    done = run_child([str(AKGENTIC), "teams", "list", "--help"], env=env)
    assert done.returncode == 0, done.stderr
    flat = re.sub(r"\s+", "", done.stdout)
    expected = sqlite_url(data / "akgentic" / "akgentic.db")
    assert f"[default:{expected}]" in flat
    assert "%20" in expected  # the space, escaped as a URL must
    assert not data.exists()  # --help creates nothing


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_a_read_only_command_creates_no_store_and_no_folder(
    command: list[str], tmp_path: Path, data_home: Path
) -> None:
    result = invoke(*command, cwd=tmp_path)
    assert "Traceback" not in result.output
    assert not (data_home / "akgentic").exists()
    assert list(tmp_path.iterdir()) == []
    if command[0] == "teams" and command[1] == "list":
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(
            f"no teams yet in {sqlite_url(data_home / 'akgentic' / 'akgentic.db')}; start one "
            "with: akgentic run TEAM.yaml"
        )
    elif command[0] == "catalog":
        assert result.exit_code == 0, result.output
    else:
        assert result.exit_code == 1
        assert "there are no teams yet in this storage" in result.stderr


def test_an_explicit_missing_store_is_not_created_either(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "teams.db"
    result = invoke("teams", "list", "--storage", sqlite_url(missing))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("no teams yet in ")
    assert not (tmp_path / "nowhere").exists()


def test_teams_of_an_earlier_version_in_this_folder_are_pointed_at(tmp_path: Path) -> None:
    legacy = tmp_path / ".akgentic" / "akgentic.db"
    SqliteStorage(legacy).close()
    result = invoke("teams", "list", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    note = " ".join(result.stderr.split())
    assert note.startswith(
        "note: .akgentic/akgentic.db here holds teams of an earlier akgentic: list them with: "
        "akgentic teams list --storage sqlite:///.akgentic/akgentic.db, or move the file to "
    )
    store = open_storage(sqlite_url(legacy), create=False)  # still there, untouched
    assert store.teams.list() == []
    store.close()


def test_a_store_under_a_file_says_the_file_is_not_a_folder(tmp_path: Path) -> None:
    """``sqlite:////tmp/notes.yaml/x.db`` where notes.yaml is a file: one line naming the
    file as not a folder and what to give instead, not ``[Errno 17] File exists``."""
    notes = tmp_path / "notes.yaml"
    notes.write_text("x")
    url = sqlite_url(notes / "deeper" / "x.db")
    result = invoke("run", str(RESEARCH), "-m", "hi", "--storage", url, cwd=tmp_path)

    assert result.exit_code == 1
    assert result.stderr == (
        f"error: cannot open storage {url}: {notes} is a file, not a folder, so no store can "
        f"go under it: give the store a path in a folder (for instance "
        f"{sqlite_url(tmp_path / 'x.db')})\n"
    )
    assert notes.read_text() == "x"


def test_the_help_without_a_home_folder_shows_a_url_to_fill_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no home folder to find: the help's default is a URL with $XDG_DATA_HOME to fill in,
    # which, filled in with an absolute folder, is the store that folder gives
    from akgentic.cli import options
    from akgentic.cli.errors import CliError

    def no_home() -> str:
        raise CliError("cannot find your home folder")

    monkeypatch.setattr(options, "default_url", no_home)
    shown = options._default_store()
    assert "$XDG_DATA_HOME" in shown
    filled = shown.replace("$XDG_DATA_HOME", "/data")
    assert filled == sqlite_url(Path("/data") / "akgentic" / "akgentic.db")
