"""A record that stands for a range of numbers (a damaged event pack, a gap) through the
real server and client: the wire carries its range (``WireEvent.through``), the decoded
record has it (``EventRecord.last``), and a reader goes on after the range's last number
— the client's ``follow`` on a reconnection, and the CLI's history paging — so the range
is never read again. Nothing sleeps: tests wait on events with bounds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest

from akgentic.client import RemoteTeam, TeamDeletedError
from akgentic.storage import EventRecord
from tests.server.conftest import Served, kind, until
from tests.server.proxy import DroppingProxy
from tests.server.test_deleted_streams import Follower

CLAIMED = 5
"""How many numbers the damaged pack at the end of the log claims."""


def _with_a_damaged_pack_at_the_end(served: Served, folder: Path) -> tuple[RemoteTeam, int]:
    """A stopped team with a turn in its log, then a pack row no reader can decode that
    is numbered for the next :data:`CLAIMED` numbers; the last number before it."""
    team = served.client.create_team("turns")
    team.send("hello")
    until(team, lambda r: kind(r) == "End")
    team.stop()
    last = served.storage.events.last_seq(team.team_id)
    with sqlite3.connect(folder / "server.db") as db:
        db.execute(
            "INSERT INTO akgentic_event_packs (team_id, first_seq, last_seq, data) "
            "VALUES (?, ?, ?, ?)",
            (str(team.team_id), last + 1, last + CLAIMED, b"not a pack"),
        )
    return team, last


def _span(record: EventRecord) -> tuple[int, int]:
    return record.seq, record.last


def test_the_wire_and_the_history_carry_a_records_range(served: Served, tmp_path: Path) -> None:
    team, last = _with_a_damaged_pack_at_the_end(served, tmp_path)
    (record,) = team.history(after=last)
    assert _span(record) == (last + 1, last + CLAIMED)
    assert record.through == last + CLAIMED and not record.ok
    assert record.error and f"event seqs {last + 1} to {last + CLAIMED}" in record.error
    body = httpx.get(f"{served.url}/teams/{team.team_id}/messages", params={"after": last}).json()
    assert [(i["seq"], i["through"]) for i in body["items"]] == [(last + 1, last + CLAIMED)]
    before = served.client.get_team(team.team_id).history(after=last - 1, limit=1)
    assert [(r.seq, r.through) for r in before] == [(last, None)]  # one number: no range


def test_a_reconnection_after_a_range_record_goes_on_after_its_last_number(
    served: Served, tmp_path: Path
) -> None:
    """The connection drops right after the range's record: the client asks for what
    follows the range, not for the rest of it (which the server would send as a record
    again); the delete then ends the stream with nothing repeated."""
    team, last = _with_a_damaged_pack_at_the_end(served, tmp_path)
    port = httpx.URL(served.url).port
    assert port is not None
    proxy = DroppingProxy(port, cut_after=0, drops=0)
    follower = Follower(team, proxy, last + 1)  # caught up once it has the range's record
    assert follower.caught_up.wait(30)
    assert proxy.cut_open() == 2
    served.client.delete_team(team.team_id)
    follower.join()
    proxy.close()
    assert follower.got == list(range(1, last + 2))
    assert len(follower.failure) == 1 and isinstance(follower.failure[0], TeamDeletedError)


def test_history_paging_goes_on_after_a_range_record(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read_remote`` (the CLI's reading of a server's log) pages on after a page's
    last record's last number: a page ending on the range never reads its rest again."""
    from akgentic.cli import remote

    team, last = _with_a_damaged_pack_at_the_end(served, tmp_path)
    monkeypatch.setattr(remote, "PAGE", 1)
    read = [_span(r) for r in remote.read_remote(team, from_seq=last)]
    assert read == [(last, last), (last + 1, last + CLAIMED)]
