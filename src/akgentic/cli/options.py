"""The options several commands share (typer ``Annotated`` types)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from akgentic.cli.errors import CliError
from akgentic.cli.store import default_url
from akgentic.core.surrogates import replace_lone_surrogates

__all__ = [
    "BaseUrlOption",
    "DebugOption",
    "IdleOption",
    "ImportOption",
    "McpConfigOption",
    "MessageOption",
    "ModelOption",
    "ServerOption",
    "StorageOption",
    "StreamOption",
    "TeamArgument",
    "TimeoutOption",
    "TokenOption",
    "VerboseOption",
    "one_place",
]


def _default_store() -> str:
    """The default store as the help shows it: the real path of this user's."""
    try:
        return default_url()
    except CliError:  # no home folder: the help still says where it would be
        return "sqlite:///$XDG_DATA_HOME/akgentic/akgentic.db"  # the folder is absolute


StorageOption = Annotated[
    str | None,
    typer.Option(
        "--storage",
        envvar="AKGENTIC_STORAGE",
        metavar="URL",
        show_default=False,
        help="Where teams are kept: sqlite:///relative.db, sqlite:////absolute/path.db, "
        f"postgresql://..., memory:// [default: {_default_store()}]",
    ),
]
DebugOption = Annotated[
    bool, typer.Option("--debug", help="On error, show the traceback (and log at DEBUG).")
]
TeamArgument = Annotated[
    str,
    typer.Argument(
        metavar="TEAM",
        show_default=False,
        help="The team: its id, a unique prefix of its id, or its name when unique.",
    ),
]


def _typed_text(text: str | None) -> str | None:
    """``text`` from the command line as the keyboard reads a typed line: bytes that are
    not UTF-8 (a Latin-1 shell) each become U+FFFD. Python hands such argv bytes over as
    lone surrogates, which no model request can encode: the message was stored, then its
    turn failed with a serialization error instead of being answered. (A lone surrogate
    of another kind, as a Windows command line may hold, becomes U+FFFD too.)"""
    return None if text is None else replace_lone_surrogates(text)


MessageOption = Annotated[
    str | None,
    typer.Option(
        "--message",
        "-m",
        metavar="TEXT",
        show_default=False,
        callback=_typed_text,
        help="Send this one message, print the answer on a line starting 'answer:', stop.",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        envvar="AKGENTIC_MODEL",
        metavar="SPEC",
        show_default=False,
        help="Give every member this model, e.g. openai:gpt-5.2 or scripted:default "
        "[default: the models of the team card]",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        show_default=False,
        help="The server of the openai-compatible models (Ollama: http://localhost:11434/v1, "
        "vLLM: http://localhost:8000/v1) [default: the card's base_url, else OPENAI_BASE_URL]",
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option("--timeout", min=0.1, metavar="SECONDS", help="How long to wait for an answer."),
]
IdleOption = Annotated[
    float,
    typer.Option(
        "--idle",
        min=0.1,
        metavar="SECONDS",
        help="An exchange also ends when no member is working and nothing happened for this long.",
    ),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show every event (receipts, states, usage).")
]
StreamOption = Annotated[
    bool, typer.Option("--stream/--no-stream", help="Print model text as it is written.")
]
McpConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--mcp-config",
        envvar="AKGENTIC_MCP_CONFIG",
        metavar="FILE",
        show_default=False,
        exists=True,
        dir_okay=False,
        help="Give every agent the MCP servers of this mcp.json (Claude Desktop format) "
        "[default: the team card's mcp_config]",
    ),
]
ImportOption = Annotated[
    list[str] | None,
    typer.Option(
        "--import",
        metavar="MODULE",
        show_default=False,
        help="Import MODULE first (repeatable): the modules the team card's 'imports' names, "
        "which stored data never imports by itself.",
    ),
]
ServerOption = Annotated[
    str | None,
    typer.Option(
        "--server",
        envvar="AKGENTIC_SERVER",
        metavar="URL",
        show_default=False,
        help="Work with the teams of an akgentic server (e.g. http://127.0.0.1:8080) "
        "instead of this machine's storage.",
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="AKGENTIC_TOKEN",
        metavar="TOKEN",
        show_default=False,
        help="The server's bearer token (a server off loopback requires one).",
    ),
]


def one_place(server: str | None, storage: str | None) -> str | None:
    """The server a command works with, or None: this machine's storage.

    Given both a server and a store, the one on the command line wins over the one from
    the environment (``AKGENTIC_SERVER`` / ``AKGENTIC_STORAGE``), as any option's flag wins
    over its variable. Both on the command line, or both from the environment, are
    refused: which teams were meant cannot be told, and a ``delete --purge`` of the wrong
    ones is for good."""
    if not server or not storage:
        return server or None
    from typer._click.core import ParameterSource
    from typer._click.globals import get_current_context

    context = get_current_context(silent=True)
    if context is not None:
        typed = ParameterSource.COMMANDLINE
        server_typed = context.get_parameter_source("server") == typed
        if server_typed != (context.get_parameter_source("storage") == typed):
            return server if server_typed else None
    raise CliError(
        f"--server {server} and --storage {storage} name two places (given the same way: "
        f"both on the command line, or both from AKGENTIC_SERVER / AKGENTIC_STORAGE): "
        f"give one"
    )
