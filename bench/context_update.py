"""Benchmark: what ``ContextUpdater.compose_update`` costs as LLM_CONTEXT state grows.

Run: ``.venv/bin/python bench/context_update.py`` (a script, not a test).

Two measurements:

1. The cost of one compose — one row changed among N (100, 1,000, 10,000) — reported
   as a ratio against N=100 measured in the same run. It must be O(change), not
   O(state). A naive state that snapshots by copying its rows and diffs by comparing
   them all runs alongside, as the contrast that shows the measurement can see O(N).
2. The byte-stability of the system prefix over 100 turns while the LLM_CONTEXT state
   changes every turn: the rendered SYSTEM_PROMPT content must be identical each turn.

How the row state stays O(change) (``LedgerState``):

- The live store (``Ledger``) keeps rows by id, a revision counter bumped once per
  mutation, and an append-only change log of (revision, row id), trimmed from the
  front past ``max_log`` entries (amortised O(1)).
- A snapshot is the pair (ledger id, revision) plus a runtime reference to the store:
  O(1) to take, and immutable — it never shares a mutable row map with the store.
- ``render_delta(previous)`` slices the change log between the two revisions. The
  revisions are consecutive, so the slice bounds are index arithmetic, not a search:
  O(rows changed). It renders those rows' values as they are at render time; a row
  mutated again in between is therefore said early and said again next turn — a
  repeat, never an omission.
- The persisted baseline is that pair, not the rows: a restored agent resumes deltas
  from the store's log. When the log no longer reaches the baseline's revision (it was
  trimmed, or the store is a different one) the state renders in full: a wider block,
  never a lost update.
- What stays O(N), honestly: the first (full) render, and any fallback to full.
"""

from __future__ import annotations

import gc
import hashlib
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, ClassVar
from uuid import uuid4

from pydantic import Field, PrivateAttr

from akgentic.core.address import ActorAddress
from akgentic.core.agent_state import BaseState
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import (
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    BaseToolParam,
    Channels,
    ContextState,
    ToolCard,
    ToolFactory,
    ToolState,
)
from akgentic.tool.core import serve

SIZES = (100, 1_000, 10_000)
COMPOSES = 2_000
WARMUP = 300
TURNS = 100


# -- the O(change) row state -------------------------------------------------------------


class Ledger:
    """A live row store: rows by id, a revision per mutation, a bounded change log."""

    def __init__(self, rows: dict[str, str], max_log: int = 4_096) -> None:
        self.ledger_id = uuid4().hex
        self.rows = dict(rows)
        self.revision = 0
        self.max_log = max_log
        self._log: list[str] = []  # row id changed at revision first_revision + index
        self._first_revision = 1

    def __deepcopy__(self, memo: dict[int, Any]) -> Ledger:
        return self  # a live store, shared by reference; an actor's state snapshot skips it

    def set(self, row_id: str, text: str | None) -> None:
        if text is None:
            self.rows.pop(row_id, None)
        else:
            self.rows[row_id] = text
        self.revision += 1
        self._log.append(row_id)
        if len(self._log) > 2 * self.max_log:  # trim in chunks: amortised O(1)
            drop = len(self._log) - self.max_log
            del self._log[:drop]
            self._first_revision += drop

    def changed_between(self, after: int, upto: int) -> list[str] | None:
        """Row ids changed in revisions (after, upto]; None when the log no longer reaches."""
        if after + 1 < self._first_revision or after > upto:
            return None
        start = after + 1 - self._first_revision
        return list(dict.fromkeys(self._log[start : upto + 1 - self._first_revision]))

    def snapshot(self) -> LedgerState:
        state = LedgerState.model_construct(ledger_id=self.ledger_id, revision=self.revision)
        state._ledger = self
        return state


class LedgerState(ContextState):
    """A position in a ledger's history; renders from the ledger it was taken from."""

    ledger_id: str
    revision: int
    _ledger: Ledger | None = PrivateAttr(default=None)

    def render_full(self) -> str:
        ledger = self._ledger
        if ledger is None or not ledger.rows:
            return ""
        lines = [f"- {k}: {v}" for k, v in sorted(ledger.rows.items())]
        return f"Ledger ({len(lines)} rows):\n" + "\n".join(lines)

    def render_delta(self, previous: LedgerState) -> str | None:
        ledger = self._ledger
        if ledger is None or previous.ledger_id != self.ledger_id:
            return self.render_full()
        changed = ledger.changed_between(previous.revision, self.revision)
        if changed is None:
            return self.render_full()
        if not changed:
            return None
        rows = ledger.rows
        lines = [f"- {k}: {rows[k]}" if k in rows else f"- {k}: removed" for k in changed]
        return "Ledger changes:\n" + "\n".join(lines)


# -- the naive contrast ------------------------------------------------------------------


class CopiedRows(ContextState):
    """Snapshot by copying every row, diff by comparing them all: O(N) per compose."""

    rows: dict[str, str]

    def render_full(self) -> str:
        lines = [f"- {k}: {v}" for k, v in sorted(self.rows.items())]
        return f"Ledger ({len(lines)} rows):\n" + "\n".join(lines)

    def render_delta(self, previous: CopiedRows) -> str | None:
        old = previous.rows
        lines = [f"- {k}: {v}" for k, v in self.rows.items() if old.get(k) != v]
        lines += [f"- {k}: removed" for k in old if k not in self.rows]
        return "Ledger changes:\n" + "\n".join(lines) if lines else None


# -- a card serving both prompt channels -------------------------------------------------


class Guide(BaseToolParam):
    expose: set[Channels] = {SYSTEM_PROMPT}


class Board(BaseToolParam):
    expose: set[Channels] = {LLM_CONTEXT}


class LedgerCard(ToolCard):
    naive: bool = False
    guide: Guide | bool = True
    board: Board | bool = True
    _ledger: Ledger | None = PrivateAttr(default=None)

    def bind(self, ledger: Ledger) -> LedgerCard:
        self._ledger = ledger
        return self

    def get_system_prompts(self) -> list[Callable[[], str]]:
        if serve(self.guide, Guide, SYSTEM_PROMPT) is None:
            return []
        return [lambda: "You keep the ledger. Rows change; this instruction does not."]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        if serve(self.board, Board, LLM_CONTEXT) is None:
            return []
        ledger = self._ledger

        def ledger_state() -> ContextState | None:
            if ledger is None:
                return None
            if self.naive:
                return CopiedRows.model_construct(rows=dict(ledger.rows))
            return ledger.snapshot()

        return [ledger_state]


class AgentState(BaseState):
    tool_state: ToolState = Field(default_factory=ToolState)


class Agent:
    """The ActorToolObserver surface the updater reads; no actor needed for a bench."""

    orchestrator: ClassVar[None] = None
    team_id: ClassVar[None] = None

    def __init__(self) -> None:
        self.myAddress = ActorAddress(agent_id=uuid4(), name="@Bench")
        self.state = AgentState()

    def notify_event(self, event: Any) -> None: ...

    def proxy_ask(self, addr: Any, actor_type: Any, timeout: Any = None) -> Any: ...

    def proxy_tell(self, addr: Any, actor_type: Any) -> Any: ...


# -- measurements ------------------------------------------------------------------------


def compose_cost(size: int, naive: bool, rng: random.Random) -> tuple[float, int]:
    """Median microseconds per compose for one changed row; and the persisted bytes."""
    ledger = Ledger({f"row{i:05d}": "todo" for i in range(size)})
    agent = Agent()
    factory = ToolFactory([LedgerCard(naive=naive).bind(ledger)], observer=agent)
    updater = factory.get_context_updater()
    first = updater.compose_update([])
    assert first is not None and first.count("\n- ") == size
    history = [first]
    samples: list[float] = []
    gc.disable()
    try:
        for turn in range(WARMUP + COMPOSES):
            row = f"row{rng.randrange(size):05d}"
            ledger.set(row, f"done at turn {turn}")
            start = time.perf_counter_ns()
            block = updater.compose_update(history)
            if turn >= WARMUP:
                samples.append((time.perf_counter_ns() - start) / 1_000)
            assert block is not None and block.endswith(f"- {row}: done at turn {turn}"), block
            assert block.count("\n- ") == 1, block  # a delta: exactly the changed row
            history = [block]  # only the latest marker needs to stay visible
    finally:
        gc.enable()
    stored = serialize(agent.state.tool_state)
    assert isinstance(deserialize(stored), ToolState)
    return statistics.median(samples), len(json.dumps(stored))


def prefix_stability(rng: random.Random) -> tuple[int, int, int, str]:
    """100 turns of changing LLM_CONTEXT state; the rendered system prefix every turn."""
    ledger = Ledger({f"row{i:05d}": "todo" for i in range(1_000)})
    agent = Agent()
    factory = ToolFactory([LedgerCard().bind(ledger)], observer=agent)
    updater = factory.get_context_updater()
    history: list[str] = []
    prefixes: set[bytes] = set()
    blocks = 0
    for turn in range(TURNS):
        if turn:
            for _ in range(rng.randint(1, 3)):
                ledger.set(f"row{rng.randrange(1_000):05d}", f"changed at turn {turn}")
        prefix = "\n\n".join(render() for render in factory.get_system_prompts()).encode()
        prefixes.add(prefix)
        block = updater.compose_update(history)
        assert block is not None and block.startswith(f"**Context update {turn + 1}**")
        history.append(block)
        blocks += 1
    (prefix,) = prefixes  # byte-identical every turn, or this unpacking fails
    return blocks, len(prefixes), len(prefix), hashlib.sha256(prefix).hexdigest()[:16]


def main() -> int:
    rng = random.Random(4)
    print(__doc__.split("\n\n")[0] if __doc__ else "")
    print(f"\n1. compose_update, one row changed among N ({COMPOSES} composes each, median)\n")
    columns = ("N", "O(change) state", "ratio", "naive copy+diff", "ratio")
    print("{:>7} | {:>16} | {:>6} | {:>16} | {:>6}".format(*columns))
    print(f"{'-' * 7}-+-{'-' * 16}-+-{'-' * 6}-+-{'-' * 16}-+-{'-' * 6}")
    results = {
        size: (compose_cost(size, False, rng), compose_cost(size, True, rng)) for size in SIZES
    }
    base_fast, base_naive = results[SIZES[0]][0][0], results[SIZES[0]][1][0]
    for size, ((fast, _), (naive, _)) in results.items():
        print(
            f"{size:>7,} | {fast:>13.1f} µs | {fast / base_fast:>5.2f}x | "
            f"{naive:>13.1f} µs | {naive / base_naive:>5.2f}x"
        )
    largest = SIZES[-1]
    (_, fast_bytes), (_, naive_bytes) = results[largest]
    print(
        f"\npersisted ToolState at N={largest:,}: {fast_bytes:,} bytes (a revision) vs "
        f"{naive_bytes:,} bytes (every row)"
    )
    growth = results[largest][0][0] / base_fast
    verdict = "O(change)" if growth < 3 else "NOT O(change)"
    print(f"verdict: x{SIZES[-1] // SIZES[0]} rows -> x{growth:.2f} time per compose: {verdict}")

    blocks, distinct, size, digest = prefix_stability(rng)
    print(f"\n2. system prefix over {TURNS} turns of changing LLM_CONTEXT state\n")
    print(f"context blocks composed: {blocks} (numbered 1..{blocks}, one per turn)")
    print(f"distinct system prefixes: {distinct} ({size} bytes, sha256 {digest}…)")
    print("verdict: byte-identical every turn" if distinct == 1 else "verdict: PREFIX CHANGED")
    return 0 if growth < 3 and distinct == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
