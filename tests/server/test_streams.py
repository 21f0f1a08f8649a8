"""The event streams: resume after dropped connections with nothing lost or repeated,
Last-Event-ID honoured, the all-teams stream, keep-alives."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from urllib.parse import urlparse

import httpx
import pytest
from pydantic import ValidationError

from akgentic.client import AkgenticClient, ServerError, parse_sse
from akgentic.core import BaseConfig, EventMessage
from akgentic.server import ServerSettings
from akgentic.storage import EventRecord
from tests.server.conftest import Served, kind, until
from tests.server.gate_tool import Emitter, Tick
from tests.server.proxy import DroppingProxy

EVENTS = 1000


def test_a_dropped_stream_resumes_with_nothing_lost_or_repeated(served: Served) -> None:
    team = served.client.create_team("turns")
    emitter = served.system.createActor(
        Emitter, config=BaseConfig(name="@Emitter"), team_id=team.team_id
    )
    emit = served.system.proxy_ask(emitter, Emitter, timeout=30)
    emit.emit(EVENTS // 2)  # half before the reader connects (backfill), half while it reads
    port = urlparse(served.url).port
    assert port is not None
    proxy = DroppingProxy(port, cut_after=40_000, drops=4)
    got: list[EventRecord] = []
    halfway = threading.Event()
    done = threading.Event()

    def read() -> None:
        with AkgenticClient(proxy.url) as flaky:
            for record in flaky.get_team(team.team_id).follow(idle_timeout=60):
                got.append(record)
                if len(got) == 200:
                    halfway.set()
                message = record.message
                if isinstance(message, EventMessage) and message.event == Tick(n=EVENTS - 1):
                    done.set()
                    return

    reader = threading.Thread(target=read)
    reader.start()
    assert halfway.wait(60)
    emit.emit(EVENTS)  # ticks 0.. again would be ambiguous: count by n below
    reader.join(120)
    proxy.close()
    assert done.is_set(), f"stopped at {len(got)} records"
    assert proxy.dropped == 4
    seqs = [r.seq for r in got]
    assert seqs == list(range(1, len(got) + 1))  # in order, no gap, no duplicate
    ticks = [
        r.message.event.n
        for r in got
        if isinstance(r.message, EventMessage) and isinstance(r.message.event, Tick)
    ]
    assert ticks == list(range(EVENTS // 2)) + list(range(EVENTS))
    assert len(got) >= EVENTS


def test_last_event_id_resumes_after_that_record(served: Served) -> None:
    team = served.client.create_team("turns")
    first = team.send("hello")
    until(team, lambda r: kind(r) == "End")
    with httpx.stream(
        "GET",
        f"{served.url}/teams/{team.team_id}/events",
        headers={"Last-Event-ID": "5"},
        params={"from_seq": 1, "heartbeat": 0.2},
        timeout=30,
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(response.iter_lines())
        ids = []
        for event in events:
            if event.event == "":
                break  # a keep-alive: everything stored was sent
            ids.append(int(event.id or 0))
            body = json.loads(event.data)
            assert body["seq"] == ids[-1] and body["type"] == event.event
    assert ids[0] == 6 and ids == list(range(6, ids[-1] + 1))
    assert first


def test_a_stopped_team_says_so_and_the_stream_goes_on(served: Served) -> None:
    team = served.client.create_team("turns")
    team.stop()
    last = served.storage.events.last_seq(team.team_id)
    with httpx.stream(
        "GET", f"{served.url}/teams/{team.team_id}/events", params={"heartbeat": 0.2}, timeout=30
    ) as response:
        kinds = []
        for event in parse_sse(response.iter_lines()):
            kinds.append(event.event)
            if event.event == "":
                break
    assert kinds[-2:] == ["stopped", ""]
    assert len(kinds) == last + 2


def test_the_all_teams_stream_carries_every_running_team(served: Served) -> None:
    early = served.client.create_team("turns")
    seen: dict[str, list[int]] = {}
    ready = threading.Event()
    late_id: list[str] = []

    def read() -> None:
        with httpx.stream("GET", f"{served.url}/events", timeout=60) as response:
            ready.set()
            for event in parse_sse(response.iter_lines()):
                if not event.id:
                    continue
                team, seq = event.id.split(":")
                seen.setdefault(team, []).append(int(seq))
                body = json.loads(event.data)
                assert body["team_id"] == team and body["seq"] == int(seq)
                if late_id and team == late_id[0] and event.event == "End":
                    return

    reader = threading.Thread(target=read)
    reader.start()
    assert ready.wait(30)
    before = served.storage.events.last_seq(early.team_id)
    early.send("hello")
    late = served.client.create_team("turns")
    late_id.append(str(late.team_id))
    late.send("hello")
    reader.join(60)
    assert not reader.is_alive()
    assert seen[str(late.team_id)][0] == 1  # a team started later: from its first record
    early_seqs = seen.get(str(early.team_id), [])
    assert early_seqs and early_seqs[0] > before - 1  # running before: from the connection on
    assert early_seqs == sorted(set(early_seqs))


def test_a_sequence_number_past_any_a_store_holds_is_refused_or_ignored(served: Served) -> None:
    team = served.client.create_team("turns")
    huge = str(10**20)
    with pytest.raises(ServerError) as err:  # it used to be a 500: the column overflowed
        served.client.request("GET", f"/teams/{team.team_id}/messages", params={"after": huge})
    assert err.value.status == 422 and "less than or equal to" in err.value.detail
    with pytest.raises(ServerError) as err:
        served.client.request("GET", f"/teams/{team.team_id}/events", params={"from_seq": huge})
    assert err.value.status == 422
    with httpx.stream(  # an unreadable Last-Event-ID: from where the query says
        "GET",
        f"{served.url}/teams/{team.team_id}/events",
        headers={"Last-Event-ID": huge},
        params={"heartbeat": 0.2},
        timeout=30,
    ) as response:
        ids = []
        for event in parse_sse(response.iter_lines()):
            if event.event in ("", "stopped"):
                break
            ids.append(int(event.id or 0))
    assert ids and ids == list(range(1, len(ids) + 1))


def test_the_all_teams_stream_takes_a_heartbeat_as_a_team_s_stream_does(
    serve_with: Callable[[ServerSettings], Served],
) -> None:
    served = serve_with(ServerSettings(port=0, heartbeat=300))
    for bad in (0.1, 301):
        refused = httpx.get(f"{served.url}/events", params={"heartbeat": bad})
        assert (
            refused.status_code == 422 and "heartbeat: Input should be" in refused.json()["detail"]
        )
    # nothing runs: the first thing sent is a keep-alive, after 0.2 s and not the server's 300
    with httpx.stream(
        "GET", f"{served.url}/events", params={"heartbeat": 0.2}, timeout=30
    ) as response:
        assert response.status_code == 200
        first = next(iter(parse_sse(response.iter_lines())))
    assert first.event == "" and first.id is None


def test_text_with_unicode_line_separators_is_followed_like_any_other(served: Served) -> None:
    """An SSE line ends at CR, LF or CRLF only. Text holding U+2028, U+2029 or U+0085 — a
    paste from a PDF, a model's output — travels raw inside the JSON of ``data``; ``follow``
    used to split lines as ``str.splitlines`` does, cut the frame there, and end with
    "not an akgentic server"."""
    from akgentic.core import SentMessage

    team = served.client.create_team("research")
    text = "one\u2028two\u2029three\x85four"
    team.send(text)
    seen = until(
        team,
        lambda r: (
            isinstance(r.message, SentMessage)
            and getattr(r.message.message, "content", None) == text
        ),
        timeout=30,
    )
    assert all(r.message is not None for r in seen), [r.error for r in seen]


def test_a_team_stopping_says_stopped_at_once_not_a_heartbeat_later(served: Served) -> None:
    """A stream reads a stopping team's last record while the team still counts as
    running here (its orchestrator writes that record, then dies): it says ``stopped`` as
    soon as the team has gone, not a heartbeat later (the web page said "live" beside a
    stopped team for 10 s, about every other stop)."""
    team = served.client.create_team("turns")
    notices: list[str] = []
    live = threading.Event()

    def read() -> None:
        url = f"{served.url}/teams/{team.team_id}/events"
        with httpx.stream("GET", url, params={"heartbeat": 300}, timeout=60) as response:
            for event in parse_sse(response.iter_lines()):
                live.set()
                if event.event == "stopped":
                    notices.append(event.event)
                    return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert live.wait(30)
    team.stop()
    reader.join(20)
    assert notices == ["stopped"], "no 'stopped' within 20 s (the heartbeat is 300 s)"


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf", "Infinity"])
def test_a_heartbeat_that_is_no_finite_number_is_said_so_not_out_of_range(
    served: Served, bad: str
) -> None:
    team = served.client.create_team("turns")
    for path in ("/events", f"/teams/{team.team_id}/events"):
        refused = httpx.get(f"{served.url}{path}", params={"heartbeat": bad})
        assert refused.status_code == 422, path
        assert refused.json()["detail"] == (
            "the request is not valid: query.heartbeat: Input should be a finite number"
        ), path


@pytest.mark.parametrize("field", ["heartbeat", "poll_interval"])
def test_server_settings_take_only_a_finite_number_of_seconds(field: str) -> None:
    for bad in (math.inf, math.nan):
        with pytest.raises(ValidationError, match="finite number"):
            ServerSettings.model_validate({field: bad})
