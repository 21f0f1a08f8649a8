"""Storage throughput and restore time: every backend against the in-memory one, one run.

What is measured, per backend (same messages, same machine, same process run):

- single appends: ``events.append`` one message at a time, each committed before the
  call returns (for SQLite ``synchronous=FULL`` that is one WAL sync per event);
- batched appends: ``events.append_many`` with batches of 100, one transaction each;
- restore: ``events.read`` of a 10,000-event team — fetching *and* decoding every
  payload back into its ``akgentic.core`` classes, which is what a team restore does;
- the recorder's batched path: the team layer's ``EventRecorder`` handed the same
  messages (``on_message``) and flushed every 100 — one orchestrator drain each —,
  timed until its writer has committed the last one: the log rows and the
  latest-state table rows it keeps beside them, as a team writes them;
- event packs, the path a running team's recorder takes (``on_batch``): the same
  records as the orchestrator queues them, encoded by ``pack_records`` 1,000 at a time
  and stored with ``events.append_packs``, one pack per transaction — encoding
  included; and the restore (read + decode) of those 10,000 events from their packs.

The messages are a realistic mix of what an orchestrator sees (``SentMessage`` wrapping
a ``UserMessage`` of ~300 characters, ``ReceivedMessage``, ``ProcessedMessage``,
``StateChangedMessage``, ``EventMessage`` with a custom payload), ~0.5-1 KB of JSON each.
Each figure is the median of ``--rounds`` rounds; ratios are against the in-memory
backend (which also stores JSON text and decodes it, so the ratio is the cost of the
database, not of serialization).

Backends: memory, SQLite (FULL and NORMAL sync, a file under the system temp dir) and
Postgres when ``AKGENTIC_TEST_POSTGRES_URL`` is set (in a throwaway schema).

Run: ``python bench/storage.py`` (``--quick`` for a smoke run).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import uuid4

from akgentic.core import (
    ActorAddressProxy,
    BaseState,
    EventMessage,
    Message,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    SerializableModel,
    StateChangedMessage,
    TelemetryBatch,
    UserMessage,
)
from akgentic.storage import (
    AddressIndex,
    EncodedEvent,
    MemoryStorage,
    SqliteStorage,
    StorageBundle,
    encode_event,
    encode_value,
    pack_records,
)
from akgentic.team import EventRecorder

Record = tuple[int, float, Any, Any, Any]

POSTGRES_ENV = "AKGENTIC_TEST_POSTGRES_URL"
BATCH = 100
RESTORE_EVENTS = 10_000


class Progress(SerializableModel):
    step: int
    note: str


class WriterState(BaseState):
    drafts: int = 0
    topic: str = ""


def make_messages(count: int) -> list[Message]:
    """``count`` telemetry messages in the proportions a busy team produces."""
    team = uuid4()
    editor = ActorAddressProxy(agent_id=uuid4(), name="@Editor", role="Editor", team_id=team)
    writer = ActorAddressProxy(agent_id=uuid4(), name="@Writer", role="Writer", team_id=team)
    text = "Write the next paragraph of the report on storage engines. " * 5
    out: list[Message] = []
    for i in range(count):
        kind = i % 5
        if kind == 0:
            inner = UserMessage(content=f"{i}: {text}", team_id=team, sender=editor)
            out.append(SentMessage(message=inner, recipient=writer, sender=editor, team_id=team))
        elif kind == 1:
            out.append(ReceivedMessage(message_id=uuid4(), sender=writer, team_id=team))
        elif kind == 2:
            state = WriterState(drafts=i, topic="storage engines")
            out.append(StateChangedMessage(state=state, sender=writer, team_id=team))
        elif kind == 3:
            event = Progress(step=i, note="outline done, drafting section two")
            out.append(EventMessage(event=event, sender=writer, team_id=team))
        else:
            out.append(ProcessedMessage(message_id=uuid4(), sender=writer, team_id=team))
    return out


@dataclass
class Result:
    name: str
    single: float  # events per second
    batched: float  # events per second
    restore: float  # seconds for RESTORE_EVENTS
    recorded: float  # events per second through the EventRecorder
    packed: float  # events per second encoded as packs and appended
    restore_packed: float  # seconds to read + decode RESTORE_EVENTS from packs


PACK = 1000


def as_records(messages: list[Message]) -> tuple[list[Record], dict[int, EncodedEvent]]:
    """The orchestrator's raw records for ``messages`` (what ``on_batch`` receives), and
    the stored form of its reports (states, events) by position."""
    records: list[Record] = []
    reports: dict[int, EncodedEvent] = {}
    for message in messages:
        when = message.timestamp.timestamp()
        if isinstance(message, SentMessage):
            kind = TelemetryBatch.SENT
            records.append((kind, when, message.sender, message.message, message.recipient))
        elif isinstance(message, ReceivedMessage | ProcessedMessage):
            kind = (
                TelemetryBatch.RECEIVED
                if isinstance(message, ReceivedMessage)
                else TelemetryBatch.PROCESSED
            )
            records.append((kind, when, message.sender, message.message_id, None))
        else:
            reports[len(records)] = encode_event(message)
            records.append((TelemetryBatch.REPORT, when, message.sender, message, None))
    return records, reports


def measure(store: StorageBundle, messages: list[Message], singles: int, rounds: int) -> Result:
    single, batched, restore, recorded = [], [], [], []
    packed, restore_packed = [], []
    raw, reports = as_records(messages)
    for _ in range(rounds):
        team = uuid4()
        gc.collect()  # each timed part starts without the previous part's garbage
        start = time.perf_counter()
        for message in messages[:singles]:
            store.events.append(team, message)
        single.append(singles / (time.perf_counter() - start))

        team = uuid4()
        gc.collect()
        start = time.perf_counter()
        for i in range(0, RESTORE_EVENTS, BATCH):
            store.events.append_many(team, messages[i : i + BATCH])
        batched.append(RESTORE_EVENTS / (time.perf_counter() - start))

        gc.collect()
        start = time.perf_counter()
        records = store.events.read(team)
        restore.append(time.perf_counter() - start)
        assert len(records) == RESTORE_EVENTS and all(r.ok for r in records)
        assert [r.seq for r in records[:3]] == [1, 2, 3]
        del records

        team = uuid4()
        recorder = EventRecorder(store, team)
        gc.collect()
        start = time.perf_counter()
        for i in range(0, RESTORE_EVENTS, BATCH):
            for message in messages[i : i + BATCH]:
                recorder.on_message(message)
            recorder.flush()
        assert recorder.written()  # timed until every record is committed
        recorded.append(RESTORE_EVENTS / (time.perf_counter() - start))
        recorder.on_stop(team)
        assert store.events.last_seq(team) == RESTORE_EVENTS

        team = uuid4()
        addresses = AddressIndex(encode_value)
        team_json = encode_value(team)
        gc.collect()
        start = time.perf_counter()
        for i in range(0, RESTORE_EVENTS, PACK):
            mine = {at - i: text for at, text in reports.items() if i <= at < i + PACK}
            pack = pack_records(raw[i : i + PACK], addresses, mine, team_json)
            store.events.append_packs(team, [pack.data])
        packed.append(RESTORE_EVENTS / (time.perf_counter() - start))
        gc.collect()
        start = time.perf_counter()
        records_read = store.events.read(team)
        restore_packed.append(time.perf_counter() - start)
        assert len(records_read) == RESTORE_EVENTS and all(r.ok for r in records_read)
        del records_read
    return Result(
        "",
        statistics.median(single),
        statistics.median(batched),
        statistics.median(restore),
        statistics.median(recorded),
        statistics.median(packed),
        statistics.median(restore_packed),
    )


@contextmanager
def sqlite_store(sync: str) -> Iterator[StorageBundle]:
    directory = tempfile.mkdtemp(prefix="akgentic-bench-")
    store = SqliteStorage(Path(directory) / "bench.db", synchronous=sync)  # type: ignore[arg-type]
    try:
        yield store
    finally:
        store.close()
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def postgres_store(url: str) -> Iterator[StorageBundle]:
    import psycopg
    from psycopg import sql

    from akgentic.storage import PostgresStorage

    schema = f"akgentic_bench_{uuid4().hex[:10]}"
    store = PostgresStorage(url, schema=schema)
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def memory_store() -> Iterator[StorageBundle]:
    with MemoryStorage() as store:
        yield store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (fewer rounds)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--singles", type=int, default=2000, help="single appends per round")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    singles = 200 if args.quick else args.singles

    backends: list[tuple[str, Callable[[], AbstractContextManager[StorageBundle]]]] = []
    backends.append(("memory", memory_store))
    backends.append(("sqlite (FULL)", lambda: sqlite_store("FULL")))
    backends.append(("sqlite (NORMAL)", lambda: sqlite_store("NORMAL")))
    url = os.environ.get(POSTGRES_ENV, "")
    if url:
        backends.append(("postgres", lambda: postgres_store(url)))

    messages = make_messages(RESTORE_EVENTS)
    results: list[Result] = []
    for name, opener in backends:
        with opener() as store:
            measure(store, messages, min(singles, 100), 1)  # warm-up
            result = measure(store, messages, singles, rounds)
        result.name = name
        results.append(result)
        print(f"  measured {name}", flush=True)

    base = results[0]
    print()
    print(f"{rounds} round(s), medians; {singles} single appends; batches of {BATCH}; "
          f"restore = read + decode of {RESTORE_EVENTS:,} events")  # fmt: skip
    header = (
        f"| {'backend':<16} | {'single ev/s':>11} | {'vs mem':>7} | {'batched ev/s':>12} "
        f"| {'vs mem':>7} | {'restore 10k':>11} | {'vs mem':>6} | {'recorder ev/s':>13} "
        f"| {'vs mem':>7} | {'packs ev/s':>10} | {'vs mem':>7} | {'restore packs':>13} "
        f"| {'vs mem':>6} |"
    )
    print(header)
    print("|" + "|".join("-" * (len(c) + 0) for c in header.split("|")[1:-1]) + "|")
    for r in results:
        print(
            f"| {r.name:<16} | {r.single:>11,.0f} | {r.single / base.single:>7.3f} "
            f"| {r.batched:>12,.0f} | {r.batched / base.batched:>7.3f} "
            f"| {r.restore * 1000:>8.0f} ms | {r.restore / base.restore:>5.2f}x "
            f"| {r.recorded:>13,.0f} | {r.recorded / base.recorded:>7.3f} "
            f"| {r.packed:>10,.0f} | {r.packed / base.packed:>7.3f} "
            f"| {r.restore_packed * 1000:>10.0f} ms "
            f"| {r.restore_packed / base.restore_packed:>5.2f}x |"
        )
    if not url:
        print(f"(postgres skipped: set {POSTGRES_ENV} to include it)")


if __name__ == "__main__":
    main()
