"""A ``detail`` reads as words for a person — the web page shows it verbatim, the CLI and
the client too: an unknown model provider, a malformed command, a malformed team id and a
pydantic error from deep inside say what to do on one line, never pydantic's own text
(its title line, ``[type=…]``, a link to errors.pydantic.dev)."""

from __future__ import annotations

import json
import sys
import uuid
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from akgentic.core.serialization import serialize
from akgentic.server import ServerSettings
from akgentic.team import TeamCard
from tests.server.conftest import TURNS, Served, serve_cards

KNOWN = "openai, anthropic, google, openai-compatible, ollama, scripted, test, registered"


def _said(response: httpx.Response, status: int = 422) -> str:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail
    assert "pydantic" not in detail and "[type=" not in detail and "validation error" not in detail
    return detail


def test_an_unknown_model_provider_names_the_known_ones(served: Served) -> None:
    body = {"card": "research", "model": "nosuchprovider:xyz"}
    detail = _said(httpx.post(f"{served.url}/teams", json=body, timeout=30))
    assert detail == (
        "the team cannot start: unknown model provider 'nosuchprovider' in "
        f"'nosuchprovider:xyz'; known providers: {KNOWN}; e.g. 'openai:gpt-5.2' or "
        "'scripted:default'"
    )
    assert served.client.list_teams() == []  # nothing started


def test_a_roster_the_model_validators_refuse_is_one_line(served: Served) -> None:
    """A ``ValidationError`` raised inside the manager (a ``ValueError``) reaches the
    ``detail`` as ``field: message``."""
    body = {"card": "research", "model": "scripted:default, scripted:default"}
    detail = _said(httpx.post(f"{served.url}/teams", json=body, timeout=30))
    assert detail == (
        "the team cannot start: models: model 'scripted:default' is listed twice: list "
        "each model once"
    )


def test_a_posted_cards_model_spec_says_the_validators_words(served: Served) -> None:
    """A validator's own words, without pydantic's ``Value error, `` before them."""
    config = {"name": "@A", "models": "acme:x"}
    member = {
        "card": {"role": "A", "agent_class": "akgentic.agent.agent.BaseAgent", "config": config}
    }
    card = {"name": "x", "entry_point": "@A", "members": [member]}
    detail = _said(httpx.post(f"{served.url}/teams", json={"card": card}, timeout=30))
    assert detail == (
        "the card is not valid: members.0.card.config.models: unknown model provider 'acme' in "
        f"'acme:x'; known providers: {KNOWN}; e.g. 'openai:gpt-5.2' or 'scripted:default'"
    )


def test_a_posted_cards_misspelt_keys_are_all_said_with_what_each_was_meant_to_be(
    served: Served,
) -> None:
    """Every bad tool card of a posted card at once, each misspelt key with the field of
    its own card class it was likely meant to be, as a YAML file says them."""
    tools = [
        {"type": "PlanningTool", "get_planing": True},
        {"type": "PlanningTool"},
        {"type": "NotificationTool", "pending_notifcation": False},
    ]
    config = {"name": "@A", "tools": tools}
    member = {
        "card": {"role": "A", "agent_class": "akgentic.agent.agent.BaseAgent", "config": config}
    }
    card = {"name": "x", "entry_point": "@A", "members": [member]}
    detail = _said(httpx.post(f"{served.url}/teams", json={"card": card}, timeout=30))
    assert detail.startswith("the card is not valid: ")
    assert (
        "members.0.card.config.tools.0.get_planing: Extra inputs are not permitted; did you "
        "mean 'get_planning'" in detail
    )
    assert (
        "config.tools.2.pending_notifcation: Extra inputs are not permitted; did you mean "
        "'pending_notification'?" in detail
    )
    assert served.client.list_teams() == []


def test_a_serialized_card_that_does_not_validate_is_one_line(served: Served) -> None:
    """The framework's serialized form: its class's validation, not "stored … does not
    validate: 1 validation error for …" with pydantic's lines and link."""
    card = serialize(TeamCard.from_yaml(TURNS))
    card["members"][0]["card"]["config"]["models"]["models"][0]["temperature"] = 9
    detail = _said(httpx.post(f"{served.url}/teams", json={"card": card}, timeout=30))
    assert detail == (
        "the card does not decode: ModelConfig: temperature: Input should be less than or "
        "equal to 2"
    )


def test_a_serialized_cards_misspelt_key_says_what_it_was_meant_to_be(served: Served) -> None:
    """The serialized form is said as the plain form is: a misspelt key of a class inside it
    with that class's field it was likely meant to be."""
    card = serialize(TeamCard.from_yaml(TURNS))
    card["members"][0]["card"]["config"]["models"]["models"][0]["temprature"] = 0.5
    detail = _said(httpx.post(f"{served.url}/teams", json={"card": card}, timeout=30))
    assert detail == (
        "the card does not decode: ModelConfig: temprature: Extra inputs are not permitted; "
        "did you mean 'temperature'?"
    )


@pytest.mark.parametrize("command", ["/ spaced", "/", "help", "/\tx"])
def test_a_malformed_command_says_what_a_command_is(served: Served, command: str) -> None:
    url = f"{served.url}/teams/{uuid.uuid4()}/commands"
    detail = _said(httpx.post(url, json={"command": command}, timeout=30))
    assert detail == (
        "the request is not valid: command: a command is '/' and its name, with no space "
        "between, e.g. /help"
    )


@pytest.mark.parametrize(
    ("path", "quoted"),
    [
        ("/teams/not-a-uuid", "'not-a-uuid'"),
        ("/teams/12345/members", "'12345'"),
        ("/teams/%1b%5b31mred/events", "'\\x1b[31mred'"),
        (f"/teams/{'x' * 200}", f"'{'x' * 78}… (202 characters)"),
    ],
)
def test_a_malformed_team_id_is_quoted_and_points_at_the_list(
    served: Served, path: str, quoted: str
) -> None:
    detail = _said(httpx.get(f"{served.url}{path}", timeout=30))
    assert detail == f"{quoted} is not a team id (a UUID); list the teams with GET /teams"


def test_a_malformed_team_id_comes_before_the_bodys_problems(served: Served) -> None:
    """No team to send the message to: fixing the body would not help."""
    response = httpx.post(f"{served.url}/teams/nope/messages", json={"content": ""}, timeout=30)
    detail = _said(response)
    assert detail == "'nope' is not a team id (a UUID); list the teams with GET /teams"
    assert {tuple(e["loc"]) for e in response.json()["errors"]} >= {("path", "team_id")}


def test_a_posted_cards_own_mistake_is_said_beside_its_members_config_mistake(
    served: Served,
) -> None:
    """Both mistakes at once, the config's at its full path and not again at the card's."""
    member = {"card": {"role": "A", "config": {"name": "@A", "promt": "hi"}}}
    card = {"name": "x", "entry_point": "@A", "members": [member], "descripton": "d"}
    detail = _said(httpx.post(f"{served.url}/teams", json={"card": card}, timeout=30))
    assert detail.startswith("the card is not valid: ")
    assert (
        "members.0.card.config.promt: Extra inputs are not permitted; did you mean 'prompt'?"
        in detail
    )
    assert "descripton: Extra inputs are not permitted; did you mean 'description'?" in detail
    assert "members.0.card.promt" not in detail
    assert served.client.list_teams() == []


MCP_CARD = """
name: docs
entry_point: "@Lead"
members:
  - card:
      role: Lead
      config:
        name: "@Lead"
        models: "scripted:default"
        tools:
          - {{type: MCPTool, name: one, tool_prefix: docs, connection: {one}}}
          - {{type: MCPTool, name: two, tool_prefix: docs_web, connection: {two}}}
"""

RAW_SERVER = Path(__file__).parents[1] / "tool" / "mcp" / "raw_server.py"


def test_a_resume_whose_mcp_servers_now_clash_is_a_409_saying_what_can_be_done(
    tmp_path: Path,
) -> None:
    """Server 'one' serves web_search after the first run: 'docs_web_search', as 'two'
    names its search; the resume is refused, the team kept, and resumed once 'one' serves
    what it served."""
    listings = {name: tmp_path / f"{name}.tools.json" for name in ("one", "two")}
    schema = {"type": "object"}
    listings["one"].write_text(json.dumps([{"name": "echo", "inputSchema": schema}]))
    listings["two"].write_text(json.dumps([{"name": "search", "inputSchema": schema}]))
    connections = {
        name: json.dumps(
            {
                "stdio_command": sys.executable,
                "stdio_args": [str(RAW_SERVER)],
                "stdio_env": {"RAW_TOOLS": str(listing)},
            }
        )
        for name, listing in listings.items()
    }
    card = tmp_path / "docs.yaml"
    card.write_text(MCP_CARD.format(**connections))
    with closing(serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5), (card,))) as it:
        served = next(it)
        team = served.client.create_team("docs")
        served.client.stop_team(team.team_id)
        last = served.storage.events.last_seq(team.team_id)
        newer = [{"name": n, "inputSchema": schema} for n in ("echo", "web_search")]
        listings["one"].write_text(json.dumps(newer))

        url = f"{served.url}/teams/{team.team_id}/resume"
        detail = _said(httpx.post(url, json={}, timeout=60), 409)

        assert detail.startswith(
            f"team {team.team_id} cannot be resumed: team docs: @Lead: MCP servers 'one' ("
        )
        assert detail.endswith(
            "the agent's first turn would fail. A stored team's cards cannot be changed, and "
            "its MCP servers are listed anew at each resume: have them serve the tools they "
            "served when the team was created (the server's earlier version, say) and resume "
            "again, or create a new team from its card with another tool_prefix for MCP "
            "server 'two'."
        )
        assert served.storage.events.last_seq(team.team_id) == last
        assert served.client.info(team.team_id).status == "STOPPED"
        listings["one"].write_text(json.dumps(newer[:1]))
        assert httpx.post(url, json={}, timeout=60).status_code == 200
        assert served.client.info(team.team_id).running
