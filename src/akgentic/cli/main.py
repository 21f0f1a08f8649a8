"""The ``akgentic`` command: wires the subcommands together.

- ``akgentic run TEAM.yaml [--message TEXT] [--model SPEC]`` — see :mod:`akgentic.cli.run`;
- ``akgentic teams list|show|stop|resume|delete`` — see :mod:`akgentic.cli.teams`;
- ``akgentic events TEAM [--follow] [--from N]`` — see :mod:`akgentic.cli.events`;
- ``akgentic usage TEAM [--json]`` — see :mod:`akgentic.cli.usage`;
- ``akgentic serve [--host] [--port] [--cards PATH]`` — see :mod:`akgentic.cli.serve`;
  ``run`` and ``events`` take ``--server URL`` to work with a server's teams.
- ``akgentic catalog list|show|enable|disable|...`` — see :mod:`akgentic.cli.catalog`.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer

from akgentic.cli import logs
from akgentic.cli.catalog import catalog_app
from akgentic.cli.events import events
from akgentic.cli.run import run
from akgentic.cli.serve import serve
from akgentic.cli.teams import delete_team, list_teams, resume_team, show_team, stop_team
from akgentic.cli.usage import usage

__all__ = ["app", "main"]

app = typer.Typer(
    name="akgentic",
    help="Run teams of LLM agents in the terminal, and manage the teams you keep.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
teams_app = typer.Typer(
    help="List, show, stop, resume and delete teams.",
    rich_markup_mode=None,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

app.command("run", short_help="Run a team in the terminal and talk to it.")(run)
app.command("events", short_help="Print a team's events, one line each.")(events)
app.command("usage", short_help="Show where a team's input tokens went.")(usage)
app.command("serve", short_help="Serve teams over HTTP, with a web page.")(serve)
teams_app.command("list", short_help="List the teams and who runs them.")(list_teams)
teams_app.command("show", short_help="Show a team: record, members, log.")(show_team)
teams_app.command("stop", short_help="Stop a team, wherever it runs.")(stop_team)
teams_app.command("resume", short_help="Restore a team from its log; talk to it.")(resume_team)
teams_app.command("delete", short_help="Mark a team DELETED, or --purge it.")(delete_team)
app.add_typer(teams_app, name="teams")
app.add_typer(catalog_app, name="catalog")


def _version(value: bool) -> None:
    if value:
        try:
            typer.echo(f"akgentic {version('akgentic')}")
        except PackageNotFoundError:
            typer.echo("akgentic (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Run teams of LLM agents in the terminal, and manage the teams you keep."""
    quiet_pydantic_ai()


def quiet_pydantic_ai() -> None:
    """No pydantic-ai first-run banner (an advertisement) between a session's lines.

    pydantic-ai 2.x reads ``PYDANTIC_AI_NO_BANNER`` when an agent first runs; set here, for
    every command, it also reaches the processes a command starts (Ray workers, servers).
    A value the user set is kept."""
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")


def main() -> None:
    """The console script: modules in the current directory are importable (as with
    ``python -m``: a team card's ``imports`` and ``--import`` may name them), the
    framework's warnings go to stderr, then the command runs."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    logs.configure()
    app()
