"""The ``akgentic`` command: wires the subcommands together.

- ``akgentic run TEAM.yaml [--message TEXT] [--model SPEC]`` — see :mod:`akgentic.cli.run`;
- ``akgentic teams list|show|stop|resume|delete`` — see :mod:`akgentic.cli.teams`;
- ``akgentic events TEAM [--follow] [--from N]`` — see :mod:`akgentic.cli.events`;
- ``akgentic usage TEAM [--json]`` — see :mod:`akgentic.cli.usage`;
- ``akgentic serve [--host] [--port] [--cards PATH]`` — see :mod:`akgentic.cli.serve`;
  ``run`` and ``events`` take ``--server URL`` to work with a server's teams.
- ``akgentic catalog list|show|enable|disable|...`` — see :mod:`akgentic.cli.catalog`.

Each subcommand is named in a table and its module imported only when it is used
(:mod:`akgentic.cli.lazy`): ``--version``, ``--help`` and a group's ``--help`` import none
of the framework. A command's short help is written in the table, once.
"""

from __future__ import annotations

import os
import signal
import sys
from importlib.metadata import PackageNotFoundError, version
from typing import Annotated, Any

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer._click.utils import PacifyFlushWrapper

from akgentic.cli import interrupt
from akgentic.cli.lazy import Lazy, LazyGroup, after_imports

__all__ = ["app", "main"]


class _Root(LazyGroup):
    lazy = {
        "run": Lazy("akgentic.cli.run:run", "Run a team in the terminal and talk to it."),
        "events": Lazy("akgentic.cli.events:events", "Print a team's events, one line each."),
        "usage": Lazy("akgentic.cli.usage:usage", "Show where a team's input tokens went."),
        "serve": Lazy("akgentic.cli.serve:serve", "Serve teams over HTTP, with a web page."),
        "teams": Lazy("akgentic.cli.main:teams_app", "List, show, stop, resume and delete teams."),
        "catalog": Lazy(
            "akgentic.cli.catalog:catalog_app",
            "The tool catalog: which tools may be used, and where.",
        ),
    }

    def invoke(self, ctx: Any) -> Any:
        """As a group's; a Ctrl-C that a command did not turn into its way out (one between
        two of its ``reporting`` blocks, or in the parser's work once the body returned) is
        said as ``reporting`` says it — typer's own handling would end the command silently
        with 130, whatever the signal."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            if interrupt.cause() != signal.SIGPIPE:  # a closed output ends it quietly
                interrupt.say(interrupt.interrupted_by())
            raise typer.Exit(interrupt.exit_code()) from None


class _Teams(LazyGroup):
    lazy = {
        "list": Lazy("akgentic.cli.teams_list:list_teams", "List the teams and who runs them."),
        "show": Lazy("akgentic.cli.teams:show_team", "Show a team: record, members, log."),
        "stop": Lazy("akgentic.cli.teams:stop_team", "Stop a team, wherever it runs."),
        "resume": Lazy(
            "akgentic.cli.teams:resume_team", "Restore a team from its log; talk to it."
        ),
        "delete": Lazy("akgentic.cli.teams:delete_team", "Mark a team DELETED, or --purge it."),
    }


app = typer.Typer(
    cls=_Root,
    name="akgentic",
    help="Run teams of LLM agents in the terminal, and manage the teams you keep.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
teams_app = typer.Typer(
    cls=_Teams,
    help="List, show, stop, resume and delete teams.",
    rich_markup_mode=None,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
    framework's warnings go to stderr once the command's modules are imported (the
    handler, :mod:`akgentic.cli.logs`, imports the core: ``--version`` and ``--help`` need
    it not), then the command runs. Once it is over, a Ctrl-C ends the process at once
    (:func:`akgentic.cli.interrupt.end`)."""
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    after_imports(_configure_logs)
    try:
        code = _run_app()
    except SystemExit as exit:  # a command that ends the process itself
        interrupt.end()
        interrupt.leave(exit.code if isinstance(exit.code, int) else int(exit.code is not None))
        raise
    interrupt.end()  # a Ctrl-C from here on: said, and the process ends at once
    interrupt.leave(code)  # a thread stuck in a tool call does not hold the exit
    sys.exit(code)


def _run_app() -> int:
    """Run the command line as click's standalone mode would, but a command line click
    refuses (an unknown option or command, a missing argument, a bad value) is one
    ``error:`` line that says where the help is (:func:`akgentic.cli.errors.usage_words`),
    as every other error of the CLI is; the exit code is click's (2 for a usage error)."""
    try:
        code = app(standalone_mode=False)  # a command's Exit (Ctrl-C's too) comes back
    except NoArgsIsHelpError as exc:  # a group named alone: its help, as ever
        exc.show()
        return exc.exit_code
    except ClickException as exc:
        from akgentic.cli.errors import CliError, report, usage_words

        context = exc.ctx if isinstance(exc, UsageError) else None
        path = context.command_path if context is not None else None
        report(CliError(usage_words(exc.format_message(), path)))
        return exc.exit_code
    except typer.Abort:  # end of input at a prompt
        typer.echo("Aborted!", err=True)
        return 1
    except BrokenPipeError:  # as click's standalone mode: a closed output ends it quietly
        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        return 1
    return code if isinstance(code, int) else 0


def _configure_logs() -> None:
    from akgentic.cli import logs

    logs.configure()
