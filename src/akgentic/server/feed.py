"""Live feeds: one team's log, read once from the store and shared by its subscribers.

The store is the source. A subscriber starts at any sequence number: what it lacks is
read from the store, then it takes the feed's recent window, then waits for the feed to
move. Every step goes by sequence number, so there is no gap and no duplicate wherever
the boundary falls, and a subscriber that resumes (``Last-Event-ID``) simply starts at
the next number.

A feed's thread waits on the team's recorder when the team runs in this process (woken
by each commit), else on the store's :class:`~akgentic.storage.EventWatch`: a team run by
another process or on a Ray cluster over a shared Postgres wakes it through ``LISTEN/
NOTIFY``; on another store it reads ``last_seq`` every ``poll_interval`` seconds. It
reads each new batch once, encodes it once
(:func:`~akgentic.server.protocol.encode_record`) and wakes the subscribers on the event
loop, so a hundred subscribers cost one read and one encoding per batch. A deletion by
another process writes no record: while the team does not run here, the thread reads its
record after each :data:`DELETION_CHECK` seconds without one, and wakes the subscribers
to say DELETED once it is deleted or purged. A feed lives while it has subscribers.

Nothing on the event loop reads the store (nor asks the placement, which may read it):
each such read of a subscriber's is on a thread, so a slow store holds up the stream that
waits for it, not every stream and request the loop serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from enum import Enum
from uuid import UUID

from akgentic.server.protocol import encode_record
from akgentic.storage import StorageBundle, TeamStatus, open_watch
from akgentic.team import TeamManager, TeamRuntime

__all__ = ["DELETED", "HEARTBEAT", "STOPPED", "Frame", "Hub", "Idle", "TeamFeed"]

logger = logging.getLogger("akgentic.server")

BATCH = 500
WINDOW = 5_000
"""Encoded records a feed keeps for subscribers that are slightly behind."""
DELETION_CHECK = 1.0
"""Seconds without a record after which a feed of a team not running here reads its
record, to learn that another process deleted (or purged) it: a deletion writes no record
for the watch to wake it."""


@dataclass(frozen=True)
class Frame:
    """One encoded record: its sequence number, protocol type and WireEvent JSON."""

    seq: int
    type: str
    data: str
    last: int
    """The last number the record stands for (``EventRecord.last``: past ``seq`` for a
    damaged pack or a gap)."""


class Idle(Enum):
    """What a subscriber hears between frames."""

    HEARTBEAT = "heartbeat"
    STOPPED = "stopped"
    DELETED = "deleted"


HEARTBEAT, STOPPED, DELETED = Idle.HEARTBEAT, Idle.STOPPED, Idle.DELETED


def encode_batch(storage: StorageBundle, team_id: UUID, from_seq: int) -> list[Frame]:
    return [
        Frame(record.seq, *encode_record(record), record.last)
        for record in storage.events.read(team_id, from_seq=from_seq, limit=BATCH)
    ]


class TeamFeed:
    """The live tail of one team's log; see the module docstring."""

    def __init__(self, hub: Hub, team_id: UUID, head: int) -> None:
        """``head``: the team's last seq in the store (read off the event loop): the feed
        reads from the next one."""
        self.hub = hub
        self.team_id = team_id
        self.subscribers = 0
        self._window: deque[Frame] = deque(maxlen=WINDOW)
        self._lock = threading.Lock()
        self.head = head
        self._moved = asyncio.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"akgentic-feed-{str(team_id)[:8]}", daemon=True
        )
        self._thread.start()

    # -- the feed's thread ---------------------------------------------------------------------
    def _run(self) -> None:
        storage, hub = self.hub.storage, self.hub
        ran_here = False
        told_deleted = False
        while not self._closed.is_set():
            try:
                runtime = hub.manager.get_team(self.team_id)
                if isinstance(runtime, TeamRuntime):
                    ran_here = True
                    runtime.recorder.wait_seq(self.head + 1, timeout=1.0)
                else:
                    if ran_here:
                        # it stopped here: a subscriber that read its last record while it
                        # still ran waits for a record that will not come; wake it to say
                        # STOPPED now, not a heartbeat later
                        ran_here = False
                        try:
                            hub.loop.call_soon_threadsafe(self._wake)
                        except RuntimeError:  # the event loop is gone: the server has stopped
                            return
                    if not hub.watch.wait_past(self.team_id, self.head, timeout=DELETION_CHECK):
                        # no record for a while: another process may have deleted (or
                        # purged) the team, which writes none; its subscribers, waiting
                        # for a record, are woken to say DELETED now, not a heartbeat later
                        if not told_deleted and hub._deleted(self.team_id):
                            told_deleted = True
                            try:
                                hub.loop.call_soon_threadsafe(self._wake)
                            except RuntimeError:  # the event loop is gone: the server stopped
                                return
                        continue
                if self._closed.is_set():
                    return  # its last subscriber left meanwhile (the store may be closing)
                frames = encode_batch(storage, self.team_id, self.head + 1)
            except Exception:
                if self._closed.is_set():
                    return
                logger.exception("feed of team %s: reading the store failed", self.team_id)
                self._closed.wait(hub.poll_interval)
                continue
            if frames:
                with self._lock:
                    self._window.extend(frames)
                    self.head = frames[-1].last
                try:
                    hub.loop.call_soon_threadsafe(self._wake)
                except RuntimeError:  # the event loop is gone: the server has stopped
                    return

    def _wake(self) -> None:
        moved, self._moved = self._moved, asyncio.Event()
        moved.set()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(RuntimeError):  # the event loop may be gone already
            self.hub.loop.call_soon_threadsafe(self._wake)

    # -- for subscribers (on the event loop) ---------------------------------------------------
    def recent(self, from_seq: int) -> list[Frame] | None:
        """The window's frames from ``from_seq`` on; None when it starts later (read the
        store instead)."""
        with self._lock:
            if from_seq > self.head:
                return []
            window = self._window
            if (
                not window
                or window[0].seq > from_seq
                or window[-1].last - window[0].seq >= len(window)
            ):
                return None  # starts later, or holds a run of numbers: not indexed by number
            start = from_seq - self._window[0].seq
            return [self._window[i] for i in range(start, min(start + BATCH, len(self._window)))]

    async def wait_past(self, seq: int, timeout: float) -> bool:
        """Wait until the feed goes past ``seq`` (True) or ``timeout`` passes (False)."""
        moved = self._moved
        if self.head > seq or self._closed.is_set():
            return True
        try:
            await asyncio.wait_for(moved.wait(), timeout)
        except TimeoutError:
            return False
        return True

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


class Hub:
    """The feeds of one server: get-or-create per team, closed with their last subscriber."""

    def __init__(
        self,
        manager: TeamManager,
        loop: asyncio.AbstractEventLoop,
        *,
        poll_interval: float = 0.5,
    ) -> None:
        self.manager = manager
        self.storage = manager.storage
        self.loop = loop
        self.poll_interval = poll_interval
        self.watch = open_watch(self.storage, poll_interval)
        self._feeds: dict[UUID, TeamFeed] = {}
        self._deleting: set[UUID] = set()  # being deleted by this server (see deleting)
        self._deletions: set[asyncio.Queue[UUID]] = set()  # the all-teams streams' ears
        self.closed = False

    async def _enter(self, team_id: UUID) -> TeamFeed:
        """The team's feed, made when it has none: its head is read on a thread, and
        another subscriber may have made one meanwhile (then that one is shared)."""
        feed = self._feeds.get(team_id)
        if feed is None or feed.closed:
            head = await asyncio.to_thread(self.storage.events.last_seq, team_id)
            feed = self._feeds.get(team_id)
            if feed is None or feed.closed:
                feed = self._feeds[team_id] = TeamFeed(self, team_id, head)
        feed.subscribers += 1
        return feed

    def _leave(self, feed: TeamFeed) -> None:
        feed.subscribers -= 1
        if feed.subscribers <= 0:
            feed.close()
            if self._feeds.get(feed.team_id) is feed:
                del self._feeds[feed.team_id]

    async def frames(
        self, team_id: UUID, from_seq: int, *, heartbeat: float
    ) -> AsyncIterator[list[Frame] | Idle]:
        """Team ``team_id``'s frames from ``from_seq`` on, in runs (each as the store or
        the window hands them over, never empty), until the hub closes or the team is
        deleted. As the hub closes (the server stops), what is left of a stopped team's
        log and ``STOPPED`` come last (:meth:`_closing_words`).

        Between runs: ``STOPPED`` once the team is not running — here or in another
        process that holds its lease — and every record is read (again after each later
        stretch of records), and ``HEARTBEAT`` each time ``heartbeat`` seconds pass with
        nothing new. ``DELETED``, last, once the team is DELETED (or purged) and every
        record is read: a team this server deletes says ``DELETED`` instead of
        ``STOPPED``; one deleted by another process over the same store says it within
        about :data:`DELETION_CHECK` seconds (the feed's thread reads its record when no
        record came for that long, and wakes its subscribers).
        A run is one write for the stream; after each, the event loop gets a turn (runs
        from the feed's window follow one another without one otherwise), so a subscriber
        that has gone away is noticed before the next run is written.
        """
        feed = await self._enter(team_id)
        try:
            next_seq = max(from_seq, 1)
            said_stopped = False
            while not feed.closed and not self.closed:
                frames = feed.recent(next_seq)
                if frames is None:
                    frames = await asyncio.to_thread(encode_batch, self.storage, team_id, next_seq)
                if frames:
                    yield frames
                    next_seq = frames[-1].last + 1
                    said_stopped = False
                    await asyncio.sleep(0)  # a disconnect is noticed here, not after the log
                    continue
                if team_id in self._deleting:
                    pass  # stopping on the way to DELETED: neither STOPPED nor DELETED yet
                elif said_stopped:
                    if await asyncio.to_thread(self._deleted, team_id):
                        yield DELETED
                        return
                elif not await asyncio.to_thread(self._running, team_id):
                    # the feed may lag the store once the team has stopped: ask the store
                    frames = await asyncio.to_thread(encode_batch, self.storage, team_id, next_seq)
                    if frames:
                        continue
                    if await asyncio.to_thread(self._deleted, team_id):
                        yield DELETED
                        return
                    said_stopped = True
                    yield STOPPED
                if not await feed.wait_past(next_seq - 1, heartbeat):
                    yield HEARTBEAT
            if self.closed and not said_stopped and team_id not in self._deleting:
                async for last in self._closing_words(team_id, next_seq):
                    yield last
        finally:
            self._leave(feed)

    async def _closing_words(
        self, team_id: UUID, next_seq: int
    ) -> AsyncIterator[list[Frame] | Idle]:
        """As the server stops (the hub closes after its teams were stopped): the records
        its stop wrote that the stream has not sent yet, then ``STOPPED`` for a team that
        no longer runs (``DELETED`` for one deleted meanwhile; nothing for one a cluster
        still runs). Without them a client learned the team stopped only by failing to
        reconnect to a server that was gone, for as long as it tries. Best effort: a store
        or placement closed first ends the stream without them."""
        try:
            while frames := await asyncio.to_thread(encode_batch, self.storage, team_id, next_seq):
                yield frames
                next_seq = frames[-1].last + 1
            if await asyncio.to_thread(self._deleted, team_id):
                yield DELETED
            elif not await asyncio.to_thread(self._running, team_id):
                yield STOPPED
        except Exception:  # the store or the placement closed first: the stream just ends
            logger.debug(
                "team %s: the stream's closing words were cut short", team_id, exc_info=True
            )

    def _deleted(self, team_id: UUID) -> bool:
        """Whether the store has the team DELETED, or no longer has it (purged)."""
        try:
            record = self.storage.teams.get(team_id)
        except Exception:  # an unreadable record is not a deleted one
            logger.exception("team %s: reading its record failed", team_id)
            return False
        return record is None or record.status == TeamStatus.DELETED

    @contextlib.contextmanager
    def deleting(self, team_id: UUID) -> Iterator[None]:
        """Around this server's deletion of ``team_id`` (called on any thread): its streams
        do not say ``STOPPED`` while it stops on the way to DELETED; once it is deleted
        they say ``DELETED`` and end, and every all-teams stream says so too."""
        self._deleting.add(team_id)
        deleted = False
        try:
            yield
            deleted = True
        finally:
            self._deleting.discard(team_id)
            with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody listens
                self.loop.call_soon_threadsafe(self._after_deletion, team_id, deleted)

    def _after_deletion(self, team_id: UUID, deleted: bool) -> None:
        feed = self._feeds.get(team_id)
        if feed is not None:
            feed._wake()
        if deleted:
            for ear in self._deletions:
                with contextlib.suppress(asyncio.QueueFull):
                    ear.put_nowait(team_id)

    @contextlib.contextmanager
    def deletions(self) -> Iterator[asyncio.Queue[UUID]]:
        """A queue of the ids of the teams this server deletes from now on (on the event
        loop), for an all-teams stream."""
        ear: asyncio.Queue[UUID] = asyncio.Queue(maxsize=10_000)
        self._deletions.add(ear)
        try:
            yield ear
        finally:
            self._deletions.discard(ear)

    def _running(self, team_id: UUID) -> bool:
        """Whether the team runs here, or in another live process holding its lease (whose
        records reach this feed through the store): either way it is not stopped. It may
        read the store (leases; a placement on a cluster answers even "here" from them):
        called on a thread, never on the event loop."""
        if self.manager.get_team(team_id) is not None:
            return True
        return self.manager.running_elsewhere(team_id) is not None

    def running_ids(self) -> list[UUID]:
        """The teams running here. It may read the store (a placement on a cluster reads
        its leases): called on a thread, never on the event loop."""
        return [runtime.team_id for runtime in self.manager.running()]

    def close(self) -> None:
        """Stop every feed: subscribers' streams end."""
        self.closed = True
        for feed in list(self._feeds.values()):
            feed.close()
        self._feeds.clear()
        self.watch.close()
