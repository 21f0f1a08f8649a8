"""akgentic.storage: everything a team keeps, behind one bundle of small protocols.

A :class:`StorageBundle` holds team records, each team's append-only event log (with
gap-free per-team sequence numbers), the latest state of each agent, each agent's
working memory, the skill catalog, the tool catalog's instances and audit trail, and
leases (who holds a team, kept alive by a heartbeat). Backends: in-memory (tests),
SQLite (the embedded default) and Postgres (shared by several processes), all opened
with :func:`open_storage` and all passing one contract test suite. See README.md beside this file.

``PostgresStorage`` is imported on first use, so SQLite users need no psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from akgentic.storage._codec import (
    EncodedEvent,
    MemoryRow,
    StateRow,
    dump_objects,
    encode_event,
    encode_receipt,
    encode_sent,
    encode_state,
    encode_value,
)
from akgentic.storage._pack import (
    AddressIndex,
    decode_pack,
    pack_count,
    pack_encoded,
    pack_records,
    send_position,
)
from akgentic.storage._rules import MAX_SEQ, check_team_name
from akgentic.storage._url import ACCEPTED_URLS, open_storage, sqlite_path, sqlite_url
from akgentic.storage.errors import (
    LEASE_LOST,
    READ_FAILED,
    RECOVERED,
    WRITE_FAILED,
    ConfigChangedError,
    CorruptRecordError,
    InstanceGoneError,
    InstanceTypeError,
    InvalidTransitionError,
    StorageClosedError,
    StorageError,
    StorageNotFoundError,
    TeamExistsError,
    TeamNotFoundError,
)
from akgentic.storage.lease import (
    Fence,
    Heartbeat,
    Lease,
    LeaseError,
    LeaseHeldError,
    LeaseHolder,
    LeaseLostError,
    LeaseStore,
    holder_is_gone,
    live_lease,
    saving_resource,
    stopping_resource,
    team_resource,
)
from akgentic.storage.memory import MemoryStorage
from akgentic.storage.protocols import (
    CatalogStore,
    EventLog,
    SkillStore,
    StateStore,
    StorageBundle,
    TeamStore,
    WorkingMemoryStore,
)
from akgentic.storage.records import (
    CATALOG_STATUSES,
    CATALOG_SURFACES,
    CatalogAuditEntry,
    CatalogAuditRecord,
    DecodeFailure,
    EventRecord,
    ProbedWith,
    SkillRecord,
    StateRecord,
    TeamRecord,
    TeamStatus,
    ToolInstanceRecord,
    corrupt_rows,
)
from akgentic.storage.sqlite import SqliteOptions, SqliteStorage
from akgentic.storage.watch import EventWatch, open_watch

if TYPE_CHECKING:
    from akgentic.storage.postgres import PostgresOptions, PostgresStorage

__all__ = [
    "ACCEPTED_URLS",
    "CATALOG_STATUSES",
    "CATALOG_SURFACES",
    "LEASE_LOST",
    "MAX_SEQ",
    "READ_FAILED",
    "RECOVERED",
    "WRITE_FAILED",
    "AddressIndex",
    "CatalogAuditEntry",
    "CatalogAuditRecord",
    "CatalogStore",
    "ConfigChangedError",
    "CorruptRecordError",
    "DecodeFailure",
    "EncodedEvent",
    "EventLog",
    "EventRecord",
    "EventWatch",
    "Fence",
    "Heartbeat",
    "InstanceGoneError",
    "InstanceTypeError",
    "InvalidTransitionError",
    "Lease",
    "LeaseError",
    "LeaseHeldError",
    "LeaseHolder",
    "LeaseLostError",
    "LeaseStore",
    "MemoryRow",
    "MemoryStorage",
    "PostgresOptions",
    "PostgresStorage",
    "ProbedWith",
    "SkillRecord",
    "SkillStore",
    "SqliteOptions",
    "SqliteStorage",
    "StateRecord",
    "StateRow",
    "StateStore",
    "StorageBundle",
    "StorageClosedError",
    "StorageError",
    "StorageNotFoundError",
    "TeamExistsError",
    "TeamNotFoundError",
    "TeamRecord",
    "TeamStatus",
    "TeamStore",
    "ToolInstanceRecord",
    "WorkingMemoryStore",
    "check_team_name",
    "corrupt_rows",
    "decode_pack",
    "dump_objects",
    "encode_event",
    "encode_receipt",
    "encode_sent",
    "encode_state",
    "encode_value",
    "holder_is_gone",
    "live_lease",
    "open_storage",
    "open_watch",
    "pack_count",
    "pack_encoded",
    "pack_records",
    "saving_resource",
    "send_position",
    "sqlite_path",
    "sqlite_url",
    "stopping_resource",
    "team_resource",
]


def __getattr__(name: str) -> Any:
    if name in ("PostgresStorage", "PostgresOptions"):
        from akgentic.storage import postgres

        return getattr(postgres, name)
    raise AttributeError(f"module 'akgentic.storage' has no attribute {name!r}")
