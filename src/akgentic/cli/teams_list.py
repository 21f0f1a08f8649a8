"""``akgentic teams list``: the teams of a storage and who runs them, from their records.

A module of its own, apart from :mod:`akgentic.cli.teams`, because it reads records and
leases only — never a card or an event — so it imports no team, agent or model layer:
listing the teams is quick (the commands are imported when used, :mod:`akgentic.cli.lazy`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from akgentic.cli.errors import reporting
from akgentic.cli.options import (
    DebugOption,
    ServerOption,
    StorageOption,
    TokenOption,
    one_place,
)
from akgentic.cli.output import (
    SafeText,
    command_line,
    error_console,
    local_time,
    out_console,
    print_table,
    team_name,
)
from akgentic.cli.store import (
    DAMAGED,
    LEGACY_STORE,
    card_problem,
    default_store,
    opened_storage,
    read_only,
    read_only_words,
    shown_url,
    status_label,
    storage_option,
)
from akgentic.core import counted
from akgentic.storage import (
    Lease,
    TeamRecord,
    TeamStatus,
    holder_is_gone,
    sqlite_url,
    team_resource,
)

__all__ = ["ShownStatus", "list_teams", "runner", "stale_reason"]


class ShownStatus(StrEnum):
    """A status as the list shows it, what ``--status`` filters on: a stored one, or
    DAMAGED (a record the store could not read whole: :func:`status_label`)."""

    RUNNING = TeamStatus.RUNNING.value
    STOPPED = TeamStatus.STOPPED.value
    DELETED = TeamStatus.DELETED.value
    DAMAGED = DAMAGED


def list_teams(
    everything: Annotated[bool, typer.Option("--all", "-a", help="Include DELETED teams.")] = False,
    status: Annotated[
        ShownStatus | None,
        typer.Option(
            "--status",
            case_sensitive=False,
            help="Only teams in this status (as listed: DAMAGED too).",
        ),
    ] = None,
    storage: StorageOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """List the teams, oldest first: id, name, status, events, last update, the process
    running it. With --server, that server's teams."""
    with reporting(debug):
        server = one_place(server, storage)
    if server:
        with reporting(debug):
            from akgentic.cli.teams_remote import list_remote  # only for a server

            list_remote(server, token, everything=everything, status=status)
        return
    with reporting(debug), opened_storage(storage, read_only=True) as (bundle, url):
        stored = bundle.teams.list()
        if status is not None:
            teams = [t for t in stored if status_label(t) == status]
        elif not everything:
            teams = [t for t in stored if t.status != TeamStatus.DELETED]
        else:
            teams = stored
        console = out_console()
        if not teams:
            said = _none_listed(stored, status, url, writable=not read_only(bundle))
            console.print(SafeText(said, style="dim"))
            _note_legacy_store(storage)
            return
        leases = {lease.resource: lease for lease in bundle.leases.list("team/")}
        rows = [("ID", "NAME", "STATUS", "EVENTS", "UPDATED", "RUNNER")]
        for t in teams:
            last = str(bundle.events.last_seq(t.team_id))
            run_by = runner(leases.get(team_resource(t.team_id)))
            rows.append(
                (
                    str(t.team_id),
                    team_name(t.name),
                    status_label(t),
                    last,
                    local_time(t.updated_at),
                    run_by,
                )
            )
        print_table(console, rows)
        for t in teams:
            if (problem := t.error or card_problem(t)) is not None:
                error_console().print(SafeText(f"warning: {problem}", style="yellow"))


def _none_listed(
    stored: list[TeamRecord], status: ShownStatus | None, url: str, *, writable: bool
) -> str:
    """Why the list is empty, true of the store: no teams at all, or none that the filter
    (``--status``, or leaving the deleted ones out) lets through — and how to list them.
    An empty store read-only here (not ``writable``) is not said to take a new team."""
    if not stored and not writable:
        return f"no teams in {shown_url(url)}; {read_only_words(url, 'starting one')}"
    if not stored:
        return f"no teams yet in {shown_url(url)}; start one with: akgentic run TEAM.yaml"
    which = f"match --status {status.value}" if status is not None else "but deleted ones"
    every = command_line("teams", "list", "--all", *storage_option(url))
    count = counted(len(stored), "team")
    return f"no teams {which} ({count} in {shown_url(url)}; list them all with: {every})"


def _note_legacy_store(option: str | None) -> None:
    """Teams an earlier version kept under this folder (``.akgentic/akgentic.db``) are not
    in the per-user default store: say where they are and how to reach or move them."""
    if (option or "").strip() or not LEGACY_STORE.is_file():
        return
    old = sqlite_url(LEGACY_STORE)
    error_console().print(
        SafeText(
            f"note: {LEGACY_STORE} here holds teams of an earlier akgentic: list them with: "
            f"{command_line('teams', 'list', '--storage', old)}, or move the file to "
            f"{default_store()} to make it the default",
            style="yellow",
        )
    )


def runner(lease: Lease | None) -> str:
    """Who runs the team, for ``list`` and ``show``: ``pid 4242 on host box since ...``,
    or ``nobody (...)`` saying why its last holder no longer does."""
    if lease is None:
        return ""
    stale = stale_reason(lease)
    return f"nobody ({stale})" if stale else lease.describe()


def stale_reason(lease: Lease) -> str:
    """Why ``lease``'s holder no longer runs the team (a crash), or "" while it does."""
    if holder_is_gone(lease.holder):  # known for sure, however long ago it died
        return f"{lease.describe()}; that process is gone"
    if lease.expired:
        return f"{lease.describe()}; its lease expired at {lease.expires_at:%H:%M:%S} UTC"
    return ""
