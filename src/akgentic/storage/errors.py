"""The errors a store raises. Decoding failures are *not* among them on read paths.

Reading history never raises for a payload that cannot be decoded: the record carries
the failure instead (see :class:`akgentic.storage.EventRecord`). The errors below are
for calls that cannot be honoured at all.
"""

from __future__ import annotations

__all__ = [
    "LEASE_LOST",
    "READ_FAILED",
    "RECOVERED",
    "WRITE_FAILED",
    "ConfigChangedError",
    "CorruptRecordError",
    "InstanceGoneError",
    "InstanceTypeError",
    "InvalidTransitionError",
    "StorageClosedError",
    "StorageError",
    "StorageNotFoundError",
    "TeamExistsError",
    "TeamNotFoundError",
]


WRITE_FAILED = "akgentic_write_failed"
"""Set on a log record (``extra={WRITE_FAILED: key}``) that says a write failed and what
it held is kept to be tried again (a lease renewal, a batch of the event log); ``key``
names what is retried (``"lease team/…"``, ``"team …"``). The record flagged
:data:`RECOVERED` with the same key says it went through at last."""

READ_FAILED = "akgentic_read_failed"
"""Set on a log record (``extra={READ_FAILED: True}``) that says a read of the store
failed and is tried again later (a team's status, watched): a program that has said a
failing store already (a :data:`WRITE_FAILED` record) may leave it unsaid."""

RECOVERED = "akgentic_recovered"
"""Set on an INFO log record (``extra={RECOVERED: key}``) that says a write which had
failed and been logged (a lease renewal, a batch of the event log) went through at last:
a program that shows the failures once (the CLI) can say the condition ended. ``key`` is
the one its failures carried as :data:`WRITE_FAILED` (``True``: whatever failed)."""

LEASE_LOST = "akgentic_lease_lost"
"""Set on a log record (``extra={LEASE_LOST: True}``) that says this process lost a team's
lease (another process took the team over) and what that cost: a program that tells the
person in its own words (the CLI session) may skip the line."""


class StorageError(Exception):
    """Base of every error raised by ``akgentic.storage``."""


class StorageNotFoundError(StorageError, LookupError):
    """A reader asked for a store that does not exist (``open_storage(url, create=False)``)."""


class StorageClosedError(StorageError):
    """The store was closed; open a new one to go on."""


class TeamNotFoundError(StorageError, LookupError):
    """No team record has this id."""


class TeamExistsError(StorageError, ValueError):
    """A team record with this id already exists."""


class InvalidTransitionError(StorageError, ValueError):
    """The requested status change is not allowed (a DELETED team stays deleted)."""


class InstanceTypeError(StorageError, ValueError):
    """A catalog instance of this name exists with another type: one name, one type."""


class InstanceGoneError(StorageError, LookupError):
    """A catalog write made for the row that was read finds it no longer stored: it was
    removed (and perhaps a new row of that name made since), or a row was made where none
    was read. Nothing was written: what was made for the old row does not describe the
    new one."""


class ConfigChangedError(StorageError):
    """A catalog config written over a stored config that another writer changed since it
    was read: nothing was written (read it again, and retry)."""


class CorruptRecordError(StorageError):
    """A stored payload cannot be decoded; raised only when a caller asks for the value.

    The message names the team, the row (event sequence or agent id) and the reason.
    """
