"""``akgentic events TEAM``: a team's event log, one line per record.

Each line: sequence number, local time, kind (the class of the telemetry message or of
the event it carries) and a one-line summary. A row that cannot be decoded is printed in
red as ``CORRUPT`` with the reason, and the listing goes on. ``--follow`` keeps printing
new records until Ctrl-C by polling the storage by sequence number, so it works whichever
process runs the team. Ctrl-C there only sets an event the poll waits on (the listing
ends between two reads, cleanly, with exit code 130 as every command's Ctrl-C). With
``--server URL`` the records come from that server (its history pages, then its event
stream); a team deleted there while ``--follow`` waits on it ends the listing with one
line saying so, exit code 1 — as does a team of this machine's store deleted (or purged)
while it waits. ``--json`` prints each record as one line of JSON instead, its
message whole (the summary clips a long text). A listing that prints nothing says why on
stderr:
``--from`` past the last event (and which is the last), or a team with no events yet.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from typing import Annotated
from uuid import UUID

import typer

from akgentic.cli import interrupt
from akgentic.cli.describe import Describer
from akgentic.cli.errors import EXIT_ERROR, CliError, reporting
from akgentic.cli.options import (
    DebugOption,
    ImportOption,
    ServerOption,
    StorageOption,
    TeamArgument,
    TokenOption,
    one_place,
)
from akgentic.cli.output import (
    SafeText,
    error_console,
    local_time,
    out_console,
    symbols_for,
    team_title,
    write_out,
)
from akgentic.cli.remote import connected, find_remote_team, read_remote
from akgentic.cli.store import find_team, import_modules, opened_storage, stored_card
from akgentic.client import TeamDeletedError
from akgentic.core.serialization import serialize
from akgentic.core.surrogates import replace_lone_surrogates_in
from akgentic.storage import EventRecord, StorageBundle, TeamStatus

__all__ = ["TeamGoneError", "events", "read_events"]

BATCH = 500


def read_events(
    storage: StorageBundle,
    team_id: UUID,
    from_seq: int = 1,
    *,
    follow: bool = False,
    interval: float = 0.25,
    stop: threading.Event | None = None,
) -> Iterator[EventRecord]:
    """The team's records from ``from_seq`` on, in order; with ``follow``, then each new one
    as it is committed (checked every ``interval`` seconds) until ``stop`` is set, or
    :class:`TeamGoneError` once the team is deleted or purged (nothing more will come: a
    follow would wait on it for ever)."""
    next_seq = max(from_seq, 1)
    stop = stop or threading.Event()
    while True:
        batch = storage.events.read(team_id, from_seq=next_seq, limit=BATCH)
        for record in batch:
            yield record
            next_seq = record.last + 1
        if len(batch) == BATCH:
            continue
        if follow and not batch:  # idle: is there still a team to wait on?
            team = storage.teams.get(team_id)
            if team is None or team.status is TeamStatus.DELETED:
                raise TeamGoneError("purged" if team is None else "deleted")
        if not follow or stop.wait(interval):
            return


class TeamGoneError(Exception):
    """The team a ``--follow`` waits on was deleted (its record kept) or purged."""


CONTEXT_WINDOW = 5000
"""How many records before ``--from`` are read to describe the printed ones."""


def events(
    team: TeamArgument,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new events until Ctrl-C.")
    ] = False,
    from_seq: Annotated[
        int, typer.Option("--from", min=1, metavar="N", help="Start at sequence number N.")
    ] = 1,
    interval: Annotated[
        float,
        typer.Option("--interval", min=0.01, metavar="SECONDS", help="Poll interval of --follow."),
    ] = 0.25,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="One JSON object per event, its whole message (for jq, a long answer)."
        ),
    ] = False,
    imports: ImportOption = None,
    storage: StorageOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Print a team's events: seq, time, kind and a one-line summary."""
    with reporting(debug):
        import_modules(imports)
        server = one_place(server, storage)
        if server:
            with connected(server, token) as client:
                record = find_remote_team(client, team)
                remote = client.get_team(record.team_id)
                rows = (
                    remote.follow(from_seq, end_when_stopped=False)
                    if follow
                    else read_remote(remote, from_seq)
                )
                before = read_remote(remote, _context_start(from_seq), to_seq=from_seq - 1)
                title = team_title(record.name, record.team_id)
                try:
                    printed = _print(rows, earlier=before, as_json=as_json)
                except TeamDeletedError:
                    error_console().print(
                        SafeText(f"error: {title} was deleted on the server", style="red")
                    )
                    raise typer.Exit(EXIT_ERROR) from None
                if not printed and not follow:
                    _say_why_nothing(from_seq, title, None)
            return
        with opened_storage(storage, read_only=True) as (bundle, url):
            record = find_team(bundle, team, url)
            try:
                stored_card(record)  # when its card does not decode, some events will not either
            except CliError as exc:
                error_console().print(SafeText(f"warning: {exc}", style="yellow"))
            earlier = bundle.events.read(
                record.team_id, from_seq=_context_start(from_seq), to_seq=from_seq - 1
            )
            quiet = interrupt.quietly() if follow else nullcontext(threading.Event())
            with quiet as ctrl_c:  # Ctrl-C is the way to end --follow
                rows = read_events(
                    bundle, record.team_id, from_seq, follow=follow, interval=interval, stop=ctrl_c
                )
                try:
                    printed = _print(rows, earlier=earlier, as_json=as_json)
                except TeamGoneError as gone:
                    title = team_title(record.name, record.team_id)
                    error_console().print(SafeText(f"error: {title} was {gone}", style="red"))
                    raise typer.Exit(EXIT_ERROR) from None
            if ctrl_c.is_set():
                raise typer.Exit(interrupt.exit_code())
            if not printed and not follow:
                last = bundle.events.last_seq(record.team_id)
                _say_why_nothing(from_seq, team_title(record.name, record.team_id), last)


def _say_why_nothing(from_seq: int, title: str, last: int | None) -> None:
    """Why a listing printed nothing: no events yet, or ``--from`` past the log's end
    (``last``: the last seq, when known)."""
    if last == 0 or (last is None and from_seq <= 1):
        text = f"{title} has no events yet"
    elif last is None:
        text = f"no events from seq {from_seq} on: the log of {title} ends before it"
    else:
        text = f"no events from seq {from_seq} on: the last event of {title} is seq {last}"
    error_console().print(SafeText(text, style="yellow"))


def _context_start(from_seq: int) -> int:
    """Where the records read only for context begin (see :func:`_print`)."""
    return max(1, from_seq - CONTEXT_WINDOW)


def _print(
    rows: Iterable[EventRecord], earlier: Iterable[EventRecord] = (), *, as_json: bool = False
) -> int:
    """Print ``rows``, described as the whole log would describe them; how many were printed.

    A line that refers to an earlier message ("@Manager received @Human's message") needs
    that message's send, which may lie before ``--from``: the ``earlier`` records (up to
    ``CONTEXT_WINDOW`` of them) are read for it and not printed. ``as_json``: each row is
    one line of JSON (:func:`_json_line`) instead: nothing clipped, nothing to escape.
    """
    if as_json:
        printed = 0
        try:
            for row in rows:
                write_out(_json_line(row) + "\n")
                printed += 1
        except KeyboardInterrupt:
            raise typer.Exit(interrupt.exit_code()) from None
        return printed
    console = out_console()
    describer = Describer(symbols_for(console).arrow)
    for row in earlier:
        describer.describe(row)
    printed = 0
    try:
        for row in rows:
            kind, summary = describer.describe(row)
            line = f"{row.seq:>5}  {local_time(row.timestamp, millis=True)}  {kind:<22} {summary}"
            console.print(SafeText(line, style="red" if row.message is None else ""))
            printed += 1
    except KeyboardInterrupt:  # the way to end --follow of a server's team
        raise typer.Exit(interrupt.exit_code()) from None
    return printed


def _json_line(row: EventRecord) -> str:
    """``row`` as one line of JSON: ``seq``, ``timestamp`` (ISO 8601, UTC, or null),
    ``message`` (the message as stored: its ``__model__`` and fields, or null when the row
    cannot be decoded) and ``error`` (why not, or null). ASCII only: a hostile text cannot
    reach the terminal as a control sequence. A lone surrogate (a record stored before
    text was made sound where it enters a team) is U+FFFD, as every other line of the CLI
    shows it (``printable``), never a ``\\ud800`` escape a strict JSON reader refuses."""
    line = {
        "seq": row.seq,
        "timestamp": None if row.timestamp is None else row.timestamp.isoformat(),
        "message": None if row.message is None else serialize(row.message),
        "error": row.error,
    }
    return json.dumps(replace_lone_surrogates_in(line), separators=(",", ":"))
