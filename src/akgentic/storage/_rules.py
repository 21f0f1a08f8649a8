"""Rules every backend applies the same way, kept in one place."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from akgentic.storage.errors import InvalidTransitionError, TeamNotFoundError
from akgentic.storage.records import TeamStatus

__all__ = ["check_read_range", "check_transition", "readable_status", "team_not_found"]


def readable_status(stored: Any) -> TeamStatus | None:
    """The stored status, or None when the row holds something else."""
    try:
        return TeamStatus(stored)
    except ValueError:
        return None


def check_transition(team_id: UUID, current: TeamStatus | None, new: TeamStatus) -> None:
    """RUNNING and STOPPED go both ways; DELETED is terminal (re-deleting is a no-op).

    ``current`` is None when the stored status cannot be read: any status replaces it."""
    if current is TeamStatus.DELETED and new is not TeamStatus.DELETED:
        raise InvalidTransitionError(
            f"team {team_id} is DELETED and cannot become {new.value}; a deleted team "
            f"stays deleted (purge it, or create a new team)"
        )


def check_read_range(from_seq: int, to_seq: int | None, limit: int | None) -> int:
    """Validate read arguments; returns the effective first sequence number (>= 1)."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    if to_seq is not None and to_seq < 0:
        raise ValueError(f"to_seq must be >= 0 or None, got {to_seq}")
    return max(from_seq, 1)


def team_not_found(team_id: UUID) -> TeamNotFoundError:
    """The error for a team with no record."""
    return TeamNotFoundError(f"no team {team_id} in this store")
