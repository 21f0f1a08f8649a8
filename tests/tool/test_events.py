"""ToolStateEvent and its emitter: deltas, structural payloads, gap-free numbering."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from akgentic.core.messages import Message
from akgentic.core.serialization import SerializableModel, deserialize, serialize
from akgentic.tool import ToolStateEmitter, ToolStateEvent

from .conftest import EventObserver


class GraphDelta(SerializableModel):
    entities_added: list[str] = []
    entities_removed: list[str] = []


def test_payload_decodes_to_its_concrete_class() -> None:
    event = ToolStateEvent(
        tool_id="#KnowledgeGraphTool", seq=7, payload=GraphDelta(entities_added=["a", "b"])
    )
    back = deserialize(serialize(event))
    assert isinstance(back, ToolStateEvent)
    assert isinstance(back.payload, GraphDelta)
    assert back.payload.entities_added == ["a", "b"]
    assert (back.tool_id, back.seq, back.id) == ("#KnowledgeGraphTool", 7, event.id)


def test_the_envelope_is_a_framework_message() -> None:
    event = ToolStateEvent(tool_id="#T", seq=1, payload=GraphDelta())
    assert isinstance(event, Message)
    assert event.display_type == "other" and event.timestamp is not None


def test_payload_must_be_a_model_not_raw_data() -> None:
    with pytest.raises(ValidationError, match="payload must be a SerializableModel"):
        ToolStateEvent(tool_id="#T", seq=1, payload={"entities_added": ["a"]})  # type: ignore[arg-type]


def test_seq_starts_at_one() -> None:
    with pytest.raises(ValidationError, match="seq"):
        ToolStateEvent(tool_id="#T", seq=0, payload=GraphDelta())


def test_emitter_numbers_only_what_it_emits() -> None:
    observer = EventObserver()
    emitter = ToolStateEmitter("#KnowledgeGraphTool")
    assert emitter.emit(observer, GraphDelta()) is None  # empty: nothing, no number used
    first = emitter.emit(observer, GraphDelta(entities_added=["a"]))
    assert emitter.emit(observer, GraphDelta()) is None
    second = emitter.emit(observer, GraphDelta(entities_removed=["a"]))
    assert [e.seq for e in observer.events] == [1, 2]
    assert observer.events == [first, second]
    assert emitter.seq == 2


def test_emitter_emptiness_can_be_stated_explicitly() -> None:
    observer = EventObserver()
    emitter = ToolStateEmitter("#T", seq=4)  # continues a restored stream
    assert emitter.emit(observer, GraphDelta(entities_added=["a"]), empty=True) is None
    event = emitter.emit(observer, GraphDelta(), empty=False)
    assert event is not None and event.seq == 5


def test_a_failed_publish_does_not_burn_a_number() -> None:
    class Failing:
        def notify_event(self, event: object) -> None:
            raise RuntimeError("stream down")

    emitter = ToolStateEmitter("#T")
    with pytest.raises(RuntimeError):
        emitter.emit(Failing(), GraphDelta(entities_added=["a"]))
    assert emitter.seq == 0
