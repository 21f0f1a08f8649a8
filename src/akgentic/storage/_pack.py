"""Event packs: many consecutive events of one team stored as one value.

Why: a busy team reports three records for every message it passes (the send, its
receipt, its completion). Stored one row each, a row costs a store a few microseconds
of its own work (two B-tree inserts, the WAL) and the recorder a JSON text built in
Python, which is several times what raw pykka spends passing the message. A pack holds a
whole batch of records as one value, written as one row, and is built by two calls into
msgspec's encoders (C code) over the whole batch: the records as they are, and the bodies
of the messages sent. Nothing is built in Python per record.

A pack decodes to the events the one-row-per-event encoders write
(:func:`~akgentic.storage.encode_sent`, :func:`~akgentic.storage.encode_receipt`,
:func:`~akgentic.storage.encode_event`): the same messages, times and addresses, so
readers, restore and replay see no difference. The text differs in one place: a sent
message of a *plain* class (:func:`_plain_path`) has the body msgspec writes — its keys
in another order, UTC written ``Z`` —, which decodes to the same message. Each decoded
event's own id is derived from a random base stored in the pack and the event's place in
it, so reading a pack twice gives the same ids.

Layout (the numbers little-endian), after the magic ``AKPACK3\n``:

- a ``u32`` length and a JSON header: the event count, the id base, the team id (as
  stored JSON), the addresses used (key → stored JSON text), the model paths used, and
  the reports (``[ISO time, stored JSON text]``: the rare records that arrive as built
  telemetry messages: starts, stops, states, events, errors). An address's key is its
  :attr:`~akgentic.core.ActorAddress.object_key` (the ``id`` of its object) while the
  pack was built: any number, only meaningful through the header;
- a ``u32`` length and the records, a MessagePack array of ``[kind, epoch seconds, actor
  key, a, b]`` as the orchestrator queued them: for a send ``a`` is unused and ``b`` the
  recipient's key, for a receipt ``a`` is the id of the message received or processed
  (16 bytes), for a report both are unused. A ``HANDLED`` record (a receipt and a
  completion in one: ``b`` the time received) is two events, its receipt then its
  completion: the event count is the records' plus one per ``HANDLED``;
- the bodies, one JSON array ``[path numbers, bodies]``, one of each per send in order: a
  path number ``n >= 0`` and the message's fields as an object (its ``sender`` and
  ``recipient`` by their keys) for a plain class whose model path is ``paths[n]``, or
  ``-1`` and the whole message's stored JSON text, as a string.

The layouts before, ``AKPACK2\n`` and ``AKPACK1\n`` (numbers in columns, each body apart),
are still read.
"""

from __future__ import annotations

import json
import struct
import sys
import types
import typing
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import chain, compress
from operator import attrgetter, itemgetter
from typing import Any, Literal, NamedTuple, get_args, get_origin
from uuid import UUID

import msgspec
from pydantic import BaseModel

from akgentic.core import ProcessedMessage, ReceivedMessage, SentMessage
from akgentic.core._telemetry import (
    KIND_HANDLED,
    KIND_PROCESSED,
    KIND_RECEIVED,
    KIND_REPORT,
    KIND_SENT,
)
from akgentic.core.excerpt import exception_line
from akgentic.core.messages.message import new_id
from akgentic.core.serialization import MODEL_MARKER, SerializationError, model_path
from akgentic.storage._codec import _RECEIPT, _SENT, EncodedEvent, encode_message

__all__ = [
    "MAGIC",
    "AddressIndex",
    "Packed",
    "decode_pack",
    "pack_count",
    "pack_encoded",
    "pack_records",
    "send_position",
]

MAGIC = b"AKPACK3\n"
_MAGIC_2 = b"AKPACK2\n"
"""The second layout (still read): numbers in columns, each body apart, the team id
written once when every send carries it."""
_MAGIC_1 = b"AKPACK1\n"
"""The first layout (still read): addresses by small numbers (``i32``, ``-1`` for none),
the team id in every body."""
_MAGICS = {MAGIC: 3, _MAGIC_2: 2, _MAGIC_1: 1}
_HEAD = struct.Struct("<I")
_LITTLE = sys.byteorder == "little"
_ENVELOPE = {"sender", "recipient"}
_SENT_PATH = model_path(SentMessage)
_RECEIPT_PATHS = {
    KIND_RECEIVED: model_path(ReceivedMessage),
    KIND_PROCESSED: model_path(ProcessedMessage),
}
_CLEAR_LOW = ~0xFFFFFFFF

Record = tuple[int, float, Any, Any, Any]
"""A telemetry record as the orchestrator queues it (see ``akgentic.core._telemetry``)."""

_KEY = attrgetter("object_key")
_KIND, _STAMP, _ACTOR, _A, _B = map(itemgetter, range(5))
_SENDER = attrgetter("sender")
_RECIPIENT = attrgetter("recipient")
_DICT = attrgetter("__dict__")

_RECORDS = msgspec.msgpack.Encoder(enc_hook=id, uuid_format="bytes")
"""The records as queued: numbers, a receipt's message id as 16 bytes, an address (or a
message sent, whose slot is unused) as the ``id`` of its object — an address's
``object_key``."""
_BODIES = msgspec.json.Encoder(enc_hook=_KEY)
"""The sends' bodies: an address (the envelope) as its ``object_key``; any other object
msgspec cannot write has no ``object_key`` and fails the encode (the careful path then
writes each body)."""
_RECORD_TYPE = list[tuple[int, float, int | None, int | bytes | None, int | float | None]]
_BODIES_TYPE = tuple[list[int], list[msgspec.Raw]]


class AddressIndex:
    """The stored JSON of the addresses a recorder sees, keyed on their
    :attr:`~akgentic.core.ActorAddress.object_key` (the ``id`` of the object).

    A pack names each address by its key: a team passes the same few address objects
    around, so only the distinct keys of a batch (a set of a handful) are looked up
    here. The objects are kept alive while their keys are here, so a key is never
    reused for another address meanwhile. ``resolve`` gives the stored JSON of an
    address seen for the first time. Bounded: past ``limit`` entries it starts afresh (a
    pack only needs its own addresses to be consistent while it is built).
    """

    def __init__(self, resolve: Callable[[Any], str], limit: int = 4096) -> None:
        self._resolve = resolve
        self._limit = limit
        self._texts: dict[int, str] = {}
        self._kept: list[Any] = []

    def texts(self, used: set[int], objects: Callable[[], Iterable[Any]]) -> dict[str, str]:
        """The stored JSON of every key in ``used`` (by its decimal text). Keys seen for
        the first time are resolved from the address among ``objects()`` that has it
        (None among them is skipped)."""
        known = self._texts
        missing = used.difference(known)
        if missing:  # rare: an address this index has not seen yet
            for item in objects():
                if item is None:
                    continue
                key = item.object_key
                if key in missing:
                    known[key] = self._resolve(item)
                    self._kept.append(item)
                    missing.discard(key)
                    if not missing:
                        break
            if missing:
                raise ValueError("an address key has no object among those given")
        return {str(key): known[key] for key in used}

    def trim(self) -> None:
        """Start afresh once past the limit (called before a pack is built, never while:
        the keys of one pack must keep their texts)."""
        if len(self._kept) > self._limit:
            self._texts = {}
            self._kept = []


_ATOMS: tuple[type, ...] = (str, int, bool, type(None), UUID, datetime)


def _plain(annotation: Any) -> bool:
    """Whether msgspec's JSON of a value so typed is what the store writes for it."""
    if annotation in _ATOMS:
        return True
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return all(isinstance(a, str | int | bool) for a in args)
    if origin in (typing.Union, types.UnionType):
        if str in args and datetime in args:  # "Z" vs "+00:00", read back as the str
            return False
        return all(_plain(a) for a in args)
    if origin is list:
        return len(args) == 1 and _plain(args[0])
    if origin is dict:
        return len(args) == 2 and args[0] is str and _plain(args[1])
    return False


_PLAIN: dict[type, str | None] = {}


def _plain_path(cls: type[BaseModel]) -> str | None:
    """The model path when msgspec can write ``cls``'s fields (its ``__dict__``) as the
    store's serializer would, else None (the generic path is taken).

    Plain means: only fields of the types :func:`_plain` accepts (no float: pydantic
    writes ``inf`` as ``null``; no address but the envelope's ``sender`` and
    ``recipient``, which the pack names by key), no extra fields kept, no custom or
    computed serializers, no aliases, no field metadata (an ``Annotated`` serializer or
    constraint), no excluded field (``exclude``, ``exclude_if``), no ``ser_json_*`` or
    ``json_encoders`` setting: any of these, and the store's serializer could write
    something msgspec would not. A class that is not plain is still stored, through the
    generic serializer. (A time whose offset has seconds is written to the minute by
    msgspec; pydantic cannot read such an offset back either.)"""
    found = _PLAIN.get(cls, False)
    if found is not False:
        return found  # type: ignore[return-value]
    path: str | None = model_path(cls)
    decorators = cls.__pydantic_decorators__
    config = cls.model_config
    if (
        config.get("extra") == "allow"
        or config.get("serialize_by_alias")
        or any(key.startswith("ser_json") or key == "json_encoders" for key in config)
        or decorators.field_serializers
        or decorators.model_serializers
        or cls.model_computed_fields
    ):
        path = None
    else:
        for name, field in cls.model_fields.items():
            if name in _ENVELOPE:
                continue
            if (
                field.alias
                or field.serialization_alias
                or field.metadata
                or field.exclude
                or getattr(field, "exclude_if", None) is not None
                or not _plain(field.annotation)
            ):
                path = None
                break
    _PLAIN[cls] = path
    return path


class Packed(NamedTuple):
    """A pack and what its writer needs to know of it."""

    data: bytes
    size: int  # how many events it holds
    kinds: bytes  # its records' kinds, one byte each: where its sends are (send_position)
    sent: list[Any]  # the messages sent there (callers wait on their ids)


def send_position(kinds: bytes, index: int) -> int:
    """Where among the events of a pack whose records have ``kinds`` its ``index``-th
    send (from 0) is: a ``HANDLED`` record is two events. For the rare caller that waits
    on a message: nothing per send is kept for it."""
    at = -1
    for _ in range(index + 1):
        at = kinds.find(KIND_SENT, at + 1)
        if at < 0:
            raise IndexError(f"the pack has no send number {index}")
    return at + kinds.count(KIND_HANDLED, 0, at)


_SENT_MASK = bytes(1 if k == KIND_SENT else 0 for k in range(256))
_RECEIPT_MASK = bytes(
    1 if k in (KIND_RECEIVED, KIND_PROCESSED, KIND_HANDLED) else 0 for k in range(256)
)


def pack_records(
    records: Sequence[Record],
    addresses: AddressIndex,
    reports: Mapping[int, EncodedEvent],
    team_json: str,
    kinds: bytes | None = None,
) -> Packed:
    """One pack of ``records`` (in order). ``reports`` holds, by position, the stored
    form of each report record (a built telemetry message); sends and receipts are
    encoded here. ``kinds``: the records' kinds as bytes, when the caller has them
    already. Raises ``SerializationError`` when a sent message cannot be stored: the
    caller reports it in its place.

    The records and the bodies are each one msgspec call over the whole batch; the rest
    is C-level ``map``/``compress`` over it, and a Python loop only over the distinct
    classes and new addresses (or, when a body will not encode, over the sends)."""
    addresses.trim()
    if kinds is None:
        kinds = bytes(map(_KIND, records))
    count = len(records) + kinds.count(KIND_HANDLED)
    sent_mask = kinds.translate(_SENT_MASK)
    sent = list(compress(map(_A, records), sent_mask))
    if not set(map(type, compress(map(_A, records), kinds.translate(_RECEIPT_MASK)))) <= {UUID}:
        raise SerializationError("a receipt names its message by something else than a UUID")
    used = set(map(_KEY, filter(None, map(_ACTOR, records))))
    used.update(
        map(_KEY, filter(None, compress(map(_B, records), sent_mask))),
        map(_KEY, filter(None, map(_SENDER, sent))),
        map(_KEY, filter(None, map(_RECIPIENT, sent))),
    )

    def objects() -> Iterable[Any]:
        return chain(
            map(_ACTOR, records),
            compress(map(_B, records), sent_mask),
            map(_SENDER, sent),
            map(_RECIPIENT, sent),
        )

    address_texts = addresses.texts(used, objects)
    classes: list[type[BaseModel]] = list(map(type, sent))
    numbers: dict[type[BaseModel], int] = {}
    paths: list[str] = []
    for cls in set(classes):
        path = _plain_path(cls)
        numbers[cls] = -1 if path is None else len(paths)
        if path is not None:
            paths.append(path)
    path_numbers = list(map(numbers.__getitem__, classes))
    # a plain body is its __dict__, which may hold more than the fields (a cached_property
    # keeps its value there): such a message is stored whole, as the store writes it
    widths = {cls: len(cls.model_fields) for cls in numbers}
    if list(map(len, map(_DICT, sent))) != list(map(widths.__getitem__, classes)):
        for at, message in enumerate(sent):
            if len(message.__dict__) != widths[classes[at]]:
                path_numbers[at] = -1
    bodies = _bodies(sent, path_numbers, -1 not in path_numbers)
    header = json.dumps(
        {
            "n": count,
            "base": new_id().int & _CLEAR_LOW,
            "team": team_json,
            "addresses": address_texts,
            "paths": paths,
            "reports": {str(i): [stamp.isoformat(), text] for i, (stamp, text) in reports.items()},
        },
        separators=(",", ":"),
    ).encode()
    packed = _RECORDS.encode(records)
    data = b"".join(
        (MAGIC, _HEAD.pack(len(header)), header, _HEAD.pack(len(packed)), packed, bodies)
    )
    return Packed(data, count, kinds, sent)


def _bodies(sent: list[Any], path_numbers: list[int], all_plain: bool) -> bytes:
    """The bodies' array (see the layout). ``path_numbers`` may be changed: a plain
    message whose fields msgspec will not write (a lone surrogate, a value of another
    type than its field's) is stored whole, as the store writes it (``-1``)."""
    if all_plain:
        try:
            return _BODIES.encode([path_numbers, list(map(_DICT, sent))])
        except Exception:  # one body it cannot write: each, with care, below
            pass
    bodies: list[msgspec.Raw | str] = []
    for at, message in enumerate(sent):
        if path_numbers[at] >= 0:
            try:
                bodies.append(msgspec.Raw(_BODIES.encode(message.__dict__)))
                continue
            except Exception:  # the generic serializer says what it cannot store
                path_numbers[at] = -1
        # as a string: the store's text may escape a lone surrogate, which msgspec's
        # reader refuses inside JSON it parses
        bodies.append(encode_message(message))
    return _BODIES.encode([path_numbers, bodies])


def pack_encoded(events: Sequence[EncodedEvent], team_json: str) -> bytes:
    """A pack of events already encoded one by one (``encode_event`` rows): each held as
    a report. How a writer puts rows and packs in one transaction."""
    records: list[Record] = [(KIND_REPORT, 0.0, None, None, None)] * len(events)
    reports = dict(enumerate(events))
    return pack_records(records, AddressIndex(lambda _: "null"), reports, team_json).data


def pack_count(data: bytes) -> int:
    """How many events ``data`` holds (reads the header only). Raises ``ValueError``
    (with what is wrong) when the header is damaged."""
    try:
        return _count(_header(data)[0])
    except _DAMAGE as exc:
        raise ValueError(f"the event pack is damaged: {_damage(exc)}") from exc


def _header(data: bytes) -> tuple[dict[str, Any], int, int]:
    """The header, where what follows it starts, and the layout's version (1 to 3)."""
    magic = bytes(data[: len(MAGIC)])
    version = _MAGICS.get(magic)
    if version is None:
        raise ValueError("not an event pack (its magic is missing)")
    (size,) = _HEAD.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _HEAD.size
    header = json.loads(bytes(data[start : start + size]))
    if not isinstance(header, dict):
        raise ValueError("the pack's header is not a JSON object")
    return header, start + size, version


def _count(header: dict[str, Any]) -> int:
    count = header["n"]
    if type(count) is not int or count < 0:
        raise ValueError(f"the pack's event count {count!r} is not a count")
    return count


def _read(data: bytes, offset: int, code: str, count: int) -> tuple[array[Any], int]:
    values = array(code)
    end = offset + values.itemsize * count
    if end > len(data):
        raise ValueError("the pack is shorter than its header says")
    values.frombytes(data[offset:end])
    if not _LITTLE:
        values.byteswap()
    return values, end


def decode_pack(data: bytes) -> list[EncodedEvent]:
    """The events of a pack, in order, as the one-row-per-event encoders write them.
    Raises ``ValueError`` (with what is wrong) for a damaged pack."""
    try:
        return _decode(bytes(data))
    except (ValueError, *_DAMAGE) as exc:  # one line, whatever part is wrong
        raise ValueError(f"the event pack is damaged: {_damage(exc)}") from exc


_DAMAGE = (
    KeyError,
    IndexError,
    TypeError,
    UnicodeDecodeError,
    struct.error,
    OverflowError,
    OSError,
    RecursionError,
    msgspec.MsgspecError,
)
"""What reading a damaged pack raises besides ``ValueError``: a missing or mistyped
header field, a short buffer, bytes that are not UTF-8, a time out of ``datetime``'s
range (``OverflowError``, or ``OSError`` from the platform's ``time_t``), a header nested
too deep, records or bodies that are not what the layout says (msgspec's errors)."""


def _damage(exc: BaseException) -> str:
    """What is wrong with a damaged pack, in a few words: never the pack's bytes, which an
    exception's repr would quote (a ``UnicodeDecodeError`` holds them all)."""
    if isinstance(exc, UnicodeDecodeError):
        return f"bytes that are not UTF-8 at {exc.start} ({exc.reason})"
    return exception_line(exc, 200)


def _all_str(values: Any) -> bool:
    return all(isinstance(value, str) for value in values)


def _typed(value: Any, kind: type, item: type, what: str) -> Any:
    """``value`` when it is a ``kind`` whose items (or values) are all ``item``s: a
    header that parses but holds the wrong types is damage, reported as such."""
    items = value.values() if isinstance(value, dict) else value
    if not isinstance(value, kind) or not all(isinstance(i, item) for i in items):
        raise ValueError(f"the pack's {what} are not of their type")
    return value


class _Head(NamedTuple):
    """What every layout's header gives: the event count, the id base, the team's stored
    JSON, the addresses' texts by key, the model paths, the reports by position."""

    events: int
    base: int
    team: str
    addresses: dict[str, str]
    paths: list[str]
    reports: dict[str, list[str]]


def _head(header: dict[str, Any]) -> _Head:
    addresses: dict[str, str] = _typed(header["addresses"], dict, str, "addresses")
    paths: list[str] = _typed(header["paths"], list, str, "paths")
    reports: dict[str, list[str]] = _typed(header["reports"], dict, list, "reports")
    if not all(len(entry) == 2 and _all_str(entry) for entry in reports.values()):
        raise ValueError("the pack's reports are not [time, text] pairs of strings")
    team = header["team"]
    base = header["base"]
    if not isinstance(team, str) or type(base) is not int:
        raise ValueError("the pack's team or id base is not of its type")
    return _Head(_count(header), base, team, addresses, paths, reports)


def _decode(data: bytes) -> list[EncodedEvent]:
    header, offset, version = _header(data)
    if version == 3:
        return _decode_3(data, _head(header), offset)
    return _decode_columns(data, header, offset, version)


def _decode_3(data: bytes, head: _Head, offset: int) -> list[EncodedEvent]:
    """A pack of the current layout (see the module docstring)."""
    (size,) = _HEAD.unpack_from(data, offset)
    offset += _HEAD.size
    if offset + size > len(data):
        raise ValueError("the pack is shorter than its header says")
    records = msgspec.msgpack.decode(data[offset : offset + size], type=_RECORD_TYPE)
    numbers, bodies = msgspec.json.decode(data[offset + size :], type=_BODIES_TYPE)
    events_held = len(records) + sum(1 for record in records if record[0] == KIND_HANDLED)
    if events_held != head.events:
        raise ValueError(f"the pack holds {events_held} events where its header says {head.events}")
    sends = sum(1 for record in records if record[0] == KIND_SENT)
    if len(numbers) != sends or len(bodies) != sends:
        raise ValueError("the pack's bodies are not one per send (truncated?)")
    addresses, paths, team = head.addresses, head.paths, head.team

    def address(key: Any) -> str:
        if key is None:
            return "null"
        if type(key) is not int:
            raise ValueError("an address key in the pack is not a number")
        return addresses[str(key)]

    events: list[EncodedEvent] = []
    send = 0
    for at, (kind, stamp_seconds, actor, a, b) in enumerate(records):
        position = len(events)
        if kind == KIND_REPORT:
            when, text = head.reports[str(at)]
            events.append((datetime.fromisoformat(when), text))
            continue
        if kind == KIND_HANDLED:
            if not isinstance(a, bytes) or not isinstance(b, float):
                raise ValueError(f"the handled message at {at} has no id or time received")
            for part, seconds in ((KIND_RECEIVED, b), (KIND_PROCESSED, stamp_seconds)):
                stamp = datetime.fromtimestamp(seconds, UTC)
                events.append((stamp, _receipt(part, len(events), stamp, actor, a, head, address)))
            continue
        stamp = datetime.fromtimestamp(stamp_seconds, UTC)
        own_id = str(UUID(int=head.base | position))
        if kind == KIND_SENT:
            number, raw = numbers[send], bodies[send]
            send += 1
            body = _body(bytes(raw), number, paths, address)
            text = _SENT.format(
                path=_SENT_PATH,
                id=own_id,
                team=team,
                when=stamp.isoformat(),
                sender=address(actor),
                recipient=address(b),
                message=body,
            )
        elif kind in (KIND_RECEIVED, KIND_PROCESSED):
            if not isinstance(a, bytes):
                raise ValueError(f"the receipt at {at} names no message id")
            text = _receipt(kind, position, stamp, actor, a, head, address)
        else:
            raise ValueError(f"unknown event kind {kind} at position {at}")
        events.append((stamp, text))
    return events


def _receipt(
    kind: int,
    position: int,
    stamp: datetime,
    actor: Any,
    message_id: bytes,
    head: _Head,
    address: Callable[[Any], str],
) -> str:
    return _RECEIPT.format(
        path=_RECEIPT_PATHS[kind],
        id=str(UUID(int=head.base | position)),
        team=head.team,
        when=stamp.isoformat(),
        sender=address(actor),
        message_id=UUID(bytes=message_id),
    )


def _body(raw: bytes, number: int, paths: list[str], address: Callable[[Any], str]) -> str:
    """A sent message's stored JSON from its body in the pack: the whole text (``-1``),
    or its fields under its model path with the envelope's keys read as addresses."""
    if number == -1:
        text = msgspec.json.decode(raw)
        if not isinstance(text, str):
            raise ValueError("a whole message's body in the pack is not its JSON text")
        return text
    if not 0 <= number < len(paths):
        raise ValueError(f"a body's model number {number} is not among the pack's paths")
    fields = msgspec.json.decode(raw)
    if not isinstance(fields, dict):
        raise ValueError("a plain body in the pack is not a JSON object")
    document: dict[str, Any] = {MODEL_MARKER: paths[number], **fields}
    for name in ("sender", "recipient"):
        document[name] = msgspec.Raw(address(fields.get(name)).encode())
    return _BODIES.encode(document).decode()


def _decode_columns(
    data: bytes, header: dict[str, Any], offset: int, version: int
) -> list[EncodedEvent]:
    """A pack of the layouts before (``AKPACK2``, ``AKPACK1``): numbers in columns."""
    head = _head(header)
    count = head.events
    wide = "q" if version == 2 else "i"  # an address column: ids, or small numbers
    kinds = data[offset : offset + count]
    if len(kinds) != count:
        raise ValueError("the pack is shorter than its header says")
    offset += count
    stamps, offset = _read(data, offset, "d", count)
    actors, offset = _read(data, offset, wide, count)
    receipt_count = sum(1 for k in kinds if k in (KIND_RECEIVED, KIND_PROCESSED))
    receipts = data[offset : offset + 16 * receipt_count]
    offset += 16 * receipt_count
    send_count = kinds.count(KIND_SENT)
    columns = []
    for code in (wide, wide, wide, "i", "i"):  # recipient, own sender and recipient,
        column, offset = _read(data, offset, code, send_count)  # path number, body length
        columns.append(column)
    team_ids = header.get("team_ids", False) is True
    lengths = columns[4]
    if min(lengths, default=0) < 0 or sum(lengths) != len(data) - offset:
        raise ValueError("the pack's bodies are not the length its header says (truncated?)")
    sends = list(zip(*columns, strict=True))
    addresses, paths, reports, team, base = (
        head.addresses,
        head.paths,
        head.reports,
        head.team,
        head.base,
    )

    def address(key: int) -> str:
        return "null" if version == 1 and key < 0 else addresses[str(key)]

    events: list[EncodedEvent] = []
    receipt = send = 0
    for position, kind in enumerate(kinds):
        if kind == KIND_REPORT:
            when, text = reports[str(position)]
            events.append((datetime.fromisoformat(when), text))
            continue
        stamp = datetime.fromtimestamp(stamps[position], UTC)
        own_id = str(UUID(int=base | position))
        sender = address(actors[position])
        if kind == KIND_SENT:
            recipient, own_sender, own_recipient, number, length = sends[send]
            body = data[offset : offset + length].decode()
            offset += length
            if number >= 0:
                inner = body[1:-1]
                parts = [f'"__model__":"{paths[number]}"']
                if inner:
                    parts.append(inner)
                if team_ids:
                    parts.append(f'"team_id":{team}')
                parts.append(f'"sender":{address(own_sender)}')
                parts.append(f'"recipient":{address(own_recipient)}')
                body = "{" + ",".join(parts) + "}"
            send += 1
            text = _SENT.format(
                path=_SENT_PATH,
                id=own_id,
                team=team,
                when=stamp.isoformat(),
                sender=sender,
                recipient=address(recipient),
                message=body,
            )
        elif kind in (KIND_RECEIVED, KIND_PROCESSED):
            message_id = UUID(bytes=receipts[16 * receipt : 16 * receipt + 16])
            receipt += 1
            text = _RECEIPT.format(
                path=_RECEIPT_PATHS[kind],
                id=own_id,
                team=team,
                when=stamp.isoformat(),
                sender=sender,
                message_id=message_id,
            )
        else:
            raise ValueError(f"unknown event kind {kind} at position {position}")
        events.append((stamp, text))
    return events
