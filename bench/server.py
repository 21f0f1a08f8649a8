"""The HTTP + SSE server against the same team driven in-process.

    python bench/server.py [--rounds 100] [--subscribers 100] [--events 1000]

1. POST-to-first-event latency: a follower is connected; the clock runs from the send
   until the follower holds the record of the message sent (its SentMessage). In-process:
   ``TeamRuntime.send`` and a ``TeamRuntime.follow`` thread. Over HTTP: ``POST
   .../messages`` and an SSE subscriber (``RemoteTeam.follow``) through uvicorn on
   127.0.0.1. Each round waits for the turn's End before the next. Medians and p95.
2. Fan-out: one team's events (an actor publishing ``--events`` small events) delivered
   to ``--subscribers`` SSE subscribers, against as many in-process followers of the same
   team. Delivered events per second (all subscribers together, first publish to last
   delivery) and the p95 lag (delivery time minus the record's timestamp).

Both sides run on the same machine as the subscribers: on 2 cores, the clients compete
with the server, which the figures include.
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.server.gate_tool import Emitter  # noqa: E402

from akgentic.agent.turn import TurnEndedEvent  # noqa: E402
from akgentic.client import AkgenticClient, parse_sse  # noqa: E402
from akgentic.core import ActorSystem, BaseConfig, EventMessage, SentMessage  # noqa: E402
from akgentic.server import BackgroundServer, ServerSettings, create_app  # noqa: E402
from akgentic.storage import EventRecord, open_storage, sqlite_url  # noqa: E402
from akgentic.team import TeamCard, TeamManager  # noqa: E402

TURNS = ROOT / "tests" / "server" / "data" / "turns.yaml"


def p95(values: list[float]) -> float:
    return sorted(values)[max(int(len(values) * 0.95) - 1, 0)]


def _latency(send: Any, records: queue.Queue[EventRecord], rounds: int) -> list[float]:
    """Rounds of: send, wait for its SentMessage (timed), then for its turn's End."""
    times = []
    for n in range(rounds):
        start = time.perf_counter()
        message_id: UUID = send(f"hello {n}")
        timed = False
        while True:
            record = records.get(timeout=60)
            message = record.message
            if not timed and isinstance(message, SentMessage) and message.message.id == message_id:
                times.append(time.perf_counter() - start)
                timed = True
            if (
                isinstance(message, EventMessage)
                and isinstance(message.event, TurnEndedEvent)
                and message.event.turn_id == message_id
            ):
                break
    return times


def _follow_into(follow: Any, records: queue.Queue[EventRecord], stop: threading.Event) -> None:
    def pump() -> None:
        for record in follow(stop=stop):
            records.put(record)

    threading.Thread(target=pump, daemon=True).start()


def latency(rounds: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        storage = open_storage(sqlite_url(Path(folder) / "bench.db"))
        system = ActorSystem()
        manager = TeamManager(system, storage)
        card = TeamCard.from_yaml(TURNS)
        app = create_app(manager, ServerSettings(port=0), cards=[card])
        with BackgroundServer(app) as server, AkgenticClient(server.url) as client:
            for side in ("in-process", "HTTP + SSE"):
                stop = threading.Event()
                records: queue.Queue[EventRecord] = queue.Queue()
                if side == "in-process":
                    runtime = manager.create_team(card)
                    last = storage.events.last_seq(runtime.team_id)
                    _follow_into(
                        lambda stop, r=runtime, s=last: r.follow(s + 1, stop=stop), records, stop
                    )
                    send = runtime.send
                else:
                    remote = client.create_team("turns")
                    last = storage.events.last_seq(remote.team_id)
                    _follow_into(
                        lambda stop, r=remote, s=last: r.follow(s + 1, stop=stop), records, stop
                    )
                    send = remote.send
                _latency(send, records, 5)  # warm-up
                results[side] = _latency(send, records, rounds)
                stop.set()
        manager.shutdown(5)
        system.shutdown()
        storage.close()
    return results


def _lag(record_time: str | datetime) -> float:
    when = datetime.fromisoformat(record_time) if isinstance(record_time, str) else record_time
    return datetime.now(UTC).timestamp() - when.timestamp()


def _fan_side(
    side: str, manager: TeamManager, card: TeamCard, url: str, subscribers: int, events: int
) -> tuple[float, float]:
    """One side of the fan-out: (events/s delivered in all, p95 lag in seconds)."""
    storage, system = manager.storage, manager.system
    runtime = manager.create_team(card)
    start = storage.events.last_seq(runtime.team_id) + 1
    lags: list[list[float]] = [[] for _ in range(subscribers)]
    ready = threading.Barrier(subscribers + 1)
    done = threading.Event()
    finished: list[float] = []
    lock = threading.Lock()

    def in_process(i: int) -> None:
        ready.wait()
        for record in runtime.follow(start, stop=done):
            lags[i].append(_lag(record.timestamp))
            if len(lags[i]) == events:
                break
        with lock:
            finished.append(time.perf_counter())

    def over_sse(i: int) -> None:
        stream = f"{url}/teams/{runtime.team_id}/events"
        with httpx.stream("GET", stream, params={"from_seq": start}, timeout=120) as response:
            ready.wait()
            for event in parse_sse(response.iter_lines()):
                if not event.id:
                    continue
                lags[i].append(_lag(json.loads(event.data)["time"]))
                if len(lags[i]) == events:
                    break
        with lock:
            finished.append(time.perf_counter())

    target = in_process if side == "in-process" else over_sse
    threads = [threading.Thread(target=target, args=(i,)) for i in range(subscribers)]
    for thread in threads:
        thread.start()
    ready.wait()
    emitter = system.createActor(
        Emitter, config=BaseConfig(name="@Emitter"), team_id=runtime.team_id
    )
    begin = time.perf_counter()
    system.proxy_ask(emitter, Emitter, timeout=60).emit(events)
    for thread in threads:
        thread.join(300)
    done.set()
    delivered = sum(len(x) for x in lags)
    manager.stop_team(runtime.team_id, grace_timeout=5)
    return delivered / (max(finished) - begin), p95([v for x in lags for v in x])


def fan_out(subscribers: int, events: int) -> dict[str, tuple[float, float]]:
    results: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        storage = open_storage(sqlite_url(Path(folder) / "fan.db"))
        system = ActorSystem()
        manager = TeamManager(system, storage)
        card = TeamCard.from_yaml(TURNS)
        app = create_app(manager, ServerSettings(port=0, heartbeat=1.0), cards=[card])
        with BackgroundServer(app) as server:
            for side in ("in-process", "HTTP + SSE"):
                results[side] = _fan_side(side, manager, card, server.url, subscribers, events)
        manager.shutdown(5)
        system.shutdown()
        storage.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--events", type=int, default=1000)
    args = parser.parse_args()

    lat = latency(args.rounds)
    base = statistics.median(lat["in-process"])
    print(f"send to first event, {args.rounds} rounds (ms):")
    print("| | median | p95 | ratio (median) |")
    for side, values in lat.items():
        median = statistics.median(values)
        print(f"| {side} | {median * 1000:.2f} | {p95(values) * 1000:.2f} | {median / base:.2f} |")

    fan = fan_out(args.subscribers, args.events)
    rate0 = fan["in-process"][0]
    print(f"\nfan-out: {args.events} events to {args.subscribers} subscribers:")
    print("| | events/s delivered | p95 lag (ms) | ratio (events/s) |")
    for side, (rate, lag) in fan.items():
        print(f"| {side} | {rate:,.0f} | {lag * 1000:.1f} | {rate / rate0:.2f} |")


if __name__ == "__main__":
    main()
