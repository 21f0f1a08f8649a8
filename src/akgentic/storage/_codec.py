"""Encoding of what a store keeps, and decoding that reports instead of raising.

Messages and states go through ``akgentic.core.serialization`` as compact JSON text, so
they decode only to classes registered as serializable. Decoding a stored row never
raises: any failure — a time that does not parse, text that is not UTF-8 or not JSON,
an unknown ``__model__`` marker, fields that no longer validate, a value of the wrong
kind — becomes the record's ``error``, naming the team, the row and the reason.
Everything else (cards, metadata, working memory items) is plain JSON objects.

What a backend hands these functions is what its database gave back: text as ``str``,
or as ``bytes`` when the stored text is not valid UTF-8 (the drivers return it so
rather than fail the whole query), and times through the backend's own ``load_time``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel

from akgentic.core.excerpt import excerpt
from akgentic.core.messages.message import Message, new_id_text
from akgentic.core.serialization import deserialize, model_path, serialize
from akgentic.storage.errors import CorruptRecordError
from akgentic.storage.records import (
    CATALOG_STATUSES,
    CATALOG_SURFACES,
    CatalogAuditRecord,
    EventRecord,
    StateRecord,
    TeamRecord,
    TeamStatus,
    ToolInstanceRecord,
)

__all__ = [
    "EncodedEvent",
    "LoadTime",
    "MemoryRow",
    "StateRow",
    "decode_event",
    "decode_state",
    "decode_team",
    "dump_object",
    "dump_objects",
    "encode_event",
    "encode_message",
    "encode_receipt",
    "encode_sent",
    "encode_state",
    "encode_value",
    "fold_memory",
    "iso_time",
    "load_iso_time",
    "load_object",
    "text_or_bytes",
    "to_utc",
]

LoadTime = Callable[[Any], datetime]
"""A backend's conversion of a stored time to an aware UTC datetime; raises if it cannot."""


_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _dumps(value: Any) -> str:
    """``value`` as compact JSON text that every database can keep.

    A Python string may hold a lone surrogate (``json.loads('"\\ud800"')`` makes one,
    so a model or a tool argument can), which no UTF-8 column accepts: written raw, the
    row would be refused, and a refused row in the recorder's group would hold back
    every record after it. Such a character can only sit inside a JSON string, so it is
    written as its ``\\uXXXX`` escape, which reads back as the same string. ASCII text
    (the usual case) is known so in O(1) and passes untouched.
    """
    text = _encode_json(value)
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_escape_surrogate, text)
    return text


def to_utc(when: datetime) -> datetime:
    """``when`` in UTC; a naive time is taken to be UTC already."""
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def iso_time(when: datetime) -> str:
    """``when`` as the ISO text the SQLite and memory backends store."""
    if when.tzinfo is UTC:  # every message's own time: no conversion to make
        return when.isoformat()
    return to_utc(when).isoformat()


def load_iso_time(value: Any) -> datetime:
    """ISO text back to an aware UTC datetime; raises for anything else."""
    if not isinstance(value, str):
        raise ValueError(f"expected ISO text, got {type(value).__name__}")
    return to_utc(datetime.fromisoformat(value))


def text_or_bytes(data: bytes) -> str | bytes:
    """Stored text as ``str``; the bytes themselves when they are not UTF-8, so the one
    damaged value is reported by the decoders below instead of failing a whole query."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


def _text(value: str | bytes, what: str) -> tuple[str, str | None]:
    """Stored text and the problem when it is not UTF-8 (shown with bad bytes escaped)."""
    if isinstance(value, str):
        return value, None
    try:
        return value.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        bad = value[exc.start]
        return value.decode("utf-8", "backslashreplace"), (
            f"the stored {what} is not UTF-8 text (byte 0x{bad:02x} at offset {exc.start})"
        )


def _time(value: Any, load_time: LoadTime, what: str) -> tuple[datetime | None, str | None]:
    try:
        return load_time(value), None
    except Exception as exc:  # a driver's conversion may raise anything: the row is reported
        return None, f"the stored {what} {excerpt(value)} is not a valid time ({exc})"


def encode_message(message: Message) -> str:
    """The JSON text stored for ``message``; raises before anything is stored."""
    if not isinstance(message, Message):
        raise TypeError(
            f"the event log stores akgentic.core Message instances, got {type(message).__name__}"
        )
    return _dumps(serialize(message))


def encode_event(message: Message) -> tuple[datetime, str]:
    """The message's timestamp (UTC) and its stored JSON text."""
    raw = encode_message(message)
    return to_utc(message.timestamp), raw


EncodedEvent = tuple[datetime, str]
"""An event as a store keeps it: its timestamp (UTC) and its JSON text."""

StateRow = tuple[UUID, str, str]
"""An agent's latest state for the latest-state table, encoded: agent id, agent name, and
the state's JSON text (``encode_state``)."""


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A change to an agent's working memory, handed to an append with its events.

    ``items`` are already JSON text, one JSON object each (the recorder has them from
    the event that caused the change; a store does not parse them again, as it takes a
    :data:`StateRow`'s text as given). ``replace``: they become the whole memory (a
    ``ContextReplacedEvent``); otherwise they are added at its end (an
    ``LlmMessageEvent``)."""

    agent_id: UUID
    items: Sequence[str]
    replace: bool = False


def fold_memory(rows: Sequence[MemoryRow]) -> dict[UUID, tuple[bool, list[str]]]:
    """``rows`` applied in order, per agent: whether the memory is cleared first, then
    the items added — what a store writes, one agent at a time. A replacement drops what
    the rows before it added. Raises ``TypeError`` for a row that is not a
    :class:`MemoryRow` or an item that is not text, before anything is changed."""
    folded: dict[UUID, tuple[bool, list[str]]] = {}
    for row in rows:
        if not isinstance(row, MemoryRow):
            raise TypeError(f"a working memory change must be a MemoryRow, got {row!r:.80}")
        items = list(row.items)
        if isinstance(row.items, str | bytes) or not all(isinstance(i, str) for i in items):
            raise TypeError(
                f"the working memory items of agent {row.agent_id} must be a list of JSON "
                f"texts (str)"
            )
        if row.replace or row.agent_id not in folded:
            folded[row.agent_id] = (row.replace, items)
        else:
            folded[row.agent_id][1].extend(items)
    return folded


_RECEIPT = (
    '{{"__model__":"{path}","id":"{id}","parent_id":null,"team_id":{team},'
    '"timestamp":"{when}","sender":{sender},"recipient":null,"display_type":"other",'
    '"message_id":"{message_id}"}}'
)


def encode_receipt(
    cls: type[Message], message_id: UUID, sender_json: str, team_json: str, when: float
) -> EncodedEvent:
    """The stored form of a receipt — a ``ReceivedMessage`` or ``ProcessedMessage`` of
    ``message_id`` by the actor whose serialized snapshot is ``sender_json``, in the
    team whose id is ``team_json`` (:func:`encode_value` of it), at epoch seconds
    ``when`` — written without building the message, under a new id: the same JSON
    :func:`encode_event` writes for it. The hot path of an event store fed by a busy
    team."""
    stamp = datetime.fromtimestamp(when, UTC)
    raw = _RECEIPT.format(
        path=model_path(cls),
        id=new_id_text(),
        team=team_json,
        when=stamp.isoformat(),
        sender=sender_json,
        message_id=message_id,
    )
    return stamp, raw


_SENT = (
    '{{"__model__":"{path}","id":"{id}","parent_id":null,"team_id":{team},'
    '"timestamp":"{when}","sender":{sender},"recipient":{recipient},'
    '"display_type":"other","message":{message}}}'
)


def encode_sent(
    cls: type[Message],
    message: Message,
    sender_json: str,
    recipient_json: str,
    team_json: str,
    when: float,
) -> EncodedEvent:
    """The stored form of a ``SentMessage`` of ``message`` (whose own addresses may be
    live: they serialize as their snapshots do), written without building it under a
    new id — the same JSON :func:`encode_event` writes for it (the arguments as for
    :func:`encode_receipt`). Raises ``SerializationError`` when ``message`` cannot be
    serialized."""
    stamp = datetime.fromtimestamp(when, UTC)
    raw = _SENT.format(
        path=model_path(cls),
        id=new_id_text(),
        team=team_json,
        when=stamp.isoformat(),
        sender=sender_json,
        recipient=recipient_json,
        message=_dumps(serialize(message)),
    )
    return stamp, raw


def encode_value(value: Any) -> str:
    """Any serializable value as the compact JSON text the store writes."""
    return _dumps(serialize(value))


def encode_state(state: BaseModel) -> str:
    """The JSON text stored for an agent's state model."""
    if not isinstance(state, BaseModel):
        raise TypeError(f"a state must be a pydantic model, got {type(state).__name__}")
    return _dumps(serialize(state))


def _decode(raw: str) -> tuple[Any, str | None]:
    try:
        data = json.loads(raw)
    except Exception as exc:  # ValueError, RecursionError: all mean "unreadable"
        return None, f"the payload is not valid JSON ({exc})"
    try:
        return deserialize(data), None
    except Exception as exc:  # a custom decoder may raise anything; the row is reported
        return None, str(exc) or type(exc).__name__


def decode_event(
    team_id: UUID, seq: int, stored_time: Any, stored: str | bytes, load_time: LoadTime
) -> EventRecord:
    """The record for one stored event; a time or payload that does not decode sets
    ``error`` (every problem of the row, in one line)."""
    timestamp, time_problem = _time(stored_time, load_time, "time")
    raw, problem = _text(stored, "payload")
    problems = [p for p in (time_problem, problem) if p is not None]
    if not problems:
        value, reason = _decode(raw)
        if reason is None:
            if isinstance(value, Message):
                return EventRecord(
                    team_id=team_id, seq=seq, timestamp=timestamp, message=value, raw=raw
                )
            reason = f"the payload decodes to {type(value).__name__}, not a Message"
        problems.append(f"cannot decode the stored payload: {reason}")
    return EventRecord(
        team_id=team_id,
        seq=seq,
        timestamp=timestamp,
        message=None,
        error=f"team {team_id}, event seq {seq}: {'; '.join(problems)}",
        raw=raw,
    )


def decode_state(
    team_id: UUID, agent_id: UUID, agent_name: str, updated_at: datetime, stored: str | bytes
) -> StateRecord:
    """The record for one stored state snapshot; a failure sets ``error``."""
    raw, reason = _text(stored, "payload")
    value = None
    if reason is None:
        value, reason = _decode(raw)
    if reason is None:
        if isinstance(value, BaseModel):
            return StateRecord(
                team_id=team_id,
                agent_id=agent_id,
                agent_name=agent_name,
                updated_at=updated_at,
                state=value,
                raw=raw,
            )
        reason = f"the payload decodes to {type(value).__name__}, not a pydantic model"
    return StateRecord(
        team_id=team_id,
        agent_id=agent_id,
        agent_name=agent_name,
        updated_at=updated_at,
        state=None,
        error=(
            f"team {team_id}, state of agent {agent_id} ({agent_name}): "
            f"cannot decode the stored payload: {reason}"
        ),
        raw=raw,
    )


def dump_object(value: Any, what: str) -> str:
    """``value`` (a JSON object: a dict of JSON-compatible data) as JSON text."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict (a JSON object), got {type(value).__name__}")
    try:
        return _dumps(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what} must hold JSON-compatible data only (dict, list, str, int, float, "
            f"bool, None): {exc}"
        ) from exc


def dump_objects(items: Any, what: str) -> list[str]:
    """Each item of ``items`` (a list of JSON objects) as JSON text; all or nothing."""
    if isinstance(items, dict | str | bytes) or not hasattr(items, "__iter__"):
        raise TypeError(f"{what} must be a list of dicts, got {type(items).__name__}")
    return [dump_object(item, f"{what}[{i}]") for i, item in enumerate(items)]


def load_object(stored: str | bytes, what: str) -> dict[str, Any]:
    """Stored JSON text back to a dict; a damaged value raises naming ``what``."""
    raw, problem = _text(stored, "value")
    if problem is not None:
        raise CorruptRecordError(f"{what}: {problem}")
    try:
        value = json.loads(raw)
    except Exception as exc:
        raise CorruptRecordError(f"{what}: the stored value is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise CorruptRecordError(f"{what}: the stored value is not a JSON object")
    return value


def _column_text(value: Any, what: str) -> tuple[str, str | None]:
    """A text column's value and the problem when it is not text (NULL, a number...)."""
    if isinstance(value, str | bytes):
        return _text(value, what)
    return "", f"the stored {what} {excerpt(value)} is not text"


def _column_object(value: Any, what: str) -> tuple[dict[str, Any], str | None]:
    """A JSON-object column's value (``{}`` when unreadable) and the problem, if any."""
    if not isinstance(value, str | bytes):
        return {}, f"the stored {what} {excerpt(value)} is not JSON text"
    try:
        return load_object(value, what), None
    except CorruptRecordError as exc:
        return {}, str(exc)


def decode_catalog_row(row: Sequence[Any], load_time: LoadTime) -> ToolInstanceRecord:
    """The record of one catalog row (its columns in the order the stores select them:
    name, type_name, the three flags, config, credential_enc, status, status_detail,
    last_check_at, created_at, updated_at, row_id). Whatever cannot be read makes a damaged record
    (see :class:`ToolInstanceRecord`): flags off, no config, no credential, ``error``
    naming the instance and every problem; never raised."""
    problems: list[str] = []

    def note(problem: str | None) -> None:
        if problem:
            problems.append(problem)

    name, problem = _column_text(row[0], "name")
    note(problem)
    type_name, problem = _column_text(row[1], "type name")
    note(problem)
    detail, _ = _column_text(row[8], "probe detail")  # shown escaped; the next probe's
    for value, surface in zip(row[2:5], CATALOG_SURFACES, strict=True):
        if value not in (0, 1):  # SQLite's 0/1, Postgres' booleans (True == 1)
            note(f"the stored {surface} flag {excerpt(value)} is not 0 or 1")
    config, problem = _column_object(row[5], "config")
    note(problem)
    credential = row[6]
    if credential is not None and not isinstance(credential, bytes | bytearray | memoryview):
        # never quoted: it may be a secret pasted into the column
        note(f"the stored credential is {type(credential).__name__}, not bytes")
    if row[7] not in CATALOG_STATUSES:
        note(f"the stored status {excerpt(row[7])} is not one of {', '.join(CATALOG_STATUSES)}")
    checked, problem = (None, None) if row[9] is None else _time(row[9], load_time, "check time")
    note(problem)
    created, problem = _time(row[10], load_time, "creation time")
    note(problem)
    updated, problem = _time(row[11], load_time, "update time")
    note(problem)
    row_id = row[12] if isinstance(row[12], str) and row[12] else None  # the store's own
    if problems:
        return ToolInstanceRecord(
            name=name or "?",
            type_name=type_name or "?",
            created_at=created,
            updated_at=updated,
            row_id=row_id,
            error=f"catalog instance {name or '?'!r}: {'; '.join(problems)}",
        )
    return ToolInstanceRecord(
        name=name,
        type_name=type_name,
        enabled_agents=row[2] == 1,
        enabled_api=row[3] == 1,
        enabled_cli=row[4] == 1,
        config=config,
        credential_enc=None if credential is None else bytes(credential),
        status=row[7],
        status_detail=detail,
        last_check_at=checked,
        created_at=created,
        updated_at=updated,
        row_id=row_id,
    )


def decode_audit_row(row: Sequence[Any], load_time: LoadTime) -> CatalogAuditRecord:
    """The record of one audit line (seq, at, instance, type_name, actor, action, detail);
    whatever cannot be read is named in ``error`` (see :class:`CatalogAuditRecord`)."""
    seq = int(row[0])
    problems: list[str] = []
    at, problem = _time(row[1], load_time, "time")
    problems += [problem] if problem else []
    texts: list[str] = []
    for value, what in zip(row[2:6], ("instance", "type name", "actor", "action"), strict=True):
        text, problem = _column_text(value, what)
        problems += [problem] if problem else []
        texts.append(text)
    detail, problem = _column_object(row[6], "detail")
    problems += [problem] if problem else []
    instance, type_name, actor, action = texts
    return CatalogAuditRecord(
        seq=seq,
        at=at,
        instance=instance,
        type_name=type_name,
        actor=actor,
        action=action,
        detail=detail,
        error=f"catalog audit line {seq}: {'; '.join(problems)}" if problems else None,
    )


def decode_team(
    team_id: UUID,
    name: str | bytes,
    status: Any,
    created_at: Any,
    updated_at: Any,
    card: str | bytes,
    metadata: str | bytes,
    load_time: LoadTime,
) -> TeamRecord:
    """The record for one team row; whatever cannot be read is left empty and named in
    ``error`` (see :class:`TeamRecord`), never raised."""
    problems: list[str] = []
    text, problem = _text(name, "name")
    problems += [problem] if problem else []
    parsed: TeamStatus | None = None
    try:
        parsed = TeamStatus(status)
    except ValueError:
        known = ", ".join(s.value for s in TeamStatus)
        problems.append(f"the stored status {excerpt(status)} is not one of {known}")
    created, problem = _time(created_at, load_time, "creation time")
    problems += [problem] if problem else []
    updated, problem = _time(updated_at, load_time, "update time")
    problems += [problem] if problem else []
    objects: list[dict[str, Any]] = []
    for stored, what in ((card, "card"), (metadata, "metadata")):
        try:
            objects.append(load_object(stored, what))
        except CorruptRecordError as exc:
            objects.append({})
            problems.append(str(exc))
    return TeamRecord(
        team_id=team_id,
        name=text,
        status=parsed,
        created_at=created,
        updated_at=updated,
        card=objects[0],
        metadata=objects[1],
        error=f"team {team_id}: {'; '.join(problems)}" if problems else None,
    )
