"""A team card's mcp_config: resolved beside the YAML, attached to every agent at creation."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from akgentic.agent import AgentConfig
from akgentic.core import ActorSystem
from akgentic.team import TeamCard
from akgentic.team.mcp import attach_mcp_servers
from akgentic.tool.mcp import MCPConfigError, MCPStdioConnectionConfig, MCPTool

from ...agent.conftest import Script
from ...core.conftest import Team
from .conftest import SERVER
from .test_agent import ask, call, say_result, start, stop

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


INLINE = """
name: inline
entry_point: "@Lead"
members:
  - card:
      role: Lead
      config:
        name: "@Lead"
        tools:
          - type: MCPTool
            name: calc
            connection: {stdio_command: PYTHON, stdio_args: [servers/server.py]}
          - type: MCPTool
            name: below
            connection: {stdio_command: PYTHON, stdio_cwd: servers}
          - type: MCPTool
            name: pinned
            connection: {stdio_command: PYTHON, stdio_cwd: /srv/mcp}
"""


def test_an_inline_stdio_server_runs_in_the_yaml_folder_from_any_folder(
    system: ActorSystem, team: Team, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio server an MCPTool of a team YAML starts runs in the YAML's folder, as one an
    mcp.json lists runs in that file's: its relative arguments are the YAML's, whatever
    folder akgentic runs from (moving a server from the mcp.json into the YAML to give it
    a tool_prefix kept working only from the YAML's own folder)."""
    home = tmp_path / "team"
    (home / "servers").mkdir(parents=True)
    shutil.copy(SERVER, home / "servers" / "server.py")
    (home / "team.yaml").write_text(INLINE.replace("PYTHON", sys.executable))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    card = TeamCard.from_yaml(Path("../team/team.yaml"))

    calc, below, pinned = card.members[0].card.config.tools  # type: ignore[attr-defined]
    folder = home.resolve()
    assert calc.connection.stdio_cwd == str(folder)
    assert below.connection.stdio_cwd == str(folder / "servers")
    assert pinned.connection.stdio_cwd == "/srv/mcp"
    script = Script(call("calc__add", a=2, b=3), say_result)
    agent = start(system, team, script, calc)
    assert ask(system, agent, "add") == "got: 5"
    stop(system, agent)
