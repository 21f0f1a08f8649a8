"""Serialization: markers, the registry, round trips, and refusal of unknown classes."""

from __future__ import annotations

import copy
import pickle
import sys
from datetime import UTC, datetime
from enum import Enum
from typing import Any
from uuid import UUID, uuid4

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from akgentic.core import (
    ActorAddressProxy,
    AddressError,
    BaseState,
    EventMessage,
    Message,
    ResultMessage,
    SerializableModel,
    SerializationError,
    UserMessage,
    deserialize,
    register_serializable,
    serialize,
)
from akgentic.core.address import ActorAddress
from akgentic.core.serialization import MODEL_MARKER, non_finite


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Payload(SerializableModel):
    label: str
    weight: float = 0.0


class HeavyPayload(Payload):
    extra: list[int] = []


class Carrier(Message):
    payload: SerializableModel
    color: Color = Color.RED
    tags: set[str] = set()
    by_id: dict[UUID, int] = {}
    when: datetime | None = None


def test_a_model_carries_its_marker() -> None:
    data = serialize(UserMessage(content="hi"))
    assert data[MODEL_MARKER] == "akgentic.core.messages.message.UserMessage"
    assert data["content"] == "hi"


def test_a_field_declared_as_a_base_keeps_its_subclass() -> None:
    msg = Carrier(payload=HeavyPayload(label="x", extra=[1, 2]))
    back = deserialize(serialize(msg))
    assert type(back.payload) is HeavyPayload
    assert back.payload.extra == [1, 2]
    assert back == msg


def test_enums_sets_uuid_keys_and_datetimes_round_trip() -> None:
    key = uuid4()
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    msg = Carrier(
        payload=Payload(label="p"), color=Color.BLUE, tags={"a", "b"}, by_id={key: 3}, when=when
    )
    back = deserialize(serialize(msg))
    assert back.color is Color.BLUE and back.tags == {"a", "b"}
    assert back.by_id == {key: 3} and back.when == when


def test_an_unknown_marker_is_refused_and_imports_nothing() -> None:
    assert "antigravity" not in sys.modules  # importing it would open a web browser
    with pytest.raises(SerializationError, match="unknown __model__ 'antigravity.Fly'"):
        deserialize({MODEL_MARKER: "antigravity.Fly", "height": 1})
    assert "antigravity" not in sys.modules


def test_a_plain_pydantic_model_is_not_decodable_until_registered() -> None:
    class Plain(BaseModel):
        value: int

    data = {MODEL_MARKER: f"{Plain.__module__}.{Plain.__qualname__}", "value": 1}
    with pytest.raises(SerializationError, match="register the class"):
        deserialize(data)
    register_serializable(Plain)
    assert deserialize(data) == Plain(value=1)


def test_an_alias_keeps_an_old_path_readable() -> None:
    class Moved(SerializableModel):
        value: int

    register_serializable(Moved, aliases=["old.home.Moved"])
    assert deserialize({MODEL_MARKER: "old.home.Moved", "value": 2}) == Moved(value=2)


def test_a_payload_that_does_not_validate_names_its_class() -> None:
    with pytest.raises(SerializationError, match="Payload does not validate"):
        deserialize({MODEL_MARKER: f"{__name__}.Payload", "weight": 1.0})


def test_unserializable_values_are_refused_with_advice() -> None:
    with pytest.raises(SerializationError, match="use a pydantic model"):
        serialize(object())
    with pytest.raises(SerializationError, match="dict key"):
        serialize({(1, 2): "tuple key"})


def test_an_address_serializes_to_a_snapshot_that_cannot_send() -> None:
    address = ActorAddressProxy(
        agent_id=uuid4(),
        name="@Writer",
        role="Writer",
        team_id=uuid4(),
        is_user_proxy=True,
        agent_class="x.Y",
    )
    back = deserialize(serialize(address))
    assert isinstance(back, ActorAddressProxy)
    assert back == address and back.name == "@Writer" and back.is_user_proxy
    assert back.team_id == address.team_id and back.agent_class == "x.Y"
    assert not back.is_alive()
    with pytest.raises(AddressError, match="deserialized"):
        back.deliver(UserMessage(content="x"))
    with pytest.raises(AddressError, match="snapshot"):
        back.send(address, UserMessage(content="x"))


def test_a_garbled_address_is_reported() -> None:
    with pytest.raises(ValueError, match="not a serialized ActorAddress"):
        ActorAddress.deserialize({"agent_id": "not-a-uuid"})


def test_event_payload_decodes_to_its_concrete_class() -> None:
    class Delta(SerializableModel):
        added: list[str]

    event = EventMessage(event=Delta(added=["a"]))
    back = deserialize(serialize(event))
    assert isinstance(back.event, Delta) and back.event.added == ["a"]


class Counter(BaseState):
    count: int = 0
    names: list[str] = []


_text = st.text(max_size=30)
_payloads = st.builds(Payload, label=_text, weight=st.floats(allow_nan=False, allow_infinity=False))
_addresses = st.builds(
    ActorAddressProxy,
    agent_id=st.uuids(),
    name=_text,
    role=_text,
    team_id=st.none() | st.uuids(),
    squad_id=st.none() | st.uuids(),
    is_user_proxy=st.booleans(),
    agent_class=_text,
)
_times = st.datetimes(timezones=st.just(UTC))


def _message_strategy() -> st.SearchStrategy[Any]:
    envelope: dict[str, Any] = dict(
        parent_id=st.none() | st.uuids(),
        team_id=st.none() | st.uuids(),
        timestamp=_times,
        sender=st.none() | _addresses,
        recipient=st.none() | _addresses,
    )
    return st.one_of(
        st.builds(UserMessage, content=_text, **envelope),
        st.builds(ResultMessage, content=_text, **envelope),
        st.builds(
            Carrier,
            payload=_payloads
            | st.builds(HeavyPayload, label=_text, extra=st.lists(st.integers(-(2**60), 2**60))),
            color=st.sampled_from(Color),
            tags=st.sets(_text, max_size=3),
            by_id=st.dictionaries(st.uuids(), st.integers(), max_size=3),
            when=st.none() | _times,
            **envelope,
        ),
        st.builds(
            EventMessage,
            event=st.builds(Counter, count=st.integers(), names=st.lists(_text, max_size=3)),
            **envelope,
        ),
    )


@given(_message_strategy())
def test_messages_round_trip(msg: Message) -> None:
    back = deserialize(serialize(msg))
    assert type(back) is type(msg)
    assert back == msg
    assert serialize(back) == serialize(msg)


def test_message_ids_are_unique_version_4_uuids() -> None:
    from akgentic.core.messages.message import new_id

    ids = [new_id() for _ in range(100_000)]
    assert len(set(ids)) == len(ids)
    assert {u.version for u in ids[:1000]} == {4}
    assert {u.variant for u in ids[:1000]} == {"specified in RFC 4122"}
    assert UUID(str(ids[0])) == ids[0] and hash(UUID(str(ids[0]))) == hash(ids[0])
    assert UserMessage(content="x").id.version == 4


# -- broken data: always a SerializationError, never a raw exception ---------------------------


def test_a_custom_decoder_failing_is_a_serialization_error() -> None:
    with pytest.raises(SerializationError, match="ActorAddress") as caught:
        deserialize({MODEL_MARKER: "akgentic.core.address.ActorAddress"})
    assert "agent_id" in str(caught.value)
    with pytest.raises(SerializationError, match="ActorAddress"):
        deserialize({MODEL_MARKER: "akgentic.core.address.ActorAddress", "agent_id": [1]})


def nested(depth: int, leaf: Any = 1) -> Any:
    """``depth`` levels of alternating dicts and lists around ``leaf``."""
    value = leaf
    for level in range(depth):
        value = {"x": value} if level % 2 else [value]
    return value


@pytest.mark.parametrize("depth", [500, 5000])
def test_depth_is_bounded_with_a_clear_error(depth: int) -> None:
    with pytest.raises(SerializationError, match="nested deeper than 100 levels"):
        deserialize(nested(depth))
    with pytest.raises(SerializationError, match="nested deeper than 100 levels"):
        serialize(nested(depth))
    models = nested(depth, UserMessage(content="deep"))
    with pytest.raises(SerializationError, match="nested deeper than 100 levels"):
        serialize(models)


def test_data_as_deep_as_the_bound_round_trips() -> None:
    value = nested(100)
    assert deserialize(serialize(value)) == value
    message = EventMessage(event=Payload(label="x"), sender=None)
    assert deserialize(serialize(nested(98, message))) == nested(98, message)


def test_what_an_error_quotes_of_the_data_is_capped() -> None:
    huge = "m" * 1_000_000
    for data in ({MODEL_MARKER: huge}, {MODEL_MARKER: [huge]}):
        with pytest.raises(SerializationError) as caught:
            deserialize(data)
        assert len(str(caught.value)) < 1000
        assert "characters)" in str(caught.value)
    with pytest.raises(SerializationError) as caught:
        deserialize({MODEL_MARKER: "akgentic.core.address.ActorAddress", "agent_id": huge})
    assert len(str(caught.value)) < 1000


def test_non_finite_names_the_first_number_json_does_not_hold_at_any_depth() -> None:
    assert non_finite({"a": [1, 2.5, {"b": "inf"}], "c": None}) is None
    assert non_finite({"a": [1, {"b": float("inf")}], "c": float("nan")}) == ("a.1.b", "Infinity")
    assert non_finite([float("-inf")]) == ("0", "-Infinity")
    assert non_finite(float("nan")) == ("(the value itself)", "NaN")
    deep: list[object] = [float("nan")]
    for _ in range(5000):  # deeper than Python recurses: walked without recursion
        deep = [deep]
    found = non_finite(deep)
    assert found is not None and found[1] == "NaN" and found[0].count(".") == 5000


def test_a_refusal_pickles_as_its_message_alone() -> None:
    """Across processes (Ray) the error is its message: the class and the data it refused
    stay behind (the other side may not rebuild them, and its cause does not travel)."""
    import pickle

    class Local(BaseModel):
        x: int

    data = serialize(Payload(label="x"))
    data["weight"] = "heavy"
    with pytest.raises(SerializationError) as caught:
        deserialize(data)
    error = caught.value
    assert error.model is Payload
    assert (error.refusal_words() or "").startswith("weight: Input should be a valid number")
    error.data = {"held": Local(x=1)}  # a class only this process has
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is SerializationError and copy.args == error.args
    assert copy.model is None and copy.data is None and copy.refusal_words() is None


def test_an_address_keeps_its_own_object_key_through_a_copy_and_a_pickle() -> None:
    """``object_key`` names an address object in an event pack: an unpickled copy is
    another object (in another process, perhaps where the key names something else), so
    it takes its own key; a copy is the address itself."""
    address = ActorAddressProxy(agent_id=uuid4(), name="@Keyed", role="Worker")
    assert address.object_key == id(address)
    assert copy.copy(address) is address and copy.deepcopy(address) is address
    again = pickle.loads(pickle.dumps(address))
    assert again == address and again.name == "@Keyed"
    assert again.object_key == id(again) != address.object_key


class Tagged(ActorAddressProxy):
    """A subclass with a ``__dict__`` besides the slots."""


def test_an_address_subclass_keeps_its_own_attributes_through_a_pickle() -> None:
    address = Tagged(agent_id=uuid4(), name="@Tagged")
    address.tag = "x"  # type: ignore[attr-defined]
    again = pickle.loads(pickle.dumps(address))
    assert again.tag == "x" and again.name == "@Tagged"
    assert again.object_key == id(again)
