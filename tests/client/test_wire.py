"""The client's reading of the wire: SSE lines, and wire events back into records."""

from __future__ import annotations

from uuid import uuid4

from akgentic.client import SseEvent, WireEvent, decode_event, parse_sse
from akgentic.core import UserMessage
from akgentic.core.serialization import serialize


def test_sse_lines_become_events_and_comments_keep_alives() -> None:
    lines = [
        "retry: 2000",
        "",
        "id: 7",
        "event: AppendText",
        'data: {"a":',
        "data: 1}",
        "",
        ": keep-alive",
        "",
        "event: stopped",
        "data: {}",
        "",
    ]
    assert list(parse_sse(lines)) == [
        SseEvent("AppendText", '{"a":\n1}', "7"),
        SseEvent("", ""),
        SseEvent("stopped", "{}", None),
    ]


def test_a_wire_event_decodes_to_the_stored_record() -> None:
    message = UserMessage(content="hello")
    team = uuid4()
    wire = WireEvent(
        seq=3, team_id=team, time=message.timestamp, type="Message", message=serialize(message)
    )
    record = decode_event(wire)
    assert (record.seq, record.team_id, record.message) == (3, team, message)
    assert record.error is None


def test_a_class_this_process_lacks_is_an_error_record_not_an_exception() -> None:
    team = uuid4()
    data = {
        "seq": 9,
        "team_id": str(team),
        "time": "2026-01-01T00:00:00+00:00",
        "type": "Mystery",
        "message": {"__model__": "somewhere.Mystery", "x": 1},
    }
    record = decode_event(data)
    assert record.message is None and record.seq == 9
    assert record.error is not None and "somewhere.Mystery" in record.error
    corrupt = decode_event({**data, "message": None, "error": "bad row"})
    assert corrupt.error == "bad row"


def test_sse_lines_end_at_cr_lf_or_crlf_only_wherever_the_chunks_are_cut() -> None:
    from akgentic.client import sse_lines

    text = 'data: {"t":"a\u2028b\u2029c\x85d\x0be\x1cf"}\r\n\r\nid: 2\rdata: x\n\n: c\r'
    expected = ['data: {"t":"a\u2028b\u2029c\x85d\x0be\x1cf"}', "", "id: 2", "data: x", ""]
    expected += [": c"]
    for cut in range(len(text) + 1):  # every split in two chunks, a CRLF's included
        assert list(sse_lines([text[:cut], text[cut:]])) == expected, cut
