"""A team's MCP servers: one ``mcp.json`` for the whole team, one connection per agent.

:func:`attach_mcp_servers` reads the team card's ``mcp_config`` (or the file ``akgentic run
--mcp-config`` / ``AKGENTIC_MCP_CONFIG`` names) when the team is created and adds an
``MCPTool`` per server to every agent member and every profile. The cards carry ``${VAR}``
references as written, so what the team stores holds no secret; each agent expands them
from its own environment when it connects. A member that lists its own MCPTool of the same
name keeps its own.

A resumed team is checked alike (:func:`resumed_tool_name_clash`, before any member
starts): its servers are started anew and may serve other tools than they did.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from akgentic.agent import AgentConfig
from akgentic.core import AgentCard, BaseConfig
from akgentic.core.agent import actor_class_for
from akgentic.team.card import MemberSpec, TeamCard
from akgentic.tool.core import ToolCard
from akgentic.tool.mcp import MCPStdioConnectionConfig, MCPTool
from akgentic.tool.mcp.clash import (
    AgentServers,
    MCPToolNameClashError,
    card_tools,
    tool_name_clash,
)
from akgentic.tool.mcp.config import in_folder
from akgentic.tool.toolsets import ToolsetCard

__all__ = [
    "attach_mcp_servers",
    "give_mcp_servers",
    "resolve_server_folders",
    "resumed_tool_name_clash",
]


def resolve_server_folders(config: Any, base: Path) -> None:
    """A stdio server an MCPTool of ``config`` starts runs in ``base`` (a team YAML's
    folder), as one an ``mcp.json`` lists runs in that file's: no ``stdio_cwd`` is the
    folder, a relative one is under it, both made absolute now — so ``stdio_args:
    [servers/mine.py]`` means the same from any folder, and moving a server from the
    ``mcp.json`` beside the YAML into the YAML (to give it a ``tool_prefix``) keeps its
    paths working."""
    folder = base.resolve()
    for card in _mcp_cards(getattr(config, "tools", None) or []):
        connection = card.connection
        if isinstance(connection, MCPStdioConnectionConfig):
            connection.stdio_cwd = in_folder(connection.stdio_cwd, folder)


def _mcp_cards(cards: Sequence[ToolCard]) -> Iterator[MCPTool]:
    for card in cards:
        if isinstance(card, MCPTool):
            yield card
        elif isinstance(card, ToolsetCard):
            yield from _mcp_cards(card.cards)


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


def resumed_tool_name_clash(name: str, agents: Sequence[tuple[str, str, BaseConfig]]) -> str | None:
    """:func:`attach_mcp_servers`'s check for team ``name`` being resumed, its ``agents``
    (each its name, class path and configuration, as it will start) all that will run or
    may be hired: the line to refuse the resume with, None when nothing clashes.

    The servers are started anew and may serve other tools than when the team was created
    (a newer version); the way on cannot be the card's ``tool_prefix``, which a stored
    team keeps as it was created, so the line says what can be done
    (:func:`resume_hint`)."""
    found = [agent_servers(*agent) for agent in agents]
    clash = tool_name_clash([a for a in found if a is not None], resume_hint)
    return None if clash is None else f"team {name}: {clash}"


def resume_hint(server: str, prefix: str) -> str:
    """What to do when a resumed team's MCP server ``server`` (its card's ``prefix``) serves
    a tool under another's name: a stored team's cards cannot be changed (its members start
    from the configurations its log holds), so either the servers serve what they served
    when the team was created, or a new team is created with another prefix."""
    which = "another" if prefix else "a"
    return (
        "A stored team's cards cannot be changed, and its MCP servers are listed anew at "
        "each resume: have them serve the tools they served when the team was created (the "
        "server's earlier version, say) and resume again, or create a new team from its "
        f"card with {which} tool_prefix for MCP server {server!r}."
    )


def servers_of(agent: AgentCard) -> AgentServers | None:
    """:func:`agent_servers` of a card's ``agent``."""
    return agent_servers(agent.config.name or f"@{agent.role}", agent.agent_class, agent.config)


def agent_servers(name: str, agent_class: str, config: BaseConfig) -> AgentServers | None:
    """The MCP servers of the agent ``name`` (None: it has none, or is not an agent) and
    the tools its other cards give it — its class's own cards (``default_cards``:
    ``TeamTool``, ``MailboxTool``) included, as the agent adds them when it starts."""
    if not isinstance(config, AgentConfig):
        return None
    servers = [c for c in config.tools if isinstance(c, MCPTool)]
    if not servers:
        return None
    cards = list(config.tools)
    try:
        defaults = getattr(actor_class_for(agent_class), "default_cards", ())
    except LookupError:  # refused with its reason where the team starts it
        defaults = ()
    for default in defaults:
        if not any(isinstance(c, default) for c in cards):
            cards.append(default())
    return AgentServers(name, servers, card_tools(cards))


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
