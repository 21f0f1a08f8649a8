"""``akgentic teams list | show | stop | delete --server URL``: a server's teams.

The same commands as on a store, through the server's HTTP API (:mod:`akgentic.client`),
so ``AKGENTIC_SERVER`` (or ``--server``) reaches every team command, not only ``run``,
``teams resume``, ``events`` and ``usage``. Imported only with ``--server``: the client is
not needed to list a store's teams.

What a server says differs from a store's records in one place: who runs a team. A
server knows whether the team runs *in it* (``RUNNER``: ``this server``), not which other
process may run it; a team another process runs is refused by the server's stop and
delete in the server's own words.
"""

from __future__ import annotations

import sys

import typer

from akgentic.cli import interrupt
from akgentic.cli.errors import EXIT_ERROR, CliError
from akgentic.cli.keyboard import Keyboard
from akgentic.cli.output import (
    SafeText,
    command_line,
    error_console,
    local_time,
    member_name,
    out_console,
    print_table,
    team_name,
    team_title,
)
from akgentic.cli.remote import connected, find_remote_team
from akgentic.client import AkgenticClient, ServerError
from akgentic.core import counted
from akgentic.storage import TeamStatus

__all__ = [
    "confirm_purge",
    "delete_remote",
    "list_remote",
    "show_remote",
    "stop_remote",
]


def _none_listed(stored: int, status: str | None, url: str) -> str:
    """Why the server's list is empty, as a store's says it: no teams at all, or none the
    filter lets through (``--status``, or leaving the deleted ones out), and how to list
    them."""
    if not stored:
        start = command_line("run", "TEAM.yaml", "--server", url)
        return f"no teams yet on {url}; start one with: {start}"
    which = f"match --status {status}" if status is not None else "but deleted ones"
    every = command_line("teams", "list", "--all", "--server", url)
    return f"no teams {which} ({counted(stored, 'team')} on {url}; list them all with: {every})"


def list_remote(url: str, token: str | None, *, everything: bool, status: str | None) -> None:
    """The server's teams, oldest first, in ``teams list``'s columns; ``status`` filters
    on the status shown (DAMAGED too), as on a store."""
    with connected(url, token) as client:
        stored = client.list_teams(include_deleted=True)
    if status is not None:
        teams = [t for t in stored if t.status == status]
    else:
        teams = [t for t in stored if everything or t.status != TeamStatus.DELETED.value]
    teams.sort(key=lambda t: (t.created_at is None, t.created_at))
    console = out_console()
    if not teams:
        console.print(SafeText(_none_listed(len(stored), status, url), style="dim"))
        return
    rows = [("ID", "NAME", "STATUS", "EVENTS", "UPDATED", "RUNNER")]
    for t in teams:
        rows.append(
            (
                str(t.team_id),
                team_name(t.name),
                t.status,
                str(t.last_seq),
                local_time(t.updated_at),
                "this server" if t.running else "",
            )
        )
    print_table(console, rows)


def show_remote(url: str, token: str | None, ref: str) -> None:
    """The server's team ``ref``: its record, members, last seq and interrupted turns."""
    with connected(url, token) as client:
        info = client.info(find_remote_team(client, ref).team_id)
        members = client.get_team(info.team_id).members() if info.running else []
    console = out_console()
    fields = [
        ("team", f"{team_name(info.name)} ({info.team_id})"),
        ("card", team_name(info.card_name)),
        ("status", info.status),
        ("server", f"{url} ({'runs it' if info.running else 'does not run it now'})"),
        ("created", local_time(info.created_at)),
        ("updated", local_time(info.updated_at)),
        ("last seq", str(info.last_seq)),
    ]
    if info.entry_point is not None:
        fields.append(("entry", member_name(info.entry_point)))
    for key, value in fields:
        console.print(SafeText(f"{key + ':':<10}{value}"))
    if info.interrupted:  # as a store's team says it
        count = len(info.interrupted)
        said = f"interrupted turns: {count}; the next resume offers them"
        console.print(SafeText(said, style="yellow"))
    if members:
        console.print(SafeText("members:"))
        for member in members:
            details = [member.role, member.model or "", "busy" if member.busy else ""]
            line = "  ".join([member_name(member.name), *filter(None, details)])
            console.print(SafeText(f"  {line}"))


def stop_remote(url: str, token: str | None, ref: str) -> None:
    """Stop the server's team ``ref`` gracefully (returns once it has stopped)."""
    with connected(url, token) as client:
        record = find_remote_team(client, ref)
        title = team_title(record.name, record.team_id)
        if record.status == TeamStatus.DELETED:
            raise CliError(f"{title} was deleted; there is nothing to stop")
        if record.status == TeamStatus.STOPPED:
            if client.info(record.team_id).running:  # asked already: the server is on it
                out_console().print(
                    SafeText(
                        f"{title} is stopping on {url}: the server waits for the turns in "
                        f"progress; nothing more to do"
                    )
                )
            else:
                out_console().print(SafeText(f"{title} is already stopped"))
            return
        info = client.stop_team(record.team_id)
    out_console().print(SafeText(f"{team_title(info.name, info.team_id)} is now {info.status}"))


def delete_remote(url: str, token: str | None, ref: str, *, purge: bool, yes: bool) -> None:
    """Mark the server's team ``ref`` DELETED, or remove it with ``purge`` (asked first,
    as on a store)."""
    with connected(url, token) as client:
        record = find_remote_team(client, ref)
        title = team_title(record.name, record.team_id)
        if record.status == TeamStatus.DELETED and not purge:
            out_console().print(SafeText(f"{title} is already deleted (--purge removes it)"))
            return
        if purge and not yes:
            confirm_purge(title)
        _delete(client, record.team_id, purge, title)
    if purge:
        out_console().print(SafeText(f"{title} purged from {url}"))
    else:
        out_console().print(SafeText(f"{title} deleted; its history is kept (--purge removes it)"))


def confirm_purge(title: str) -> None:
    """Ask before ``--purge`` removes a team for good (a store's or a server's); with no
    terminal to ask, refuse in one line that says to confirm with ``--yes``.

    An answer other than yes ends the command with one line, ``nothing purged``: exit
    code 1 for a no or the end of input (as an end of input at any prompt), and 128 + the
    signal's number for Ctrl-C (SIGTERM, SIGHUP), as a Ctrl-C anywhere else.

    The answer is read by a :class:`Keyboard`, not ``input()``: a Ctrl-C that lands
    between ``input()``'s last look at the signals and its read is not seen until a line
    is typed (the process sits at the prompt, deaf to the first Ctrl-C); the keyboard's
    wait wakes every :data:`interrupt.SLICE` seconds, so the signal is taken there."""
    if not sys.stdin.isatty():
        raise CliError(
            f"--purge removes {title} and all its history for good; with no terminal to ask, "
            f"confirm with --yes"
        )
    keyboard = Keyboard()
    prompt = f"Remove {title} and all its history? [y/N]: "
    answer: str | None = ""
    try:
        while True:
            line = keyboard.line(prompt)
            answer = line.strip().lower() if isinstance(line, str) else None
            if answer in ("y", "yes"):
                return
            if answer in (None, "", "n", "no"):
                break
            prompt = "answer y or n: "
    except KeyboardInterrupt:  # the prompt's line is left open
        typer.echo()
    finally:
        keyboard.end()
    if answer is None:  # the end of input: the prompt's line is left open
        typer.echo()
    kept = f"nothing purged: {title} is kept"
    if interrupt.cause():  # a signal the console script's handler took
        error_console().print(SafeText(f"interrupted: {kept}", style="yellow"))
        raise typer.Exit(interrupt.exit_code())
    error_console().print(SafeText(kept))
    raise typer.Exit(EXIT_ERROR)


def _delete(client: AkgenticClient, team_id: object, purge: bool, title: str) -> None:
    try:
        client.delete_team(str(team_id), purge=purge)
    except ServerError as exc:
        if exc.status == 409:  # it runs: the server says where; stopping it comes first
            raise CliError(f"{title}: {exc.detail}") from None
        raise
