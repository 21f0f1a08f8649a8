"""``akgentic run TEAM.yaml``: start a team from its card and talk to it in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from akgentic.cli import interrupt, logs
from akgentic.cli.chat import ChatOptions, chat, check_addressee, intro
from akgentic.cli.errors import CliError, reporting
from akgentic.cli.models import point_card
from akgentic.cli.options import (
    BaseUrlOption,
    DebugOption,
    IdleOption,
    McpConfigOption,
    MessageOption,
    ModelOption,
    ServerOption,
    StorageOption,
    StreamOption,
    TimeoutOption,
    TokenOption,
    VerboseOption,
)
from akgentic.cli.output import out_console, short_id
from akgentic.cli.remote import connected, server_hint
from akgentic.cli.session import team_manager
from akgentic.cli.store import default_url, opened_storage
from akgentic.team import TeamCard

__all__ = ["resume_hint", "run"]


def resume_hint(team_id: object, url: str, imports: list[str] | None = None) -> str:
    """``resume it with: akgentic teams resume 104b23b9`` (+ ``--storage URL`` when not the
    default storage, + ``--import M`` for each module the card needs)."""
    storage = "" if url == default_url() else f" --storage {url}"
    modules = "".join(f" --import {m}" for m in imports or ())
    return f"resume it with: akgentic teams resume {short_id(team_id)}{storage}{modules}"


def run(
    team_file: Annotated[
        Path, typer.Argument(metavar="TEAM.yaml", show_default=False, help="The team card.")
    ],
    message: MessageOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    mcp_config: McpConfigOption = None,
    storage: StorageOption = None,
    timeout: TimeoutOption = 600.0,
    idle: IdleOption = 5.0,
    verbose: VerboseOption = False,
    stream: StreamOption = True,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Run a team in the terminal: type to the entry point, see the team work.

    Lines go to the entry point ('@Member text' to another member, '/command' to the
    entry point's commands); /quit or end of input stops the team. With --message, one
    exchange: the answer is printed on a line starting 'answer:'. With --server, the team
    runs on that server.
    """
    with reporting(debug), interrupt.deferred():
        if message is not None and not message.strip():
            raise CliError("--message needs some text")
        card = TeamCard.from_yaml(team_file)
        if message is not None:
            check_addressee(card, message)
        model = point_card(card, model, base_url)
        if mcp_config is not None:
            card.mcp_config = str(mcp_config.resolve())
        options = ChatOptions(message, timeout, idle, verbose, stream)
        if server:
            raise typer.Exit(_run_remote(card, server, token, model, options))
        with (
            opened_storage(storage) as (bundle, url),
            team_manager(bundle) as manager,
            logs.stream_shown(),  # the session shows every event from the team's first
        ):
            runtime = manager.create_team(card, model=model)
            console = out_console()
            intro(console, runtime, "started")
            code = chat(
                manager,
                runtime,
                options,
                console=console,
                from_seq=1,
                resume_hint=resume_hint(runtime.team_id, url, card.imports),
            )
    raise typer.Exit(code)


def _run_remote(
    card: TeamCard, url: str, token: str | None, model: str | None, options: ChatOptions
) -> int:
    """``run --server``: the same conversation, with the team on the server."""
    with connected(url, token) as client:
        team = client.create_team(card, model=model)
        console = out_console()
        intro(console, team, f"started on {url}")
        return chat(
            client,
            team,
            options,
            console=console,
            from_seq=1,
            resume_hint=server_hint(team.team_id, url),
        )
