"""Leases: who holds a resource (a team, a worker slot...), for how long, and proof of life.

A lease names a ``resource`` (any string: ``team/<id>``, ``worker/<name>``), its
``holder`` (an owner id — a process, a worker — and the host and pid it runs as), when
that holder took it (``since``) and when it runs out (``expires_at``) unless renewed.
Every backend keeps leases in the same store as the teams, so every process that
shares the teams shares their leases. The contract:

- **Acquisition is one atomic statement**, never check-then-create: the lease is
  taken when it is free, expired, or already the caller's (re-acquiring refreshes it
  and keeps ``since``); otherwise :class:`LeaseHeldError` names the live holder. Of
  any number of callers racing for one free resource, across threads, connections and
  processes, exactly one wins.
- **Expiry is read on the store's clock** (``Lease.expired``, and the decision inside
  ``acquire``), so holders on machines with skewed clocks agree on it.
- ``renew`` extends a lease its owner still holds — even an expired one nobody has
  taken since — and raises :class:`LeaseLostError` when the owner no longer holds it
  (another took it over, or it was released). ``release`` gives it up; releasing a
  lease one does not hold does nothing.
- ``take_over=<owner>`` takes a lease from a holder known to be gone before it expires
  (:func:`holder_is_gone`: on this host, its pid no longer runs) — still atomically:
  it succeeds only while that owner is the holder.
- ``ttl`` is in seconds, ``>= 0``; a lease acquired with ``ttl=0`` is expired at once.
- A **fence** (:class:`Fence`: resource and owner) makes a write conditional on the
  lease: the event log's ``append_encoded`` and ``append_packs`` check, inside the very
  transaction that appends, that the owner still holds the lease — an expired one
  nobody has taken still counts, as for ``renew`` — and otherwise store nothing and
  raise :class:`LeaseLostError`. A holder paused at any point (SIGSTOP, a suspended
  machine) therefore never writes into a log another holder has taken over: the check
  and the write are one.

:class:`Heartbeat` keeps leases alive from one thread and reports the ones lost. A
crashed holder stops renewing, so its lease expires: that is how a crash is told from
a resource busy elsewhere.
"""

from __future__ import annotations

import builtins
import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import ClassVar, Protocol, runtime_checkable
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field

from akgentic.core.error_pickle import reduce_by_fields
from akgentic.storage.errors import RECOVERED, WRITE_FAILED, StorageError

__all__ = [
    "Fence",
    "Heartbeat",
    "Lease",
    "LeaseError",
    "LeaseHeldError",
    "LeaseHolder",
    "LeaseLostError",
    "LeaseStore",
    "check_ttl",
    "holder_is_gone",
    "live_lease",
    "saving_resource",
    "stopping_resource",
    "team_resource",
]

logger = logging.getLogger("akgentic.storage")


class LeaseHolder(BaseModel):
    """Who holds (or asks for) a lease: an owner id, and the host and pid it runs as."""

    model_config: ClassVar[ConfigDict] = ConfigDict(frozen=True, extra="forbid")

    owner: str = Field(min_length=1)
    host: str
    pid: int

    @classmethod
    def here(cls, owner: str | None = None) -> LeaseHolder:
        """This process as a holder (a fresh owner id unless given)."""
        return cls(owner=owner or uuid4().hex, host=socket.gethostname(), pid=os.getpid())

    def describe(self) -> str:
        """``pid 4242 on host build-7``."""
        return f"pid {self.pid} on host {self.host}"


class Lease(BaseModel):
    """A lease as the store has it when read (``expired`` by the store's clock then)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(frozen=True, extra="forbid")

    resource: str
    holder: LeaseHolder
    since: datetime
    """When this holder acquired it (kept across renewals and re-acquisitions)."""
    renewed_at: datetime
    expires_at: datetime
    expired: bool

    def alive(self) -> bool:
        """Whether its holder still counts as holding it: not expired, and not a holder
        known dead (:func:`holder_is_gone`). A crash on this host is told at once, not
        only when the lease runs out."""
        return not self.expired and not holder_is_gone(self.holder)

    def describe(self) -> str:
        """``pid 4242 on host build-7 since 2026-11-30 15:02:11 UTC``."""
        since = self.since.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        return f"{self.holder.describe()} since {since}"


class Fence(BaseModel):
    """A write's condition: ``owner`` still holds the lease on ``resource`` (expired or
    not, as long as nobody else took it), checked in the write's own transaction."""

    model_config: ClassVar[ConfigDict] = ConfigDict(frozen=True, extra="forbid")

    resource: str = Field(min_length=1)
    owner: str = Field(min_length=1)


class LeaseError(StorageError):
    """Base of the lease errors."""


class LeaseHeldError(LeaseError):
    """Another holder's lease on the resource has not expired; ``lease`` names it."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, lease: Lease) -> None:
        super().__init__(f"{lease.resource} is held by {lease.describe()}")
        self.lease = lease


class LeaseLostError(LeaseError):
    """``owner`` no longer holds the lease on ``resource``; ``lease`` is the current one,
    if any. Raised by ``renew``, and by a fenced append that stored nothing."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, resource: str, owner: str, lease: Lease | None) -> None:
        now = f"now held by {lease.describe()}" if lease is not None else "released"
        super().__init__(f"{resource}: the lease of owner {owner} was lost ({now})")
        self.resource = resource
        self.owner = owner
        self.lease = lease


@runtime_checkable
class LeaseStore(Protocol):
    """Leases on named resources; see the module docstring for the contract."""

    def acquire(
        self, resource: str, holder: LeaseHolder, ttl: float, *, take_over: str | None = None
    ) -> Lease:
        """Take (or refresh) the lease, in one atomic statement; LeaseHeldError if held."""
        ...

    def renew(self, resource: str, owner: str, ttl: float) -> Lease:
        """Extend the owner's lease by ``ttl`` from now; LeaseLostError if not held."""
        ...

    def release(self, resource: str, owner: str) -> bool:
        """Give the lease up; True when the owner held it."""
        ...

    def inspect(self, resource: str) -> Lease | None:
        """The lease on ``resource`` (expired or not), or None when nobody holds one."""
        ...

    def list(self, prefix: str = "") -> builtins.list[Lease]:
        """Every lease whose resource starts with ``prefix``, ordered by resource."""
        ...


def live_lease(leases: LeaseStore, resource: str) -> Lease | None:
    """The lease on ``resource`` while its holder still counts as holding it
    (:meth:`Lease.alive`), else None: how a process asks whether another is at something
    (a stop, its saving) — a marker left by a process that died is none. Raises what the
    store raises."""
    lease = leases.inspect(resource)
    return lease if lease is not None and lease.alive() else None


def check_ttl(ttl: float) -> float:
    """``ttl`` as a float of seconds; ValueError unless it is >= 0."""
    if not ttl >= 0:
        raise ValueError(f"a lease ttl is a number of seconds >= 0, got {ttl!r}")
    return float(ttl)


def team_resource(team_id: UUID) -> str:
    """The lease resource of a team: ``team/<id>`` (here, beside the leases, so a reader of
    them — ``akgentic teams list`` — need not import the team layer)."""
    return f"team/{team_id}"


def stopping_resource(team_id: UUID) -> str:
    """The lease resource that says a team's stop is in progress: ``stopping/team/<id>``,
    held by the process stopping it from the stop's start until it has stopped (its
    expiry bounds the stop: the grace and a margin). Outside ``team/``: a list of the
    teams' leases does not see it."""
    return f"stopping/{team_resource(team_id)}"


def saving_resource(team_id: UUID) -> str:
    """The lease resource that says why a team's stop goes on: ``saving/team/<id>``, held
    (with its stop marker, both kept fresh) by the process stopping it while the stop
    still tries to write the team's last records a store refuses — its turns have
    ended. A resume refused as the team still stopping says which it waits for."""
    return f"saving/{team_resource(team_id)}"


def holder_is_gone(holder: LeaseHolder) -> bool:
    """Whether ``holder`` is known dead: it ran on this host and its pid runs no more.

    A holder on another host is never known dead here: only its lease's expiry tells.
    """
    if holder.host != socket.gethostname() or holder.pid <= 0:
        return False
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # it runs, as another user
        return False
    return False


class Heartbeat:
    """Renews leases from one daemon thread, every ``interval`` seconds (``ttl / 3``);
    the thread ends when no lease is left to renew, and the next ``keep`` starts another.

    ``keep(resource, owner)`` adds a lease to renew, ``drop(resource)`` stops renewing
    it. A renewal that raises :class:`LeaseLostError` drops the lease and calls
    ``on_lost(resource, error)`` (from the heartbeat's thread); any other failure (the
    store unreachable) is logged and retried at the next beat — if the lease expires
    meanwhile and someone takes it, that next renewal reports it lost.

    A writer that finds the lease lost first (its fenced write refused: see
    :class:`Fence`) tells :meth:`lost`, which drops and reports it the same way: the
    loss is reported once, whoever finds it.
    """

    def __init__(
        self,
        leases: LeaseStore,
        ttl: float,
        on_lost: Callable[[str, LeaseLostError], None],
        *,
        interval: float | None = None,
    ) -> None:
        self._leases = leases
        self.ttl = check_ttl(ttl)
        self.interval = interval if interval is not None else max(self.ttl / 3, 0.01)
        self._on_lost = on_lost
        self._kept: dict[str, str] = {}
        self._failed: dict[str, int] = {}  # renewals that failed in a row, by resource
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def keep(self, resource: str, owner: str) -> None:
        """Renew ``owner``'s lease on ``resource`` from now on."""
        with self._lock:
            self._kept[resource] = owner
            if self._thread is None and not self._closed.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="akgentic-lease-heartbeat", daemon=True
                )
                self._thread.start()

    def drop(self, resource: str) -> None:
        """Stop renewing ``resource`` (releasing it is the caller's)."""
        with self._lock:
            self._kept.pop(resource, None)

    def kept(self) -> dict[str, str]:
        """The leases renewed: resource -> owner."""
        with self._lock:
            return dict(self._kept)

    def beat(self) -> None:
        """Renew every kept lease once, now (the thread calls this every interval)."""
        for resource, owner in self.kept().items():
            self._renew(resource, owner)

    def lost(self, error: LeaseLostError) -> None:
        """A writer found ``error.owner``'s lease on ``error.resource`` lost: stop
        renewing it and call ``on_lost``, from a thread of its own (the writer may be
        what it stops). Nothing when the lease is no longer kept for that owner (dropped,
        or already reported)."""
        if self._forget(error.resource, error.owner):
            threading.Thread(
                target=self._report,
                args=(error.resource, error),
                name="akgentic-lease-lost",
                daemon=True,
            ).start()

    def _forget(self, resource: str, owner: str) -> bool:
        """Stop renewing ``owner``'s lease; False when it was not kept for that owner."""
        with self._lock:
            if self._kept.get(resource) != owner:
                return False
            del self._kept[resource]
            return True

    def _renew(self, resource: str, owner: str) -> None:
        """Renew one lease; dropped and reported when it is lost."""
        try:
            self._leases.renew(resource, owner, self.ttl)
        except LeaseLostError as lost:
            self._failed.pop(resource, None)
            if self._forget(resource, owner):  # else dropped meanwhile, or reported
                self._report(resource, lost)
        except Exception:
            self._failed[resource] = self._failed.get(resource, 0) + 1
            logger.exception(
                "lease %s: renewal failed; retrying",
                resource,
                extra={WRITE_FAILED: f"lease {resource}"},
            )
        else:
            failed = self._failed.pop(resource, 0)
            if failed:
                logger.info(
                    "lease %s: renewed again after %d failed tries",
                    resource,
                    failed,
                    extra={RECOVERED: f"lease {resource}"},
                )

    def _report(self, resource: str, lost: LeaseLostError) -> None:
        try:
            self._on_lost(resource, lost)
        except Exception:
            logger.exception("lease %s: the on_lost callback failed", resource)

    def close(self) -> None:
        """Stop the thread (the leases are not released)."""
        self._closed.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    def _run(self) -> None:
        while not self._closed.wait(self.interval):
            with self._lock:
                if not self._kept:  # nothing left to renew: the next keep starts a thread
                    self._thread = None
                    return
            self.beat()
