"""Server-sent events: a team's frames as ``text/event-stream``.

Each record is one SSE event: ``id`` is its sequence number (``<team>:<seq>`` on the
all-teams stream), ``event`` its protocol type, ``data`` the WireEvent JSON on one line.
A comment line every ``heartbeat`` seconds keeps proxies from closing a quiet stream.
``event: stopped`` says the team is not running (here, or in another process holding its
lease) and everything has been sent; the stream stays open and goes on if the team is
resumed. ``event: deleted`` says the team is DELETED (or purged) and everything has been
sent: it is a team stream's last event, and the stream ends. The data of both is a
:class:`~akgentic.client.models.TeamNotice` (``{"team_id": ...}``). A run of records the
store hands over is one write.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from uuid import UUID

from akgentic.client.models import TeamNotice
from akgentic.server.feed import DELETED, HEARTBEAT, STOPPED, Frame, Hub, Idle
from akgentic.storage import MAX_SEQ

__all__ = ["all_teams_stream", "parse_last_event_id", "team_stream"]

KEEP_ALIVE = b": keep-alive\n\n"
RETRY = b"retry: 2000\n\n"
RESCAN = 1.0
"""Seconds between looks for newly running teams on the all-teams stream."""
QUEUED_BYTES = 4 * 1024 * 1024
"""Bytes of records an all-teams stream holds for its client beyond the one being
written: its pumps wait while they are queued. A client that stops reading holds this
much, not every record every team writes meanwhile (records are up to hundreds of KB);
nothing is lost, the pumps go on by sequence number once it reads again."""


class _Budget:
    """The bytes an all-teams stream has queued and not yet written (on the event loop)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._freed = asyncio.Event()

    async def take(self, size: int) -> None:
        """Wait until ``size`` more fits (anything fits an empty queue), then count it."""
        while self.used and self.used + size > self.limit:
            self._freed.clear()
            await self._freed.wait()
        self.used += size

    def give(self, size: int) -> None:
        self.used -= size
        self._freed.set()


def _event(frame: Frame, event_id: str) -> bytes:
    return f"id: {event_id}\nevent: {frame.type}\ndata: {frame.data}\n\n".encode()


def _notice(item: Idle, team_id: UUID) -> bytes:
    """``event: stopped`` or ``event: deleted``, with the team's id."""
    data = TeamNotice(team_id=team_id).model_dump_json()
    return f"event: {item.value}\ndata: {data}\n\n".encode()


def parse_last_event_id(value: str | None) -> int | None:
    """The sequence number in a ``Last-Event-ID`` header (``42`` or ``<team>:42``); None
    when absent or unreadable, or past any a store can hold (the stream then starts where
    the query says)."""
    if not value:
        return None
    tail = value.rsplit(":", 1)[-1].strip()
    if not (tail.isascii() and tail.isdigit()) or len(tail) > 19:
        return None
    seq = int(tail)
    return seq if seq < MAX_SEQ else None


async def team_stream(
    hub: Hub, team_id: UUID, from_seq: int, heartbeat: float
) -> AsyncIterator[bytes]:
    """One team's log from ``from_seq`` on, then live, as SSE bytes; ends after
    ``event: deleted`` once the team is deleted."""
    yield RETRY
    async for item in hub.frames(team_id, from_seq, heartbeat=heartbeat):
        if item is HEARTBEAT:
            yield KEEP_ALIVE
        elif item is STOPPED or item is DELETED:
            yield _notice(item, team_id)
        elif isinstance(item, list):  # a run of frames, one write
            yield b"".join(_event(frame, str(frame.last)) for frame in item)


async def all_teams_stream(hub: Hub, heartbeat: float) -> AsyncIterator[bytes]:
    """What every team running here records from now on (teams that start later, from
    their first record), with ``event: stopped`` when one stops and ``event: deleted``
    when one is deleted (any team this server deletes, running or not; once per team).
    Live only: a reconnecting client follows a team's own stream to miss nothing."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[UUID, Frame | Idle]] = asyncio.Queue(maxsize=10_000)
    budget = _Budget(QUEUED_BYTES)
    pumps: dict[UUID, asyncio.Task[None]] = {}
    sent: dict[UUID, int] = {}  # team -> last seq queued for this stream
    said_deleted: set[UUID] = set()

    async def pump(team_id: UUID, from_seq: int) -> None:
        async for item in hub.frames(team_id, from_seq, heartbeat=3600.0):
            if isinstance(item, list):
                for frame in item:
                    await budget.take(len(frame.data))
                    await queue.put((team_id, frame))
                sent[team_id] = item[-1].last
            elif item is STOPPED or item is DELETED:
                await queue.put((team_id, item))
                return

    async def hear_deletions(ear: asyncio.Queue[UUID]) -> None:
        while True:
            await queue.put((await ear.get(), DELETED))

    async def attach(opening: bool) -> None:
        for team_id in await asyncio.to_thread(hub.running_ids):
            task = pumps.get(team_id)
            if task is None or task.done():
                if team_id not in sent:  # running when the stream opened: from now on
                    sent[team_id] = (
                        await asyncio.to_thread(hub.storage.events.last_seq, team_id)
                        if opening
                        else 0
                    )
                pumps[team_id] = asyncio.create_task(pump(team_id, sent[team_id] + 1))

    yield RETRY
    with hub.deletions() as ear:
        listener = asyncio.create_task(hear_deletions(ear))
        try:
            await attach(opening=True)
            next_scan = last_sent = loop.time()
            while not hub.closed:
                if loop.time() >= next_scan:
                    await attach(opening=False)
                    next_scan = loop.time() + RESCAN
                try:
                    team_id, item = await asyncio.wait_for(queue.get(), min(RESCAN, heartbeat))
                except TimeoutError:
                    if loop.time() - last_sent >= heartbeat:
                        last_sent = loop.time()
                        yield KEEP_ALIVE
                    continue
                if item is DELETED:
                    if team_id in said_deleted:
                        continue  # its pump and the hub both told
                    said_deleted.add(team_id)
                last_sent = loop.time()
                if isinstance(item, Frame):
                    budget.give(len(item.data))
                    yield _event(item, f"{team_id}:{item.seq}")
                elif item is not HEARTBEAT:
                    yield _notice(item, team_id)
        finally:
            for task in [*pumps.values(), listener]:
                task.cancel()
            for task in [*pumps.values(), listener]:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
