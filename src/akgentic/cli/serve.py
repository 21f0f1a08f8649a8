"""``akgentic serve``: the HTTP + SSE server (see ``akgentic.server``).

Listens on 127.0.0.1:8080 by default. Off loopback it refuses to start without a token.
Teams it runs are stopped gracefully on Ctrl-C; with ``--placement ray`` they run on a
Ray cluster instead (see :mod:`akgentic.cli.placement`), and keep running there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from akgentic.cli.errors import CliError, reporting
from akgentic.cli.options import DebugOption, StorageOption, TokenOption
from akgentic.cli.placement import (
    MaxTeamsOption,
    PlacementOption,
    RayAddressOption,
    TeamCpusOption,
    TeamGpusOption,
    TeamResourceOption,
    placement_of,
)
from akgentic.cli.store import opened_storage

__all__ = ["serve"]


def serve(
    host: Annotated[
        str,
        typer.Option("--host", envvar="AKGENTIC_HOST", help="The address to listen on."),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option("--port", envvar="AKGENTIC_PORT", min=0, max=65535, help="The port."),
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
        Path | None,
        typer.Option(
            "--skills-dir",
            envvar="AKGENTIC_SKILLS_DIR",
            metavar="DIR",
            show_default=False,
            help="Load the skills of this folder (SKILL.md, *.yaml) into the skill catalog.",
        ),
    ] = None,
    mcp_config: Annotated[
        Path | None,
        typer.Option(
            "--mcp-config",
            envvar="AKGENTIC_MCP_CONFIG",
            metavar="FILE",
            show_default=False,
            help="An mcp.json (Claude Desktop 'mcpServers' format) for the teams' MCP tools.",
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
    debug: DebugOption = False,
) -> None:
    """Serve teams over HTTP: create them from cards, talk to them, follow their events
    (SSE). The web page is at /, the API documentation at /docs."""
    with reporting(debug):
        try:
            from akgentic.server import InsecureServerError, ServerSettings
            from akgentic.server import serve as run_server
        except ImportError as exc:
            raise CliError(
                f"the server needs the 'server' extra ({exc.name} is missing): "
                f"pip install 'akgentic[server]'"
            ) from None
        try:
            settings = ServerSettings(
                host=host,
                port=port,
                token=token or None,
                cors_origins=cors_origins or [],
                max_body_bytes=max_body,
            )
        except InsecureServerError as exc:
            raise CliError(str(exc)) from None
        except ValueError as exc:
            raise CliError(f"invalid server settings: {exc}") from None
        for path in (mcp_config, skills_dir):
            if path is not None and not path.exists():
                raise CliError(f"{path}: no such file or folder")
        with opened_storage(storage) as (bundle, url):
            where = placement_of(
                placement,
                url,
                address=ray_address,
                cpus=team_cpus,
                gpus=team_gpus,
                resources=team_resources,
                max_teams=max_teams_per_worker,
            )
            teams = "" if where is None else "; teams on the Ray cluster"

            def ready(address: str) -> None:
                typer.echo(
                    f"akgentic serving on {address} (storage {url}{teams}); open {address}/ "
                    f"in a browser; API docs at /docs"
                )

            run_server(
                bundle,
                settings,
                card_paths=cards or [],
                skills_dir=skills_dir,
                mcp_config=mcp_config,
                on_ready=ready,
                placement=where,
            )
