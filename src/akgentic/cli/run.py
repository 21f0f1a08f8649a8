"""``akgentic run TEAM.yaml``: start a team from its card and talk to it in the terminal.

With ``--server URL`` the team runs on that server: ``CARD`` is a card file here (posted
to the server, which checks what a posted card may reach), else the name of a card the
server has registered (``akgentic serve --cards``); neither is one line listing the
server's cards and saying how to post a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NamedTuple
from uuid import uuid4

import typer

from akgentic.cli import interrupt, logs
from akgentic.cli.chat import (
    MAYBE_CRASHED,
    NOT_STARTED,
    ChatOptions,
    before_start,
    chat,
    check_addressee,
    how_to_resume,
    intro,
    starting_at_once,
    unstarted_at_once,
)
from akgentic.cli.errors import CliError, reporting
from akgentic.cli.models import local_model, point_card
from akgentic.cli.options import (
    BaseUrlOption,
    DebugOption,
    IdleOption,
    ImportOption,
    McpConfigOption,
    MessageOption,
    ModelOption,
    ServerOption,
    StorageOption,
    StreamOption,
    TimeoutOption,
    TokenOption,
    VerboseOption,
    one_place,
)
from akgentic.cli.output import command_line, out_console, short_id, team_title
from akgentic.cli.remote import connected, server_command
from akgentic.cli.session import team_manager
from akgentic.cli.store import (
    import_flags,
    import_modules,
    missing_imports,
    opened_storage,
    resume_imports,
    storage_option,
)
from akgentic.client import AkgenticClient
from akgentic.team import TeamCard

__all__ = ["resume_command", "run", "team_command"]


def team_command(verb: str, team_id: object, url: str, imports: list[str] | None = None) -> str:
    """``akgentic teams VERB 104b23b9`` (+ ``--storage URL`` when not the default storage,
    + ``--import M`` for each module the card needs), quoted for a shell
    (:func:`command_line`)."""
    return command_line(
        "teams", verb, short_id(team_id), *storage_option(url), *import_flags(imports or ())
    )


def resume_command(team_id: object, url: str, imports: list[str] | None = None) -> str | None:
    """The command that resumes the team (see :func:`team_command`); None for a
    ``memory://`` storage, which ends with this process: there is nothing to resume."""
    if url.partition("://")[0].lower() == "memory":
        return None
    return team_command("resume", team_id, url, imports)


def run(
    team_file: Annotated[
        Path,
        typer.Argument(
            metavar="TEAM.yaml",
            show_default=False,
            help="The team card file; with --server, or the name of a card the server has "
            "(akgentic serve --cards).",
        ),
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
    imports: ImportOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Run a team in the terminal: type to the entry point, see the team work.

    Lines go to the entry point ('@Member text' to another member, '/command' to the
    entry point's commands); /quit or end of input stops the team. With --message, one
    exchange: the answer is printed on a line starting 'answer:'. With --server, the team
    runs on that server: from the card file (posted), or from the server's card of that
    name when there is no such file.
    """
    with reporting(debug), interrupt.deferred():
        options = ChatOptions(message, timeout, idle, verbose, stream)
        interrupt.at_once = unstarted_at_once(NOT_STARTED, options)
        if message is not None and not message.strip():
            raise CliError("--message needs some text")
        import_modules(imports)
        server = one_place(server, storage)
        if server:
            remote = RemoteStart(team_file, model, base_url, mcp_config, imports or [])
            raise typer.Exit(_run_remote(remote, server, token, options))
        card = TeamCard.from_yaml(team_file)
        if message is not None:
            check_addressee(card, message)
        model = point_card(card, local_model(model), base_url)
        if mcp_config is not None:
            card.mcp_config = str(mcp_config.resolve())
        before_start(NOT_STARTED, options)  # a Ctrl-C so far: nothing is made, not even a store
        with (
            opened_storage(storage) as (bundle, url),
            team_manager(bundle) as manager,
            logs.stream_shown(),  # the session shows every event from the team's first
        ):
            before_start(NOT_STARTED, options)
            team_id = uuid4()  # named before it is made: a second Ctrl-C says how to resume it
            resume = resume_command(team_id, url, resume_imports(card.imports, imports))
            interrupt.at_once = starting_at_once(
                f"{team_title(card.name, team_id)} was starting ({MAYBE_CRASHED})",
                how_to_resume(resume),
                options,
            )
            runtime = manager.create_team(card, model=model, team_id=team_id)
            console = out_console()
            intro(console, runtime, "started")
            code = chat(
                manager,
                runtime,
                options,
                console=console,
                from_seq=1,
                resume=resume,
            )
    raise typer.Exit(code)


class Chosen(NamedTuple):
    """The card ``run --server`` starts a team from, with what goes with it."""

    card: TeamCard | str  # a card file's card (posted), or the name of the server's card
    model: str | None  # the --model to give with it
    imports: list[str]  # the modules the team's messages need, for the resume command


@dataclass(frozen=True)
class RemoteStart:
    """What ``run --server`` was given to start a team from: ``CARD``, the options that
    change a card, and the modules imported with ``--import``."""

    ref: Path
    model: str | None
    base_url: str | None
    mcp_config: Path | None
    imports: list[str]

    def card(self, client: AkgenticClient, message: str | None) -> Chosen:
        """The card to create the team from. A :class:`CliError` when ``ref`` is neither
        a card file nor the name of a server's card, when an option would change a
        server's card, or when the server's card needs modules this session has not
        imported (it could not read the team's messages: nothing is started)."""
        if self.ref.is_file():
            card = TeamCard.from_yaml(self.ref)
            if message is not None:
                check_addressee(card, message)
            model = point_card(card, self.model, self.base_url)
            if self.mcp_config is not None:
                card.mcp_config = str(self.mcp_config.resolve())
            return Chosen(card, model, resume_imports(card.imports, self.imports))
        name = str(self.ref)
        cards = client.cards()
        found = next((c for c in cards if c.name == name), None)
        if found is None:
            known = ", ".join(c.name for c in cards)
            has = f"its cards: {known}" if known else "it has none (akgentic serve --cards PATH)"
            raise CliError(
                f"{name}: no such card file here, and server {client.base_url} has no card of "
                f"that name ({has}): give one of its card names, or the path of a card file to "
                f"post it ({command_line('run', 'path/to/card.yaml', '--server', client.base_url)})"
            )
        for option, value in (("--base-url", self.base_url), ("--mcp-config", self.mcp_config)):
            if value is not None:
                raise CliError(
                    f"{option} changes a card file, not the server's card {name!r}: give the "
                    f"path of a card file to post it with {option}, or leave {option} out"
                )
        missing_imports(name, found.imports)
        if message is not None:
            check_addressee(found, message)
        return Chosen(name, self.model, resume_imports(found.imports, self.imports))


def _run_remote(remote: RemoteStart, url: str, token: str | None, options: ChatOptions) -> int:
    """``run --server``: the same conversation, with the team on the server."""
    with connected(url, token) as client:
        chosen = remote.card(client, options.message)
        before_start(NOT_STARTED, options)
        interrupt.at_once = starting_at_once(
            f"server {url} was starting the team (it may run there)",
            f"its teams: {command_line('teams', 'list', '--server', url)}",
            options,
        )
        team = client.create_team(chosen.card, model=chosen.model)
        console = out_console()
        intro(console, team, f"started on {url}")
        return chat(
            client,
            team,
            options,
            console=console,
            from_seq=1,
            resume=server_command(team.team_id, url, chosen.imports),
        )
