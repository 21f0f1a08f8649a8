"""For tests that damage one stored event with SQL: a team's event packs as rows.

The recorder stores a busy team's events in packs (one row of ``akgentic_event_packs``
for many events). A test that means to damage *one* event (its payload, its time) turns
the team's packs into the rows they stand for first — the same numbers, times and
texts — so that an ``UPDATE akgentic_events ... WHERE seq = ?`` finds its row.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import UUID

from akgentic.storage import decode_pack
from akgentic.storage._codec import iso_time


def unpack_events(path: Path | str, team_id: UUID) -> int:
    """Rewrite the team's packs in the SQLite file at ``path`` as rows; how many events
    were moved. Asserts that at least one was (a test must not damage nothing)."""
    team = str(team_id)
    moved = 0
    with sqlite3.connect(path) as db:
        packs = db.execute(
            "SELECT first_seq, data FROM akgentic_event_packs WHERE team_id = ?", (team,)
        ).fetchall()
        for first, data in packs:
            for offset, (stamp, text) in enumerate(decode_pack(data)):
                db.execute(
                    "INSERT INTO akgentic_events (team_id, seq, ts, payload) VALUES (?, ?, ?, ?)",
                    (team, first + offset, iso_time(stamp), text),
                )
                moved += 1
        db.execute("DELETE FROM akgentic_event_packs WHERE team_id = ?", (team,))
    assert moved, f"team {team} has no event pack to unpack"
    return moved
