"""Leases over SQL, written once for SQLite and Postgres (see :mod:`akgentic.storage.lease`).

Times are seconds since the epoch, read from the database's own clock
(``Driver.epoch_now``) inside each statement: every process sharing the store judges
expiry by one clock. ``acquire`` is a single ``INSERT ... ON CONFLICT DO UPDATE ...
WHERE ... RETURNING``: the row is taken only when it is free, expired, the caller's, or
the named ``take_over`` owner's — decided and written in one statement, under the row's
lock, so two acquirers never both win.

A fenced append (:class:`~akgentic.storage.lease.Fence`) is each backend's: the
condition "the owner holds the lease" rides in its insert statement, and a statement that
inserted nothing because of it reports the loss with :func:`fence_refused`. A fenced
working-memory or status change checks the same condition first in its transaction
(``Driver.check_fence``), and reports a loss the same way.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from akgentic.storage.lease import (
    Fence,
    Lease,
    LeaseHeldError,
    LeaseHolder,
    LeaseLostError,
    check_ttl,
)

if TYPE_CHECKING:
    from akgentic.storage._sql import Cursor, Driver

__all__ = ["SqlLeases", "fence_refused"]

_COLUMNS = "resource, owner, host, pid, since, renewed_at, expires_at"


class SqlLeases:
    """The :class:`~akgentic.storage.lease.LeaseStore` of a SQL backend."""

    def __init__(self, driver: Driver) -> None:
        self._db = driver
        now = driver.epoch_now
        self._returning = f"RETURNING {_COLUMNS}, expires_at <= {now}"
        self._acquire = (
            f"INSERT INTO akgentic_leases ({_COLUMNS}) "
            f"VALUES (?, ?, ?, ?, {now}, {now}, {now} + ?) "
            "ON CONFLICT (resource) DO UPDATE SET owner = excluded.owner, "
            "host = excluded.host, pid = excluded.pid, "
            "since = CASE WHEN akgentic_leases.owner = excluded.owner "
            "THEN akgentic_leases.since ELSE excluded.since END, "
            "renewed_at = excluded.renewed_at, expires_at = excluded.expires_at "
            "WHERE akgentic_leases.owner = excluded.owner "
            f"OR akgentic_leases.expires_at <= {now} OR akgentic_leases.owner = ? "
            f"{self._returning}"
        )
        self._renew = (
            f"UPDATE akgentic_leases SET renewed_at = {now}, expires_at = {now} + ? "
            f"WHERE resource = ? AND owner = ? {self._returning}"
        )
        self._select = f"SELECT {_COLUMNS}, expires_at <= {now} FROM akgentic_leases"

    def acquire(
        self, resource: str, holder: LeaseHolder, ttl: float, *, take_over: str | None = None
    ) -> Lease:
        ttl = check_ttl(ttl)
        params = (resource, holder.owner, holder.host, holder.pid, ttl, take_over or "")
        while True:
            with self._db.write() as cur:
                row = cur.execute(self._acquire, params).fetchone()
            if row is not None:
                return _lease(row)
            current = self.inspect(resource)
            if current is not None and not current.expired:
                raise LeaseHeldError(current)
            # released or expired between the two statements: try again

    def renew(self, resource: str, owner: str, ttl: float) -> Lease:
        ttl = check_ttl(ttl)
        with self._db.write() as cur:
            row = cur.execute(self._renew, (ttl, resource, owner)).fetchone()
        if row is None:
            raise LeaseLostError(resource, owner, self.inspect(resource))
        return _lease(row)

    def release(self, resource: str, owner: str) -> bool:
        with self._db.write() as cur:
            cur.execute(
                "DELETE FROM akgentic_leases WHERE resource = ? AND owner = ?", (resource, owner)
            )
            return cur.rowcount > 0

    def inspect(self, resource: str) -> Lease | None:
        with self._db.read() as cur:
            row = cur.execute(f"{self._select} WHERE resource = ?", (resource,)).fetchone()
        return None if row is None else _lease(row)

    def list(self, prefix: str = "") -> builtins.list[Lease]:
        with self._db.read() as cur:
            rows = cur.execute(
                f"{self._select} WHERE substr(resource, 1, ?) = ? ORDER BY resource",
                (len(prefix), prefix),
            ).fetchall()
        return [_lease(row) for row in rows]


def fence_refused(cur: Cursor, db: Driver, fence: Fence) -> LeaseLostError:
    """The error of an append ``fence`` refused, naming the lease as ``cur`` sees it now
    (read on the caller's cursor: inside its transaction, or under its lock)."""
    row = cur.execute(
        f"SELECT {_COLUMNS}, expires_at <= {db.epoch_now} FROM akgentic_leases WHERE resource = ?",
        (fence.resource,),
    ).fetchone()
    return LeaseLostError(fence.resource, fence.owner, None if row is None else _lease(row))


def _lease(row: Sequence[Any]) -> Lease:
    resource, owner, host, pid, since, renewed_at, expires_at, expired = row
    return Lease(
        resource=resource,
        holder=LeaseHolder(owner=owner, host=host, pid=int(pid)),
        since=_time(since),
        renewed_at=_time(renewed_at),
        expires_at=_time(expires_at),
        expired=bool(expired),
    )


def _time(epoch: Any) -> datetime:
    return datetime.fromtimestamp(float(epoch), UTC)
