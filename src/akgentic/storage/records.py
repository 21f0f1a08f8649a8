"""The records a store hands out, and the helper that lists the corrupt ones.

Records are immutable pydantic models: what crosses the storage boundary is typed and
validated. Event and state records carry their decoded value *or* the reason it could
not be decoded, never both, plus the raw stored text, so that one damaged row never
hides the rest of a team's history. A team record whose row is damaged is still
returned, with ``error`` set and the unreadable fields empty, so one broken team never
hides the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from akgentic.core.messages.message import Message
from akgentic.storage.errors import CorruptRecordError

__all__ = [
    "CATALOG_STATUSES",
    "CATALOG_SURFACES",
    "CatalogAuditEntry",
    "CatalogAuditRecord",
    "DecodeFailure",
    "EventRecord",
    "ProbedWith",
    "SkillRecord",
    "StateRecord",
    "TeamRecord",
    "TeamStatus",
    "ToolInstanceRecord",
    "corrupt_rows",
]


def utc_now() -> datetime:
    """The current time, timezone-aware in UTC (every stored time is UTC)."""
    return datetime.now(UTC)


class TeamStatus(StrEnum):
    """Where a team is in its life. DELETED is terminal; ``purge`` removes the rows."""

    RUNNING = "RUNNING"
    STOPPED = "STOPPED"
    DELETED = "DELETED"


class _Record(BaseModel):
    model_config: ClassVar[ConfigDict] = ConfigDict(frozen=True, extra="forbid")


class TeamRecord(_Record):
    """A team as the store knows it.

    ``card`` is the serialized team card, opaque JSON to the store; ``metadata`` is free
    JSON for the layers above (owner, labels...). Times are set by the store, in UTC.

    A damaged row (a status, time or JSON value that cannot be read, text that is not
    UTF-8) is returned anyway: ``error`` names the team and every problem, an unreadable
    status or time is None, an unreadable card or metadata is ``{}``, a name that is not
    UTF-8 shows its bad bytes escaped. The row itself is left as stored; a status change
    rewrites the status (so stopping or deleting such a team works).
    """

    team_id: UUID
    name: str
    status: TeamStatus | None
    created_at: datetime | None
    updated_at: datetime | None
    card: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the whole row could be read."""
        return self.error is None

    def require(self) -> TeamRecord:
        """This record when the row was read whole; :class:`CorruptRecordError` if not."""
        if self.error is not None:
            raise CorruptRecordError(self.error)
        return self


class EventRecord(_Record):
    """One row of a team's append-only event log.

    ``seq`` is the per-team sequence number the store assigned (1, 2, 3 ... with no
    gap). ``timestamp`` is the message's own timestamp (None when the stored time cannot
    be read). Exactly one of ``message`` and ``error`` is set: ``error`` names the team,
    the sequence number and why the row could not be decoded (its time, or its ``raw``
    text: not UTF-8 — then shown with the bad bytes escaped —, not JSON, not a message).

    ``through``, set only on an error record, makes it stand for the whole run of numbers
    ``seq`` to ``through`` that cannot be read one by one: a damaged event pack (its
    range as stored, which may be a damaged claim itself) or a gap (numbers the log
    lacks). One record, whatever the range's length: a reader's memory and time never
    follow a number a damaged row claims. Such a record means the log's numbering
    cannot be trusted there (``numbering_damaged``).
    """

    team_id: UUID
    seq: int
    timestamp: datetime | None
    message: Message | None
    error: str | None = None
    raw: str
    through: int | None = None

    @property
    def last(self) -> int:
        """The last number this record stands for: a reader paging on goes on after it."""
        return self.seq if self.through is None else self.through

    @property
    def numbering_damaged(self) -> bool:
        """Whether this record is a damaged pack or a gap (see ``through``)."""
        return self.through is not None

    @property
    def ok(self) -> bool:
        """Whether the payload decoded."""
        return self.error is None

    def require(self) -> Message:
        """The decoded message; :class:`CorruptRecordError` when it could not be decoded."""
        if self.message is None:
            raise CorruptRecordError(self.error or f"team {self.team_id}, event seq {self.seq}")
        return self.message


class StateRecord(_Record):
    """The latest state snapshot of one agent of a team (latest save wins).

    Exactly one of ``state`` and ``error`` is set, as for :class:`EventRecord`.
    """

    team_id: UUID
    agent_id: UUID
    agent_name: str
    updated_at: datetime
    state: BaseModel | None
    error: str | None = None
    raw: str

    @property
    def ok(self) -> bool:
        """Whether the payload decoded."""
        return self.error is None

    def require(self) -> BaseModel:
        """The decoded state; :class:`CorruptRecordError` when it could not be decoded."""
        if self.state is None:
            raise CorruptRecordError(self.error or f"team {self.team_id}, agent {self.agent_id}")
        return self.state


class SkillRecord(_Record):
    """A skill: knowledge an agent reads on demand (``content``), indexed by name.

    ``source`` says where it came from (a file path, a URL, "user"). ``toolset`` is the
    toolset the skill tells the model to enable (its front matter's ``toolset``), or None;
    the store keeps it as given (the tool layer checks it is a toolset's name when a card
    reads the row). ``updated_at`` is stamped by the store on every upsert.
    """

    name: str = Field(min_length=1)
    description: str = ""
    content: str = ""
    source: str = ""
    toolset: str | None = None
    updated_at: datetime = Field(default_factory=utc_now)


CATALOG_SURFACES = ("agents", "api", "cli")
"""Where a catalog instance may be enabled: agents (team cards naming it), the HTTP API,
the CLI (a probe asked there). Each has its own flag, off until an admin turns it on."""


CATALOG_STATUSES = ("unchecked", "active", "error")
"""A catalog instance's probe status: never probed, the last probe passed, it failed."""


class ProbedWith(BaseModel):
    """What a catalog probe ran with: the row's config and credential ciphertext as it
    read them. Its outcome is kept only while the row still holds both
    (:meth:`CatalogStore.record_probe`): an outcome made with an old config or credential
    says nothing of the new one."""

    model_config = ConfigDict(frozen=True)

    config: dict[str, Any] = Field(default_factory=dict)
    credential_enc: bytes | None = Field(default=None, repr=False)


class ToolInstanceRecord(_Record):
    """One configured tool of the catalog: state only, linked to its type by name.

    The type is a class in code (``akgentic.catalog``); this row holds what an admin set:
    a flag per surface (:data:`CATALOG_SURFACES`, all off by default), the non-secret
    ``config`` (JSON), the credential as ciphertext (``credential_enc``: opaque bytes to
    the store, never the secret itself), and the last probe's ``status``
    (``unchecked`` / ``active`` / ``error``), ``status_detail`` and ``last_check_at``.
    Times are set by the store, in UTC. ``row_id`` is the row's identity, made by the
    store when the row is created and kept by every change: a row removed and made again
    under the same name has another, so a write made for the row read (a probe's
    outcome) can tell it is gone (:meth:`CatalogStore.record_probe`).

    A damaged row (a value that cannot be read: a status, flag, time or config of the
    wrong kind, text that is not UTF-8) is returned anyway, as a :class:`TeamRecord` is:
    ``error`` names the instance and every problem, and the rest is what a new row
    holds — every flag off, no config, no credential — so it is never used by mistake.
    An unreadable time is None.
    """

    name: str = Field(min_length=1)
    type_name: str = Field(min_length=1)
    enabled_agents: bool = False
    enabled_api: bool = False
    enabled_cli: bool = False
    config: dict[str, Any] = Field(default_factory=dict)
    credential_enc: bytes | None = Field(default=None, repr=False)
    status: Literal["unchecked", "active", "error"] = "unchecked"
    status_detail: str = ""
    last_check_at: datetime | None = None
    created_at: datetime | None
    updated_at: datetime | None
    row_id: str | None = None
    error: str | None = None

    @property
    def credential_set(self) -> bool:
        """Whether a credential is stored (the only thing ever shown about it)."""
        return self.credential_enc is not None

    def enabled_on(self, surface: str) -> bool:
        """The flag of ``surface`` (one of :data:`CATALOG_SURFACES`)."""
        if surface not in CATALOG_SURFACES:
            known = ", ".join(CATALOG_SURFACES)
            raise ValueError(f"unknown surface {surface!r}; surfaces: {known}")
        return bool(getattr(self, f"enabled_{surface}"))


class CatalogAuditEntry(_Record):
    """What a caller says about a catalog change: who did it, what, and the details.

    ``detail`` is free JSON and must never hold a secret: a credential change is
    recorded as ``{"credential": "set"}`` or ``{"credential": "cleared"}``.
    """

    actor: str = Field(min_length=1)
    action: str = Field(min_length=1)
    detail: dict[str, Any] = Field(default_factory=dict)


class CatalogAuditRecord(_Record):
    """One stored line of the catalog's audit trail, numbered by the store.

    ``seq`` increases with every entry of the store (the order of the trail); ``at`` is
    when the store wrote it, in UTC; ``instance`` and ``type_name`` name the row changed.

    A line whose values cannot be read is returned anyway, so one damaged line never hides
    the trail: ``error`` says what is wrong, an unreadable time is None, unreadable text
    is shown with its bad bytes escaped, an unreadable ``detail`` is ``{}``.
    """

    seq: int
    at: datetime | None
    instance: str
    type_name: str
    actor: str
    action: str
    detail: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class DecodeFailure(_Record):
    """One stored row that could not be decoded: which team, which row, and why."""

    team_id: UUID
    kind: Literal["event", "state", "team"]
    seq: int | None = None
    through: int | None = None
    """Set for a run of event numbers (a damaged pack or a gap): see ``EventRecord``."""
    agent_id: UUID | None = None
    reason: str
    raw: str


def corrupt_rows(
    records: Iterable[EventRecord | StateRecord | TeamRecord],
) -> list[DecodeFailure]:
    """The rows among ``records`` that could not be read whole, in the given order.

    Raises nothing: it is the way to list damage without stopping a restore, e.g.
    ``corrupt_rows(store.events.read(team_id))`` or ``corrupt_rows(store.teams.list())``.
    """
    failures: list[DecodeFailure] = []
    for record in records:
        if record.error is None:
            continue
        if isinstance(record, TeamRecord):
            failures.append(
                DecodeFailure(team_id=record.team_id, kind="team", reason=record.error, raw="")
            )
        elif isinstance(record, EventRecord):
            failures.append(
                DecodeFailure(
                    team_id=record.team_id,
                    kind="event",
                    seq=record.seq,
                    through=record.through,
                    reason=record.error,
                    raw=record.raw,
                )
            )
        else:
            failures.append(
                DecodeFailure(
                    team_id=record.team_id,
                    kind="state",
                    agent_id=record.agent_id,
                    reason=record.error,
                    raw=record.raw,
                )
            )
    return failures
