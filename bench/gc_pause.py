"""The garbage collector's full passes in a running team: with the imports' heap frozen, or not.

CPython runs a full pass when the objects surviving its young passes grow by a quarter, and
a full pass walks every container alive — after the CLI's imports, ≈ 130,000 objects that
live as long as the process. The console script freezes them once its imports are done
(``akgentic.core.freeze_import_heap``), so a full pass walks what the team made.

Each round starts two child processes, one per side, in alternating order; each imports
what the console script imports (``akgentic.cli.main``), freezes its heap or not, runs a
team of one default ``BaseAgent`` on a zero-latency ``FunctionModel`` (events, prompt
accounting, TeamTool and MailboxTool all on) for ``--turns`` turns, then times
``--passes`` full passes (``gc.collect()``). Reported per side (medians of the rounds):

- a full pass after the turns, ms — the pause a full pass puts in the middle of whatever
  thread allocated last (an agent's turn, a server's response);
- the full passes that fell *during* the turns, how many and how long in all, ms;
- the turn, ms (wall, ``ActorSystem.ask``; separate processes, so only a rough figure).

The ratio is frozen / not frozen, taken per round. Run: ``python bench/gc_pause.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import gc, json, statistics, sys, time
    import akgentic.cli.main  # what the console script imports before it runs a command
    from akgentic.core import freeze_import_heap
    frozen = freeze_import_heap() if sys.argv[1] == "frozen" else 0
    sys.path.insert(0, sys.argv[4])  # this folder: agent_turn's pieces
    from agent_turn import Adder, BenchAgent
    from akgentic.agent import AgentConfig
    from akgentic.core import ActorSystem, Orchestrator, UserMessage

    passes = []
    started = {}

    def clock(phase, info):
        if info["generation"] != 2:
            return
        if phase == "start":
            started["at"] = time.perf_counter()
        elif "at" in started:
            passes.append(time.perf_counter() - started.pop("at"))

    turns, count = int(sys.argv[2]), int(sys.argv[3])
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    agent = system.createActor(
        BenchAgent, config=AgentConfig(name="@Bench", tools=[Adder()]), team_id=orchestrator.team_id
    )
    system.ask(agent, UserMessage(content="warm-up"), timeout=30)
    gc.callbacks.append(clock)
    begin = time.perf_counter()
    for i in range(turns):
        system.ask(agent, UserMessage(content=f"turn {i}"), timeout=30)
    turn = (time.perf_counter() - begin) / turns
    gc.callbacks.remove(clock)
    during = list(passes)
    timed = []
    for _ in range(count):
        begin = time.perf_counter()
        gc.collect()
        timed.append(time.perf_counter() - begin)
    walked = len(gc.get_objects())
    system.shutdown(10)
    print(json.dumps({
        "frozen": frozen, "walked": walked, "turn": turn, "during": during,
        "full_pass": statistics.median(timed),
    }))
    """
)


def child(side: str, turns: int, passes: int) -> dict[str, object]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            side,
            str(turns),
            str(passes),
            str(Path(__file__).resolve().parent),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--passes", type=int, default=5, help="full passes timed after the turns")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    sides = ["not frozen", "frozen"]
    runs: dict[str, list[dict[str, object]]] = {side: [] for side in sides}
    for index in range(args.rounds):
        for side in sides if index % 2 == 0 else sides[::-1]:
            runs[side].append(child(side.replace("not frozen", "thawed"), args.turns, args.passes))

    def median(side: str, key: str) -> float:
        return statistics.median(float(str(run[key])) for run in runs[side])

    print(f"{args.rounds} rounds, {args.turns} turns a child, medians")
    print(
        f"{'':12}{'frozen objs':>12}{'walked':>9}{'full pass ms':>14}"
        f"{'passes during':>15}{'their ms':>10}{'turn ms':>9}"
    )
    for side in sides:
        during = [run["during"] for run in runs[side]]
        count = statistics.median(len(d) for d in during)  # type: ignore[arg-type]
        spent = statistics.median(sum(d) * 1e3 for d in during)  # type: ignore[arg-type]
        print(
            f"{side:12}{median(side, 'frozen'):>12,.0f}{median(side, 'walked'):>9,.0f}"
            f"{median(side, 'full_pass') * 1e3:>14.2f}{count:>15g}{spent:>10.1f}"
            f"{median(side, 'turn') * 1e3:>9.2f}"
        )
    ratios = [
        float(str(f["full_pass"])) / float(str(t["full_pass"]))
        for f, t in zip(runs["frozen"], runs["not frozen"], strict=True)
    ]
    print("full pass, frozen / not frozen, per round: " + " ".join(f"{r:.3f}" for r in ratios))
    print(f"  median {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
