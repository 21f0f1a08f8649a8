"""Event packs: a pack decodes to exactly what the one-row-per-event encoders write, and
every store keeps a pack's events under consecutive numbers that every reader sees as if
they were rows — ranges, limits, ``last_seq``, purge, another handle, damage included.

The ``backend`` fixture (conftest) runs the store tests on memory, SQLite and — when
``AKGENTIC_TEST_POSTGRES_URL`` is set — Postgres.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import struct
import threading
import time
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal
from uuid import UUID, uuid4

import msgspec
import pytest
from pydantic import ConfigDict, Field, PlainSerializer

from akgentic.core import (
    ActorAddressProxy,
    BaseState,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    SerializableModel,
)
from akgentic.core._telemetry import (
    KIND_HANDLED,
    KIND_PROCESSED,
    KIND_RECEIVED,
    KIND_REPORT,
    KIND_SENT,
)
from akgentic.core.serialization import SerializationError
from akgentic.storage import (
    EncodedEvent,
    SqliteStorage,
    StorageBundle,
    corrupt_rows,
    encode_event,
    encode_receipt,
    encode_sent,
    encode_state,
    encode_value,
)
from akgentic.storage._codec import decode_event, to_utc
from akgentic.storage._pack import (
    MAGIC,
    AddressIndex,
    _plain_path,
    decode_pack,
    pack_count,
    pack_encoded,
    pack_records,
    send_position,
)
from tests.storage.conftest import Backend


class Plain(Message):
    """Fields pydantic writes as the store does: the pack's fast path."""

    text: str = ""
    count: int = 0
    flag: bool = False
    ref: UUID | None = None
    when: datetime | None = None
    mode: Literal["fast", "slow"] = "fast"
    tags: list[str] = []
    table: dict[str, int] = {}
    maybe: int | None = None


FULL_PLAIN = Plain(
    text='héllo "quoted"\n',
    count=-3,
    flag=True,
    ref=uuid4(),
    when=datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=UTC),
    mode="slow",
    tags=["x", "é"],
    table={"k": 1},
    maybe=None,
)
"""A plain message with a value in every kind of field the fast path takes."""


class Inner(SerializableModel):
    step: int
    note: str


class Rich(Message):
    """A float and a nested model: the pack stores the generic encoder's text."""

    ratio: float = 0.5
    inner: Inner | None = None
    text: str = ""


class Shouty(Message):
    """A field serializer in ``Annotated`` metadata: pydantic's JSON would differ."""

    code: Annotated[str, PlainSerializer(str.upper)] = ""


class Skipping(Message):
    """``exclude_if``: pydantic would leave the field out, the store writes it."""

    maybe: int | None = Field(default=3, exclude_if=lambda v: v is None)


class Tally(BaseState):
    count: int = 0


def actor(name: str, team: UUID) -> ActorAddressProxy:
    return ActorAddressProxy(
        agent_id=uuid4(),
        name=name,
        role="Worker",
        team_id=team,
        squad_id=None,
        is_user_proxy=False,
        agent_class="tests.Worker",
    )


Record = tuple[int, float, Any, Any, Any]


class Traffic:
    """Telemetry records of a team passing messages, and what the one-row-per-event
    encoders write for each (the reference a pack must decode to)."""

    def __init__(self, team: UUID) -> None:
        self.team = team
        self.team_json = encode_value(team)
        self.a, self.b = actor("@A", team), actor("@B", team)
        self.addresses = AddressIndex(lambda address: encode_value(address))
        self.records: list[Record] = []
        self.reports: dict[int, EncodedEvent] = {}
        self.expected: list[EncodedEvent] = []
        self.clock = time.time()

    def _tick(self) -> float:
        self.clock += 0.001237
        return self.clock

    def exchange(self, message: Message, to: ActorAddressProxy | None = None) -> None:
        """``a`` sends ``message`` (to ``b`` unless ``to`` says otherwise); ``b`` receives
        and processes it."""
        to = self.b if to is None else to
        sent, received, processed = self._tick(), self._tick(), self._tick()
        self.records += [
            (KIND_SENT, sent, self.a, message, to),
            (KIND_RECEIVED, received, to, message.id, None),
            (KIND_PROCESSED, processed, to, message.id, None),
        ]
        who, peer, team = encode_value(self.a), encode_value(to), self.team_json
        self.expected += [
            encode_sent(SentMessage, message, who, peer, team, sent),
            encode_receipt(ReceivedMessage, message.id, peer, team, received),
            encode_receipt(ProcessedMessage, message.id, peer, team, processed),
        ]

    def handled(self, message: Message) -> None:
        """``a`` sends ``message`` to ``b``, which handles it in a turn held as one
        record (a receipt and a completion: ``KIND_HANDLED``)."""
        sent, received, processed = self._tick(), self._tick(), self._tick()
        self.records += [
            (KIND_SENT, sent, self.a, message, self.b),
            (KIND_HANDLED, processed, self.b, message.id, received),
        ]
        who, peer, team = encode_value(self.a), encode_value(self.b), self.team_json
        self.expected += [
            encode_sent(SentMessage, message, who, peer, team, sent),
            encode_receipt(ReceivedMessage, message.id, peer, team, received),
            encode_receipt(ProcessedMessage, message.id, peer, team, processed),
        ]

    def report(self) -> None:
        """A record that arrives built (a telemetry message of its own)."""
        built = EventMessage(event={"note": "built"}, sender=self.a, team_id=self.team)
        self.reports[len(self.records)] = encode_event(built)
        self.records.append((KIND_REPORT, self._tick(), self.a, built, None))
        self.expected.append(encode_event(built))

    def pack(self) -> bytes:
        return pack_records(self.records, self.addresses, self.reports, self.team_json).data


def busy(team: UUID, exchanges: int = 3) -> Traffic:
    """Traffic of both kinds of message, and a report."""
    traffic = Traffic(team)
    for i in range(exchanges):
        traffic.exchange(Plain(text=f"plain {i}", count=i, team_id=team, sender=traffic.a))
        if i == 0:
            traffic.report()
        traffic.exchange(Rich(ratio=i / 3, inner=Inner(step=i, note="n")), to=traffic.a)
    return traffic


def own_id(text: str) -> str:
    return str(json.loads(text)["id"])


def header_of(data: bytes) -> dict[str, Any]:
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    header: dict[str, Any] = json.loads(data[start : start + size])
    return header


# -- the codec -------------------------------------------------------------------------------


def test_both_paths_of_the_encoder_are_exercised() -> None:
    assert _plain_path(Plain) is not None  # pydantic writes it as the store does
    assert _plain_path(Rich) is None  # a float, a nested model: the generic encoder
    assert _plain_path(Shouty) is None  # a serializer in the field's metadata
    assert _plain_path(Skipping) is None  # exclude_if


@pytest.mark.parametrize(
    "message",
    [
        FULL_PLAIN,
        Plain(),
        Plain(text="a lone surrogate: \ud800 then é"),
        Rich(ratio=float("inf"), inner=Inner(step=2, note="deep"), text="r"),
        Rich(text="\udfff alone", inner=None),
        Shouty(code="abc"),
        Skipping(maybe=None),
    ],
    ids=[
        "plain-full",
        "plain-defaults",
        "plain-surrogate",
        "rich",
        "rich-surrogate",
        "annotated-serializer",
        "exclude-if",
    ],
)
@pytest.mark.parametrize("addressed", [True, False])
def test_a_pack_decodes_to_exactly_what_the_row_encoders_write(
    message: Message, addressed: bool
) -> None:
    team = uuid4()
    traffic = Traffic(team)
    if addressed:  # the message's own envelope set: sender, recipient, team
        message = message.model_copy(
            update={"sender": traffic.a, "recipient": traffic.b, "team_id": team}
        )
    traffic.exchange(message)
    traffic.report()
    traffic.exchange(message, to=traffic.a)
    data = traffic.pack()
    assert pack_count(data) == len(traffic.expected) == 7
    decoded = decode_pack(data)
    assert len(decoded) == len(traffic.expected)
    for (stamp, text), (want_stamp, want_text) in zip(decoded, traffic.expected, strict=True):
        assert stamp == want_stamp and stamp.tzinfo is not None
        # the same text apart from the event's own id (a pack derives it from its place),
        # but for a sent message's body: msgspec writes a plain one (its keys in another
        # order, UTC as "Z") — the same message once decoded, as checked below
        same = want_text.replace(own_id(want_text), own_id(text))
        if '"message":{' in text:
            got_doc, want_doc = json.loads(text), json.loads(same)
            assert got_doc.pop("message").keys() == want_doc.pop("message").keys()
            assert got_doc == want_doc
        else:
            assert text == same
        got = decode_event(team, 1, stamp, text, to_utc)
        want = decode_event(team, 1, want_stamp, want_text, to_utc)
        assert got.error is None and want.error is None
        assert got.message is not None and want.message is not None
        assert got.message.model_dump(exclude={"id"}) == want.message.model_dump(exclude={"id"})
        got_fields = {k: v for k, v in vars(got.message).items() if k != "id"}
        assert got_fields == {k: v for k, v in vars(want.message).items() if k != "id"}
        assert got.timestamp == want.timestamp
    sent = decode_event(team, 1, *decoded[0], to_utc).require()
    assert isinstance(sent, SentMessage) and sent.message == message
    assert vars(sent.message) == vars(message)  # the values themselves, as sent


class Excluding(Message):
    """A field the model itself leaves out: the store's serializer is kept."""

    secret: str = Field(default="s", exclude=True)


class Pointing(Message):
    """An address besides the envelope: the store writes it whole, the pack's keys are
    only for ``sender`` and ``recipient``."""

    target: ActorAddressProxy | None = None


@pytest.mark.parametrize(
    "message",
    [
        Excluding(secret="x"),
        Pointing(target=actor("@C", uuid4())),
        Plain(when=datetime(2026, 5, 6, 7, 8, 9)),  # a naive time, written as it is
        Plain(text='\u2028 \x00 \\ " é 𝄞', count=2**80, table={"": -(2**70)}),
    ],
    ids=["excluded-field", "address-field", "naive-time", "awkward-values"],
)
def test_a_send_the_plain_path_must_not_write_as_msgspec_would_decodes_as_sent(
    message: Message,
) -> None:
    team = uuid4()
    traffic = Traffic(team)
    traffic.exchange(message.model_copy(update={"team_id": team}))
    got = sent_messages(team, decode_pack(traffic.pack()))
    assert got == sent_messages(team, traffic.expected)
    assert vars(got[0]) == vars(sent_messages(team, traffic.expected)[0])


class Stamped(Message):
    """A union of a string and a time: msgspec writes UTC as "Z" where the store writes
    "+00:00", and pydantic reads either back as the string — not plain."""

    at: str | datetime = ""


class Strict(Message):
    """A ``cached_property`` keeps its value in the instance's ``__dict__``, beside the
    fields; with ``extra="forbid"`` a body carrying it would not read back."""

    model_config = ConfigDict(extra="forbid")
    item: str = ""

    @cached_property
    def shout(self) -> str:
        return self.item.upper()


def test_a_utc_time_in_a_str_or_datetime_field_reads_back_as_the_row_path_does() -> None:
    assert _plain_path(Stamped) is None
    team = uuid4()
    traffic = Traffic(team)
    traffic.exchange(Stamped(at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), team_id=team))
    got = sent_messages(team, decode_pack(traffic.pack()))[0]
    assert got.at == sent_messages(team, traffic.expected)[0].at  # type: ignore[attr-defined]


def test_a_message_holding_more_than_its_fields_is_stored_whole() -> None:
    team = uuid4()
    traffic = Traffic(team)
    message = Strict(item="tea", team_id=team)
    assert message.shout == "TEA"  # now in its __dict__
    traffic.exchange(Strict(item="plain", team_id=team))
    traffic.exchange(message)
    decoded = decode_pack(traffic.pack())
    assert sent_messages(team, decoded) == sent_messages(team, traffic.expected)
    assert '"shout"' not in decoded[3][1]


def test_a_receipt_naming_its_message_by_other_than_a_uuid_is_refused_by_the_pack() -> None:
    """A pack cannot hold it (its reader would refuse the whole pack): the recorder is
    told (``SerializationError``) and stores that batch's records one by one."""
    traffic = busy(uuid4(), 2)
    records = [*traffic.records, (KIND_RECEIVED, time.time(), traffic.b, str(uuid4()), None)]
    with pytest.raises(SerializationError, match="UUID"):
        pack_records(records, traffic.addresses, traffic.reports, traffic.team_json)


def test_a_send_whose_fields_were_assigned_another_type_is_stored_whole() -> None:
    """Pydantic does not check an assignment: a plain class may then hold a value msgspec
    cannot write (an object) — the pack stores that message as the store writes it
    (generic path), and the others of the batch as usual."""
    team = uuid4()
    traffic = Traffic(team)
    odd = Plain(text="odd", team_id=team)
    odd.__dict__["text"] = Inner(step=1, note="not a str")
    traffic.exchange(Plain(text="before", team_id=team))
    traffic.exchange(odd)
    traffic.exchange(Plain(text="after", team_id=team))
    decoded = decode_pack(traffic.pack())
    bodies = [json.loads(text)["message"] for _, text in decoded[::3]]
    wanted = [json.loads(text)["message"] for _, text in traffic.expected[::3]]
    assert bodies[1] == wanted[1]  # the odd one as the store writes it (its whole text)
    assert wanted[1]["text"]["note"] == "not a str"
    plain = [decoded[0], decoded[6]], [traffic.expected[0], traffic.expected[6]]
    assert sent_messages(team, plain[0]) == sent_messages(team, plain[1])


def sent_messages(team: UUID, events: list[EncodedEvent]) -> list[Message]:
    """The messages the sends among ``events`` carry, decoded."""
    decoded = [decode_event(team, 1, stamp, text, to_utc).require() for stamp, text in events]
    return [event.message for event in decoded if isinstance(event, SentMessage)]


def test_each_send_keeps_its_own_team_id() -> None:
    team, other = uuid4(), uuid4()
    traffic = Traffic(team)
    traffic.exchange(Plain(text="ours", team_id=team))
    traffic.exchange(Plain(text="theirs", team_id=other))
    traffic.exchange(Plain(text="none"))
    got = sent_messages(team, decode_pack(traffic.pack()))
    assert [m.team_id for m in got] == [team, other, None]
    assert got == sent_messages(team, traffic.expected)


def test_a_pack_of_the_first_layout_still_decodes_as_it_did() -> None:
    """A pack stored before the layout changed (``AKPACK1``: addresses by small numbers,
    the team id in every body) reads back to exactly the events akgentic decoded then."""
    fixture = json.loads((Path(__file__).parent / "data" / "pack_v1.json").read_text())
    data = base64.b64decode(fixture["pack"])
    assert data.startswith(b"AKPACK1\n") and not data.startswith(MAGIC)
    assert pack_count(data) == len(fixture["events"]) == 10
    assert [[stamp.isoformat(), text] for stamp, text in decode_pack(data)] == fixture["events"]


def test_a_pack_of_the_second_layout_still_decodes_as_it_did() -> None:
    """``AKPACK2`` (numbers in columns, each body apart, the team id lifted into the
    header when every send carried it), as akgentic decoded it then."""
    fixture = json.loads((Path(__file__).parent / "data" / "pack_v2.json").read_text())
    data = base64.b64decode(fixture["pack"])
    assert data.startswith(b"AKPACK2\n") and not data.startswith(MAGIC)
    assert pack_count(data) == len(fixture["events"]) == 22
    assert [[stamp.isoformat(), text] for stamp, text in decode_pack(data)] == fixture["events"]


def test_a_handled_record_is_two_events_its_receipt_then_its_completion() -> None:
    """A turn held as one record (``KIND_HANDLED``) decodes to the receipt and the
    completion the row encoders write, each at its own time; the pack counts events, and
    a send after it is found at its place among them (a caller waiting on its id)."""
    team = uuid4()
    traffic = Traffic(team)
    first, second = Plain(text="first", team_id=team), Plain(text="second", team_id=team)
    traffic.handled(first)
    traffic.exchange(Rich(text="apart"))
    traffic.handled(second)
    packed = pack_records(traffic.records, traffic.addresses, {}, traffic.team_json)
    assert len(traffic.records) == 7 and packed.size == pack_count(packed.data) == 9
    decoded = decode_pack(packed.data)
    assert [stamp for stamp, _ in decoded] == [stamp for stamp, _ in traffic.expected]
    for (_, text), (_, want) in zip(decoded, traffic.expected, strict=True):
        if '"message_id"' in want:  # the receipts: the very text, but for their own id
            assert text == want.replace(own_id(want), own_id(text))
    assert sent_messages(team, decoded) == sent_messages(team, traffic.expected)
    positions = [send_position(packed.kinds, index) for index in range(3)]
    assert positions == [0, 3, 6]
    texts = [decoded[at][1] for at in positions]
    assert ['"first"' in texts[0], '"apart"' in texts[1], '"second"' in texts[2]] == [True] * 3
    ids = {own_id(text) for _, text in decoded}
    assert len(ids) == 9


def test_the_ids_of_a_pack_are_the_same_at_every_decode_and_unique() -> None:
    data = busy(uuid4()).pack()
    first, second = decode_pack(data), decode_pack(data)
    assert first == second
    ids = [own_id(text) for _, text in first]
    assert len(set(ids)) == len(ids)


def test_a_damaged_pack_is_refused_with_a_value_error() -> None:
    data = busy(uuid4()).pack()
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    damaged = {
        "empty": b"",
        "not a pack": b'{"json": "text"}',
        "magic only": MAGIC,
        "header cut": data[: len(MAGIC) + 4 + size // 2],
        "header garbled": data[: len(MAGIC) + 5] + b"\xff" + data[len(MAGIC) + 6 :],
        "bodies cut": data[:-1],
        "arrays cut": data[: len(MAGIC) + 4 + size + 3],
        "bytes appended": data + b"x",
    }
    header = json.loads(data[len(MAGIC) + 4 : len(MAGIC) + 4 + size])
    for field, wrong in (("reports", {"0": [1, 5]}), ("addresses", {"0": 5}), ("team", 5)):
        bad = json.dumps({**header, field: wrong}).encode()
        rest = data[len(MAGIC) + 4 + size :]
        damaged[f"{field} of the wrong type"] = MAGIC + struct.pack("<I", len(bad)) + bad + rest
    for what, value in damaged.items():
        with pytest.raises(ValueError) as refused:
            decode_pack(value)
        assert len(str(refused.value)) < 300, what  # what is wrong, never the pack's bytes
        if what in ("empty", "not a pack", "magic only", "header cut", "header garbled"):
            with pytest.raises(ValueError) as refused:
                pack_count(value)
            assert len(str(refused.value)) < 300, what
    with pytest.raises(ValueError) as refused:
        decode_pack(damaged["header garbled"])
    assert str(refused.value).startswith("the event pack is damaged: bytes that are not UTF-8 at ")


def test_a_pack_whose_records_or_bodies_say_something_else_is_refused_in_one_line() -> None:
    """Damage past the header, as the layout's parts can be wrong: each a ValueError
    saying what is wrong, never the pack's bytes, never another exception."""
    traffic = Traffic(uuid4())
    traffic.exchange(Plain(text="one"))
    traffic.handled(Plain(text="two"))
    data = traffic.pack()
    (size,) = struct.unpack_from("<I", data, len(MAGIC))
    head = data[: len(MAGIC) + 4 + size]
    records = msgspec.msgpack.decode(
        data[len(head) + 4 :][: struct.unpack_from("<I", data, len(head))[0]]
    )
    bodies = msgspec.json.decode(data[len(head) + 4 + len(msgspec.msgpack.encode(records)) :])

    def rebuilt(records: Any, bodies: Any) -> bytes:
        packed = msgspec.msgpack.encode(records)
        return head + struct.pack("<I", len(packed)) + packed + msgspec.json.encode(bodies)

    assert decode_pack(rebuilt(records, bodies)) == decode_pack(data)  # the parts as read
    handled = [list(r) for r in records]
    handled[-1][4] = None  # a HANDLED record without its time received
    unknown = [list(r) for r in records]
    unknown[0][2] = 12345  # an actor key the header does not name
    body = dict(bodies[1][0])
    body["sender"] = 999  # a body's sender key the header does not name
    damaged = {
        "records not a list of five": rebuilt([[1, 2]], bodies),
        "a record of an unknown kind": rebuilt([[9, *records[0][1:]], *records[1:]], bodies),
        "a handled record without its time": rebuilt(handled, bodies),
        "an actor key not in the header": rebuilt(unknown, bodies),
        "a body's key not in the header": rebuilt(records, [bodies[0], [body, bodies[1][1]]]),
        "a path number not among the paths": rebuilt(records, [[7, 0], bodies[1]]),
        "a body missing": rebuilt(records, [bodies[0][:1], bodies[1][:1]]),
        "records cut": rebuilt(records, bodies)[: len(head) + 6],
    }
    for what, value in damaged.items():
        with pytest.raises(ValueError) as refused:
            decode_pack(value)
        assert str(refused.value).startswith("the event pack is damaged: "), what
        assert len(str(refused.value)) < 300, what


# -- the stores ------------------------------------------------------------------------------


def rows(traffic: Traffic, count: int) -> list[EncodedEvent]:
    """``count`` events encoded as rows, as the recorder writes them one by one."""
    for i in range(count):
        traffic.exchange(Plain(text=f"row {i}"))
    events = traffic.expected[-3 * count :]
    traffic.records.clear()
    traffic.reports.clear()
    traffic.expected.clear()
    return events


def test_rows_and_packs_share_one_gap_free_numbering(store: StorageBundle) -> None:
    team = uuid4()
    traffic = busy(team)
    before = rows(Traffic(team), 1)
    after = rows(Traffic(team), 2)
    pack = traffic.pack()
    assert store.events.append_encoded(team, before) == [1, 2, 3]
    assert store.events.append_packs(team, [pack]) == list(range(4, 4 + 19))
    assert store.events.last_seq(team) == 22
    assert store.events.append_encoded(team, after) == list(range(23, 29))
    assert store.events.append_packs(team, [pack]) == list(range(29, 48))
    assert store.events.last_seq(team) == 47

    records = store.events.read(team)
    assert [r.seq for r in records] == list(range(1, 48))
    assert not corrupt_rows(records)
    stored = [*before, *decode_pack(pack), *after, *decode_pack(pack)]
    assert [r.raw for r in records] == [text for _, text in stored]
    assert [r.timestamp for r in records] == [stamp for stamp, _ in stored]
    kinds = [type(r.require()).__name__ for r in records[3:22]]
    assert kinds[:4] == ["SentMessage", "ReceivedMessage", "ProcessedMessage", "EventMessage"]
    assert store.events.read(uuid4()) == [] and store.events.last_seq(uuid4()) == 0


def test_read_agrees_with_slicing_for_every_range_across_packs(store: StorageBundle) -> None:
    """Ranges that start, end or lie inside a pack, limits that stop inside one."""
    team = uuid4()
    store.events.append_encoded(team, rows(Traffic(team), 1))  # 1-3
    traffic = Traffic(team)
    traffic.exchange(Plain(text="p"))
    traffic.exchange(Rich(text="r"))
    store.events.append_packs(team, [traffic.pack()])  # 4-9
    store.events.append_encoded(team, rows(Traffic(team), 1))  # 10-12
    store.events.append_packs(team, [traffic.pack()])  # 13-18
    store.events.append_packs(team, [traffic.pack()])  # 19-24
    whole = store.events.read(team)
    assert [r.seq for r in whole] == list(range(1, 25))
    for start in range(0, 27):
        for stop in [None, *range(0, 27)]:
            for limit in [None, 0, 1, 2, 5, 30]:
                expected = [r for r in whole if r.seq >= start and (stop is None or r.seq <= stop)]
                expected = expected if limit is None else expected[:limit]
                got = store.events.read(team, start, stop, limit)
                assert [(r.seq, r.raw) for r in got] == [(r.seq, r.raw) for r in expected], (
                    start,
                    stop,
                    limit,
                )


def test_states_handed_with_a_pack_become_the_latest(store: StorageBundle) -> None:
    team, agent = uuid4(), uuid4()
    pack = busy(team, 1).pack()
    store.events.append_packs(team, [pack], [(agent, "@A", encode_state(Tally(count=1)))])
    store.events.append_packs(team, [pack], [(agent, "@A", encode_state(Tally(count=2)))])
    assert store.states.load_states(team)[agent].require() == Tally(count=2)
    assert store.events.last_seq(team) == 2 * pack_count(pack)


def test_a_pack_and_its_states_are_one_transaction(store: StorageBundle) -> None:
    team, agent = uuid4(), uuid4()
    pack = busy(team, 1).pack()
    broken = [(agent, "@A")]  # not (id, name, text): fails once the pack is inserted
    with pytest.raises(ValueError):
        store.events.append_packs(team, [pack], broken)  # type: ignore[list-item]
    assert store.events.last_seq(team) == 0 and store.states.load_states(team) == {}
    assert store.events.append_packs(team, [pack])[0] == 1


def test_an_empty_or_damaged_pack_is_refused_and_stores_nothing(store: StorageBundle) -> None:
    team = uuid4()
    traffic = busy(team, 1)
    good = traffic.pack()
    empty = pack_records([], traffic.addresses, {}, traffic.team_json).data
    assert pack_count(empty) == 0
    for bad in (empty, b"", b"not a pack", good[: len(MAGIC) + 6]):
        with pytest.raises(ValueError):
            store.events.append_packs(team, [bad])
        with pytest.raises(ValueError):  # one bad pack among good ones: none is stored
            store.events.append_packs(team, [good, bad, good])
    assert store.events.last_seq(team) == 0 and store.events.read(team) == []
    assert store.events.append_packs(team, [good])[0] == 1
    assert store.events.append_packs(team, []) == []


def test_several_packs_in_one_append_take_consecutive_numbers_in_order(
    store: StorageBundle,
) -> None:
    team = uuid4()
    first, second, third = (busy(team, n).pack() for n in (1, 2, 1))
    sizes = [pack_count(p) for p in (first, second, third)]
    numbers = store.events.append_packs(team, [first, second, third])
    assert numbers == list(range(1, sum(sizes) + 1))
    records = store.events.read(team)
    expected = [*decode_pack(first), *decode_pack(second), *decode_pack(third)]
    assert [r.raw for r in records] == [text for _, text in expected]
    assert (
        store.events.read(team, sizes[0] + 1, sizes[0] + sizes[1])[0].raw == expected[sizes[0]][1]
    )


def test_another_handle_sees_the_pack_and_numbers_after_it(backend: Backend) -> None:
    team = uuid4()
    pack = busy(team).pack()
    count = pack_count(pack)
    backend.store.events.append_packs(team, [pack])
    other = backend.another()  # a second connection (SQLite, Postgres): committed on return
    assert other.events.last_seq(team) == count
    assert [r.raw for r in other.events.read(team)] == [t for _, t in decode_pack(pack)]
    assert other.events.append(team, Plain(text="after")) == count + 1
    assert backend.store.events.append_packs(team, [pack])[0] == count + 2


def test_purge_removes_packs_and_delete_keeps_them(store: StorageBundle) -> None:
    gone = store.teams.create("gone").team_id
    kept = store.teams.create("kept").team_id
    for team in (gone, kept):
        store.events.append_encoded(team, rows(Traffic(team), 1))
        store.events.append_packs(team, [busy(team, 1).pack()])
    store.teams.delete(kept)
    assert store.events.last_seq(kept) == 3 + 7 and len(store.events.read(kept)) == 10

    assert store.teams.purge(gone) is True
    assert store.events.read(gone) == [] and store.events.last_seq(gone) == 0
    assert store.events.append_packs(gone, [busy(gone, 1).pack()])[0] == 1  # numbering anew

    orphan = uuid4()  # a pack without a team record is purged too
    store.events.append_packs(orphan, [busy(orphan, 1).pack()])
    assert store.teams.purge(orphan) is True
    assert store.events.last_seq(orphan) == 0


def test_a_stored_pack_that_does_not_decode_gives_error_records(backend: Backend) -> None:
    if backend.write_raw_pack is None:
        pytest.skip("the memory backend stores a pack's events, decoded on the way in")
    store, team = backend.store, uuid4()
    store.events.append_encoded(team, rows(Traffic(team), 1))  # 1-3
    pack = busy(team, 1).pack()
    store.events.append_packs(team, [pack])  # 4-10
    store.events.append_encoded(team, rows(Traffic(team), 1))  # 11-13
    for damage in (pack[:-1], b"not a pack", pack[: len(MAGIC) + 2], b""):
        backend.write_raw_pack(team, 4, damage)
        records = store.events.read(team)
        assert [(r.seq, r.last) for r in records] == [(1, 1), (2, 2), (3, 3), (4, 10)] + [
            (seq, seq) for seq in range(11, 14)
        ]
        (failure,) = corrupt_rows(records)  # one for the pack, not one per number
        assert (failure.seq, failure.through) == (4, 10)
        assert f"team {team}, event seqs 4 to 10: " in failure.reason
        assert "the stored event pack numbered 4 to 10 cannot be read" in failure.reason
        assert all(r.ok for r in records if r.seq != 4)
        inside = store.events.read(team, from_seq=6, to_seq=7)
        assert [(r.seq, r.through, r.ok) for r in inside] == [(6, 7, False)]
        assert store.events.last_seq(team) == 13


def test_a_pack_numbered_for_another_count_gives_one_error_record(backend: Backend) -> None:
    """A pack row whose numbers do not match its events is damage, not a short read."""
    if backend.write_raw_pack is None:
        pytest.skip("the memory backend stores a pack's events, decoded on the way in")
    team = uuid4()
    backend.store.events.append_packs(team, [busy(team, 1).pack()])  # 1-7
    backend.write_raw_pack(team, 1, busy(team, 2).pack())  # 13 events under 1-7
    (record,) = backend.store.events.read(team)
    assert (record.seq, record.through) == (1, 7)
    assert record.error and "holds 13 events but is numbered for 7" in record.error


def test_a_pack_claiming_a_huge_range_is_one_record_read_in_bounded_time(
    backend: Backend,
) -> None:
    """A damaged ``last_seq`` claims a hundred million numbers: a read gives one record
    for them (never one per number), a reader paging by ``last`` goes past them in one
    step, and nothing after them is lost."""
    if backend.raw_sql is None:
        pytest.skip("the memory backend stores a pack's events, decoded on the way in")
    store, team = backend.store, uuid4()
    store.events.append_packs(team, [busy(team, 1).pack()])  # 1-7
    store.events.append_packs(team, [busy(team, 1).pack()])  # 8-14
    backend.raw_sql(
        "UPDATE akgentic_event_packs SET last_seq = ? WHERE team_id = ? AND first_seq = ?",
        (100_000_000, str(team) if backend.name == "sqlite" else team, 8),
    )
    records = store.events.read(team)
    assert [(r.seq, r.last, r.ok) for r in records[-2:]] == [(7, 7, True), (8, 100_000_000, False)]
    assert len(records) == 8
    assert records[-1].error and "holds 7 events but is numbered for 99999993" in records[-1].error
    paged = store.events.read(team, from_seq=8, limit=500)
    assert [(r.seq, r.last) for r in paged] == [(8, 100_000_000)]
    assert store.events.read(team, from_seq=paged[-1].last + 1, limit=500) == []


def test_rows_under_a_damaged_packs_claimed_range_are_not_read_twice(
    backend: Backend,
) -> None:
    """A damaged ``last_seq`` claims numbers that later rows hold: the claim is one record,
    and the rows under it are not read again after it (no number twice, in order)."""
    if backend.raw_sql is None:
        pytest.skip("the memory backend stores a pack's events, decoded on the way in")
    store, team = backend.store, uuid4()
    for _ in range(4):
        store.events.append_packs(team, [busy(team, 1).pack()])  # 1-7, 8-14, 15-21, 22-28
    backend.raw_sql(
        "UPDATE akgentic_event_packs SET last_seq = ? WHERE team_id = ? AND first_seq = ?",
        (1_000_000, str(team) if backend.name == "sqlite" else team, 8),
    )
    for start in (1, 8, 10):
        records = store.events.read(team, from_seq=start)
        numbers = [n for r in records for n in (r.seq, r.last)]
        assert numbers == sorted(numbers), start
        assert records[-1].last == 1_000_000 and not records[-1].ok
        assert [r.seq for r in records if r.ok] == list(range(start, 8))
    # read from a row's own pack on, past the claim's start: that row is what it holds
    assert [r.seq for r in store.events.read(team, from_seq=20)] == list(range(20, 29))


def test_a_gap_in_the_numbers_is_one_error_record(backend: Backend) -> None:
    """Numbers are dense from 1: a pack row deleted behind the store's back leaves a gap,
    read as one record naming the missing range, within ``from_seq``/``limit``."""
    if backend.raw_sql is None:
        pytest.skip("the memory backend keeps no rows to delete")
    store, team = backend.store, uuid4()
    for _ in range(3):
        store.events.append_packs(team, [busy(team, 1).pack()])  # 1-7, 8-14, 15-21
    backend.raw_sql(
        "DELETE FROM akgentic_event_packs WHERE team_id = ? AND first_seq = ?",
        (str(team) if backend.name == "sqlite" else team, 8),
    )
    records = store.events.read(team)
    assert [r.seq for r in records] == [*range(1, 9), *range(15, 22)]
    (gap,) = corrupt_rows(records)
    assert (gap.seq, gap.through) == (8, 14)
    assert gap.reason.startswith(f"team {team}, event seqs 8 to 14: missing from the log")
    assert [(r.seq, r.last) for r in store.events.read(team, from_seq=10, limit=2)] == [
        (10, 14),
        (15, 15),
    ]
    assert [(r.seq, r.last) for r in store.events.read(team, from_seq=6, limit=3)] == [
        (6, 6),
        (7, 7),
        (8, 14),
    ]


def test_concurrent_pack_and_row_writers_get_unique_gap_free_numbers(backend: Backend) -> None:
    team = uuid4()
    stores = [backend.store, backend.another()]
    pack = busy(team, 1).pack()
    size = pack_count(pack)
    row = rows(Traffic(team), 1)
    given: list[list[int]] = []
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        mine: list[int] = []
        try:
            for _ in range(8):
                events = stores[w % 2].events
                if w % 2:
                    mine += events.append_packs(team, [pack])
                else:
                    mine += events.append_encoded(team, row)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)
        given.append(mine)

    workers = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=60)
    assert not errors, errors
    every = sorted(seq for seqs in given for seq in seqs)
    assert every == list(range(1, 3 * 8 * (size + 3) + 1))
    records = backend.store.events.read(team)
    assert [r.seq for r in records] == every and not corrupt_rows(records)


# -- SQLite: one row per pack, and files made before packs -------------------------------


def test_sqlite_keeps_a_pack_as_one_row_and_reopens_with_it(tmp_path: Path) -> None:
    path, team = tmp_path / "packs.db", uuid4()
    pack = busy(team).pack()
    with SqliteStorage(path) as store:
        store.events.append_packs(team, [pack])
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM akgentic_events").fetchone() == (0,)
        assert conn.execute(
            "SELECT team_id, first_seq, last_seq, data FROM akgentic_event_packs"
        ).fetchall() == [(str(team), 1, pack_count(pack), pack)]
    finally:
        conn.close()
    with SqliteStorage(path) as again:
        records = again.events.read(team)
        assert [r.raw for r in records] == [text for _, text in decode_pack(pack)]
        assert again.events.append_packs(team, [pack])[0] == pack_count(pack) + 1


def test_sqlite_numbers_a_writers_next_packs_in_their_one_insert_and_checks_it(
    tmp_path: Path,
) -> None:
    """After its first append, a writer's packs go in one statement numbered from where
    its last append ended (nothing read back: each statement costs the writer a wait for
    the GIL under load); when another writer appended meanwhile, that statement inserts
    nothing and the usual way numbers after the other's events."""
    path, team = tmp_path / "packs.db", uuid4()
    pack = busy(team, 1).pack()
    size = pack_count(pack)
    statements: list[str] = []
    with SqliteStorage(path) as mine, SqliteStorage(path) as other:
        conn = mine._driver._live()  # type: ignore[attr-defined]
        conn.set_trace_callback(statements.append)
        assert mine.events.append_packs(team, [pack]) == list(range(1, size + 1))
        first = len(statements)
        assert mine.events.append_packs(team, [pack, pack]) == list(range(size + 1, 3 * size + 1))
        assert len(statements) - first == 1  # the insert alone
        assert other.events.append(team, Plain(text="between")) == 3 * size + 1
        before = len(statements)
        assert mine.events.append_packs(team, [pack])[0] == 3 * size + 2
        assert len(statements) - before == 3  # refused where it expected, then the usual way
        assert mine.events.append_packs(team, [pack])[0] == 4 * size + 2
        records = mine.events.read(team)
        assert [r.seq for r in records] == list(range(1, 5 * size + 2))
        assert not corrupt_rows(records)


def test_a_sqlite_file_made_before_packs_gains_their_table(tmp_path: Path) -> None:
    path, team = tmp_path / "old.db", uuid4()
    with SqliteStorage(path) as store:
        store.events.append_encoded(team, rows(Traffic(team), 1))
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE akgentic_event_packs")  # as version 1 left it
    conn.execute("PRAGMA user_version=1")
    conn.close()
    with SqliteStorage(path) as store:
        assert store.events.append_packs(team, [busy(team, 1).pack()]) == list(range(4, 11))
        assert [r.seq for r in store.events.read(team)] == list(range(1, 11))
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone() == (3,)  # and on to the latest
    conn.close()


def test_rows_packed_as_they_are_decode_to_the_very_same_rows(store: StorageBundle) -> None:
    """pack_encoded: events already encoded one by one, held in a pack unchanged — how a
    writer commits rows and packs in one transaction."""
    team = uuid4()
    events = rows(Traffic(team), 3)
    pack = pack_encoded(events, encode_value(team))
    assert decode_pack(pack) == events
    assert store.events.append_packs(team, [pack]) == list(range(1, len(events) + 1))
    assert [(r.timestamp, r.raw) for r in store.events.read(team)] == events
