"""``akgentic events TEAM``: a team's event log, one line per record.

Each line: sequence number, local time, kind (the class of the telemetry message or of
the event it carries) and a one-line summary. A row that cannot be decoded is printed in
red as ``CORRUPT`` with the reason, and the listing goes on. ``--follow`` keeps printing
new records until Ctrl-C by polling the storage by sequence number, so it works whichever
process runs the team. Ctrl-C there only sets an event the poll waits on (the listing
ends between two reads, cleanly, with exit code 0).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import nullcontext
from typing import Annotated
from uuid import UUID

import typer
from rich.text import Text

from akgentic.cli import interrupt
from akgentic.cli.describe import Describer
from akgentic.cli.errors import CliError, reporting
from akgentic.cli.options import DebugOption, ImportOption, StorageOption, TeamArgument
from akgentic.cli.output import error_console, local_time, out_console, symbols_for
from akgentic.cli.store import find_team, import_modules, opened_storage, stored_card
from akgentic.storage import EventRecord, StorageBundle

__all__ = ["events", "read_events"]

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
    as it is committed (checked every ``interval`` seconds) until ``stop`` is set."""
    next_seq = max(from_seq, 1)
    stop = stop or threading.Event()
    while True:
        batch = storage.events.read(team_id, from_seq=next_seq, limit=BATCH)
        for record in batch:
            yield record
            next_seq = record.seq + 1
        if len(batch) == BATCH:
            continue
        if not follow or stop.wait(interval):
            return


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
    imports: ImportOption = None,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Print a team's events: seq, time, kind and a one-line summary."""
    with reporting(debug), opened_storage(storage) as (bundle, _):
        import_modules(imports)
        record = find_team(bundle, team)
        try:
            stored_card(record)  # when its card does not decode, some events will not either
        except CliError as exc:
            error_console().print(Text(f"warning: {exc}", style="yellow"))
        console = out_console()
        describer = Describer(symbols_for(console).arrow)
        quiet = interrupt.quietly() if follow else nullcontext(threading.Event())
        with quiet as ctrl_c:  # Ctrl-C is the way to end --follow
            rows = read_events(
                bundle, record.team_id, from_seq, follow=follow, interval=interval, stop=ctrl_c
            )
            for row in rows:
                kind, summary = describer.describe(row)
                line = (
                    f"{row.seq:>5}  {local_time(row.timestamp, millis=True)}  {kind:<22} {summary}"
                )
                console.print(Text(line, style="red" if row.message is None else ""))
