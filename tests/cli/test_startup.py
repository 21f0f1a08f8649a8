"""Commands that run no agent start without importing the agents (akgentic.cli.lazy).

Each case runs the console script's entry in a child interpreter (this test run has
imported everything already) and says which of ``pydantic_ai`` — the model layer, the
biggest share of the framework's imports — and ``akgentic.core`` got imported. No timing
is asserted: what is imported is the cause of a slow start, and it is exact.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

import akgentic
from akgentic.cli import app
from akgentic.cli.lazy import LazyGroup
from akgentic.core.serialization import serialize
from akgentic.storage import open_storage, sqlite_url
from akgentic.team import TeamCard

from .conftest import RESEARCH, child_env, run_child

CHILD = """
import contextlib, io, sys
from akgentic.cli import entry
sys.argv = ["akgentic", *sys.argv[1:]]
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
    entry.main()
print(out.getvalue())
print(",".join(m for m in ("pydantic_ai", "akgentic.core") if m in sys.modules) or "-")
"""

COMMANDS = {
    (): ["run", "events", "usage", "serve", "teams", "catalog"],
    ("teams",): ["list", "show", "stop", "resume", "delete"],
    ("catalog",): [
        "list",
        "show",
        "enable",
        "disable",
        "configure",
        "set-credential",
        "probe",
        "audit",
        "remove",
    ],
}
"""Every group's subcommands, in the order its --help lists them (as before they were lazy)."""


def run_entry(tmp_path: Path, *argv: str) -> tuple[str, set[str]]:
    """``akgentic ARGV...`` in a child: what it printed, and which of pydantic-ai (the model
    layer) and ``akgentic.core`` (the actors, under every layer) it imported."""
    env = child_env(AKGENTIC_STORAGE=sqlite_url(tmp_path / "start.db"))
    done = run_child([sys.executable, "-c", CHILD, *argv], env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    printed, imported = done.stdout.rstrip("\n").rsplit("\n", 1)
    return printed, set(imported.split(",")) - {"-"}


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["teams", "--help"], []], ids=" ".join)
def test_version_and_help_import_no_framework(tmp_path: Path, argv: list[str]) -> None:
    assert run_entry(tmp_path, *argv)[1] == set()


def test_teams_list_reads_records_and_leases_only(tmp_path: Path) -> None:
    """A card names the members' classes (the agent layer): ``teams list`` never reads one."""
    storage = open_storage(sqlite_url(tmp_path / "start.db"))
    team_id = storage.teams.create("research", card=serialize(TeamCard.from_yaml(RESEARCH))).team_id
    storage.close()
    printed, imported = run_entry(tmp_path, "teams", "list")
    assert f"{team_id}  research  RUNNING" in printed
    assert imported == {"akgentic.core"}


def test_a_command_imports_what_it_runs(tmp_path: Path) -> None:
    assert run_entry(tmp_path, "run", "--help")[1] == {"pydantic_ai", "akgentic.core"}


@pytest.mark.parametrize("path", list(COMMANDS), ids=lambda p: " ".join(p) or "akgentic")
def test_help_lists_every_subcommand_as_before(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    listing = result.stdout.split("Commands:\n", 1)[1]
    assert re.findall(r"^  (\S+)  ", listing, re.M) == COMMANDS[path]


def test_a_lazy_group_s_short_help_is_its_help() -> None:
    """The table says a group's short help (its parent's --help lists it without importing
    it): it is the group's own help, not a second wording of it."""
    root = typer.main.get_command(app)
    assert isinstance(root, LazyGroup)
    groups = {name: c for name, c in root.commands.items() if isinstance(c, TyperGroup)}
    assert sorted(groups) == ["catalog", "teams"]
    for name, group in groups.items():
        assert group.help == root.lazy[name].short_help, name


def test_python_dash_m_akgentic_is_the_command() -> None:
    # the package's name is what a person tries when the console script is not on PATH
    done = run_child([sys.executable, "-m", "akgentic", "--version"], env=child_env())
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.strip().endswith(akgentic.__version__)
