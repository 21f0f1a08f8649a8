"""Keyset paging of ``GET /teams``: a page's ``next`` names its last team by its place in
the list, so the next page (``after=<next>``) starts right after that team whatever was
created or deleted meanwhile. An offset counts places instead: a team created between two
pages (listed first, newest first) moves every team down one, so the next page repeats
the last team of the page before; one deleted moves them up one, so a team is skipped.

The place is ``(created_at, team_id)``, newest first; a damaged record whose time does not
read (``created_at`` None) comes last, as the oldest. A cursor is that key as text,
``<created_at ISO>,<team_id>`` (no time before the comma for a damaged record): opaque to
a client, which hands back what the server gave.
"""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

from akgentic.storage import TeamRecord

__all__ = ["PlaceKey", "cursor_of", "listed_after", "newest_first", "parse_cursor"]

PlaceKey = tuple[bool, datetime, str]
"""A team's place in the list, compared ascending (the list is sorted descending)."""

_UNREAD = datetime.min.replace(tzinfo=UTC)


def _key(created_at: datetime | None, team_id: UUID) -> PlaceKey:
    return (created_at is not None, created_at or _UNREAD, str(team_id))


def newest_first(records: list[TeamRecord]) -> list[TeamRecord]:
    """``records`` in the list's order: newest first."""
    return sorted(records, key=lambda r: _key(r.created_at, r.team_id), reverse=True)


def cursor_of(record: TeamRecord) -> str:
    """The cursor after ``record``: what a page ending with it gives as ``next``."""
    created = record.created_at.isoformat() if record.created_at is not None else ""
    return f"{created},{record.team_id}"


def parse_cursor(cursor: str) -> PlaceKey:
    """The place ``cursor`` names; ValueError saying what is wrong (not one the server
    gave: a client hands back a page's ``next`` as it is)."""
    created, _, team = cursor.rpartition(",")
    try:
        team_id = UUID(team)
        when = datetime.fromisoformat(created) if created else None
    except ValueError:
        when, team_id = None, None
    if team_id is None or (when is not None and when.tzinfo is None):
        raise ValueError(
            f"after={cursor!r} is not a cursor this server gave: pass the 'next' of the "
            f"page before as it is, or leave 'after' out to start from the newest team"
        )
    return _key(when.astimezone(UTC) if when is not None else None, team_id)


def listed_after(records: list[TeamRecord], place: PlaceKey) -> list[TeamRecord]:
    """Those of ``records`` (newest first) listed after ``place``."""
    return [r for r in records if _key(r.created_at, r.team_id) < place]
