"""Actor-layer overhead: Akgent against raw pykka, measured in one run.

What is compared (same message objects, same thread layout, same machine, same run):

- tell throughput: one actor sends N ``Ping`` messages to another, which counts them;
  timed until the last one has been handled.
- round trips: one actor sends ``Ping``, the other answers ``Pong``, N times in a row.

The Akgent side runs as in normal use: both actors are members of a team whose
orchestrator receives every send/receive/processed record. It is measured three times:
with no subscriber, with one subscriber that receives every telemetry message, and with
the team's real ``EventRecorder`` on a SQLite file (``synchronous=FULL``, the default)
subscribed — what every team run through ``TeamManager`` has. For the recorder the time
is also taken until the last record is committed (``committed``), not only until the
last message was handled. The raw side is two ``pykka.ThreadingActor``s passing the same
``Ping``/``Pong`` pydantic messages.

Memory: growth of traced Python memory per message over 200,000 messages (after a
warm-up that fills the orchestrator's bounded recent window), for both sides.

Rounds alternate raw/Akgent and the median of each is reported, with the ratio
Akgent / raw; for the recorder, the spread of the per-round ratios too (a round's
recorded run against that round's raw run), since a median alone hides how often a
target is missed on a noisy machine. The process first freezes what its imports left, as
the console script does (``akgentic.core.freeze_import_heap``: the collector's full passes
then walk only what the run made, on both sides); ``--thawed`` leaves it unfrozen.
Run: ``python bench/actors.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pykka

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    Message,
    Orchestrator,
    freeze_import_heap,
)
from akgentic.storage import SqliteStorage
from akgentic.team import EventRecorder


class Ping(Message):
    n: int = 0


class Pong(Message):
    n: int = 0


class Go(Message):
    count: int
    mode: str


# -- raw pykka --------------------------------------------------------------------------


class RawSink(pykka.ThreadingActor):
    use_daemon_thread = True

    def __init__(self) -> None:
        super().__init__()
        self.expected = 0
        self.seen = 0
        self.done = threading.Event()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, tuple):  # (Ping, reply_ref): round trip
            ping, reply_to = message
            reply_to.tell(Pong(n=ping.n))
            return None
        self.seen += 1
        if self.seen == self.expected:
            self.done.set()
        return None


class RawSource(pykka.ThreadingActor):
    use_daemon_thread = True

    def __init__(self) -> None:
        super().__init__()
        self.peer: pykka.ActorRef[Any] | None = None
        self.limit = 0
        self.done = threading.Event()

    def on_receive(self, message: Any) -> Any:
        assert self.peer is not None
        if isinstance(message, Go):
            if message.mode == "tell":
                peer = self.peer
                for i in range(message.count):
                    peer.tell(Ping(n=i))
            else:
                self.limit = message.count
                self.peer.tell((Ping(n=0), self.actor_ref))
        elif isinstance(message, Pong):
            if message.n + 1 >= self.limit:
                self.done.set()
            else:
                self.peer.tell((Ping(n=message.n + 1), self.actor_ref))
        return None


def raw_tell(count: int) -> float:
    sink_ref = RawSink.start()
    source_ref = RawSource.start()
    sink = sink_ref.proxy()
    sink.expected = count
    source = source_ref.proxy()
    source.peer = sink_ref
    done: threading.Event = sink.done.get()
    start = time.perf_counter()
    source_ref.tell(Go(count=count, mode="tell"))
    assert done.wait(120)
    elapsed = time.perf_counter() - start
    source_ref.stop()
    sink_ref.stop()
    return count / elapsed


def raw_round_trip(count: int) -> float:
    sink_ref = RawSink.start()
    source_ref = RawSource.start()
    source = source_ref.proxy()
    source.peer = sink_ref
    done: threading.Event = source.done.get()
    start = time.perf_counter()
    source_ref.tell(Go(count=count, mode="rt"))
    assert done.wait(120)
    elapsed = time.perf_counter() - start
    source_ref.stop()
    sink_ref.stop()
    return count / elapsed


# -- Akgent -------------------------------------------------------------------------------

_done: dict[str, threading.Event] = {}
_expected: dict[str, int] = {}


class Sink(Akgent[BaseConfig, BaseState]):
    def on_start(self) -> None:
        self.seen = 0

    def receiveMsg_Ping(self, msg: Ping, sender: ActorAddress | None) -> None:
        if msg.n < 0:  # round trip
            assert sender is not None
            self.send(sender, Pong(n=-msg.n - 1))
            return
        self.seen += 1
        if self.seen == _expected[self.config.name]:
            _done[self.config.name].set()


class Source(Akgent[BaseConfig, BaseState]):
    peer: ActorAddress

    def set_peer(self, peer: ActorAddress) -> None:
        self.peer = peer

    def receiveMsg_Go(self, msg: Go, sender: ActorAddress | None) -> None:
        if msg.mode == "tell":
            peer = self.peer
            for i in range(msg.count):
                self.send(peer, Ping(n=i))
        else:
            self.limit = msg.count
            self.send(self.peer, Ping(n=-1))

    def receiveMsg_Pong(self, msg: Pong, sender: ActorAddress | None) -> None:
        if msg.n + 1 >= self.limit:
            _done[self.config.name].set()
        else:
            self.send(self.peer, Ping(n=-(msg.n + 1) - 1))


class CountingSubscriber:
    def __init__(self) -> None:
        self.count = 0

    def on_message(self, msg: Message) -> None:
        self.count += 1

    def set_restoring(self, team_id: Any, restoring: bool) -> None:
        pass

    def on_stop_request(self, team_id: Any) -> None:
        pass

    def on_stop(self, team_id: Any) -> None:
        pass


class Team:
    """A team with a Source and a Sink, reused across rounds; ``subscriber`` is "", "count"
    (a counting subscriber) or "sqlite" (the team's EventRecorder on a SQLite file)."""

    def __init__(self, subscriber: str = "") -> None:
        self.system = ActorSystem()
        self.orchestrator = self.system.createActor(Orchestrator)
        team = self.orchestrator.team_id
        assert team is not None
        self.subscriber = CountingSubscriber()
        self.recorder: EventRecorder | None = None
        self.directory: Path | None = None
        proxy = self.system.proxy_ask(self.orchestrator, Orchestrator)
        if subscriber == "count":
            proxy.subscribe(self.subscriber)
        elif subscriber == "sqlite":
            self.directory = Path(tempfile.mkdtemp(prefix="akgentic-actors-"))
            self.storage = SqliteStorage(self.directory / "team.db")
            self.recorder = EventRecorder(self.storage, team)
            proxy.subscribe(self.recorder)
        self.sink = self.system.createActor(Sink, config=BaseConfig(name="@Sink"), team_id=team)
        self.source = self.system.createActor(
            Source, config=BaseConfig(name="@Source"), team_id=team
        )
        self.system.proxy_ask(self.source, Source).set_peer(self.sink)
        self.tails: list[tuple[float, float]] = []
        """Per tell: seconds from the last message handled until everything is drained
        (and, with a recorder, committed), and the seconds the tell itself took."""

    def tell(self, count: int) -> float:
        _expected["@Sink"] = count
        self.system.get_actor(self.sink).seen = 0  # type: ignore[attr-defined]
        _done["@Sink"] = done = threading.Event()
        start = time.perf_counter()
        self.system.tell(self.source, Go(count=count, mode="tell"))
        assert done.wait(120)
        elapsed = time.perf_counter() - start
        self.settle()
        self.tails.append((time.perf_counter() - start - elapsed, elapsed))
        return count / elapsed

    def round_trip(self, count: int) -> float:
        _done["@Source"] = done = threading.Event()
        start = time.perf_counter()
        self.system.tell(self.source, Go(count=count, mode="rt"))
        assert done.wait(120)
        elapsed = time.perf_counter() - start
        self.settle()
        return count / elapsed

    def settle(self) -> None:
        """Wait until the orchestrator has drained everything (an ask queues behind it) and,
        with a recorder, until everything it was handed is committed."""
        self.system.proxy_ask(self.orchestrator, Orchestrator, timeout=600).get_team()
        if self.recorder is not None:
            assert self.recorder.written(600)

    @property
    def team_id(self) -> Any:
        return self.orchestrator.team_id

    def committed(self, run: Callable[[int], float], count: int) -> float:
        """Messages per second of ``run`` timed until every record is committed."""
        start = time.perf_counter()
        run(count)  # settles before it returns
        return count / (time.perf_counter() - start)

    def close(self) -> None:
        self.system.shutdown(10)
        if self.recorder is not None:
            self.storage.close()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


# -- memory -----------------------------------------------------------------------------------


def cpu_per_message(run: Callable[[int], Any], count: int) -> float:
    """Process CPU seconds per message of ``run(count)`` (which settles before it returns)."""
    start = time.process_time()
    run(count)
    return (time.process_time() - start) / count


def memory_per_message(run: Callable[[int], Any], total: int, chunk: int) -> tuple[float, float]:
    """Traced memory growth per message over ``total`` messages, and over the ``total``
    after them. The second figure is the slope: bounded tables (a window of recent
    messages, the recorder's remembered commits) replace their entries during the first
    part, and tracemalloc counts a replacement as growth because the entry it drops was
    allocated before tracing began; if memory grows with the run, the slope shows it."""
    run(20_000)  # warm-up: fills the bounded windows, caches, the allocator's pools
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    marks = []
    for _ in range(2):
        sent = 0
        while sent < total:
            run(chunk)
            sent += chunk
        gc.collect()
        marks.append(tracemalloc.get_traced_memory()[0])
    tracemalloc.stop()
    return (marks[0] - before) / total, (marks[1] - marks[0]) / total


def spread(recorded: list[float], raw: list[float], target: float = 0.7) -> str:
    """The per-round ratios' range and quartiles, and how many rounds reach ``target``."""
    ratios = sorted(a / b for a, b in zip(recorded, raw, strict=True))
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    reached = sum(r >= target for r in ratios)
    return (
        f"min {ratios[0]:.2f}  q1 {quartiles[0]:.2f}  median {quartiles[1]:.2f}  "
        f"q3 {quartiles[2]:.2f}  max {ratios[-1]:.2f}  ({reached} of {len(ratios)} rounds "
        f">= {target})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts (smoke run)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--thawed",
        action="store_true",
        help="leave the imports' heap unfrozen (the console script freezes it)",
    )
    args = parser.parse_args()
    if not args.thawed:
        freeze_import_heap()
    tells = 2_000 if args.quick else 20_000
    trips = 500 if args.quick else 5_000
    total = 20_000 if args.quick else 200_000
    rounds = 1 if args.quick else args.rounds

    plain = Team()
    subscribed = Team("count")
    recorded = Team("sqlite")
    keys = ("raw_tell", "ak_tell", "sub_tell", "rec_tell", "rec_tell_c")
    keys += ("raw_rt", "ak_rt", "sub_rt", "rec_rt", "rec_rt_c")
    results: dict[str, list[float]] = {k: [] for k in keys}
    raw_tell(tells)
    for team in (plain, subscribed, recorded):
        team.tell(tells)  # warm-up
    for _ in range(rounds):
        results["raw_tell"].append(raw_tell(tells))
        results["ak_tell"].append(plain.tell(tells))
        results["sub_tell"].append(subscribed.tell(tells))
        results["rec_tell"].append(recorded.tell(tells))
        results["rec_tell_c"].append(recorded.committed(recorded.tell, tells))
        results["raw_rt"].append(raw_round_trip(trips))
        results["ak_rt"].append(plain.round_trip(trips))
        results["sub_rt"].append(subscribed.round_trip(trips))
        results["rec_rt"].append(recorded.round_trip(trips))
        results["rec_rt_c"].append(recorded.committed(recorded.round_trip, trips))
    med = {k: statistics.median(v) for k, v in results.items()}

    print(f"rounds: {rounds}, tell N={tells}, round trips N={trips} (medians)")
    print(f"{'':34}{'per second':>14}{'ratio to raw':>14}")
    rows = [
        ("tell, raw pykka", "raw_tell", "raw_tell"),
        ("tell, Akgent team", "ak_tell", "raw_tell"),
        ("tell, Akgent team + subscriber", "sub_tell", "raw_tell"),
        ("tell, + EventRecorder (SQLite)", "rec_tell", "raw_tell"),
        ("  the same, until committed", "rec_tell_c", "raw_tell"),
        ("round trip, raw pykka", "raw_rt", "raw_rt"),
        ("round trip, Akgent team", "ak_rt", "raw_rt"),
        ("round trip, Akgent + subscriber", "sub_rt", "raw_rt"),
        ("round trip, + EventRecorder", "rec_rt", "raw_rt"),
        ("  the same, until committed", "rec_rt_c", "raw_rt"),
    ]
    for label, key, base in rows:
        print(f"{label:34}{med[key]:>14,.0f}{med[key] / med[base]:>14.2f}")
    print("per-round ratios, until committed (each round's recorded run / that round's raw")
    print("run: slow spells of the machine hit both sides of a round alike):")
    for label, key, base in (
        ("tell", "rec_tell_c", "raw_tell"),
        ("round trip", "rec_rt_c", "raw_rt"),
    ):
        print(f"  {label:12}{spread(results[key], results[base])}")
    tails = recorded.tails[1:]  # the warm-up's aside
    print(
        "recorded tell, from the last message handled until the last record is committed: "
        f"median {statistics.median(t for t, _ in tails) * 1e3:.1f} ms "
        f"(floods {min(t for t, _ in tails) * 1e3:.1f} to {max(t for t, _ in tails) * 1e3:.1f}), "
        f"beside a median {statistics.median(e for _, e in tails) * 1e3:.0f} ms of telling"
    )
    print(f"subscriber received {subscribed.subscriber.count:,} telemetry messages")
    # CPU: every thread of the process, until the last message is handled and (with a
    # subscriber) everything handed on is done — less swayed by other load than wall
    # time. The sides alternate within each round, as the wall-time rounds do, and each
    # side's ratio is also taken round by round (a slow spell hits a round's sides alike).
    sides = (
        ("raw pykka", raw_tell),
        ("Akgent team", plain.tell),
        ("+ subscriber", subscribed.tell),
        ("+ EventRecorder (SQLite)", recorded.tell),
    )
    spent: dict[str, list[float]] = {name: [] for name, _ in sides}
    for _ in range(rounds):
        for name, run in sides:
            spent[name].append(cpu_per_message(run, tells))
    print(
        "process CPU per message told (µs, every thread, until all is recorded; median, "
        "raw over it, and the median of the rounds' own ratios):"
    )
    for name, values in spent.items():
        paired = statistics.median(r / v for r, v in zip(spent["raw pykka"], values, strict=True))
        value = statistics.median(values)
        raw = statistics.median(spent["raw pykka"])
        print(f"  {name:28}{value * 1e6:8.2f}{raw / value:8.2f}{paired:8.2f}")

    print(
        f"memory growth per message (tracemalloc): over {total:,} messages, "
        f"and over the {total:,} after them (the slope)"
    )
    for name, run in (
        ("raw pykka", raw_tell),
        ("Akgent team", plain.tell),
        ("Akgent team + subscriber", subscribed.tell),
        ("Akgent team + recorder", recorded.tell),
    ):
        first, slope = memory_per_message(run, total, tells)
        print(f"  {name:26}{first:8.1f} bytes{slope:8.1f} bytes")
    for team in (plain, subscribed, recorded):
        team.close()


if __name__ == "__main__":
    main()
