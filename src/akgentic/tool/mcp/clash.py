"""A tool name two MCP servers of one agent would both offer, found when the team starts.

Every tool of an agent needs a name of its own: pydantic-ai refuses a request whose tools
share one, so a clash would fail the agent's first turn, and every turn after it. Two
servers wired to one agent under one name or one prefix are refused at wiring
(``MCPTool.observer``); what each server *serves* is known only once it runs — and a
server starts at the agent's first turn, not before. :func:`tool_name_clash` therefore
starts, lists and closes the servers whose names can meet, before any agent starts, and
says the first name two of them share in one line. A resume does the same
(``akgentic.team.mcp.resumed_tool_name_clash``): a server started anew may serve other
tools than it did, and the line then says what can be done, a stored team's cards being
as they were created.

Only those servers are started: listing every server at team creation would cost each
team a start of each (seconds for ``npx``), for clashes default names rule out. A tool of
server ``s`` with prefix ``p`` is named ``p_<tool>`` (``<tool>`` when ``p`` is empty), so
two servers' names can meet only when one has no prefix, or one's ``p_`` begins the
other's (``a`` + ``b__c`` and ``a__b`` + ``c`` are both ``a__b__c``). Servers keep their
default prefixes (``<name>_``) and distinct names without ``__``: nothing is started.

A server's tool named as a tool of another of the agent's cards (``tool_prefix=""`` beside
a card's ``greet``) is found alike: the cards' tools (its class's own cards too:
``TeamTool``, ``MailboxTool``) are named as the team is created (:func:`card_tools`), and a
server is started to be listed when it has no prefix or when one of those names begins
with its ``<prefix>_``. What is not known before the agent runs
— a toolset card's groups, a card whose tools need the running agent, a catalog instance
(``CatalogTool``, built at wiring) — is found at the agent's first turn, which fails in
one line naming both and the card setting to change.

A server that cannot be started or listed here is passed over: its failure is said when
an agent starts it, as ever (a server that cannot start is never fatal).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import anyio

from akgentic.tool.core.card import ToolCard
from akgentic.tool.mcp.mcp import MCPTool
from akgentic.tool.mcp.toolset import callable_name, list_server_tools, rename_hint

__all__ = [
    "AgentServers",
    "MCPToolNameClashError",
    "can_meet",
    "can_meet_tool",
    "card_tools",
    "tool_name_clash",
]


class MCPToolNameClashError(ValueError):
    """Two MCP servers of one agent serve a tool under one name; the message says which,
    and the card setting that renames one's tools."""


@dataclass(frozen=True)
class AgentServers:
    """One agent's MCP server cards (``agent``: its name, for the line), in card order,
    and the tools of its other cards (:func:`card_tools`: name to card)."""

    agent: str
    servers: Sequence[MCPTool]
    tools: Mapping[str, str] = field(default_factory=dict)


def card_tools(cards: Sequence[ToolCard]) -> dict[str, str]:
    """The names of the tools ``cards`` (those that are not ``MCPTool``) give an agent, each
    to the card giving it (its class name): what a copy of each card's ``get_tools()``
    names without an agent (the card itself is left as the agent will find it). A card
    that cannot name its tools without one is passed over (a clash with its tools is found
    at the agent's first turn)."""
    named: dict[str, str] = {}
    for card in cards:
        if isinstance(card, MCPTool):
            continue
        try:
            tools = card.model_copy(deep=True).get_tools()
        except Exception:  # it needs the running agent: see the docstring
            continue
        for tool in tools:
            named.setdefault(getattr(tool, "__name__", ""), type(card).__name__)
    named.pop("", None)
    return named


def can_meet(first: MCPTool, second: MCPTool) -> bool:
    """Whether a tool of ``first`` and one of ``second`` can end up with one name (see the
    module docstring)."""
    if not first.prefix or not second.prefix:
        return True
    one, other = f"{first.prefix}_", f"{second.prefix}_"
    return one.startswith(other) or other.startswith(one)


def can_meet_tool(server: MCPTool, tool: str) -> bool:
    """Whether a tool of ``server`` can be offered under the name ``tool``."""
    return not server.prefix or tool.startswith(f"{server.prefix}_")


def tool_name_clash(
    agents: Sequence[AgentServers], hint: Callable[[str, str], str] = rename_hint
) -> str | None:
    """The first tool name one agent would be offered twice — by two of its servers, or by
    a server and another card — in one line naming the agent, both sources, the tool and
    what to do: ``hint(server, prefix)`` for the server whose tools would be renamed (by
    default the card setting to change: :func:`rename_hint`); None when there is none (or
    when the servers that could clash cannot be listed).

    Starts each server whose names can meet another's (:func:`can_meet`) or a card's tool
    (:func:`can_meet_tool`) once, all at once, in an event loop of its own on a thread of
    its own (the caller may have one running); each bounded by its ``connect_timeout`` and
    ``call_timeout``.
    """
    pairs = [
        (agent, first, second)
        for agent in agents
        for i, first in enumerate(agent.servers)
        for second in agent.servers[i + 1 :]
        if can_meet(first, second)
    ]
    beside = [
        (agent, server)
        for agent in agents
        for server in agent.servers
        if any(can_meet_tool(server, tool) for tool in agent.tools)
    ]
    if not pairs and not beside:
        return None
    cards = {_key(card): card for _, first, second in pairs for card in (first, second)}
    cards |= {_key(server): server for _, server in beside}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-tool-names") as pool:
        listed = pool.submit(anyio.run, _list_all, cards).result()
    for agent, server in beside:
        served = listed.get(_key(server))
        if served is None:
            continue
        named = _named(server, served)
        shared = sorted(named.keys() & agent.tools.keys())
        if shared:
            name = shared[0]
            return (
                f"{agent.agent}: MCP server {server.server_name!r} "
                f"({server.connection.describe()}) serves a tool named {name!r} (its "
                f"{named[name]!r}), as its card {agent.tools[name]} does; the agent's first "
                f"turn would fail. " + hint(server.server_name, server.prefix)
            )
    for agent, first, second in pairs:
        ours, theirs = listed.get(_key(first)), listed.get(_key(second))
        if ours is None or theirs is None:
            continue
        one, other = _named(first, ours), _named(second, theirs)
        shared = sorted(one.keys() & other.keys())
        if shared:
            name = shared[0]
            return (
                f"{agent.agent}: MCP servers {first.server_name!r} "
                f"({first.connection.describe()}) and {second.server_name!r} "
                f"({second.connection.describe()}) both serve a tool named {name!r} (their "
                f"{one[name]!r} and {other[name]!r}); the agent's first turn would fail. "
                + hint(second.server_name, second.prefix)
            )
    return None


def _key(card: MCPTool) -> str:
    """One server, however many agents hold a copy of its card: its name and connection."""
    return f"{card.server_name}:{card.connection.model_dump_json()}"


def _named(card: MCPTool, tools: list[str]) -> dict[str, str]:
    """The names ``card``'s tools are offered under (those a model accepts), to the server's."""
    prefixed = {f"{card.prefix}_{tool}" if card.prefix else tool: tool for tool in tools}
    return {name: tool for name, tool in prefixed.items() if callable_name(name)}


async def _list_all(cards: dict[str, MCPTool]) -> dict[str, list[str] | None]:
    """Each card's server's tools, listed at once; None for one that could not be."""
    listed: dict[str, list[str] | None] = {}

    async def one(key: str, card: MCPTool) -> None:
        try:
            listed[key] = (await list_server_tools(card.server_name, card.connection)).names
        except Exception:  # said when an agent starts it (see the module docstring)
            listed[key] = None

    async with anyio.create_task_group() as group:
        for key, card in cards.items():
            group.start_soon(one, key, card)
    return listed
