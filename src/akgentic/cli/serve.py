"""``akgentic serve``: the HTTP + SSE server (see ``akgentic.server``).

Listens on 127.0.0.1:8080 by default. Off loopback it refuses to start without a token.
Its options are checked before it listens (one ``error:`` line each); a card or skill it
skips is a ``warning:`` line. The first Ctrl-C (or SIGTERM, or SIGHUP: the terminal it
was started in closed) stops it gracefully, the teams it runs finishing their turns
while it drains (``/health`` answers 503 ``draining``, new work is a 503, reads are
answered); a second one ends it at once, and the exit code is 128 + the first signal's
number (130, 143, 129), as in every command (:mod:`akgentic.cli.interrupt`); its last
line says which signal stopped it and what became of its teams.
With ``--placement ray`` the teams run on a Ray cluster instead (see
:mod:`akgentic.cli.placement`), and keep running there. ``--import MODULE`` imports a
module first, as ``teams resume`` does: the cards, agents or models it defines can make
the teams created on the server (a posted card's ``imports``, or its classes named with
no ``imports``), and the stored teams made of them read back. With ``--placement ray``
every team's actor imports it too (it must be importable on the workers).
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from akgentic.cli import interrupt, logs
from akgentic.cli.chat import ended_at_once
from akgentic.cli.errors import CliError, invalid_options, reporting
from akgentic.cli.options import DebugOption, ImportOption, StorageOption, TokenOption
from akgentic.cli.output import SafeText, command_line, error_console, printable, write_out
from akgentic.cli.placement import (
    MaxTeamsOption,
    PlacementOption,
    RayAddressOption,
    TeamCpusOption,
    TeamGpusOption,
    TeamResourceOption,
    placement_of,
)
from akgentic.cli.store import import_modules, opened_storage, shown_url, storage_option
from akgentic.team import TeamManager

__all__ = ["serve"]


def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host", envvar="AKGENTIC_HOST", metavar="HOST", help="The address to listen on."
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port", envvar="AKGENTIC_PORT", min=0, max=65535, metavar="PORT", help="The port."
        ),
    ] = 8080,
    storage: StorageOption = None,
    token: TokenOption = None,
    cards: Annotated[
        list[Path] | None,
        typer.Option(
            "--cards",
            envvar="AKGENTIC_CARDS",
            metavar="PATH",
            show_default=False,
            help="Team card YAML files or folders clients may name (repeatable).",
        ),
    ] = None,
    skills_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--skills-dir",
            envvar="AKGENTIC_SKILLS_DIR",
            metavar="DIR",
            show_default=False,
            help="Load the skills of this folder (SKILL.md, *.yaml) into the skill catalog "
            "(repeatable; the variable holds one or more, separated as PATH's folders are).",
        ),
    ] = None,
    mcp_config: Annotated[
        Path | None,
        typer.Option(
            "--mcp-config",
            envvar="AKGENTIC_MCP_CONFIG",
            metavar="FILE",
            show_default=False,
            help="An mcp.json (Claude Desktop 'mcpServers' format) whose servers every agent "
            "of every team gets.",
        ),
    ] = None,
    allow_posted: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-posted",
            envvar="AKGENTIC_ALLOW_POSTED",
            metavar="REACH",
            show_default=False,
            help="Let posted cards (not --cards) reach the server host (repeatable): "
            "'processes' (MCP stdio commands), 'paths' (files outside the cards folders), "
            "'endpoints' (model and tool URLs, the server's environment variables), "
            "'cards' (card classes loaded after the server started).",
        ),
    ] = None,
    allowed_hosts: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            envvar="AKGENTIC_ALLOWED_HOSTS",
            metavar="NAME",
            show_default=False,
            help="A Host name clients use besides the address, localhost, 127.0.0.1 and "
            "[::1] (repeatable); without a token, other names are refused.",
        ),
    ] = None,
    cors_origins: Annotated[
        list[str] | None,
        typer.Option(
            "--cors-origin",
            envvar="AKGENTIC_CORS_ORIGINS",
            metavar="ORIGIN",
            show_default=False,
            help="Let a web page from ORIGIN call the API (repeatable); CORS is off otherwise.",
        ),
    ] = None,
    max_body: Annotated[
        int, typer.Option("--max-body", min=1024, metavar="BYTES", help="Largest request body.")
    ] = 1_048_576,
    placement: PlacementOption = "local",
    ray_address: RayAddressOption = None,
    team_cpus: TeamCpusOption = 0.0,
    team_gpus: TeamGpusOption = 0.0,
    team_resources: TeamResourceOption = None,
    max_teams_per_worker: MaxTeamsOption = None,
    imports: ImportOption = None,
    debug: DebugOption = False,
) -> None:
    """Serve teams over HTTP: create them from cards, talk to them, follow their events
    (SSE). The web page is at /, the API documentation at /docs."""
    logs.say_each_time()  # a server's log is read by counting what happened: no repeat left out
    with reporting(debug):
        try:
            from akgentic.server import InsecureServerError, ServerSettings
            from akgentic.server import serve as run_server
        except ImportError as exc:
            raise CliError(
                f"the server needs the 'server' extra ({exc.name} is missing): "
                f"pip install 'akgentic[server]'"
            ) from None
        import_modules(imports)  # before any card is read: a team may be made of its classes
        for path in [*(cards or []), mcp_config, *(skills_dir or [])]:
            if path is not None and not path.exists():
                raise CliError(f"{path}: no such file or folder")
        for folder in skills_dir or []:
            if not folder.is_dir():
                raise CliError(f"--skills-dir {folder}: not a folder")
        try:
            settings = ServerSettings(
                host=host,
                port=port,
                token=token or None,
                cors_origins=cors_origins or [],
                max_body_bytes=max_body,
                allow_posted=allow_posted or [],
                allowed_hosts=allowed_hosts or [],
                mcp_config=str(mcp_config.resolve()) if mcp_config else None,
            )
        except InsecureServerError as exc:
            raise CliError(str(exc)) from None
        except ValidationError as exc:
            raise invalid_options(exc, OPTIONS) from None
        _check_can_listen(host, port)
        with opened_storage(storage) as (bundle, url):
            again = command_line("teams", "resume", "TEAM", *storage_option(url))
            hosts: list[TeamManager] = []  # the server's, once it exists
            interrupt.at_once = lambda: ended_at_once(  # what the second Ctrl-C cut
                f"resume a team with: {again}",
                [team for manager in hosts for team in manager.local_teams()],
            )
            where = placement_of(
                placement,
                url,
                address=ray_address,
                cpus=team_cpus,
                gpus=team_gpus,
                resources=team_resources,
                max_teams=max_teams_per_worker,
                imports=imports,
            )
            teams = "" if where is None else "; teams on the Ray cluster"

            def ready(address: str) -> None:
                write_out(
                    printable(
                        f"akgentic serving on {address} (storage {shown_url(url)}{teams}); open "
                        f"{address}/ in a browser; API docs at /docs\n"
                    )
                )

            def stopping() -> None:
                write_out(
                    "stopping: the teams running here finish their turns in progress; new "
                    "work is refused meanwhile (/health answers 503 draining); Ctrl-C again "
                    "to stop at once\n"
                )

            with interrupt.quietly() as pressed:
                run_server(
                    bundle,
                    settings,
                    card_paths=cards or [],
                    skills_dir=skills_dir or None,
                    on_ready=ready,
                    on_problem=_warn,
                    stop=pressed,
                    on_stopping=stopping,
                    on_manager=hosts.append,
                    placement=where,
                    sigterm_handled=True,  # interrupt.install's handler sets ``pressed``
                )
            if pressed.is_set():
                write_out(printable(f"{_stopped_by_signal(where is not None, again)}\n"))
                interrupt.at_once = ""  # nothing left to cut, and its last line said how it ended
                raise typer.Exit(interrupt.exit_code())


OPTIONS = {
    "host": "--host",
    "port": "--port",
    "token": "--token",
    "cors_origins": "--cors-origin",
    "max_body_bytes": "--max-body",
    "allow_posted": "--allow-posted",
    "allowed_hosts": "--allowed-host",
    "mcp_config": "--mcp-config",
}


def _stopped_by_signal(on_cluster: bool, again: str) -> str:
    """The server's last line once a signal stopped it: which one, and where its teams are
    (stopped with it, resumable; or running on in the cluster, as a drain leaves them)."""
    teams = (
        "its teams run on in the Ray cluster"
        if on_cluster
        else f"the teams it ran stopped with it: resume one with: {again}"
    )
    return f"server stopped ({interrupt.cause_name()}); {teams}"


def _warn(problem: str) -> None:
    error_console().print(SafeText(f"warning: {problem}", style="yellow"))


def _check_can_listen(host: str, port: int) -> None:
    """Bind ``host:port`` once, before anything starts, so an address in use (or a host
    that is not this machine's) is one line saying what to change — not the server's log
    and a bare exit code. (The server binds again at once; the port stays free between.)"""
    if port == 0:
        return
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does
            probe.bind(address)
    except socket.gaierror as exc:
        raise CliError(f"cannot listen on {host}:{port}: unknown host ({exc.strerror})") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise CliError(
                f"cannot listen on {host}:{port}: the address is in use (another akgentic "
                f"serve?): choose another port with --port, or stop what holds it"
            ) from None
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
