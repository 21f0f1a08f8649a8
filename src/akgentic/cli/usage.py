"""``akgentic usage TEAM``: where a team's input tokens went, per member and per card.

Read from the team's event log (every model request is accounted there), so it works for
a running team and a stopped one alike, and with ``--server URL`` for a team on a server
(``GET /teams/{id}/usage``). ``--json`` prints the report as JSON, the same document the
server returns (ASCII only: a non-ASCII character is written ``\\u...``, so no control
character reaches the terminal).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from akgentic.agent.accounting import UsageReport, render_usage
from akgentic.cli.errors import reporting
from akgentic.cli.options import (
    DebugOption,
    ImportOption,
    ServerOption,
    StorageOption,
    TeamArgument,
    TokenOption,
    one_place,
)
from akgentic.cli.output import SafeText, member_name, out_console, short_id, team_name, write_out
from akgentic.cli.remote import connected, find_remote_team
from akgentic.cli.store import find_team, import_modules, opened_storage
from akgentic.team import team_usage

__all__ = ["usage"]


def usage(
    team: TeamArgument,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (as the server returns it).")
    ] = False,
    breakers: Annotated[
        int,
        typer.Option(
            "--breakers", min=0, metavar="N", help="Show the N parts that broke the cache most."
        ),
    ] = 5,
    imports: ImportOption = None,
    storage: StorageOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Show where a team's input tokens went: per member and per card, the share the
    modelled prompt cache served, and what broke the cache most."""
    with reporting(debug):
        import_modules(imports)
        server = one_place(server, storage)
        if server:
            with connected(server, token) as client:
                record = find_remote_team(client, team)
                report = client.get_team(record.team_id).usage()
        else:
            with opened_storage(storage, read_only=True) as (bundle, url):
                record = find_team(bundle, team, url)
                report = team_usage(bundle, record.team_id, record.name)
        if not as_json:  # the document stays the server's; the page names the team in full
            report.team = f"{team_name(record.name)} ({short_id(record.team_id)})"
        _print(report, as_json=as_json, breakers=breakers)


def _print(report: UsageReport, *, as_json: bool, breakers: int) -> None:
    if as_json:
        # JSON's own escapes (a JSON string cannot hold printable's ``\x1b``): every
        # character past ASCII as ``\u...``, so no C1, DEL or bidi control reaches the terminal
        write_out(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=True) + "\n")
        return
    members = [m.model_copy(update={"name": member_name(m.name)}) for m in report.members]
    shown = report.model_copy(update={"members": members})  # each name on its line
    out_console().print(SafeText(render_usage(shown, breakers=breakers)))
