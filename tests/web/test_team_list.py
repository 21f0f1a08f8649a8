"""The page's team list holds every team, not the first page of them: a store with more
teams than one ``GET /teams`` page lists its oldest too (the page follows the cursor)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from akgentic.server import ServerSettings
from tests.server.conftest import Served, serve_cards
from tests.web.conftest import STUDIO, Tab

expect.set_options(timeout=30_000)

MANY = 450
"""More teams than two of the page's requests list (200 each)."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve_cards(tmp_path_factory.mktemp("many"), ServerSettings(port=0), cards=(STUDIO,))


def test_the_oldest_of_many_teams_is_listed(site: Served, open_tab) -> None:
    teams = site.storage.teams  # records only: no team needs to run to be listed
    oldest = teams.create("the oldest team")
    for number in range(MANY):
        teams.create(f"team {number}")
    tab: Tab = open_tab()
    page = tab.page

    page.goto(site.url)

    expect(page.locator("#team-list [data-team]")).to_have_count(MANY + 1)
    expect(page.locator(f"#team-list [data-team='{oldest.team_id}']")).to_contain_text(
        "the oldest team"
    )
    assert len(tab.asked("/teams?limit=")) >= 3
    assert tab.errors == []
