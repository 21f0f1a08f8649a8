"""Deleting a team from the page, and a team without the plan and graph tools.

Delete asks first, saying what it does, then purges the team: it leaves the list and the
page, and the API no longer has it. A team another live process runs is refused by the
server (409): the page shows the server's words and keeps the team. A team without
``#PlanningTool`` / ``#KnowledgeGraphTool`` is opened without asking for their state (no
404 on the network, no error in the console), and its board and graph tabs say it has
none. A fresh studio team, whose tools have published nothing yet, gets their empty state
(no 404 either), and its first task folds onto it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import ConsoleMessage, Response, expect

from akgentic.server import ServerSettings
from akgentic.team import TeamCard, TeamManager
from tests.server.conftest import TURNS, Served, manager_elsewhere, serve_cards
from tests.web.conftest import STUDIO, Tab
from tests.web.test_page import live, show, studio_tab

expect.set_options(timeout=30_000)


@dataclass
class Site:
    served: Served
    folder: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The studio server, over a store file another manager can open too."""
    folder = tmp_path_factory.mktemp("web-delete")
    for served in serve_cards(folder, ServerSettings(port=0), cards=(STUDIO,)):
        yield Site(served, folder)


@pytest.fixture
def elsewhere(site: Site) -> Iterator[TeamManager]:
    """Another process's manager over the server's store (its own connection and holder)."""
    yield from manager_elsewhere(site.folder)


def listed(tab: Tab, team_id: object) -> Any:
    return tab.page.locator(f"#team-list [data-team='{team_id}']")


def test_delete_asks_then_removes_the_team_from_the_page_and_the_api(site: Site, open_tab) -> None:
    served = site.served
    team, tab = studio_tab(served, open_tab)
    page = tab.page
    expect(listed(tab, team.team_id)).to_have_count(1)

    page.click("#delete-team")  # asked first, saying what it does; cancelled, nothing happens
    dialog = page.locator("#delete-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#delete-name")).to_have_text(team.info.name)
    expect(dialog).to_contain_text("removed from the server's store with all its records")
    page.click("#delete-dialog button[value=cancel]")
    expect(dialog).to_be_hidden()
    assert served.client.info(team.team_id).status == "RUNNING"

    page.click("#delete-team")
    with page.expect_response(lambda r: r.request.method == "DELETE") as answered:
        page.click("#delete-confirm")
    assert answered.value.status == 204
    expect(listed(tab, team.team_id)).to_have_count(0)
    expect(page.locator("#team")).to_be_hidden()
    expect(page.locator("#no-team-note")).to_have_text(f"The team “{team.info.name}” was deleted.")
    expect(page.locator("#flash")).to_be_hidden()
    gone = httpx.get(f"{served.url}/teams/{team.team_id}", timeout=30)
    assert gone.status_code == 404 and gone.json()["code"] == "team_not_found"
    assert [r.method for r in tab.asked(f"/teams/{team.team_id}") if r.method != "GET"] == [
        "DELETE"
    ]

    page.reload()  # no stale team after a reload either, and its address offers no resume
    expect(page.locator("#team-list li").first).to_be_visible()
    expect(listed(tab, team.team_id)).to_have_count(0)
    page.goto(f"{served.url}/#/teams/{team.team_id}/chat")
    expect(page.locator("#flash")).to_contain_text(f"no team {team.team_id}")
    expect(page.locator("#team")).to_be_hidden()
    assert tab.errors == []


def test_a_delete_the_server_refuses_shows_its_reason_and_keeps_the_team(
    site: Site, open_tab, elsewhere: TeamManager
) -> None:
    """A team another live process runs: the server answers 409 naming that process; the
    page says so, in the server's words, and the team stays, in the list and the API."""
    served = site.served
    team_id = elsewhere.create_team(TeamCard.from_yaml(TURNS)).team_id
    tab: Tab = open_tab()
    page = tab.page
    page.goto(f"{served.url}/#/teams/{team_id}/chat")
    live(page)

    page.click("#delete-team")
    with page.expect_response(lambda r: r.request.method == "DELETE") as answered:
        page.click("#delete-confirm")
    assert answered.value.status == 409
    said = answered.value.json()["detail"]
    assert "is running in another process" in said
    expect(page.locator("#flash")).to_have_text(said)
    expect(page.locator("#team")).to_be_visible()
    expect(listed(tab, team_id)).to_have_count(1)
    expect(page.locator("#delete-team")).to_be_focused()
    assert served.client.info(team_id).status == "RUNNING"
    assert tab.errors == []


def troubles(page: Any) -> tuple[list[str], list[str]]:
    """What goes wrong on ``page`` from now on: the answers of 400 and more, and the
    console's errors and warnings (a failed request is one there too)."""
    failed: list[str] = []
    console: list[str] = []

    def answered(response: Response) -> None:
        if response.status >= 400:
            failed.append(f"{response.status} {response.url}")

    def logged(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            console.append(message.text)

    page.on("response", answered)
    page.on("console", logged)
    return failed, console


def test_a_team_without_the_plan_and_graph_tools_says_so_without_a_404(
    site: Site, open_tab
) -> None:
    """Its roster lists neither tool actor: the page does not ask for their state (each
    ask was a 404 in the console), and the board and graph tabs say the team has none; a
    studio team, which has both, gets both asked and neither line."""
    served = site.served
    team_id = served.manager.create_team(TeamCard.from_yaml(TURNS)).team_id
    tab: Tab = open_tab()
    page = tab.page
    failed, console = troubles(page)
    with page.expect_response(lambda r: r.url.endswith(f"/teams/{team_id}/members")):
        page.goto(f"{served.url}/#/teams/{team_id}/chat")
    live(page)
    show(page, "board")
    expect(page.locator("#board-absent")).to_have_text(
        "This team has no planning board (#PlanningTool)."
    )
    expect(page.locator("#board-columns")).to_be_hidden()
    expect(page.locator("#board-owner")).to_be_hidden()
    show(page, "graph")
    expect(page.locator("#graph-absent")).to_have_text(
        "This team has no knowledge graph (#KnowledgeGraphTool)."
    )
    expect(page.locator("#graph-svg")).to_be_hidden()
    expect(page.locator("#graph-search")).to_be_hidden()
    show(page, "roster")
    expect(page.locator("#roster-body [data-member='@Boss']")).to_be_visible()
    assert failed == [] and console == []
    assert tab.asked("/state/") == []
    assert tab.errors == []

    studio = served.client.create_team("studio")
    page.goto(f"{served.url}/#/teams/{studio.team_id}/chat")
    live(page)
    assert {r.url.rsplit("/", 1)[-1] for r in tab.asked(f"/{studio.team_id}/state/")} == {
        "%23PlanningTool",
        "%23KnowledgeGraphTool",
    }
    for view in ("board", "graph"):
        show(page, view)
        expect(page.locator(f"#{view}-absent")).to_be_hidden()
    expect(page.locator("#graph-svg")).to_be_visible()


def test_a_fresh_studio_team_opens_without_a_404_and_folds_its_first_task(
    site: Site, open_tab
) -> None:
    """Its tools have published nothing yet: their state answers the empty plan and graph
    (``last_delta`` 0), no 404 and nothing in the console; the task planned later comes as
    the first delta, folded onto that empty plan: it shows on the board, once."""
    served = site.served
    studio = served.client.create_team("studio")
    tab: Tab = open_tab()
    page = tab.page
    failed, console = troubles(page)
    states: list[Any] = []
    page.on("response", lambda r: states.append(r) if "/state/" in r.url else None)
    page.goto(f"{served.url}/#/teams/{studio.team_id}/board")
    live(page)
    expect(page.locator(".empty-board")).to_be_visible()
    assert sorted((r.status, r.json()["last_delta"]) for r in states) == [(200, 0), (200, 0)]

    studio.send("plan the board")  # the board stays open: the task comes on the stream
    task = page.locator(".column[data-status='todo'] .task")
    expect(task).to_have_count(1)
    expect(task).to_contain_text("#1 Research the board")
    expect(page.locator(".task")).to_have_count(2)
    expect(page.locator(".empty-board")).to_have_count(0)
    assert len(states) == 2  # folded on the snapshot: no fresh one was needed
    assert failed == [] and console == []
    assert tab.errors == []
