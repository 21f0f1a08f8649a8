"""A team card names a catalog instance: the credential reaches the tool at wiring time
and is never written to the team card, the event log, the logs or the audit (the stored
bytes of a real SQLite file are searched) — a test card's, SearchTool's against the
loopback Tavily; an MCP instance's server reaches the agent; refusals at creation,
degradation afterwards."""

from __future__ import annotations

import logging
import sqlite3
import sys
from pathlib import Path

import pytest

from akgentic.catalog import CatalogService, CatalogTool, CatalogToolUnavailable, SecretBox
from akgentic.core import EventMessage, StartMessage
from akgentic.storage import SqliteStorage
from akgentic.team import TeamCard, TeamManager
from tests.catalog.conftest import ADMIN, stored_bytes
from tests.catalog.tooltypes import key_digest
from tests.team.test_shared_state import answer
from tests.tool.mcp.conftest import SERVER
from tests.tool.search.tavily_server import KEY as TAVILY_KEY
from tests.tool.search.tavily_server import serve as serve_tavily

DATA = Path(__file__).resolve().parent / "data"
SECRET = "sk-vault-LIVE-5b8e0c7d13f2"


def enable_vault(catalog: CatalogService) -> None:
    catalog.configure(ADMIN, "vault", {"label": "east"})
    catalog.set_credential(ADMIN, "vault", SECRET)
    catalog.enable(ADMIN, "vault")


def test_the_credential_reaches_the_tool_and_no_stored_byte_holds_it(
    manager: TeamManager,
    catalog: CatalogService,
    storage: SqliteStorage,
    box: SecretBox,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    enable_vault(catalog)
    card = TeamCard.from_yaml(DATA / "vault.yaml")

    runtime = manager.create_team(card)
    runtime.send("please open the vault")
    _, text = answer(runtime, 0)
    assert text == f"[scripted] the vault east opened with key {key_digest(SECRET)}"
    manager.shutdown()

    record = storage.teams.get(runtime.team_id)
    assert record is not None
    [tools] = [m["card"]["config"]["tools"] for m in record.card["members"]]
    assert [{k: v for k, v in t.items() if k != "__model__"} for t in tools] == [
        {"instance": "vault"}
    ]
    starts = [
        r.message.config
        for r in storage.events.read(runtime.team_id)
        if isinstance(r.message, StartMessage) and r.message.config.name == "@Keeper"
    ]
    assert [type(t) for t in starts[0].tools] == [CatalogTool]  # type: ignore[attr-defined]
    assert all(SECRET not in line.model_dump_json() for line in catalog.audit(ADMIN))
    storage.close()

    everything = stored_bytes(storage.path.parent)
    assert key_digest(SECRET).encode() in everything  # the log was searched: the answer is in it
    assert b'"instance":"vault"' in everything
    assert SECRET.encode() not in everything
    assert SECRET not in caplog.text


def test_a_search_instance_s_key_reaches_tavily_and_no_stored_byte_holds_it(
    manager: TeamManager,
    catalog: CatalogService,
    storage: SqliteStorage,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)  # the catalog's key or none
    with serve_tavily() as tavily:
        catalog.configure(ADMIN, "web_search", {"api_base_url": tavily.url, "web_crawl": False})
        catalog.set_credential(ADMIN, "web_search", TAVILY_KEY)
        catalog.enable(ADMIN, "web_search")
        _, probed = catalog.probe(ADMIN, "web_search", timeout=10)
        runtime = manager.create_team(TeamCard.from_yaml(DATA / "search.yaml"))
        runtime.send("please search the web")
        _, text = answer(runtime, 0)
    manager.shutdown()

    assert probed.status == "active" and probed.detail.startswith("Tavily accepted the key")
    assert text.startswith('[scripted] Web search "actor model": 2 results.')
    assert [(path, auth) for path, _, auth in tavily.requests] == [
        ("/usage", f"Bearer {TAVILY_KEY}"),
        ("/search", f"Bearer {TAVILY_KEY}"),
    ]
    assert all(TAVILY_KEY not in line.model_dump_json() for line in catalog.audit(ADMIN))
    storage.close()
    everything = stored_bytes(storage.path.parent)
    assert b"https://actors.example/intro" in everything  # the answer is in the log searched
    assert b'"instance":"web_search"' in everything
    assert TAVILY_KEY.encode() not in everything
    assert TAVILY_KEY not in caplog.text


def test_an_mcp_instance_s_server_reaches_the_agent(
    manager: TeamManager, catalog: CatalogService
) -> None:
    connection = {"stdio_command": sys.executable, "stdio_args": [str(SERVER)]}
    catalog.configure(ADMIN, "calc", {"name": "calc", "connection": connection}, type_name="mcp")
    catalog.enable(ADMIN, "calc")
    view, probed = catalog.probe(ADMIN, "calc", timeout=20)
    assert (view.status, view.type_name) == ("active", "mcp")
    assert probed.detail.startswith("MCP server 'calc' serves 7 tools: add, greet")

    runtime = manager.create_team(TeamCard.from_yaml(DATA / "mcp.yaml"))
    runtime.send("add two and three")
    _, text = answer(runtime, 0)
    assert text == "[scripted] 5"


def test_creating_a_team_refuses_an_instance_that_cannot_serve(
    manager: TeamManager, catalog: CatalogService, storage: SqliteStorage
) -> None:
    card = TeamCard.from_yaml(DATA / "vault.yaml")
    with pytest.raises(ValueError, match="@Keeper: catalog tool 'vault' is not enabled for agents"):
        manager.create_team(card)
    catalog.enable(ADMIN, "vault")
    with pytest.raises(
        ValueError, match="@Keeper: .*needs its api_key: akgentic catalog set-credential vault"
    ):
        manager.create_team(card)
    unknown = card.model_copy(deep=True)
    unknown.members[0].card.config.tools = [CatalogTool(instance="jira")]  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no tool type or catalog instance is called 'jira'"):
        manager.create_team(unknown)
    assert storage.teams.list() == []


def test_a_tool_disabled_later_is_left_out_on_resume_and_the_agent_goes_on(
    manager: TeamManager, catalog: CatalogService, storage: SqliteStorage
) -> None:
    enable_vault(catalog)
    runtime = manager.create_team(TeamCard.from_yaml(DATA / "vault.yaml"))
    runtime.send("open the vault")
    seq, _ = answer(runtime, 0)
    manager.stop_team(runtime.team_id)
    catalog.disable(ADMIN, "vault")

    resumed = manager.resume_team(runtime.team_id)
    resumed.send("hello again")
    _, text = answer(resumed, seq)
    assert text == "[scripted] keeper: Message from @Human:\nhello again"
    unavailable = [
        r.message.event
        for r in storage.events.read(runtime.team_id, from_seq=seq)
        if isinstance(r.message, EventMessage)
        and isinstance(r.message.event, CatalogToolUnavailable)
    ]
    assert [(e.instance, e.agent) for e in unavailable] == [("vault", "@Keeper")]
    assert "not enabled for agents" in unavailable[0].reason
    manager.shutdown()


def test_a_catalog_tool_with_no_catalog_bound_serves_nothing_and_says_why() -> None:
    class System:
        pass

    class Observer:
        system = System()
        events: list[object] = []

        def notify_event(self, event: object) -> None:
            self.events.append(event)

    observer = Observer()
    card = CatalogTool(instance="vault").observer(observer)
    assert card.card is None and card.get_tools() == [] and card.get_commands() == {}
    [event] = observer.events
    assert isinstance(event, CatalogToolUnavailable)
    assert "no tool catalog is bound" in event.reason


def test_a_row_damaged_later_is_left_out_on_resume_and_the_agent_goes_on(
    manager: TeamManager, catalog: CatalogService, storage: SqliteStorage
) -> None:
    enable_vault(catalog)
    runtime = manager.create_team(TeamCard.from_yaml(DATA / "vault.yaml"))
    runtime.send("open the vault")
    seq, _ = answer(runtime, 0)
    manager.stop_team(runtime.team_id)
    with sqlite3.connect(storage.path) as db:  # a value no version of akgentic wrote
        db.execute("UPDATE akgentic_catalog SET status = 'degraded' WHERE name = 'vault'")

    resumed = manager.resume_team(runtime.team_id)
    resumed.send("hello again")
    _, text = answer(resumed, seq)
    assert text == "[scripted] keeper: Message from @Human:\nhello again"
    [reason] = [
        r.message.event.reason
        for r in storage.events.read(runtime.team_id, from_seq=seq)
        if isinstance(r.message, EventMessage)
        and isinstance(r.message.event, CatalogToolUnavailable)
    ]
    assert "the stored status 'degraded' is not one of" in reason
    assert "akgentic catalog remove vault --force" in reason
    manager.shutdown()
