"""Encoding of what a store keeps, and decoding that reports instead of raising.

Messages and states go through ``akgentic.core.serialization`` as compact JSON text, so
they decode only to classes registered as serializable. Decoding a stored row never
raises: any failure — text that is not JSON, an unknown ``__model__`` marker, fields
that no longer validate, a value of the wrong kind — becomes the record's ``error``,
naming the team, the row and the reason. Everything else (cards, metadata, working
memory items) is plain JSON objects.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel

from akgentic.core.messages.message import Message
from akgentic.core.serialization import deserialize, serialize
from akgentic.storage.errors import CorruptRecordError
from akgentic.storage.records import EventRecord, StateRecord

__all__ = [
    "decode_event",
    "decode_state",
    "dump_object",
    "dump_objects",
    "encode_event",
    "encode_message",
    "encode_state",
    "load_object",
    "to_utc",
]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def to_utc(when: datetime) -> datetime:
    """``when`` in UTC; a naive time is taken to be UTC already."""
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


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


def decode_event(team_id: UUID, seq: int, timestamp: datetime, raw: str) -> EventRecord:
    """The record for one stored event; a payload that does not decode sets ``error``."""
    value, reason = _decode(raw)
    if reason is None:
        if isinstance(value, Message):
            return EventRecord(
                team_id=team_id, seq=seq, timestamp=timestamp, message=value, raw=raw
            )
        reason = f"the payload decodes to {type(value).__name__}, not a Message"
    return EventRecord(
        team_id=team_id,
        seq=seq,
        timestamp=timestamp,
        message=None,
        error=f"team {team_id}, event seq {seq}: cannot decode the stored payload: {reason}",
        raw=raw,
    )


def decode_state(
    team_id: UUID, agent_id: UUID, agent_name: str, updated_at: datetime, raw: str
) -> StateRecord:
    """The record for one stored state snapshot; a failure sets ``error``."""
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


def load_object(raw: str, what: str) -> dict[str, Any]:
    """Stored JSON text back to a dict; a damaged value raises naming ``what``."""
    try:
        value = json.loads(raw)
    except Exception as exc:
        raise CorruptRecordError(f"{what}: the stored value is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise CorruptRecordError(f"{what}: the stored value is not a JSON object")
    return value
