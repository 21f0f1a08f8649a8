"""A team card's mcp_config: resolved beside the YAML, attached to every agent at creation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from akgentic.agent import AgentConfig
from akgentic.team import TeamCard
from akgentic.team.mcp import attach_mcp_servers
from akgentic.tool.mcp import MCPConfigError, MCPStdioConnectionConfig, MCPTool

CARD = """
name: docs
entry_point: "@Lead"
mcp_config: servers/mcp.json
members:
  - card:
      role: Lead
      config:
        name: "@Lead"
        tools:
          - type: MCPTool
            name: files
            connection: {stdio_command: own-files-server}
    members:
      - card:
          role: Helper
          config: {name: "@Helper"}
profiles:
  - role: Reviewer
    config: {name: "@Reviewer"}
"""


def write_team(tmp_path: Path) -> Path:
    (tmp_path / "servers").mkdir()
    servers = {
        "files": {"command": "team-files-server"},
        "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"T": "${GIT_TOKEN}"}},
    }
    (tmp_path / "servers" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    path = tmp_path / "team.yaml"
    path.write_text(CARD)
    return path


def servers_of(config: object) -> dict[str, str]:
    assert isinstance(config, AgentConfig)
    return {
        c.server_name: c.connection.stdio_command
        for c in config.tools
        if isinstance(c, MCPTool) and isinstance(c.connection, MCPStdioConnectionConfig)
    }


def test_every_agent_and_profile_gets_the_servers_and_keeps_its_own(tmp_path: Path) -> None:
    card = TeamCard.from_yaml(write_team(tmp_path))
    assert card.mcp_config == str((tmp_path / "servers" / "mcp.json").resolve())
    attach_mcp_servers(card)
    lead, helper = card.members[0], card.members[0].members[0]
    assert servers_of(lead.card.config) == {"files": "own-files-server", "git": "uvx"}
    assert servers_of(helper.card.config) == {"files": "team-files-server", "git": "uvx"}
    assert servers_of(card.profiles[0].config) == {"files": "team-files-server", "git": "uvx"}
    git = next(c for c in helper.card.config.tools if isinstance(c, MCPTool) and c.name == "git")
    assert git.connection.stdio_env == {"T": "${GIT_TOKEN}"}  # type: ignore[union-attr]


def test_a_card_without_mcp_config_is_left_alone(tmp_path: Path) -> None:
    card = TeamCard.from_yaml(write_team(tmp_path))
    card.mcp_config = None
    attach_mcp_servers(card)
    assert servers_of(card.members[0].members[0].card.config) == {}


def test_an_unreadable_mcp_config_fails_team_creation_naming_the_file(tmp_path: Path) -> None:
    card = TeamCard.from_yaml(write_team(tmp_path))
    (tmp_path / "servers" / "mcp.json").write_text('{"mcpServers": {"x": {"cmd": "a"}}}')
    with pytest.raises(MCPConfigError, match=r"mcp\.json: server 'x': 1 unknown key cmd"):
        attach_mcp_servers(card)
