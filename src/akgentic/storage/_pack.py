"""Event packs: many consecutive events of one team stored as one value.

Why: a busy team reports three records for every message it passes (the send, its
receipt, its completion). Stored one row each, a row costs a store a few microseconds
of its own work (two B-tree inserts, the WAL) and the recorder a JSON text built in
Python, which is several times what raw pykka spends passing the message. A pack holds a
whole batch of records in a compact binary form — numbers for the kinds, times, actors
and message ids, each actor's address once, each message's body once — built mostly by
C-level loops over the batch, and written as one row.

A pack decodes to the events the one-row-per-event encoders write
(:func:`~akgentic.storage.encode_sent`, :func:`~akgentic.storage.encode_receipt`,
:func:`~akgentic.storage.encode_event`): the same messages, times and addresses, so
readers, restore and replay see no difference. The text differs in one place: a sent
message of a *plain* class (:func:`_plain_path`) has the body pydantic-core writes — its
keys in another order, UTC written ``Z`` —, which decodes to the same message. Each
decoded event's own id is derived from a random base stored in the pack and the event's
place in it, so reading a pack twice gives the same ids.

Layout (little-endian), after the magic ``AKPACK2\n``:

- a ``u32`` length and a JSON header: the event count, the id base, the team id (as
  stored JSON), the addresses used (key → stored JSON text), the model paths used, the
  reports (``[ISO time, stored JSON text]``: the rare records that arrive as built
  telemetry messages: starts, stops, states, events, errors), and whether the plain
  bodies leave out their ``team_id`` (``team_ids``: every send carries the pack's team,
  written once here);
- ``kinds``: one byte per event (``KIND_SENT``, ``KIND_RECEIVED``, ``KIND_PROCESSED``,
  ``KIND_REPORT``);
- ``stamps``: one ``f64`` per event, epoch seconds (unused for a report);
- ``actors``: one ``i64`` per event, the key of the sender or receiver (unused for a
  report). An address's key is the ``id`` of its object while the pack was built: any
  number, only meaningful through the header;
- ``receipts``: 16 bytes per receipt, the id of the message received or processed;
- per send, three columns of ``i64`` — the recipient's key, the message's own sender's
  and recipient's (None has a key too) — and two of ``i32``: its model path (``-1``: the
  body is the whole message as stored JSON) and its body's length in bytes;
- the bodies, end to end.

The first layout, ``AKPACK1\n``, is still read: addresses by small numbers (``i32``,
``-1`` for none), and the team id in every body.
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
from itertools import chain, compress, repeat
from operator import attrgetter, call, is_, itemgetter
from typing import Any, Literal, NamedTuple, get_args, get_origin
from uuid import UUID

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, SchemaSerializer, core_schema

from akgentic.core import ActorAddress, ProcessedMessage, ReceivedMessage, SentMessage
from akgentic.core._telemetry import KIND_PROCESSED, KIND_RECEIVED, KIND_REPORT, KIND_SENT
from akgentic.core.excerpt import exception_line
from akgentic.core.messages.message import new_id
from akgentic.core.serialization import model_path
from akgentic.storage._codec import _RECEIPT, _SENT, EncodedEvent, encode_message

__all__ = [
    "MAGIC",
    "AddressIndex",
    "Packed",
    "decode_pack",
    "pack_count",
    "pack_encoded",
    "pack_records",
]

MAGIC = b"AKPACK2\n"
_MAGIC_1 = b"AKPACK1\n"
"""The first layout (still read): addresses by small numbers (``i32``, ``-1`` for none),
the team id in every body."""
_HEAD = struct.Struct("<I")
_LITTLE = sys.byteorder == "little"
_ENVELOPE = {"sender", "recipient"}  # a set: pydantic-core takes it faster than a frozenset
_ENVELOPE_TEAM = {"sender", "recipient", "team_id"}
_SENT_PATH = model_path(SentMessage)
_RECEIPT_PATHS = {
    KIND_RECEIVED: model_path(ReceivedMessage),
    KIND_PROCESSED: model_path(ProcessedMessage),
}
_CLEAR_LOW = ~0xFFFFFFFF

Record = tuple[int, float, Any, Any, Any]
"""A telemetry record as the orchestrator queues it (see ``akgentic.core._telemetry``)."""


class AddressIndex:
    """The stored JSON of the addresses a recorder sees, keyed on the address objects'
    ``id``.

    A pack names each address by the ``id`` of its object: a team passes the same few
    address objects around, so a whole column of them is one C-level ``map(id, ...)``,
    and only the distinct ones (a set of a handful) are looked up here. The objects are
    kept alive while their ids are here, so an id is never reused for another address
    meanwhile. ``resolve`` gives the stored JSON of an address seen for the first time.
    Bounded: past ``limit`` entries it starts afresh (a pack only needs its own
    addresses to be consistent while it is built).
    """

    def __init__(self, resolve: Callable[[Any], str], limit: int = 4096) -> None:
        self._resolve = resolve
        self._limit = limit
        self._texts: dict[int, str] = {id(None): "null"}
        self._kept: list[Any] = [None]

    def texts(self, used: set[int], objects: Callable[[], Iterable[Any]]) -> dict[str, str]:
        """The stored JSON of every id in ``used`` (by its decimal text). Ids seen for
        the first time are resolved from the object among ``objects()`` that has it."""
        known = self._texts
        missing = used.difference(known)
        if missing:  # rare: an address this index has not seen yet
            for item in objects():
                key = id(item)
                if key in missing:
                    known[key] = self._resolve(item)
                    self._kept.append(item)
                    missing.discard(key)
                    if not missing:
                        break
            if missing:
                raise ValueError("an address id has no object among those given")
        return {str(key): known[key] for key in used}

    def trim(self) -> None:
        """Start afresh once past the limit (called before a pack is built, never while:
        the ids of one pack must keep their texts)."""
        if len(self._kept) > self._limit:
            self._texts = {id(None): "null"}
            self._kept = [None]


_ATOMS: tuple[type, ...] = (str, int, bool, type(None), UUID, datetime)


def _plain(annotation: Any) -> bool:
    """Whether pydantic's own JSON of a value so typed is what the store writes for it."""
    if annotation in _ATOMS:
        return True
    if isinstance(annotation, type) and issubclass(annotation, ActorAddress):
        return True  # serializes itself as the store does (its marker included)
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return all(isinstance(a, str | int | bool) for a in args)
    if origin in (typing.Union, types.UnionType):
        return all(_plain(a) for a in args)
    if origin is list:
        return len(args) == 1 and _plain(args[0])
    if origin is dict:
        return len(args) == 2 and args[0] is str and _plain(args[1])
    return False


_PLAIN: dict[type, str | None] = {}


def _plain_path(cls: type[BaseModel]) -> str | None:
    """The model path when pydantic-core can write ``cls``'s body (envelope excluded)
    exactly as the store's serializer would, else None (the generic path is taken).

    Plain means: only fields of the types :func:`_plain` accepts (no float: pydantic
    writes ``inf`` as ``null``), no extra fields kept, no custom or computed
    serializers, no aliases, no field metadata (an ``Annotated`` serializer or
    constraint), no ``exclude_if``, no ``ser_json_*`` or ``json_encoders`` setting: any
    of these, and pydantic's JSON could say something the store's serializer would not.
    A class that is not plain is still stored, through the generic serializer."""
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
    sent_at: list[int]  # the positions of its sends, in order
    sent: list[Any]  # the messages sent there (callers wait on their ids)


_SENT_MASK = bytes(1 if k == KIND_SENT else 0 for k in range(256))
_RECEIPT_MASK = bytes(1 if k in (KIND_RECEIVED, KIND_PROCESSED) else 0 for k in range(256))
_INT = attrgetter("int")
_SIXTEEN = repeat(16)  # int.to_bytes(16): big-endian, a UUID's 16 bytes (UUID.bytes is
# a Python property, and a methodcaller's call dearer than map passing the length)


def pack_records(
    records: Sequence[Record],
    addresses: AddressIndex,
    reports: Mapping[int, EncodedEvent],
    team_json: str,
    kinds: bytes | None = None,
    team: UUID | None = None,
) -> Packed:
    """One pack of ``records`` (in order). ``reports`` holds, by position, the stored
    form of each report record (a built telemetry message); sends and receipts are
    encoded here. ``kinds``: the records' kinds as bytes, when the caller has them
    already. ``team``: the team's id, which its members' messages carry (their
    ``team_id`` is then stored once, in the header). Raises ``SerializationError``
    when a sent message cannot be stored: the caller reports it in its place.

    Every step over the whole batch is a C-level ``map``/``compress``, the bodies too
    when every class in the batch is plain (:func:`_fields_writer`); else a Python loop
    walks the sends, for each body's writer."""
    addresses.trim()
    count = len(records)
    if kinds is None:
        kinds = bytes(map(itemgetter(0), records))
    sent_mask = kinds.translate(_SENT_MASK)
    stamps = array("d", map(itemgetter(1), records))
    actors = list(map(id, map(itemgetter(2), records)))
    receipt_ids = b"".join(
        map(
            int.to_bytes,
            map(_INT, compress(map(itemgetter(3), records), kinds.translate(_RECEIPT_MASK))),
            _SIXTEEN,
        )
    )
    sent = list(compress(map(itemgetter(3), records), sent_mask))
    recipients = list(map(id, compress(map(itemgetter(4), records), sent_mask)))
    own_senders = list(map(id, map(attrgetter("sender"), sent)))
    own_recipients = list(map(id, map(attrgetter("recipient"), sent)))
    used = set(actors)
    used.update(recipients, own_senders, own_recipients)

    def objects() -> Iterable[Any]:
        return chain(
            map(itemgetter(2), records),
            map(itemgetter(4), records),
            map(attrgetter("sender"), sent),
            map(attrgetter("recipient"), sent),
        )

    address_texts = addresses.texts(used, objects)
    classes = list(map(type, sent))
    numbers: dict[type, int] = {}
    paths: list[str] = []
    for cls in set(classes):
        path = _plain_path(cls)
        numbers[cls] = -1 if path is None else len(paths)
        if path is not None:
            paths.append(path)
    plain = [cls for cls, number in numbers.items() if number >= 0]
    lift_team = _lifted_team(sent, plain, team)
    exclude = _ENVELOPE_TEAM if lift_team else _ENVELOPE
    bodies, path_numbers = _bodies(sent, classes, numbers, exclude)
    header = json.dumps(
        {
            "n": count,
            "base": new_id().int & _CLEAR_LOW,
            "team": team_json,
            "addresses": address_texts,
            "paths": paths,
            "reports": {str(i): [stamp.isoformat(), text] for i, (stamp, text) in reports.items()},
            "team_ids": lift_team,
        },
        separators=(",", ":"),
    ).encode()
    columns = [
        _column("d", stamps),
        _column("q", actors),
        receipt_ids,
        _column("q", recipients),
        _column("q", own_senders),
        _column("q", own_recipients),
        _column("i", path_numbers),
        _column("i", list(map(len, bodies))),
    ]
    data = b"".join((MAGIC, _HEAD.pack(len(header)), header, kinds, *columns, *bodies))
    return Packed(data, count, list(compress(range(count), sent_mask)), sent)


def _liftable(cls: type, name: str, annotation: Any) -> bool:
    field = cls.model_fields.get(name)  # type: ignore[attr-defined]
    return field is not None and field.annotation == annotation


def _lifted_team(sent: list[Any], plain: list[type], team: UUID | None) -> bool:
    """Whether every send carries the team's own id (the very object, as members stamp
    it): it is then stored once, in the header, not in every body."""
    if team is None or not plain or not all(_liftable(c, "team_id", UUID | None) for c in plain):
        return False
    teams = list(map(attrgetter("team_id"), sent))
    first = teams[0]
    return first == team and all(map(is_, teams, repeat(first)))


def pack_encoded(events: Sequence[EncodedEvent], team_json: str) -> bytes:
    """A pack of events already encoded one by one (``encode_event`` rows): each held as
    a report. How a writer puts rows and packs in one transaction."""
    records: list[Record] = [(KIND_REPORT, 0.0, None, None, None)] * len(events)
    reports = dict(enumerate(events))
    return pack_records(records, AddressIndex(lambda _: "null"), reports, team_json).data


def _bodies(
    sent: list[Any], classes: list[type], numbers: dict[type, int], exclude: set[str]
) -> tuple[list[bytes], list[int]]:
    """Each sent message's body and path number: pydantic-core's JSON of it without
    ``exclude`` (its envelope, and the fields the pack stores apart) for a plain class
    (they are added back when it is read), else the whole message as the store writes
    it (path number ``-1``)."""
    path_numbers = list(map(numbers.__getitem__, classes))
    writers: dict[type, Callable[[dict[str, Any]], bytes]] = {}
    for cls, number in numbers.items():
        writer = _fields_writer(cls, exclude) if number >= 0 else None
        if writer is not None:
            writers[cls] = writer
    try:
        if writers and len(writers) == len(numbers):
            # every class plain, each with its fields' writer: one C-level loop
            write = map(writers.__getitem__, classes)
            return list(map(call, write, map(_DICT, sent))), path_numbers
        return [
            cls.__pydantic_serializer__.to_json(message, exclude=exclude)  # type: ignore[attr-defined]
            if number >= 0
            else encode_message(message).encode()
            for message, cls, number in zip(sent, classes, path_numbers, strict=True)
        ], path_numbers
    except PydanticSerializationError:  # one body pydantic cannot write: a lone surrogate
        pass
    bodies: list[bytes] = []
    for at, (message, cls) in enumerate(zip(sent, classes, strict=True)):
        body: bytes | None = None
        if path_numbers[at] >= 0:
            try:
                body = cls.__pydantic_serializer__.to_json(message, exclude=exclude)  # type: ignore[attr-defined]
            except PydanticSerializationError:
                path_numbers[at] = -1
        bodies.append(encode_message(message).encode() if body is None else body)
    return bodies, path_numbers


_DICT = attrgetter("__dict__")
_WRITERS: dict[tuple[type, frozenset[str]], Callable[[dict[str, Any]], bytes] | None] = {}


def _fields_writer(cls: type, exclude: set[str]) -> Callable[[dict[str, Any]], bytes] | None:
    """A writer of a plain message's body from its ``__dict__``: pydantic-core's JSON of
    its fields but ``exclude``, by a serializer of those fields alone (the model's own
    field schemas in a ``TypedDict`` schema that ignores the keys it lacks).

    Why: the model's serializer told ``exclude=`` turns the exclusions into a filter at
    every call, and writes a body a third dearer (``bench/README.md``). The bytes are the
    same (``tests/storage/test_packs.py`` holds it). None — the model's serializer is
    used — when the class's schema cannot be taken apart: wrapped in definitions, a
    reference inside, or a field the model itself excludes."""
    key = (cls, frozenset(exclude))
    found = _WRITERS.get(key, False)
    if found is not False:
        return found  # type: ignore[return-value]
    writer: Callable[[dict[str, Any]], bytes] | None = None
    schema = getattr(cls, "__pydantic_core_schema__", None)
    fields_schema = schema.get("schema") if isinstance(schema, dict) else None
    if (
        isinstance(schema, dict)
        and schema.get("type") == "model"
        and isinstance(fields_schema, dict)
        and fields_schema.get("type") == "model-fields"
        and not _refers(fields_schema)
    ):
        fields = {
            name: core_schema.typed_dict_field(field["schema"])
            for name, field in fields_schema["fields"].items()
            if name not in exclude
        }
        if not any(f.get("serialization_exclude") for f in fields_schema["fields"].values()):
            try:
                writer = SchemaSerializer(
                    core_schema.typed_dict_schema(fields, total=False, extra_behavior="ignore")
                ).to_json
            except Exception:  # a schema pydantic-core will not build alone
                writer = None
    _WRITERS[key] = writer
    return writer


def _refers(schema: Any) -> bool:
    """Whether a core schema refers to definitions it does not hold."""
    if isinstance(schema, dict):
        if schema.get("type") in ("definition-ref", "definitions"):
            return True
        return any(_refers(value) for value in schema.values())
    if isinstance(schema, list):
        return any(_refers(value) for value in schema)
    return False


def _column(code: str, values: Iterable[Any]) -> bytes:
    """A column of numbers (``array`` type ``code``), little-endian."""
    column = values if isinstance(values, array) else array(code, values)
    if not _LITTLE:
        column.byteswap()
    return column.tobytes()


def pack_count(data: bytes) -> int:
    """How many events ``data`` holds (reads the header only). Raises ``ValueError``
    (with what is wrong) when the header is damaged."""
    try:
        return _count(_header(data)[0])
    except _DAMAGE as exc:
        raise ValueError(f"the event pack is damaged: {_damage(exc)}") from exc


def _header(data: bytes) -> tuple[dict[str, Any], int, int]:
    """The header, where the columns start, and the layout's version (1 or 2)."""
    magic = bytes(data[: len(MAGIC)])
    if magic not in (MAGIC, _MAGIC_1):
        raise ValueError("not an event pack (its magic is missing)")
    (size,) = _HEAD.unpack_from(data, len(MAGIC))
    start = len(MAGIC) + _HEAD.size
    header = json.loads(bytes(data[start : start + size]))
    if not isinstance(header, dict):
        raise ValueError("the pack's header is not a JSON object")
    return header, start + size, 2 if magic == MAGIC else 1


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
    except _DAMAGE as exc:
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
)
"""What reading a damaged pack raises besides ``ValueError``: a missing or mistyped
header field, a short buffer, bytes that are not UTF-8, a time out of ``datetime``'s
range (``OverflowError``, or ``OSError`` from the platform's ``time_t``), a header nested
too deep."""


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


def _decode(data: bytes) -> list[EncodedEvent]:
    header, offset, version = _header(data)
    count = _count(header)
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
    addresses: dict[str, str] = _typed(header["addresses"], dict, str, "addresses")
    paths: list[str] = _typed(header["paths"], list, str, "paths")
    reports: dict[str, list[str]] = _typed(header["reports"], dict, list, "reports")
    if not all(len(entry) == 2 and _all_str(entry) for entry in reports.values()):
        raise ValueError("the pack's reports are not [time, text] pairs of strings")
    team: str = header["team"]
    base = header["base"]
    if not isinstance(team, str) or type(base) is not int:
        raise ValueError("the pack's team or id base is not of its type")

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
