"""The agent layer's overhead per turn and per tool call, against bare pydantic-ai.

Both sides use the same zero-latency model (a pydantic-ai ``FunctionModel`` that
answers at once) and the same tool, and both keep the growing conversation:

- baseline: ``Agent.run_sync(prompt, message_history=previous)`` in a loop;
- streamed baseline: the same, with an ``event_stream_handler`` that reads every event —
  pydantic-ai streaming each step: the usual way to publish a run's events, and what this
  agent did until it read the model's stream itself (``capabilities/run_events.py``);
- the agent's own pydantic-ai ``Agent``, run directly with ``run_sync`` from the
  benchmark's thread: the very agent a default ``BaseAgent`` builds (its tools with the
  default cards', ``output_type=[str, AgentReply]`` and its recipient check, its
  capabilities — events, accounting, cancellation, mailbox), without the actor, the turn
  protocol or the context block around it. It splits the overhead in two: what
  pydantic-ai costs for an agent configured like ours, and what the actor adds;
- akgentic: a ``BaseAgent`` in a team with its orchestrator, driven from outside with
  ``ActorSystem.ask`` (message in, stamped reply out), measured with the default
  configuration (text read off the model's streamed response, tool calls and returns,
  every event published on the team stream), with
  ``stream_events=False``, with ``prompt_accounting.enabled=False`` (the default
  accounts every model request: its cost is the difference), and without the cards every
  agent carries (``default_cards=()``: no TeamTool, no MailboxTool), so that its model is
  offered the very tool the baseline's is and nothing else.

Per tool call: (time of a turn with one tool call) - (time of a turn without), on each
side. The prompt accounting's own time is also clocked inside the default runs: its
``after_model_request`` hook on the agent's thread (the capture), and the building of its
records on the orchestrator's thread (``notify_event_later``). A whole run's time ends
with a query that drains the orchestrator, so the work a team defers is in it.
Rounds alternate; medians; ratios are akgentic / baseline (lower is better; the ratio is
the cost of being an actor with a context updater, commands, events and telemetry around
the same pydantic-ai run). Then ``--blocks`` blocks of paired turns (:func:`paired`): the
baseline, the streamed baseline, the default agent, the agent with accounting off and the
default agent **recorded** (its team's EventRecorder on SQLite), interleaved turn by turn
in a shuffled order, a ratio per block — the reading to trust on a machine whose speed
drifts between runs. Each block gives two ratios per side: wall time (what a caller waits
for a reply; the work a team's background threads do lands on whichever side runs then,
so it is shared out among the sides) and CPU attributed to the side that caused it (the
main thread's in its turns, plus its team's threads over the block: the fair reading of
what recording costs). ``--history N`` times the blocks N turns into a conversation:
pydantic-ai's own work per turn grows with the history, the agent's stays about the same.
The process first freezes what its imports left, as the console script does
(``akgentic.core.freeze_import_heap``; ``--thawed``: not), for every side alike.
Run: ``python bench/agent_turn.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.accounting import PromptAccounting
from akgentic.core import ActorSystem, Orchestrator, UserMessage, freeze_import_heap
from akgentic.storage import SqliteStorage
from akgentic.team import EventRecorder
from akgentic.tool.core import ToolCard


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def respond(with_tool: bool) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returned = any(getattr(p, "part_kind", "") == "tool-return" for p in last.parts)
        if with_tool and not returned:
            return ModelResponse(parts=[ToolCallPart("add", {"a": 1, "b": 2})])
        return ModelResponse(parts=[TextPart("ok")])

    return model


def streamed(fn: Callable[[list[ModelMessage], AgentInfo], ModelResponse]) -> Any:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        for index, part in enumerate(fn(messages, info).parts):
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                yield {index: DeltaToolCall(part.tool_name, part.args_as_json_str())}

    return stream


class Adder(ToolCard):
    def get_tools(self) -> list[Callable[..., Any]]:
        return [add]


class TimedAccounting(PromptAccounting):
    """The agent's accounting, clocked: its hook on the agent's thread (the capture), and
    each record's build wherever it runs (the orchestrator's thread)."""

    spent: ClassVar[list[float]] = []
    built: ClassVar[list[float]] = []

    async def after_model_request(self, ctx: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await super().after_model_request(ctx, **kwargs)
        finally:
            TimedAccounting.spent.append(time.perf_counter() - start)

    @staticmethod
    def clocked(publish: Callable[[Any], None]) -> Callable[[Any], None]:
        def timed(build: Callable[[], Any]) -> None:
            def run() -> Any:
                start = time.perf_counter()
                try:
                    return build()
                finally:
                    TimedAccounting.built.append(time.perf_counter() - start)

            publish(run)

        return timed


class BenchAgent(BaseAgent):
    with_tool: ClassVar[bool] = False

    def _build_model(self) -> Any:
        fn = respond(type(self).with_tool)
        return FunctionModel(fn, stream_function=streamed(fn))

    def _prompt_accounting(self) -> PromptAccounting:
        base = super()._prompt_accounting()
        return TimedAccounting(
            base.accountant,
            TimedAccounting.clocked(base.publish),
            agent=base.agent,
            rules=base.rules,
            clock=base.clock,
        )


def _started() -> tuple[float, float]:
    """The clocks at the start of a timed run, taken on a collected heap: every run starts
    with no garbage of the runs before it (a previous team's actors, a previous agent's
    history), so a full collection of that garbage is not billed to whichever side happens
    to trigger it (measured: it alternated runs of the same side by ±0.4 ms/turn)."""
    gc.collect()
    return time.perf_counter(), time.process_time()


def baseline(turns: int, with_tool: bool, streamed_run: bool = False) -> float:
    fn = respond(with_tool)
    model = FunctionModel(fn, stream_function=streamed(fn))
    agent: Agent[None, str] = Agent(model, tools=[add], instructions="You add.")
    history: list[ModelMessage] = []
    seen: list[Any] = []

    async def handler(ctx: Any, events: Any) -> None:
        async for event in events:
            seen.append(event)

    start, cpu = _started()
    for i in range(turns):
        if streamed_run:
            result = agent.run_sync(
                f"turn {i}", message_history=history, event_stream_handler=handler
            )
        else:
            result = agent.run_sync(f"turn {i}", message_history=history)
        history = result.all_messages()
        seen.clear()
    CPU.setdefault(("stream" if streamed_run else "base") + ("_tool" if with_tool else ""), [])
    CPU[("stream" if streamed_run else "base") + ("_tool" if with_tool else "")].append(
        (time.process_time() - cpu) / turns
    )
    return (time.perf_counter() - start) / turns


def shaped(turns: int, with_tool: bool) -> float:
    """The default BaseAgent's own pydantic-ai Agent, run directly (no actor around it)."""
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    cls = type("Bench", (BenchAgent,), {"with_tool": with_tool})
    config = AgentConfig(name="@Bench", tools=[Adder()])
    address = system.createActor(cls, config=config, team_id=orchestrator.team_id)
    system.ask(address, UserMessage(content="warm-up"), timeout=30)
    agent = system.get_actor(address)._agent  # type: ignore[attr-defined]
    history: list[ModelMessage] = []
    start, cpu = _started()
    for i in range(turns):
        history = agent.run_sync(f"turn {i}", message_history=history).all_messages()
    elapsed = (time.perf_counter() - start) / turns
    CPU.setdefault("shaped" + ("_tool" if with_tool else ""), []).append(
        (time.process_time() - cpu) / turns
    )
    system.shutdown(10)
    return elapsed


def akgentic(
    turns: int, with_tool: bool, stream_events: bool, accounting: bool = True, lean: bool = False
) -> float:
    """A BaseAgent in a team; ``lean``: without the cards every agent carries (TeamTool,
    MailboxTool), so its model is offered the baseline's one tool and nothing else."""
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    extra: dict[str, Any] = {"with_tool": with_tool}
    if lean:
        extra["default_cards"] = ()
    cls = type("Bench", (BenchAgent,), extra)
    config = AgentConfig(
        name="@Bench",
        tools=[Adder()],
        stream_events=stream_events,
        prompt_accounting={"enabled": accounting},
    )
    agent = system.createActor(cls, config=config, team_id=orchestrator.team_id)
    system.ask(agent, UserMessage(content="warm-up"), timeout=30)
    TimedAccounting.spent.clear()
    TimedAccounting.built.clear()
    start, cpu = _started()
    for i in range(turns):
        system.ask(agent, UserMessage(content=f"turn {i}"), timeout=30)
    system.proxy_ask(orchestrator, Orchestrator, timeout=600).get_team()  # the deferred work
    elapsed = (time.perf_counter() - start) / turns
    key = "ak" if stream_events and accounting else "ak_quiet" if accounting else "ak_unaccounted"
    key = "ak_lean" if lean else key
    CPU.setdefault(key + ("_tool" if with_tool else ""), []).append(
        (time.process_time() - cpu) / turns
    )
    system.shutdown(10)
    if accounting and stream_events and not lean:
        key = "tool" if with_tool else "turn"
        ACCOUNTING[key].append(sum(TimedAccounting.spent) / turns)
        BUILT[key].append(sum(TimedAccounting.built) / turns)
    return elapsed


def paired(turns: int, history: int = 0, seed: int = 0) -> dict[str, float]:
    """One block of ``turns`` turns on five sides at once, interleaved turn by turn (the
    order shuffled each turn, seeded by ``seed``): the baseline, the streamed baseline,
    the default ``BaseAgent`` in a team, the same with accounting off, and the default
    agent in a team whose **EventRecorder on a SQLite file** is subscribed (what every
    team run through ``TeamManager`` has). Each agent is alone in its own team.
    Milliseconds per turn on each side. ``history``: untimed turns every side takes first,
    so the block is timed that far into a conversation.

    Each agent side's time also holds what its turns left to do after its last reply: its
    orchestrator's drain (the events built on its thread — the run's JSON, the accounting —
    for records no wake-up has drained yet) and, recorded, the wait until every record is
    committed. Work that a team defers is billed to the block that caused it.

    Why: a side's whole run takes a second or two, and on a shared machine the speed
    drifts by a third within seconds, so two runs a few seconds apart can disagree by more
    than the overhead measured. Turn by turn, every side meets the same drift.

    Shuffled, not rotated: rotating keeps the cycle, so each side always runs right after
    the same other side and inherits what that side left in the caches. Two identical
    agents as two sides, rotated, read 1.24 and 1.20 of the baseline (8 blocks: the one
    after the baseline's turn always the slower); shuffled, 1.22 and 1.22."""
    fn = respond(False)
    agent: Agent[None, str] = Agent(
        FunctionModel(fn, stream_function=streamed(fn)), tools=[add], instructions="You add."
    )
    histories: dict[str, list[ModelMessage]] = {
        side: agent.run_sync("warm-up").all_messages() for side in ("base", "stream")
    }

    async def handler(ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    system = ActorSystem()
    cls = type("Bench", (BenchAgent,), {"with_tool": False})
    members: dict[str, Any] = {}
    orchestrators: dict[str, Any] = {}
    threads: dict[str, list[int]] = {}  # each agent side's own threads: orchestrator, agent
    directory = Path(tempfile.mkdtemp(prefix="akgentic-agent-turn-"))
    storage = SqliteStorage(directory / "team.db")
    recorder: EventRecorder | None = None
    for key, accounting in (("ak", True), ("ak_unaccounted", False), ("ak_recorded", True)):
        before = {t.ident for t in threading.enumerate()}
        orchestrator = orchestrators[key] = system.createActor(Orchestrator)
        if key == "ak_recorded":
            recorder = EventRecorder(storage, orchestrator.team_id)
            system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(recorder)
        config = AgentConfig(
            name=f"@{key}", tools=[Adder()], prompt_accounting={"enabled": accounting}
        )
        members[key] = system.createActor(cls, config=config, team_id=orchestrator.team_id)
        system.ask(members[key], UserMessage(content="warm-up"), timeout=30)
        threads[key] = [t.ident for t in threading.enumerate() if t.ident not in before and t.ident]
    spent = dict.fromkeys(("base", "stream", "ak", "ak_unaccounted", "ak_recorded"), 0.0)
    cpu = dict.fromkeys(spent, 0.0)
    sides = list(spent)

    def turn(side: str, i: int) -> None:
        if side in histories:
            handlers = {"event_stream_handler": handler} if side == "stream" else {}
            run = agent.run_sync(f"turn {i}", message_history=histories[side], **handlers)
            histories[side] = run.all_messages()
        else:
            system.ask(members[side], UserMessage(content=f"turn {i}"), timeout=30)

    def settle(side: str) -> None:
        system.proxy_ask(orchestrators[side], Orchestrator, timeout=600).get_team()  # drains
        if side == "ak_recorded":
            assert recorder is not None and recorder.written(600)

    order = random.Random(seed)
    for i in range(history):
        for side in sides:
            turn(side, -1 - i)
    for side in orchestrators:
        settle(side)
    gc.collect()
    own = {side: _thread_cpu(idents) for side, idents in threads.items()}
    whole, main = time.process_time(), time.thread_time()
    pooled = 0.0  # what pydantic-ai's worker threads did in the baselines' turns
    for i in range(turns):
        for side in order.sample(sides, len(sides)):
            pool = _pool_cpu() if side in histories else 0.0
            start, on_main = time.perf_counter(), time.thread_time()
            turn(side, i)
            spent[side] += time.perf_counter() - start
            cpu[side] += time.thread_time() - on_main
            if side in histories:  # run_sync calls the model function in a worker thread
                used = _pool_cpu() - pool
                cpu[side] += used
                pooled += used
    for side in order.sample(list(orchestrators), len(orchestrators)):
        start, on_main = time.perf_counter(), time.thread_time()
        settle(side)
        spent[side] += time.perf_counter() - start
        cpu[side] += time.thread_time() - on_main
    for side, idents in threads.items():
        cpu[side] += _thread_cpu(idents) - own[side]
    # what neither the main thread, nor a side's own threads, nor pydantic-ai's worker
    # threads did: the recorder's writer, the store's checkpoint and the deferred
    # channels' clock, which only the recorded side has
    rest = (time.process_time() - whole) - (time.thread_time() - main) - pooled
    cpu["ak_recorded"] += rest - sum(_thread_cpu(i) - own[s] for s, i in threads.items())
    system.shutdown(10)
    storage.close()
    shutil.rmtree(directory, ignore_errors=True)
    out = {side: seconds / turns * 1e3 for side, seconds in spent.items()}
    out.update({f"cpu_{side}": seconds / turns * 1e3 for side, seconds in cpu.items()})
    return out


def _pool_cpu() -> float:
    """CPU seconds pydantic-ai's worker threads (anyio's) have used so far."""
    return _thread_cpu(
        [t.ident for t in threading.enumerate() if t.ident and t.name.startswith("AnyIO")]
    )


def _thread_cpu(idents: list[int]) -> float:
    """CPU seconds the live threads ``idents`` have used (a thread gone since counts 0)."""
    total = 0.0
    for ident in idents:
        with contextlib.suppress(OSError):  # ProcessLookupError is one
            total += time.clock_gettime(time.pthread_getcpuclockid(ident))
    return total


CPU: dict[str, list[float]] = {}
"""Process CPU seconds per turn, per run (every thread: the agent's, the orchestrator's...)."""

ACCOUNTING: dict[str, list[float]] = {"turn": [], "tool": []}
"""Seconds of accounting's hook per turn, per default run (without / with a tool call)."""

BUILT: dict[str, list[float]] = {"turn": [], "tool": []}
"""Seconds of building the accounting records per turn (the orchestrator's thread)."""


def whole_runs(turns: int, rounds: int, keys: tuple[str, ...]) -> None:
    """Whole runs of ``turns`` turns per side, ``rounds`` times, sides alternating;
    medians (the first table)."""
    runs: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(rounds):
        runs["base"].append(baseline(turns, False))
        runs["base_tool"].append(baseline(turns, True))
        runs["stream"].append(baseline(turns, False, streamed_run=True))
        runs["stream_tool"].append(baseline(turns, True, streamed_run=True))
        runs["shaped"].append(shaped(turns, False))
        runs["shaped_tool"].append(shaped(turns, True))
        runs["ak"].append(akgentic(turns, False, True))
        runs["ak_tool"].append(akgentic(turns, True, True))
        runs["ak_quiet"].append(akgentic(turns, False, False))
        runs["ak_quiet_tool"].append(akgentic(turns, True, False))
        runs["ak_unaccounted"].append(akgentic(turns, False, True, accounting=False))
        runs["ak_unaccounted_tool"].append(akgentic(turns, True, True, accounting=False))
        runs["ak_lean"].append(akgentic(turns, False, True, lean=True))
        runs["ak_lean_tool"].append(akgentic(turns, True, True, lean=True))
    med = {k: statistics.median(v) * 1e3 for k, v in runs.items()}
    print(f"turns per run: {turns}, rounds: {rounds} (medians, ms)")
    print(f"{'':44}{'turn':>9}{'ratio':>8}{'per tool call':>15}{'ratio':>8}")
    base_call = med["base_tool"] - med["base"]
    rows = [
        ("pydantic-ai Agent.run_sync (baseline)", "base", "base_tool"),
        ("pydantic-ai run_sync, events streamed", "stream", "stream_tool"),
        ("the agent's own pydantic-ai Agent, direct", "shaped", "shaped_tool"),
        ("BaseAgent in a team (default: events)", "ak", "ak_tool"),
        ("BaseAgent in a team (stream_events=False)", "ak_quiet", "ak_quiet_tool"),
        ("BaseAgent in a team (accounting off)", "ak_unaccounted", "ak_unaccounted_tool"),
        ("BaseAgent, the baseline's tool only", "ak_lean", "ak_lean_tool"),
    ]
    for label, turn, tool in rows:
        call = med[tool] - med[turn]
        print(
            f"{label:44}{med[turn]:>9.2f}{med[turn] / med['base']:>8.2f}"
            f"{call:>15.2f}{call / base_call:>8.2f}"
        )
    print(
        f"default turn / streamed baseline: {med['ak'] / med['stream']:.2f}; "
        f"with a tool call: {med['ak_tool'] / med['stream_tool']:.2f}"
    )
    cpu = {k: statistics.median(v) * 1e3 for k, v in CPU.items()}
    print("process CPU per turn (ms; every thread), ratio to the baseline's:")
    for label, key in (
        ("baseline", "base"),
        ("streamed baseline", "stream"),
        ("the agent's own Agent", "shaped"),
        ("default", "ak"),
        ("stream_events=False", "ak_quiet"),
        ("accounting off", "ak_unaccounted"),
        ("the baseline's tool only", "ak_lean"),
    ):
        print(
            f"  {label:22}{cpu[key]:>8.2f}{cpu[key] / cpu['base']:>7.2f}"
            f"   with a tool call{cpu[key + '_tool']:>8.2f}"
            f"{cpu[key + '_tool'] / cpu['base_tool']:>7.2f}"
        )
    for key, label, on, off in (
        ("turn", "a turn (1 request)", "ak", "ak_unaccounted"),
        ("tool", "a turn with a tool call (2 requests)", "ak_tool", "ak_unaccounted_tool"),
    ):
        clocked = statistics.median(ACCOUNTING[key]) * 1e3
        built = statistics.median(BUILT[key]) * 1e3
        print(
            f"prompt accounting in {label}: {clocked:.3f} ms clocked in its hook on the "
            f"agent's thread ({clocked / med[on] * 100:.1f}% of the turn), {built:.3f} ms "
            f"building its records on the orchestrator's; on - off: {med[on] - med[off]:+.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of whole runs (0: none)")
    parser.add_argument("--blocks", type=int, default=6, help="blocks of paired turns (0: none)")
    parser.add_argument(
        "--history",
        type=int,
        default=0,
        help="untimed turns each side of a paired block takes first (how far into a "
        "conversation the block is timed)",
    )
    parser.add_argument(
        "--thawed",
        action="store_true",
        help="leave the imports' heap unfrozen (the console script freezes it)",
    )
    args = parser.parse_args()
    if not args.thawed:
        freeze_import_heap()
    keys = (
        "base",
        "base_tool",
        "stream",
        "stream_tool",
        "shaped",
        "shaped_tool",
        "ak",
        "ak_tool",
        "ak_quiet",
        "ak_quiet_tool",
        "ak_unaccounted",
        "ak_unaccounted_tool",
        "ak_lean",
        "ak_lean_tool",
    )
    if args.rounds:
        whole_runs(args.turns, args.rounds, keys)
    if args.blocks:
        blocks = [paired(args.turns, args.history, seed) for seed in range(args.blocks)]
        print(
            f"paired, turn by turn ({args.blocks} blocks of {args.turns} turns, each side's "
            f"turns interleaved with the others', after {args.history} untimed turns): "
            f"ratio per block, median; ms per turn of the baseline, median"
        )
        for label, key, over in (
            ("default (events)", "ak", "base"),
            ("recorded (SQLite)", "ak_recorded", "base"),
            ("accounting off", "ak_unaccounted", "base"),
            ("streamed baseline", "stream", "base"),
            ("default / streamed", "ak", "stream"),
        ):
            ratios = [block[key] / block[over] for block in blocks]
            print(
                f"  {label:22}{' '.join(f'{r:.2f}' for r in ratios)}"
                f"   median {statistics.median(ratios):.2f}"
            )
        print(f"  baseline turn (ms)    {statistics.median(b['base'] for b in blocks):.2f}")
        print(
            "  CPU per turn, each side's own (the main thread in its turns; the baselines: "
            "pydantic-ai's worker thread in their turns; an agent: its team's threads over "
            "the block: agent, orchestrator; recorded: writer, checkpoint, clock too)"
        )
        for label, key in (
            ("default (events)", "ak"),
            ("recorded (SQLite)", "ak_recorded"),
            ("accounting off", "ak_unaccounted"),
            ("streamed baseline", "stream"),
        ):
            ratios = [block[f"cpu_{key}"] / block["cpu_base"] for block in blocks]
            print(
                f"  {label:22}{' '.join(f'{r:.2f}' for r in ratios)}"
                f"   median {statistics.median(ratios):.2f}"
            )
        print(f"  baseline CPU (ms)     {statistics.median(b['cpu_base'] for b in blocks):.2f}")


if __name__ == "__main__":
    main()
