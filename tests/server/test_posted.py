"""What a posted card may reach on the server host, through the real app on a real socket:
no process started, no server file read outside the cards folders, no endpoint or server
variable chosen — each refused with a 403 naming the field and the ``--allow-posted``
value — unless the operator allows that reach; registered cards stay trusted."""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from akgentic.core.serialization import serialize
from akgentic.server import CardRegistry, ServerSettings
from akgentic.server.posted import PostedCardPolicy, PostedCardRefusedError
from akgentic.team import TeamCard
from tests.server.conftest import REPO, RESEARCH, Served, kind, serve_cards, until

EXAMPLES = REPO / "examples" / "teams"
REFUSAL = "a posted card is data and may not reach the server host: "


def probe(config: dict[str, Any], **card: Any) -> dict[str, Any]:
    """A one-member card whose member config has ``config`` on top of the basics."""
    base = {"name": "@A", "role": "A", "prompt": {"template": "hi"}}
    return {
        "name": "probe",
        "entry_point": "@A",
        "members": [{"card": {"role": "A", "config": {**base, **config}}}],
        **card,
    }


def post(served: Served, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{served.url}/teams", json=body, timeout=60)


def refused(served: Served, body: dict[str, Any]) -> str:
    """The detail of a 403 refusal; no team was created."""
    before = len(served.client.list_teams())
    response = post(served, body)
    assert response.status_code == 403, response.text
    assert len(served.client.list_teams()) == before
    detail: str = response.json()["detail"]
    assert detail.startswith(REFUSAL)
    return detail


@contextmanager
def serving(folder: Path, settings: ServerSettings, cards: CardRegistry) -> Iterator[Served]:
    yield from serve_cards(folder, settings, cards)


def touching(marker: Path) -> dict[str, Any]:
    return {
        "type": "MCPTool",
        "connection": {"stdio_command": "touch", "stdio_args": [str(marker)]},
    }


def test_a_posted_card_never_starts_a_process_on_the_server(served: Served, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    card = probe({"tools": [touching(marker)]})
    for body in ({"card": card}, {"card_yaml": yaml.safe_dump(card)}):
        detail = refused(served, body)
        assert (
            "members[0].card.config.tools[0].connection.stdio_command starts a process on the "
            "server (touch; --allow-posted processes)"
        ) in detail
        assert detail.endswith(
            "Register the card with the server (akgentic serve --cards), or let posted cards "
            "do this (akgentic serve --allow-posted processes)"
        )
    assert not marker.exists()


def test_the_operator_may_let_posted_cards_start_processes(
    serve_with: Callable[[ServerSettings], Served], tmp_path: Path
) -> None:
    served = serve_with(ServerSettings(port=0, allow_posted=["processes"]))
    marker = tmp_path / "started"
    response = post(served, {"card": probe({"tools": [touching(marker)]})})
    assert response.status_code == 201, response.text
    team = served.client.get_team(response.json()["team_id"])
    team.send("hi")  # the agent connects to its MCP server on its first turn
    until(team, lambda r: kind(r) == "MCPServerUnavailable")  # touch is no server
    assert marker.exists()


@pytest.mark.parametrize(
    ("config", "field", "named"),
    [
        ({"models": "scripted:/etc/passwd"}, "config.models.models[0].model", "/etc/passwd"),
        (
            {"models": "scripted:../../../../../../../etc/passwd", "scenario_dir": str(EXAMPLES)},
            "config.models.models[0].model",
            "../etc/passwd",
        ),
        (
            {"models": "scripted:passwd", "scenario_dir": "/etc"},
            "config.models.models[0].model",
            "passwd",
        ),
        (
            {"tools": [{"type": "SkillTool", "skills": {"folders": [str(REPO / "src")]}}]},
            "config.tools[0].skills.folders[0]",
            str(REPO / "src"),
        ),
        (
            {
                "tools": [
                    {
                        "type": "WorkspaceTool",
                        "vector_store": {"embedding": {"provider": "local", "model": "/opt"}},
                    }
                ]
            },
            "config.tools[0].vector_store.embedding.model",
            "/opt",
        ),
    ],
)
def test_a_posted_card_reads_no_server_path_outside_the_cards_folders(
    served: Served, config: dict[str, Any], field: str, named: str
) -> None:
    detail = refused(served, {"card": probe(config)})
    assert f"members[0].card.{field} reads a server path outside the cards folders (" in detail
    assert named in detail and "--allow-posted paths)" in detail


def test_an_mcp_config_outside_the_cards_folders_is_a_path_and_processes(served: Served) -> None:
    detail = refused(served, {"card": probe({}, mcp_config="/etc/passwd")})
    assert "mcp_config reads a server path outside the cards folders (/etc/passwd;" in detail
    assert "mcp_config starts a process on the server (the servers of that file;" in detail
    assert detail.endswith("(akgentic serve --allow-posted processes --allow-posted paths)")


def folder_server(tmp_path: Path, *paths: Path, **settings: Any) -> AbstractContextManager[Served]:
    """A server whose cards come from ``paths`` as ``akgentic serve --cards`` loads them."""
    registry = CardRegistry()
    registry.load(paths)
    assert registry.problems == []
    return serving(tmp_path, ServerSettings(port=0, **settings), registry)


def test_what_the_cards_folders_hold_a_posted_card_may_use(tmp_path: Path) -> None:
    inside = probe(
        {
            "role": "Worker",  # a role the scenario scripts
            "models": "scripted:research.scenario.yaml",
            "scenario_dir": str(EXAMPLES),
            "tools": [{"type": "SkillTool", "skills": {"folders": [str(EXAMPLES / "skills")]}}],
        },
        mcp_config=str(EXAMPLES / "glossary.mcp.json"),
    )
    with folder_server(tmp_path, EXAMPLES) as served:  # akgentic serve --cards examples/teams
        response = post(served, {"card": inside})
        assert response.status_code == 201, response.text
        card = served.client.get_team(response.json()["team_id"]).card
    [config] = card.configs()
    assert "glossary" in {getattr(t, "name", None) for t in config.tools}  # the file's server


def test_a_card_file_named_alone_opens_only_what_it_reads(served: Served) -> None:
    # served knows research.yaml, analyst.yaml and turns.yaml as cards, not their folders
    read = probe(
        {
            "role": "Worker",
            "models": "scripted:research.scenario.yaml",
            "scenario_dir": str(EXAMPLES),
        }
    )
    assert post(served, {"card": read}).status_code == 201
    beside = probe({"models": "scripted:coder.scenario.yaml", "scenario_dir": str(EXAMPLES)})
    assert "(scripted:coder.scenario.yaml; --allow-posted paths)" in refused(
        served, {"card": beside}
    )


@pytest.mark.parametrize(
    ("config", "field", "named"),
    [
        (
            {
                "models": {
                    "models": [
                        {
                            "provider": "openai-compatible",
                            "model": "m",
                            "base_url": "http://169.254.169.254/v1",
                        }
                    ]
                }
            },
            "config.models.models[0].base_url",
            "http://169.254.169.254/v1",
        ),
        (
            {
                "models": {
                    "models": [
                        {"provider": "openai", "model": "m", "api_key_env": "AWS_SECRET_ACCESS_KEY"}
                    ]
                }
            },
            "config.models.models[0].api_key_env",
            "AWS_SECRET_ACCESS_KEY",
        ),
        (
            {
                "tools": [
                    {
                        "type": "MCPTool",
                        "connection": {
                            "url": "http://10.0.0.1/mcp",
                            "headers": {"X-Key": "${OPENAI_API_KEY}"},
                        },
                    }
                ]
            },
            "config.tools[0].connection.url",
            "http://10.0.0.1/mcp",
        ),
        (
            {"tools": [{"type": "SearchTool", "api_base_url": "http://10.0.0.1"}]},
            "config.tools[0].api_base_url",
            "http://10.0.0.1",
        ),
        (
            {"tools": [{"type": "SearchTool", "api_key_env": "OPENAI_API_KEY"}]},
            "config.tools[0].api_key_env",
            "OPENAI_API_KEY",
        ),
        (
            {
                "tools": [
                    {
                        "type": "WorkspaceTool",
                        "vector_store": {
                            "embedding": {
                                "provider": "openai-compatible",
                                "base_url": "http://10.0.0.1/v1",
                            }
                        },
                    }
                ]
            },
            "config.tools[0].vector_store.embedding.base_url",
            "http://10.0.0.1/v1",
        ),
        (
            {"tools": [{"type": "WorkspaceTool", "workspace_exec": {"network": True}}]},
            "config.tools[0].workspace_exec.network",
            "network access for commands",
        ),
    ],
)
def test_a_posted_card_chooses_no_endpoint_and_no_server_variable(
    served: Served, config: dict[str, Any], field: str, named: str
) -> None:
    detail = refused(served, {"card": probe(config)})
    assert f"members[0].card.{field} chooses where the server sends requests" in detail
    assert f"({named}; --allow-posted endpoints)" in detail


def test_the_operator_may_let_posted_cards_choose_endpoints(
    serve_with: Callable[[ServerSettings], Served],
) -> None:
    served = serve_with(ServerSettings(port=0, allow_posted=["endpoints"]))
    model = {"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    response = post(served, {"card": probe({"models": {"models": [model]}})})
    assert response.status_code == 201, response.text  # built, never contacted
    detail = refused(served, {"card": probe({"models": "scripted:/etc/passwd"})})
    assert "--allow-posted paths" in detail  # the other reaches stay closed


def test_a_refusal_names_every_field_and_flag(served: Served, tmp_path: Path) -> None:
    model = {"provider": "ollama", "model": "m", "base_url": "http://10.0.0.1/v1"}
    card = probe({"models": {"models": [model]}, "tools": [touching(tmp_path / "x")]})
    detail = refused(served, {"card": card})
    assert "models.models[0].base_url chooses" in detail
    assert "tools[0].connection.stdio_command starts a process" in detail
    assert detail.endswith("(akgentic serve --allow-posted processes --allow-posted endpoints)")


def test_a_model_override_names_no_scenario_outside_the_cards_folders(served: Served) -> None:
    response = post(served, {"card": "research", "model": "scripted:/etc/passwd"})
    assert response.status_code == 403 and not served.client.list_teams(), response.text
    detail = response.json()["detail"]
    assert "model reads a server path outside the cards folders (scripted:/etc/passwd;" in detail
    assert detail.startswith("the request's model may not reach")  # the card is registered:
    assert "posted card" not in detail and "--cards" not in detail  # nothing to register
    beside = post(served, {"card": "research", "model": "scripted:research.scenario.yaml"})
    assert beside.status_code == 201, beside.text  # relative to the registered card's folder


def test_registered_cards_stay_trusted_and_links_out_of_the_folder_do_not(
    tmp_path: Path,
) -> None:
    cards = tmp_path / "cards"
    cards.mkdir()
    marker = tmp_path / "registered-started"
    registered = probe({"tools": [touching(marker)]})
    registered["name"] = "operators"
    (cards / "operators.yaml").write_text(yaml.safe_dump(registered))
    (cards / "local.scenario.yaml").write_text('default: {text: "[scripted] local"}\n')
    outside = tmp_path / "secret.scenario.yaml"
    outside.write_text('default: {text: "[scripted] secret"}\n')
    (cards / "link.scenario.yaml").symlink_to(outside)

    with folder_server(tmp_path, cards) as served:
        assert post(served, {"card": "operators"}).status_code == 201  # the operator's card
        as_posted = serialize(TeamCard.from_yaml(cards / "operators.yaml"))
        assert "stdio_command starts a process" in refused(served, {"card": as_posted})

        local = probe({"models": "scripted:local.scenario.yaml", "scenario_dir": str(cards)})
        assert post(served, {"card": local}).status_code == 201
        linked = probe({"models": "scripted:link.scenario.yaml", "scenario_dir": str(cards)})
        detail = refused(served, {"card": linked})
        assert "(scripted:link.scenario.yaml; --allow-posted paths)" in detail


def test_a_card_file_posted_from_the_servers_folder_is_accepted(served: Served) -> None:
    team = served.client.create_team(RESEARCH)  # as `akgentic run CARD --server URL` does
    assert team.info.card_name == "research"
    card = TeamCard.from_yaml(RESEARCH)
    PostedCardPolicy(folders=(EXAMPLES.resolve(),)).check(card, posted=True)
    with pytest.raises(PostedCardRefusedError) as elsewhere:
        PostedCardPolicy().check(card, posted=True)  # a server with no cards folder
    assert {r.reach for r in elsewhere.value.refused} == {"paths"}


LATE_CARD = '''
from akgentic.tool import ToolCard


class {name}(ToolCard):
    """A card whose module the server imported after it started (as the catalog's
    discovery or a stored team's read would): its fields could reach anything."""

    url: str = "http://inside.example"

    def get_tools(self):
        return []
'''


@pytest.mark.parametrize("form", ["named", "serialized"])
def test_a_posted_card_uses_no_card_class_loaded_after_the_server_started(
    serve_with: Callable[[ServerSettings], Served],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    form: str,
) -> None:
    """A card class the server did not start with is not a posted card's, whichever way
    the card spells it, unless ``--allow-posted cards``: by its dotted path it is not
    found (422); carried by the framework's ``__model__`` form it is the ``cards`` reach
    (403 naming the field and the class)."""
    strict = serve_with(ServerSettings(port=0))
    lenient = serve_with(ServerSettings(port=0, allow_posted=["cards"]))
    module = f"late_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(LATE_CARD.format(name="LateCard"))
    monkeypatch.syspath_prepend(str(tmp_path))
    late = importlib.import_module(module).LateCard  # loaded after both servers started

    tools: list[Any] = [{"type": f"{module}.LateCard"}]
    body: dict[str, Any] = {"card": probe({"tools": tools})}
    if form == "serialized":
        card = TeamCard.model_validate(probe({"tools": [late()]}))
        body = {"card": serialize(card)}
    try:
        if form == "named":  # not found among the classes the server started with
            response = post(strict, body)
            assert response.status_code == 422, response.text
            assert (
                f"unknown tool card '{module}.LateCard': the server did not start with it; "
                "a posted card names only the cards the server started with"
            ) in response.json()["detail"]
        else:  # carried by its __model__: found, and refused by the policy
            detail = refused(strict, body)
            assert (
                f"config.tools[0] uses a card class loaded after the server started, whose "
                f"fields this policy does not know ({module}.LateCard; --allow-posted cards)"
            ) in detail
            assert "or start it with the card class's module (--import MODULE)" in detail
            assert detail.endswith("(akgentic serve --allow-posted cards)")

        assert post(lenient, body).status_code == 201  # the operator allowed it
        assert post(strict, {"card": probe({"tools": ["PlanningTool"]})}).status_code == 201
    finally:
        sys.modules.pop(module, None)


def test_posted_card_yaml_over_the_yaml_size_limit_is_refused_unparsed() -> None:
    """The server's body limit (1 MiB by default) binds first; past a raised --max-body,
    the YAML limit still does, with the same words as a card file's."""
    from akgentic.core import MAX_YAML_BYTES
    from akgentic.server.cards import CardError, card_from_yaml

    with pytest.raises(CardError) as refused:
        card_from_yaml("[" * (MAX_YAML_BYTES + 1))
    (line,) = str(refused.value).splitlines()
    assert line.startswith(f"card_yaml: {MAX_YAML_BYTES + 1:,} bytes (4.0 MiB), over akgentic's")


def test_a_cards_folder_entry_that_is_a_device_is_skipped_not_read(
    tmp_path: Path,
) -> None:
    """A link to ``/dev/zero`` in a cards folder (its size says 0, and it never ends) is
    skipped with a line, unread, instead of filling the server's memory."""
    folder = tmp_path / "cards"
    folder.mkdir()
    (folder / "zero.yaml").symlink_to("/dev/zero")
    registry = CardRegistry()
    registry.load([folder])
    [problem] = registry.problems
    assert problem == (
        f"card skipped: {folder / 'zero.yaml'}: cannot read the team card: a character "
        f"device, not a file: name the YAML file itself"
    )
