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
side. The prompt accounting's own time is also clocked inside the default runs (its
``after_model_request`` hook, on the agent's thread: cutting the request, counting what
is new, the cache model, building and publishing the event), as a share of the turn.
Rounds alternate; medians; ratios are akgentic / baseline (lower is better; the ratio is
the cost of being an actor with a context updater, commands, events and telemetry around
the same pydantic-ai run). Then ``--blocks`` blocks of paired turns (:func:`paired`): the
baseline, the streamed baseline, the default agent and the agent with accounting off,
interleaved turn by turn, a ratio per block — the reading to trust on a machine whose
speed drifts between runs. ``--history N`` times the blocks N turns into a conversation:
pydantic-ai's own work per turn grows with the history, the agent's stays about the same.
The process first freezes what its imports left, as the console script does
(``akgentic.core.freeze_import_heap``; ``--thawed``: not), for every side alike.
Run: ``python bench/agent_turn.py``.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.accounting import PromptAccounting
from akgentic.core import ActorSystem, Orchestrator, UserMessage, freeze_import_heap
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
    """The agent's accounting hook, clocked."""

    spent: ClassVar[list[float]] = []

    async def after_model_request(self, ctx: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await super().after_model_request(ctx, **kwargs)
        finally:
            TimedAccounting.spent.append(time.perf_counter() - start)


class BenchAgent(BaseAgent):
    with_tool: ClassVar[bool] = False

    def _build_model(self) -> Any:
        fn = respond(type(self).with_tool)
        return FunctionModel(fn, stream_function=streamed(fn))

    def _prompt_accounting(self) -> PromptAccounting:
        base = super()._prompt_accounting()
        return TimedAccounting(
            base.accountant, base.publish, agent=base.agent, rules=base.rules, clock=base.clock
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
    start, cpu = _started()
    for i in range(turns):
        system.ask(agent, UserMessage(content=f"turn {i}"), timeout=30)
    elapsed = (time.perf_counter() - start) / turns
    key = "ak" if stream_events and accounting else "ak_quiet" if accounting else "ak_unaccounted"
    key = "ak_lean" if lean else key
    CPU.setdefault(key + ("_tool" if with_tool else ""), []).append(
        (time.process_time() - cpu) / turns
    )
    system.shutdown(10)
    if accounting and stream_events and not lean:
        ACCOUNTING["tool" if with_tool else "turn"].append(sum(TimedAccounting.spent) / turns)
    return elapsed


def paired(turns: int, history: int = 0, seed: int = 0) -> dict[str, float]:
    """One block of ``turns`` turns on four sides at once, interleaved turn by turn (the
    order shuffled each turn, seeded by ``seed``): the baseline, the streamed baseline,
    the default ``BaseAgent`` in a team, and the same with accounting off (both agents
    members of one team: each turn's context block names one more member than the default
    rows' lone agent's). Milliseconds per turn on each side. ``history``: untimed turns every side
    takes first, so the block is timed that far into a conversation.

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
    orchestrator = system.createActor(Orchestrator)
    cls = type("Bench", (BenchAgent,), {"with_tool": False})
    members = {}
    for key, accounting in (("ak", True), ("ak_unaccounted", False)):
        config = AgentConfig(
            name=f"@{key}", tools=[Adder()], prompt_accounting={"enabled": accounting}
        )
        members[key] = system.createActor(cls, config=config, team_id=orchestrator.team_id)
        system.ask(members[key], UserMessage(content="warm-up"), timeout=30)
    spent = {"base": 0.0, "stream": 0.0, "ak": 0.0, "ak_unaccounted": 0.0}
    sides = list(spent)

    def turn(side: str, i: int) -> None:
        if side in histories:
            handlers = {"event_stream_handler": handler} if side == "stream" else {}
            run = agent.run_sync(f"turn {i}", message_history=histories[side], **handlers)
            histories[side] = run.all_messages()
        else:
            system.ask(members[side], UserMessage(content=f"turn {i}"), timeout=30)

    order = random.Random(seed)
    for i in range(history):
        for side in sides:
            turn(side, -1 - i)
    gc.collect()
    for i in range(turns):
        for side in order.sample(sides, len(sides)):
            start = time.perf_counter()
            turn(side, i)
            spent[side] += time.perf_counter() - start
    system.shutdown(10)
    return {side: seconds / turns * 1e3 for side, seconds in spent.items()}


CPU: dict[str, list[float]] = {}
"""Process CPU seconds per turn, per run (every thread: the agent's, the orchestrator's...)."""

ACCOUNTING: dict[str, list[float]] = {"turn": [], "tool": []}
"""Seconds of accounting per turn, per default run (without / with a tool call)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
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
    runs: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(args.rounds):
        runs["base"].append(baseline(args.turns, False))
        runs["base_tool"].append(baseline(args.turns, True))
        runs["stream"].append(baseline(args.turns, False, streamed_run=True))
        runs["stream_tool"].append(baseline(args.turns, True, streamed_run=True))
        runs["shaped"].append(shaped(args.turns, False))
        runs["shaped_tool"].append(shaped(args.turns, True))
        runs["ak"].append(akgentic(args.turns, False, True))
        runs["ak_tool"].append(akgentic(args.turns, True, True))
        runs["ak_quiet"].append(akgentic(args.turns, False, False))
        runs["ak_quiet_tool"].append(akgentic(args.turns, True, False))
        runs["ak_unaccounted"].append(akgentic(args.turns, False, True, accounting=False))
        runs["ak_unaccounted_tool"].append(akgentic(args.turns, True, True, accounting=False))
        runs["ak_lean"].append(akgentic(args.turns, False, True, lean=True))
        runs["ak_lean_tool"].append(akgentic(args.turns, True, True, lean=True))
    med = {k: statistics.median(v) * 1e3 for k, v in runs.items()}
    print(f"turns per run: {args.turns}, rounds: {args.rounds} (medians, ms)")
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
        print(
            f"prompt accounting in {label}: {clocked:.3f} ms clocked in its hook "
            f"({clocked / med[on] * 100:.1f}% of the turn); on - off: {med[on] - med[off]:+.2f} ms"
        )
    if args.blocks:
        blocks = [paired(args.turns, args.history, seed) for seed in range(args.blocks)]
        print(
            f"paired, turn by turn ({args.blocks} blocks of {args.turns} turns, each side's "
            f"turns interleaved with the others', after {args.history} untimed turns): "
            f"ratio per block, median; ms per turn of the baseline, median"
        )
        for label, key, over in (
            ("default (events)", "ak", "base"),
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


if __name__ == "__main__":
    main()
