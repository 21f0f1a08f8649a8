"""A client that stops reading an event stream holds a bounded number of bytes on the
server, whatever the teams write meanwhile: the stream's producers wait for it, and
nothing is lost (they go on by sequence number once it reads again). Driven on a fake hub
with no clock: the loop runs until every task waits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from types import SimpleNamespace
from uuid import UUID, uuid4

from akgentic.server import sse
from akgentic.server.feed import Frame, Idle

BIG = 200_000
"""Characters of one record: a long message's size (content is up to 200,000)."""


class _Hub:
    """What ``all_teams_stream`` uses of a Hub: one running team whose feed hands out
    ``records`` big frames, then waits (a team with nothing more to say)."""

    def __init__(self, team_id: UUID, records: int) -> None:
        self.team_id = team_id
        self.records = records
        self.handed = 0
        self.closed = False
        self.storage = SimpleNamespace(events=SimpleNamespace(last_seq=lambda _team: 0))
        self._quiet = asyncio.Event()  # never set

    def running_ids(self) -> list[UUID]:
        return [self.team_id]

    @contextlib.contextmanager
    def deletions(self) -> Iterator[asyncio.Queue[UUID]]:
        yield asyncio.Queue()

    async def frames(
        self, team_id: UUID, from_seq: int, *, heartbeat: float
    ) -> AsyncIterator[list[Frame] | Idle]:
        for seq in range(from_seq, self.records + 1):
            self.handed = seq
            yield [Frame(seq, "Message", "x" * BIG, seq)]
        await self._quiet.wait()


async def _settle() -> None:
    """Let every ready task run until all of them wait (no clock: loop turns only)."""
    for _ in range(200):
        await asyncio.sleep(0)


def test_an_all_teams_stream_its_client_does_not_read_holds_a_bounded_number_of_bytes() -> None:
    async def scenario() -> tuple[int, int, list[int]]:
        hub = _Hub(uuid4(), records=1_000)  # 200 MB of records, written while nobody reads
        stream = sse.all_teams_stream(hub, heartbeat=300)  # type: ignore[arg-type]
        assert await anext(stream) == sse.RETRY
        first = await anext(stream)  # the client read one record, then stopped reading
        await _settle()
        held = hub.handed
        # it reads again: the records come in order, none lost or repeated
        seqs = [int(first.split(b"\n", 1)[0].rsplit(b":", 1)[1])]
        while seqs[-1] < hub.records:
            chunk = await anext(stream)
            seqs.append(int(chunk.split(b"\n", 1)[0].rsplit(b":", 1)[1]))
        await stream.aclose()
        return held, hub.records, seqs

    held, records, seqs = asyncio.run(scenario())
    assert held * BIG <= sse.QUEUED_BYTES + 2 * BIG, f"{held} records held for a stalled client"
    assert seqs == list(range(1, records + 1))
