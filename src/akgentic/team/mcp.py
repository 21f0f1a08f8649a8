"""A team's MCP servers: one ``mcp.json`` for the whole team, one connection per agent.

:func:`attach_mcp_servers` reads the team card's ``mcp_config`` (or the file ``akgentic run
--mcp-config`` / ``AKGENTIC_MCP_CONFIG`` names) when the team is created and adds an
``MCPTool`` per server to every agent member and every profile. The cards carry ``${VAR}``
references as written, so what the team stores holds no secret; each agent expands them
from its own environment when it connects. A member that lists its own MCPTool of the same
name keeps its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from akgentic.agent import AgentConfig
from akgentic.core import AgentCard
from akgentic.core.agent import actor_class_for
from akgentic.team.card import MemberSpec, TeamCard
from akgentic.tool.mcp import MCPTool
from akgentic.tool.mcp.clash import (
    AgentServers,
    MCPToolNameClashError,
    card_tools,
    tool_name_clash,
)

__all__ = ["attach_mcp_servers", "give_mcp_servers"]


def attach_mcp_servers(card: TeamCard) -> None:
    """Give every agent member and profile of ``card`` its ``mcp_config`` servers, then
    refuse a card where one agent would be offered two tools under one name (by two of its
    servers, or by a server and another card).

    Raises ``MCPConfigError`` (a ValueError) naming the file and the server when the file
    cannot be used, and ``MCPToolNameClashError`` (a ValueError) naming the agent, both
    sources and the tool — at team creation, before any member starts. Only servers whose
    names can meet another's, or a card's tool, are started to be listed
    (``akgentic.tool.mcp.clash``): with the default prefixes and names without ``__``, none
    is.
    """
    if card.mcp_config:
        give_mcp_servers(card, MCPTool.from_config(card.mcp_config))
    agents = [servers_of(agent) for agent in _agent_cards(card)]
    clash = tool_name_clash([a for a in agents if a is not None])
    if clash is not None:
        raise MCPToolNameClashError(f"team {card.name}: {clash}")


def servers_of(agent: AgentCard) -> AgentServers | None:
    """The MCP servers of ``agent`` (None: it has none, or is not an agent) and the tools
    its other cards give it — its class's own cards (``default_cards``: ``TeamTool``,
    ``MailboxTool``) included, as the agent adds them when it starts."""
    config = agent.config
    if not isinstance(config, AgentConfig):
        return None
    servers = [c for c in config.tools if isinstance(c, MCPTool)]
    if not servers:
        return None
    cards = list(config.tools)
    try:
        defaults = getattr(actor_class_for(agent.agent_class), "default_cards", ())
    except LookupError:  # refused with its reason where the team starts it
        defaults = ()
    for default in defaults:
        if not any(isinstance(c, default) for c in cards):
            cards.append(default())
    return AgentServers(config.name or f"@{agent.role}", servers, card_tools(cards))


def _agent_cards(card: TeamCard) -> list[AgentCard]:
    """Every member spec's agent card (parents first), then every profile."""
    found: list[AgentCard] = []

    def visit(specs: list[MemberSpec]) -> None:
        for spec in specs:
            found.append(spec.card)
            visit(spec.members)

    visit(card.members)
    return found + list(card.profiles)


def give_mcp_servers(card: TeamCard, servers: Sequence[MCPTool]) -> None:
    """Add a copy of each of ``servers`` to every agent member and profile of ``card``,
    but for a name the agent already has a server under (the first one given stays):
    how ``akgentic serve --mcp-config`` gives every team the server's MCP servers."""
    for config in card.configs():
        if not isinstance(config, AgentConfig):
            continue
        own = {c.server_name for c in config.tools if isinstance(c, MCPTool)}
        config.tools.extend(s.model_copy(deep=True) for s in servers if s.server_name not in own)
