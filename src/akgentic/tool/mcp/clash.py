"""A tool name two MCP servers of one agent would both offer, found when the team starts.

Every tool of an agent needs a name of its own: pydantic-ai refuses a request whose tools
share one, so a clash would fail the agent's first turn, and every turn after it. Two
servers wired to one agent under one name or one prefix are refused at wiring
(``MCPTool.observer``); what each server *serves* is known only once it runs — and a
server starts at the agent's first turn, not before. :func:`tool_name_clash` therefore
starts, lists and closes the servers whose names can meet, before any agent starts, and
says the first name two of them share in one line.

Only those servers are started: listing every server at team creation would cost each
team a start of each (seconds for ``npx``), for clashes default names rule out. A tool of
server ``s`` with prefix ``p`` is named ``p_<tool>`` (``<tool>`` when ``p`` is empty), so
two servers' names can meet only when one has no prefix, or one's ``p_`` begins the
other's (``a`` + ``b__c`` and ``a__b`` + ``c`` are both ``a__b__c``). Servers keep their
default prefixes (``<name>_``) and distinct names without ``__``: nothing is started.

A server that cannot be started or listed here is passed over: its failure is said when
an agent starts it, as ever (a server that cannot start is never fatal). A clash between
a server's tool and another card's tool (``tool_prefix=""`` beside a card's ``greet``) is
not found here — that card's tools exist only in a running agent — but at the agent's
first turn, in one line naming both and the card setting to change.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import anyio

from akgentic.tool.mcp.mcp import MCPTool
from akgentic.tool.mcp.toolset import callable_name, list_server_tools, rename_hint

__all__ = ["AgentServers", "MCPToolNameClashError", "can_meet", "tool_name_clash"]


class MCPToolNameClashError(ValueError):
    """Two MCP servers of one agent serve a tool under one name; the message says which,
    and the card setting that renames one's tools."""


@dataclass(frozen=True)
class AgentServers:
    """One agent's MCP server cards (``agent``: its name, for the line), in card order."""

    agent: str
    servers: Sequence[MCPTool]


def can_meet(first: MCPTool, second: MCPTool) -> bool:
    """Whether a tool of ``first`` and one of ``second`` can end up with one name (see the
    module docstring)."""
    if not first.prefix or not second.prefix:
        return True
    one, other = f"{first.prefix}_", f"{second.prefix}_"
    return one.startswith(other) or other.startswith(one)


def tool_name_clash(agents: Sequence[AgentServers]) -> str | None:
    """The first tool name two servers of one agent would both offer, in one line naming
    the agent, both servers, their own names of the tool and the setting to change; None
    when there is none (or when the servers that could clash cannot be listed).

    Starts each server whose names can meet another's (:func:`can_meet`) once, all at
    once, in an event loop of its own on a thread of its own (the caller may have one
    running); each bounded by its ``connect_timeout`` and ``call_timeout``.
    """
    pairs = [
        (agent, first, second)
        for agent in agents
        for i, first in enumerate(agent.servers)
        for second in agent.servers[i + 1 :]
        if can_meet(first, second)
    ]
    if not pairs:
        return None
    cards = {_key(card): card for _, first, second in pairs for card in (first, second)}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-tool-names") as pool:
        listed = pool.submit(anyio.run, _list_all, cards).result()
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
                + rename_hint(second.server_name, second.prefix)
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
            listed[key] = await list_server_tools(card.server_name, card.connection)
        except Exception:  # said when an agent starts it (see the module docstring)
            listed[key] = None

    async with anyio.create_task_group() as group:
        for key, card in cards.items():
            group.start_soon(one, key, card)
    return listed
