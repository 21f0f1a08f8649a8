"""Benchmark: the prompt economy of a 50-turn session, three ways in one run.

Run: ``.venv/bin/python bench/prompt_economy.py`` (a script, not a test; needs bpe-openai,
in the ``dev`` and ``tokens`` extras). ``--turns N`` shortens or lengthens the session.

One agent in a team, on the offline scripted model, plays the same 50 user turns three
ways. It carries planning and the knowledge graph, skills, and toolsets: ``tasks``
(PlanningTool), ``graph`` (KnowledgeGraphTool) and six domain sets of six tools each
(``crm``, ``billing``, ``calendar``, ``docs``, ``email``, ``files``: the cards of
``bench/toolsets.py``), plus the defaults every agent has (TeamTool, MailboxTool). The
turns cycle through planning work (a skill, then ``enable_toolset``, then the board),
reporting progress (a call straight into ``tasks``, auto-activating it when it has
expired), recording findings in the graph, recalling them, using two domain sets, and
plain conversation. Time is simulated: 45 seconds per turn, so a toolset unused for ten
minutes expires, as it would.

- **(a) as shipped** — the frozen system prompt, per-turn context deltas at the tail, the
  toolsets enabled on demand;
- **(b) re-rendered** — seed 002's approach: at every turn the system prompt is rebuilt
  with every context state rendered in full (plan, graph, roster, active toolsets, skills
  in view), and no context block is appended;
- **(c) all loaded** — every toolset active from the start and never expiring: every
  tool's schema on every request.

Every request is accounted by the agent's own ``PromptAccountingEvent`` (o200k_base
tokens, the prefix-cache model with the default rules: a 1,024-token minimum, five
minutes). Reported per mode: requests, total input tokens, the share the modelled cache
served, tool-schema tokens per request, and what broke the cache.

``--summaries`` measures a compaction's summary request instead: agent (a), its model
window cut to ``--window`` tokens so the session compacts several times, plays the same
turns twice — summaries on the agent's prefix (as shipped: its instructions, tools and
history as messages, one ask, the prefix cache serving what the turns read) and summaries
asked the bounded way (``CompactionConfig.summary_request`` ``bounded``, the window the
same: ``SUMMARY_INSTRUCTIONS``, no tools, the conversation as text). The scripted model's
summary is the same text either way, so both sessions hold the same history. Reported
from the records of kind ``summary``: their input tokens, and the tokens the cache model
did not serve (``input_tokens - cached_tokens``), per form, and the ratio, and a price
in uncached-token units with cache reads at 10% and 50%. A model of the provider's
cache, not a bill.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toolsets import SETS, Verbs

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.accounting import PromptAccountingEvent, Source
from akgentic.agent.config import CompactionConfig
from akgentic.core import ActorSystem, EventMessage, Message, Orchestrator, UserMessage
from akgentic.llm import ModelRoster, ScriptedModel, token_counter
from akgentic.tool.core import ContextState
from akgentic.tool.knowledge_graph import KnowledgeGraphTool
from akgentic.tool.planning import PlanningTool
from akgentic.tool.skill import SkillEntry, Skills, SkillTool
from akgentic.tool.toolsets import ToolsetCard
from akgentic.tool.vector_store import EmbeddingConfig, VectorStoreParam

SECONDS_PER_TURN = 45.0
DOMAIN = [(name, noun, description) for name, noun, description in SETS[:6]]

SKILLS = [
    SkillEntry(
        name="plan-work",
        description="Before planning any work, read this; it switches on the tasks toolset.",
        content="Enable the tasks toolset, then create one task per step, with a short "
        "imperative title. Mark a task in_progress when you start it and done when it is.",
        toolset="tasks",
    ),
    SkillEntry(
        name="record-findings",
        description="How to record what you learn in the team's knowledge graph.",
        content="Enable the graph toolset. Record each finding as an entity of type "
        "finding, with one observation per fact; mark the main ones as roots.",
        toolset="graph",
    ),
    SkillEntry(
        name="house-style",
        description="How to write answers for the team.",
        content="Answer in two sentences at most. Say what you did, then what is next.",
    ),
]

TOPICS = ["the archive move", "the budget review", "the vendor audit", "the launch", "hiring"]


def when(pattern: str) -> str:
    """A rule's regex: ``pattern`` as the first line of the message the agent was sent."""
    return r"^Message from [^:]+:\n" + pattern


def scenario() -> dict[str, Any]:
    """The scripted model's rules, one per kind of turn."""
    rules = [
        {
            "when": when(r"plan (?P<work>[^\n]+)"),
            "steps": [
                {"tool_calls": [{"tool": "use_skill", "args": {"name": "plan-work"}}]},
                {"tool_calls": [{"tool": "enable_toolset", "args": {"name": "tasks"}}]},
                {
                    "tool_calls": [
                        {
                            "tool": "tasks_update_planning",
                            "args": {
                                "items": [
                                    {"op": "create", "title": "Prepare {work}"},
                                    {"op": "create", "title": "Carry out {work}"},
                                ]
                            },
                        }
                    ]
                },
                {"text": "[scripted] Planned {work} in two tasks."},
            ],
        },
        {
            "when": when(r"progress on (?P<work>[^\n]+)"),
            "steps": [
                {
                    "tool_calls": [
                        {
                            "tool": "tasks_update_planning",
                            "args": {"items": [{"op": "update", "task_id": 1, "status": "done"}]},
                        }
                    ]
                },
                {"text": "[scripted] {work}: the first task is done."},
            ],
        },
        {
            "when": when(r"record (?P<fact>[^\n]+)"),
            "steps": [
                {"tool_calls": [{"tool": "use_skill", "args": {"name": "record-findings"}}]},
                {"tool_calls": [{"tool": "enable_toolset", "args": {"name": "graph"}}]},
                {
                    "tool_calls": [
                        {
                            "tool": "graph_update_graph",
                            "args": {
                                "entities_to_create": [
                                    {
                                        "name": "{fact}",
                                        "entity_type": "finding",
                                        "observations": ["reported by the user"],
                                        "is_root": True,
                                    }
                                ]
                            },
                        }
                    ]
                },
                {"text": "[scripted] Recorded {fact}."},
            ],
        },
        {
            "when": when(r"what do we know about (?P<topic>[^\n]+)"),
            "steps": [
                {"tool_calls": [{"tool": "graph_search_graph", "args": {"query": "{topic}"}}]},
                {"text": "[scripted] On {topic}: {result}"},
            ],
        },
        {
            "when": when(r"look up (?P<who>[^\n]+)"),
            "steps": [
                {"tool_calls": [{"tool": "enable_toolset", "args": {"name": "crm"}}]},
                {"tool_calls": [{"tool": "crm_search", "args": {"query": "{who}"}}]},
                {"text": "[scripted] Found {who}."},
            ],
        },
        {
            "when": when(r"what is on the calendar"),
            "steps": [
                {"tool_calls": [{"tool": "enable_toolset", "args": {"name": "calendar"}}]},
                {"tool_calls": [{"tool": "calendar_list", "args": {"limit": 5}}]},
                {"text": "[scripted] The calendar: {result}"},
            ],
        },
    ]
    default = {"text": "[scripted] Noted: {message}"}
    return {"name": "economy", "roles": {"Assistant": {"rules": rules, "default": default}}}


def turns(count: int) -> list[str]:
    """``count`` user turns, cycling through the kinds of work."""
    kinds = [
        "plan {t}",
        "record {t} needs a sponsor",
        "progress on {t}",
        "what do we know about {t}",
        "look up the supplier of {t}",
        "how are things going with {t}?",
        "what is on the calendar",
        "record {t} is on track",
        "thanks, that helps with {t}",
        "progress on {t}",
    ]
    return [
        kinds[i % len(kinds)].format(t=TOPICS[(i // len(kinds)) % len(TOPICS)])
        for i in range(count)
    ]


class SimClock:
    """Seconds, advanced by hand: the session's simulated time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


CLOCK = SimClock()


def cards() -> list[Any]:
    keyword_only = VectorStoreParam(embedding=EmbeddingConfig(provider="none"))
    return [
        SkillTool(skills=Skills(skills=SKILLS, folders=[], store=False)),
        ToolsetCard(
            name="tasks",
            description="The team's task board: create, update, read tasks",
            cards=[PlanningTool()],
        ),
        ToolsetCard(
            name="graph",
            description="The team's knowledge graph: record and search findings",
            cards=[KnowledgeGraphTool(vector_store=keyword_only)],
        ),
        *(
            ToolsetCard(name=name, description=description, cards=[Verbs(noun=noun)])
            for name, noun, description in DOMAIN
        ),
    ]


class Shipped(BaseAgent):
    """(a): the agent as shipped, on the scripted model and the simulated clock."""

    toolset_clock: ClassVar[Any] = CLOCK
    accounting_clock: ClassVar[Any] = CLOCK

    def _build_model(self) -> Any:
        return ScriptedModel.from_dict(scenario(), role="Assistant")

    def _prompt_accounting(self) -> Any:
        self.accounting = super()._prompt_accounting()
        return self.accounting

    def accounted(self) -> int:
        """How many requests were accounted (and published) so far."""
        return int(self.accounting.accountant.requests)


class _NoBlock:
    """A context updater that composes nothing: (b) renders the states into the prompt."""

    last_sections: ClassVar[list[tuple[str, str]]] = []
    last_failures: ClassVar[list[tuple[str, str]]] = []

    def compose_update(self, messages: Any) -> None:
        return None

    def reset(self) -> None:
        return None


class Rerendered(Shipped):
    """(b): every context state rendered in full into the system prompt, each turn."""

    def on_start(self) -> None:
        super().on_start()
        self._frozen = self._wiring.system_parts
        providers = list(self._factory.get_context_states())
        if self._toolsets is not None:
            providers += self._toolsets.context_states()
        self._providers = providers
        self._updater = _NoBlock()  # type: ignore[assignment]

    def _states(self) -> list[tuple[Source, str]]:
        parts = []
        for provider in self._providers:
            state: ContextState | None = provider()
            text = state.render_full() if state is not None else ""
            if text:
                key = getattr(provider, "__name__", "")
                source = replace(self._wiring.provider_source(key), channel="system_prompt")
                parts.append((source, text))
        return parts

    def _take_turn(self, msg: Message, text: str, sender: Any) -> bool:
        self._wiring.set_system_parts([*self._frozen, *self._states()])
        with self._agent.override(instructions=self._wiring.system_prompt):
            return super()._take_turn(msg, text, sender)


class AllLoaded(Shipped):
    """(c): every toolset active from the start, and never expiring."""

    toolset_clock: ClassVar[Any] = staticmethod(lambda: 0.0)

    def on_start(self) -> None:
        super().on_start()
        assert self._toolsets is not None
        for group in self._toolsets.groups:
            self._toolsets.registry.enable(group.name)


class Collector:
    """The team's subscriber: keeps the accounting events."""

    def __init__(self) -> None:
        self.events: list[PromptAccountingEvent] = []
        self.cond = threading.Condition()

    def on_message(self, msg: Message) -> None:
        if isinstance(msg, EventMessage) and isinstance(msg.event, PromptAccountingEvent):
            with self.cond:
                self.events.append(msg.event)
                self.cond.notify_all()

    def wait(self, count: int, timeout: float = 30.0) -> list[PromptAccountingEvent]:
        with self.cond:
            if not self.cond.wait_for(lambda: len(self.events) >= count, timeout):
                raise RuntimeError(f"{len(self.events)} of {count} accounting events arrived")
            return list(self.events)

    def set_restoring(self, *args: Any) -> None: ...
    def on_stop_request(self, *args: Any) -> None: ...
    def on_stop(self, *args: Any) -> None: ...


def session(cls: type[BaseAgent], count: int, **options: Any) -> list[PromptAccountingEvent]:
    """Play ``count`` turns with an agent of class ``cls`` (``options``: more of its
    ``AgentConfig``); its accounting events."""
    CLOCK.now = 0.0
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    collector = Collector()
    system.proxy_ask(orchestrator, Orchestrator, timeout=10).subscribe(collector)
    config = AgentConfig(name="@Assistant", role="Assistant", tools=cards(), **options)
    agent = system.createActor(cls, config=config, team_id=orchestrator.team_id)
    try:
        for text in turns(count):
            system.ask(agent, UserMessage(content=text), timeout=60)
            CLOCK.now += SECONDS_PER_TURN
        accounted = system.proxy_ask(agent, Shipped, timeout=10).accounted()
        return collector.wait(accounted)
    finally:
        system.shutdown(10)


def summary(events: list[PromptAccountingEvent]) -> dict[str, Any]:
    total = sum(e.input_tokens for e in events)
    cached = sum(e.cached_tokens for e in events)
    schema = [e.tool_schema_tokens for e in events]
    breakers = Counter(e.breaker.describe() for e in events if e.breaker is not None)
    return {
        "requests": len(events),
        "input": total,
        "cached": cached,
        "share": cached / total if total else 0.0,
        "uncached": total - cached,
        "schema_mean": statistics.fmean(schema) if schema else 0.0,
        "schema_min": min(schema, default=0),
        "schema_max": max(schema, default=0),
        "schema_total": sum(schema),
        "system_mean": statistics.fmean(e.channel_tokens("system_prompt") for e in events),
        "breaks": sum(1 for e in events if e.breaker is not None),
        "lost": sum(e.breaker.lost_tokens for e in events if e.breaker is not None),
        "breakers": breakers.most_common(8),
        "schema_by_card": _schema_by_card(events),
    }


def _schema_by_card(events: list[PromptAccountingEvent]) -> list[tuple[str, float]]:
    """Tool-schema tokens per request by card, averaged over the session, largest first."""
    totals: Counter[str] = Counter()
    for event in events:
        for part in event.parts:
            if part.channel == "tool_call":
                totals[part.card] += part.tokens
    count = len(events) or 1
    return [(card, tokens / count) for card, tokens in totals.most_common()]


def summaries(count: int, window: int, keep_last: int) -> None:
    """The summaries of one compacting session, on the prefix and bounded: printed."""
    models = ModelRoster.from_spec("scripted:default", context_length=window)
    forms: dict[str, Literal["prefix", "bounded"]] = {
        "on the prefix (default)": "prefix",
        "bounded": "bounded",
    }
    runs = {
        label: session(
            Shipped,
            count,
            models=models,
            compaction=CompactionConfig(threshold=0.8, keep_last=keep_last, summary_request=form),
        )
        for label, form in forms.items()
    }
    turns_of = {label: [e for e in ev if e.kind == "turn"] for label, ev in runs.items()}
    first, second = turns_of.values()
    same = [e.input_tokens for e in first] == [e.input_tokens for e in second]
    print(
        f"{count} turns, window {window:,} (the scripted model's estimate: 4 characters a "
        f"token), threshold 0.8, keep_last {keep_last}; o200k_base tokens, cache model: "
        f">= 1,024-token prefix, 5 min TTL"
    )
    print(
        f"turn requests: {len(first)} and {len(second)}, "
        f"{'the same' if same else 'NOT the same'} input tokens request by request\n"
    )
    print(
        f"{'summaries':26}{'requests':>9}{'input tokens':>14}{'cached':>10}"
        f"{'uncached':>10}{'vs prefix':>11}{'uncached/summary':>18}"
        f"{'price, reads at 10%':>21}{'at 50%':>9}"
    )
    rows = {}
    for label, events in runs.items():
        mine = [e for e in events if e.kind == "summary"]
        total = sum(e.input_tokens for e in mine)
        uncached = sum(e.input_tokens - e.cached_tokens for e in mine)
        rows[label] = (mine, total, uncached)
    base = rows["on the prefix (default)"][2]
    for label, (mine, total, uncached) in rows.items():
        print(
            f"{label:26}{len(mine):>9}{total:>14,}{total - uncached:>10,}{uncached:>10,}"
            f"{uncached / base if base else float('inf'):>11.2f}"
            f"{uncached / max(len(mine), 1):>18,.0f}"
            f"{uncached + 0.1 * (total - uncached):>21,.0f}"
            f"{uncached + 0.5 * (total - uncached):>9,.0f}"
        )
    for label, (mine, _, _) in rows.items():
        print(f"\n{label}, each summary: input, cached, status")
        for e in mine:
            print(f"  #{e.request:<4}{e.input_tokens:>9,}{e.cached_tokens:>9,}  {e.cache_status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument(
        "--summaries", action="store_true", help="compare a summary's two forms instead"
    )
    parser.add_argument("--window", type=int, default=2_500, help="with --summaries")
    parser.add_argument("--keep-last", type=int, default=6, help="with --summaries")
    args = parser.parse_args()
    token_counter(exact=True)  # fail early, with the install hint, without bpe-openai
    if args.summaries:
        summaries(args.turns, args.window, args.keep_last)
        return
    modes = {
        "(a) as shipped": Shipped,
        "(b) re-rendered each turn": Rerendered,
        "(c) all tools loaded": AllLoaded,
    }
    results = {label: summary(session(cls, args.turns)) for label, cls in modes.items()}
    a = results["(a) as shipped"]
    print(f"{args.turns} turns, o200k_base tokens, cache model: >= 1,024-token prefix, 5 min TTL\n")
    print(
        f"{'':28}{'requests':>9}{'input tokens':>14}{'vs (a)':>8}{'cached':>9}"
        f"{'uncached':>10}{'vs (a)':>8}{'schema/request':>16}{'vs (a)':>8}"
        f"{'system/request':>16}{'breaks':>8}"
    )
    for label, r in results.items():
        print(
            f"{label:28}{r['requests']:>9}{r['input']:>14,}{r['input'] / a['input']:>8.2f}"
            f"{r['share'] * 100:>8.1f}%{r['uncached']:>10,}{r['uncached'] / a['uncached']:>8.2f}"
            f"{r['schema_mean']:>16,.0f}{r['schema_mean'] / a['schema_mean']:>8.2f}"
            f"{r['system_mean']:>16,.0f}{r['breaks']:>8}"
        )
    c = results["(c) all tools loaded"]
    cut = 1 - a["schema_mean"] / c["schema_mean"]
    print(f"\ntool-schema tokens per request, (a) against (c): {cut * 100:.1f}% fewer")
    print(
        f"(a) per request: {a['schema_min']:,} (no set active) to {a['schema_max']:,}; "
        f"(c): {c['schema_mean']:,.0f} on every request; the fewest (a) sends is "
        f"{(1 - a['schema_min'] / c['schema_mean']) * 100:.1f}% fewer"
    )
    print("\nprice in uncached-token units, cache reads at 10% (Anthropic) and 50% (OpenAI):")
    for label, r in results.items():
        low, high = (r["uncached"] + rate * r["cached"] for rate in (0.1, 0.5))
        low_a, high_a = (a["uncached"] + rate * a["cached"] for rate in (0.1, 0.5))
        print(f"  {label:28}{low:>12,.0f} ({low / low_a:.2f}){high:>12,.0f} ({high / high_a:.2f})")
    for label, r in results.items():
        print(f"\n{label}: {r['breaks']} breaks, {r['lost']:,} tokens after them; most often:")
        for what, times in r["breakers"]:
            print(f"  {times:>3}x {what}")
    for label in ("(a) as shipped", "(c) all tools loaded"):
        print(f"\n{label}: tool-schema tokens per request, by card")
        for card, tokens in results[label]["schema_by_card"]:
            print(f"  {tokens:>8,.0f}  {card}")


if __name__ == "__main__":
    main()
