"""Events encoded before they reach the store: receipts and sends written from their
fields are the bytes the generic encoder writes, and append_encoded stores rows as given."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from akgentic.core import (
    ActorAddressProxy,
    BaseState,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    SerializationError,
    UserMessage,
)
from akgentic.storage import (
    StorageBundle,
    encode_event,
    encode_receipt,
    encode_sent,
    encode_state,
    encode_value,
)


@pytest.mark.parametrize("cls", [ReceivedMessage, ProcessedMessage])
@pytest.mark.parametrize("team", [uuid4(), None])
def test_a_receipt_is_the_bytes_its_message_would_be(cls: type, team: object) -> None:
    who = ActorAddressProxy(agent_id=uuid4(), name="@Sink", role="Sink", team_id=uuid4())
    message_id, now = uuid4(), time.time()
    stamp, raw = encode_receipt(cls, message_id, encode_value(who), encode_value(team), now)  # type: ignore[arg-type]
    built = cls(
        id=cls.model_validate_json(raw).id,  # its own id is new: take it from the text
        message_id=message_id,
        sender=who,
        team_id=team,
        timestamp=datetime.fromtimestamp(now, UTC),
    )
    assert (stamp, raw) == encode_event(built)


def test_encoded_rows_are_stored_as_given_and_read_back(store: StorageBundle) -> None:
    team = uuid4()
    who = ActorAddressProxy(agent_id=uuid4(), name="@Sink", role="Sink", team_id=team)
    message_id = uuid4()
    row = encode_receipt(
        ReceivedMessage, message_id, encode_value(who), encode_value(team), time.time()
    )
    message = ProcessedMessage(message_id=message_id, sender=who, team_id=team)
    assert store.events.append_encoded(team, [row, encode_event(message)]) == [1, 2]
    first, second = store.events.read(team)
    assert isinstance(first.message, ReceivedMessage) and first.message.message_id == message_id
    assert first.raw == row[1] and second.message == message


@pytest.mark.parametrize("to", [True, False])
def test_a_send_is_the_bytes_its_message_would_be(to: bool) -> None:
    team = uuid4()
    who = ActorAddressProxy(agent_id=uuid4(), name="@A", role="A", team_id=team)
    peer = ActorAddressProxy(agent_id=uuid4(), name="@B", role="B", team_id=team) if to else None
    inner = UserMessage(content='héllo "quoted"\n', sender=who, recipient=peer, team_id=team)
    now = time.time()
    stamp, raw = encode_sent(
        SentMessage,
        inner,
        encode_value(who),
        encode_value(peer) if to else "null",
        encode_value(team),
        now,
    )
    built = SentMessage.model_validate_json(raw)  # its own id is new: take it from the text
    expected = SentMessage(
        id=built.id,
        message=inner,
        sender=who,
        recipient=peer,
        team_id=team,
        timestamp=datetime.fromtimestamp(now, UTC),
    )
    assert (stamp, raw) == encode_event(expected)


def test_a_send_that_cannot_be_serialized_raises() -> None:
    class Odd(UserMessage):
        extra_thing: object = None

    with pytest.raises(SerializationError):
        encode_sent(SentMessage, Odd(content="x", extra_thing=object()), "null", "null", None, 0.0)


class Tally(BaseState):
    count: int = 0


def test_states_handed_with_encoded_events_become_the_latest(store: StorageBundle) -> None:
    team, agent = uuid4(), uuid4()
    who = ActorAddressProxy(agent_id=agent, name="@A", role="A", team_id=team)
    event = encode_event(ProcessedMessage(message_id=uuid4(), sender=who, team_id=team))
    store.events.append_encoded(team, [event], [(agent, "@A", encode_state(Tally(count=1)))])
    store.events.append_encoded(team, [event], [(agent, "@A", encode_state(Tally(count=2)))])
    store.events.append_encoded(team, [event])  # no state: the table keeps the latest
    states = store.states.load_states(team)
    assert states[agent].require() == Tally(count=2) and states[agent].agent_name == "@A"
    assert store.events.last_seq(team) == 3


def test_events_and_their_states_are_one_transaction(store: StorageBundle) -> None:
    """A state row the store cannot take rolls its events back too, and leaves no gap."""
    team, agent = uuid4(), uuid4()
    who = ActorAddressProxy(agent_id=agent, name="@A", role="A", team_id=team)
    event = encode_event(ProcessedMessage(message_id=uuid4(), sender=who, team_id=team))
    broken = [(agent, "@A")]  # not (id, name, text): fails once the events are inserted
    with pytest.raises(ValueError):
        store.events.append_encoded(team, [event, event], broken)  # type: ignore[list-item]
    assert store.events.last_seq(team) == 0 and store.states.load_states(team) == {}
    assert store.events.append_encoded(team, [event]) == [1]


def test_a_large_batch_keeps_every_row_its_time_and_its_number(store: StorageBundle) -> None:
    """A batch is stored as given — text byte for byte (non-ASCII, quotes, an empty
    string), each row's own time — numbered on from the rows already there."""
    team = uuid4()
    assert store.events.append_encoded(team, [encode_event(UserMessage(content="first"))]) == [1]
    contents = ["", "ascii", 'quo"ted\n', "héllo wörld", "日本語のテキスト", "emoji 🎉", "x" * 5000]
    base = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    rows = []
    for i in range(700):
        when = base.replace(microsecond=0 if i % 3 == 0 else i)  # times of both widths
        message = UserMessage(content=contents[i % len(contents)], team_id=team, timestamp=when)
        rows.append(encode_event(message))
    assert store.events.append_encoded(team, rows) == list(range(2, 702))
    records = store.events.read(team, from_seq=2)
    assert [r.seq for r in records] == list(range(2, 702))
    assert [r.raw for r in records] == [raw for _, raw in rows]
    assert [r.timestamp for r in records] == [when for when, _ in rows]


def test_a_lone_surrogate_is_stored_and_read_back_as_the_same_text(store: StorageBundle) -> None:
    """JSON can carry a lone surrogate (a model or a tool argument may send "\\ud800"); no
    UTF-8 column takes it raw. It is stored escaped, and reads back as the same string —
    the row is not refused, so nothing queued behind it waits."""
    team, agent = uuid4(), uuid4()
    odd = "half of a pair: \ud800 and \udfff, then é"
    message = UserMessage(content=odd, team_id=team)
    state = Tally(count=1)
    assert store.events.append_encoded(
        team, [encode_event(message)], [(agent, "@A", encode_state(state))]
    ) == [1]
    assert store.events.append(team, UserMessage(content=odd, team_id=team)) == 2
    first, second = store.events.read(team)
    assert first.message == message and second.require().content == odd  # type: ignore[attr-defined]
    assert store.states.load_states(team)[agent].require() == state
