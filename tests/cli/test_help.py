"""Every command's --help fits 80 columns and cuts nothing: option names, metavars,
defaults and the command summaries are there in full (long ones wrap)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from akgentic.cli import app
from tests.conftest import SESSION_DATA

from .conftest import AKGENTIC, child_env, run_child

WIDTH = 80


# typer builds on its own copy of click: commands and parameters are read by their
# attributes (a group has ``commands``; an option has ``opts``, ``is_flag``...).
Command = Any


def commands(group: Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in getattr(group, "commands", {}).items():
        yield from commands(command, (*path, name))


ROOT = typer.main.get_command(app)
PATHS = list(commands(ROOT))


def command_at(path: tuple[str, ...]) -> Command:
    command = ROOT
    for name in path:
        command = command.commands[name]
    return command


def flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def help_text(path: tuple[str, ...]) -> str:
    """``akgentic PATH --help`` as a terminal of WIDTH columns shows it (click keeps two
    columns of margin, as the console script does)."""
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=WIDTH - 2)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_console_script_prints_the_same_help(tmp_path: Path) -> None:
    # the help names the default store as it was when the CLI was imported: the session's
    env = child_env(COLUMNS=str(WIDTH), XDG_DATA_HOME=str(SESSION_DATA))
    for path in [(), ("catalog",), ("run",)]:
        done = run_child([str(AKGENTIC), *path, "--help"], env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout == help_text(path)


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p in PATHS}
    for expected in ("run", "events", "usage", "serve", "teams resume", "catalog audit"):
        assert expected in names


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "akgentic")
def test_help_at_80_columns_cuts_nothing(path: tuple[str, ...]) -> None:
    text = help_text(path)
    too_long = [line for line in text.splitlines() if len(line) > WIDTH]
    assert too_long == []
    assert "…" not in text
    whole = flat(text)
    command = command_at(path)
    for param in command.params:
        for name in [*param.opts, *param.secondary_opts]:
            if name.startswith("-"):
                assert re.search(rf"(^|[\s,/]){re.escape(name)}([\s,=/]|$)", text), name
        option = hasattr(param, "is_flag")
        if option and param.metavar:
            assert param.metavar in text
        shown = option and param.show_default and not param.is_flag
        if shown and param.default is not None and not callable(param.default):
            assert f"default:{flat(str(param.default))}" in whole, (param.name, param.default)
    if hasattr(command, "commands"):
        listing = text.split("Commands:", 1)[1]
        for name, sub in command.commands.items():
            summary = sub.short_help or (sub.help or "").split("\n\n")[0]
            first = " ".join(summary.split()).split(". ")[0].rstrip(".")
            assert re.search(rf"^\s+{re.escape(name)}\s", listing, re.M), name
            assert flat(first) in flat(listing), (name, first)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "akgentic")
def test_every_value_is_named_by_a_metavar(path: tuple[str, ...]) -> None:
    # an option that takes a value names it (`--port PORT`, not typer's `--port <int
    # range>`), unless it lists its choices; the usage line brackets an argument once
    command = command_at(path)
    for param in command.params:
        if hasattr(param, "is_flag") and not param.is_flag and not param.type_descriptor.is_choice:
            assert param.metavar, param.opts
    usage = help_text(path).split("\n\n", 1)[0]
    assert "[[" not in usage and "{{" not in usage, usage
