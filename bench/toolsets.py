"""Benchmark: tool-schema tokens per request, every tool loaded against dynamic toolsets.

Run: ``.venv/bin/python bench/toolsets.py`` (a script, not a test; needs bpe-openai, in the
``dev`` and ``tokens`` extras).

Ten toolsets of six tools each (list / get / create / update / delete / search over ten
nouns, Google-style docstrings with argument descriptions, as a real card writes them). The
same sixty tools run two ways through real pydantic-ai runs whose FunctionModel records
every request it is sent:

- **all loaded** — the sixty tools given to the agent as plain tools (the baseline);
- **toolsets** — the same cards in ten ToolsetCards behind ``DynamicToolsets``: the
  request carries ``enable_toolset`` / ``disable_toolset`` and the active sets' tools, and
  the frozen system prompt carries the catalog.

What is counted: each request's tool list serialized as OpenAI's chat-completions
``tools`` array (``{"type": "function", "function": {name, description, parameters}}``,
compact JSON), and its instructions, in ``o200k_base`` tokens (``akgentic.llm.count_tokens``).
Providers render tools their own way internally; the JSON is what is sent, and the ratio is
what this measures.

The cache part. Tools come first in the cached prefix at the providers that cache
(Anthropic: tools, then system, then messages; OpenAI: the whole prompt, tools included, as
one prefix). So a request whose tool list differs from the previous one's re-reads the
whole prompt uncached from the first changed tool on. The script simulates a 20-request
conversation (300 tokens of history added per request; one set enabled at request 4, a
second at request 12, the first one expiring at request 16) with an idealised prefix cache
— a request's cached part is its longest common prefix with the previous request, counted
in tokens — and reports input tokens, uncached tokens, and a price-weighted sum for cache
reads at 10% (Anthropic) and 50% (OpenAI) of the uncached price.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

from akgentic.agent.accounting import tool_json
from akgentic.agent.capabilities import dynamic_toolsets
from akgentic.llm import token_counter
from akgentic.tool.core import ToolCard
from akgentic.tool.toolsets import ToolsetCard

SETS = [
    ("crm", "contact", "Customers and contacts: find, read and edit contact records"),
    ("billing", "invoice", "Invoices: list, read, issue, correct and void invoices"),
    ("calendar", "event", "The team calendar: events, their times and attendees"),
    ("docs", "document", "The document library: read, write and search documents"),
    ("email", "message", "The shared mailbox: read, draft and file messages"),
    ("files", "file", "The project's files: list, read, write and remove files"),
    ("tickets", "ticket", "Support tickets: triage, update and close tickets"),
    ("inventory", "item", "Stock: items, quantities and locations"),
    ("hr", "employee", "People records: employees, roles and leave"),
    ("analytics", "report", "Reports and dashboards: run, read and schedule reports"),
]

PROMPT = "You are @Assistant, the team's assistant. Answer briefly; use tools when needed."


def _tool(name: str, doc: str, params: list[tuple[str, Any, Any, str]]) -> Callable[..., Any]:
    """A plain function ``name(**params)`` with a real signature and a Google docstring."""

    def tool(**kwargs: Any) -> str:
        return json.dumps(kwargs)

    parameters = [
        inspect.Parameter(
            p, inspect.Parameter.KEYWORD_ONLY, annotation=t, default=inspect.Parameter.empty
        )
        if d is inspect.Parameter.empty
        else inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=t, default=d)
        for p, t, d, _ in params
    ]
    tool.__name__ = tool.__qualname__ = name
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = {p: t for p, t, _, _ in params} | {"return": str}
    args = "\n".join(f"    {p}: {text}" for p, _, _, text in params)
    tool.__doc__ = f"{doc}\n\nArgs:\n{args}\n" if params else doc
    return tool


def _verbs(noun: str) -> list[Callable[..., Any]]:
    required = inspect.Parameter.empty
    return [
        _tool(
            "list",
            f"List the {noun}s, newest first, one page at a time.",
            [
                ("limit", int, 20, f"How many {noun}s to return (1 to 100)."),
                ("cursor", str | None, None, "The cursor of the next page, from a previous call."),
            ],
        ),
        _tool(
            "get",
            f"One {noun} by its id, with every field.",
            [("id", str, required, f"The {noun}'s id.")],
        ),
        _tool(
            "create",
            f"Create a {noun}; returns its id.",
            [
                ("title", str, required, f"The {noun}'s title, one line."),
                ("body", str, required, "The full text."),
                ("tags", list[str], [], "Labels to file it under."),
            ],
        ),
        _tool(
            "update",
            f"Change the given fields of a {noun}; the others stay as they are.",
            [
                ("id", str, required, f"The {noun}'s id."),
                ("title", str | None, None, "The new title."),
                ("body", str | None, None, "The new text."),
            ],
        ),
        _tool(
            "delete",
            f"Delete a {noun} for good.",
            [
                ("id", str, required, f"The {noun}'s id."),
                ("confirm", bool, required, "Must be true: deleting cannot be undone."),
            ],
        ),
        _tool(
            "search",
            f"Search {noun}s by the words in their title or body.",
            [
                ("query", str, required, "Words to look for."),
                ("limit", int, 10, "How many results at most."),
            ],
        ),
    ]


class Verbs(ToolCard):
    """Six tools over one noun."""

    noun: str

    def get_tools(self) -> list[Callable[..., Any]]:
        return _verbs(self.noun)


def tools_json(tools: list[ToolDefinition]) -> str:
    """The request's ``tools`` array, as the prompt accounting counts each entry."""
    return "[" + ",".join(tool_json(t) for t in tools) + "]"


def record(agent: Agent[None, str], calls: list[list[ToolCallPart]]) -> list[AgentInfo]:
    """Run ``agent``; its model makes ``calls`` one step each, then answers. The requests."""
    infos: list[AgentInfo] = []
    steps = list(calls)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        return ModelResponse(parts=steps.pop(0) if steps else [TextPart("done")])

    agent.model = FunctionModel(model)
    agent.run_sync("go")
    return infos


def measure() -> dict[str, Any]:
    count = token_counter(exact=True).count
    cards = [
        ToolsetCard(name=name, description=description, cards=[Verbs(noun=noun)])
        for name, noun, description in SETS
    ]
    groups = [g for card in cards for g in card.get_toolsets()]
    all_loaded = Agent(  # every group, ungated: the same sixty tools, same names, every request
        FunctionModel(lambda m, i: ModelResponse(parts=[])), instructions=PROMPT, toolsets=groups
    )
    [baseline] = record(all_loaded, [])

    capability, _ = dynamic_toolsets(groups)
    assert capability is not None
    instructions = f"{PROMPT}\n\n{capability.catalog()}"
    gated = Agent(
        FunctionModel(lambda m, i: ModelResponse(parts=[])),
        instructions=instructions,
        capabilities=[capability],
    )
    enable = [[ToolCallPart("enable_toolset", {"name": n})] for n in ("crm", "billing", "docs")]
    requests = record(gated, enable)
    none_active, one, two, three = requests[:4]

    def tokens(info: AgentInfo) -> tuple[int, int, int]:
        tools = count(tools_json(info.function_tools))
        return len(info.function_tools), tools, count(info.instructions or "")

    per_set = count(tools_json([t for t in one.function_tools if t.name.startswith("crm_")]))
    return {
        "baseline": tokens(baseline),
        "none": tokens(none_active),
        "one": tokens(one),
        "two": tokens(two),
        "three": tokens(three),
        "per_set": per_set,
        "catalog": count(capability.catalog()),
        "json": {
            "baseline": tools_json(baseline.function_tools),
            "none": tools_json(none_active.function_tools),
            "one": tools_json(one.function_tools),
            "two": tools_json(two.function_tools),
            # crm expired, billing still active: two's list without crm's tools
            "billing": tools_json([t for t in two.function_tools if not t.name.startswith("crm_")]),
        },
        "instructions": {"baseline": baseline.instructions or "", "gated": instructions},
    }


def _common_prefix(a: str, b: str) -> str:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return a[:i]


def conversation(m: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Twenty requests with an idealised prefix cache (see the module docstring)."""
    count = token_counter(exact=True).count
    turn = " ".join(["word"] * 300)  # 300 tokens of history per request
    schedule = {
        "all loaded": ["baseline"] * 20,
        "toolsets": ["none"] * 3 + ["one"] * 8 + ["two"] * 4 + ["billing"] * 5,
    }
    wire = m["json"]
    results: dict[str, dict[str, float]] = {}
    for mode, keys in schedule.items():
        system = m["instructions"]["baseline" if mode == "all loaded" else "gated"]
        previous = ""
        total = uncached = 0
        for index, key in enumerate(keys):
            text = f"{wire[key]}\n{system}\n{turn * (index + 1)}"
            size = count(text)
            cached = count(_common_prefix(previous, text)) if previous else 0
            total += size
            uncached += size - cached
            previous = text
        cached_total = total - uncached
        results[mode] = {
            "input": total,
            "uncached": uncached,
            "anthropic": uncached + 0.1 * cached_total,
            "openai": uncached + 0.5 * cached_total,
        }
    return results


def main() -> None:
    m = measure()
    base_tools = m["baseline"][1]
    print(f"tool schemas per request (o200k_base tokens), {len(SETS)} sets x 6 tools\n")
    print(f"{'':<28}{'tools':>6}{'schema tokens':>15}{'ratio':>8}{'instructions':>14}")
    rows = [
        ("all loaded (baseline)", m["baseline"]),
        ("toolsets, none active", m["none"]),
        ("toolsets, 1 set active", m["one"]),
        ("toolsets, 2 sets active", m["two"]),
        ("toolsets, 3 sets active", m["three"]),
    ]
    for label, (n, tools, prompt) in rows:
        print(f"{label:<28}{n:>6}{tools:>15,}{tools / base_tools:>8.2f}{prompt:>14,}")
    print(
        f"\none active set's six tools: {m['per_set']} tokens; the catalog: {m['catalog']} tokens"
    )
    print("\n20-request conversation, idealised prefix cache:")
    conv = conversation(m)
    base = conv["all loaded"]
    for mode, r in conv.items():
        print(
            f"  {mode:<11} input {r['input']:>9,.0f}  uncached {r['uncached']:>8,.0f}"
            f" ({r['uncached'] / base['uncached']:.2f})  price@10% {r['anthropic']:>9,.0f}"
            f" ({r['anthropic'] / base['anthropic']:.2f})  price@50% {r['openai']:>9,.0f}"
            f" ({r['openai'] / base['openai']:.2f})"
        )


if __name__ == "__main__":
    main()
