"""``GET /teams`` page by page: a page's ``next`` cursor starts the next page right after
its last team, so a team created or deleted between two pages neither repeats an entry
nor hides one (an offset did both); the offset still works."""

from __future__ import annotations

from typing import Any

import pytest

from akgentic.client import TeamPage
from akgentic.client import client as client_module
from tests.server.conftest import Served


@pytest.mark.parametrize("meanwhile", ["created", "deleted"])
def test_list_teams_reads_each_team_once_when_one_is_created_or_deleted_between_pages(
    served: Served, monkeypatch: pytest.MonkeyPatch, meanwhile: str
) -> None:
    """Pages of two: after the first page ([third, second]), a fourth team is created
    (the offset's second page repeated ``second``) or ``third`` is deleted (it skipped
    ``first``). Each team is listed once, newest first; the new one is not (it came after
    the first page was read)."""
    first, second, third = (served.client.create_team("turns") for _ in range(3))
    monkeypatch.setattr(client_module, "TEAMS_PAGE", 2)
    real = served.client.request_json
    pages: list[TeamPage] = []

    def paged(method: str, path: str, shape: type[Any], **kwargs: Any) -> Any:
        answer = real(method, path, shape, **kwargs)
        if path == "/teams" and method == "GET":
            pages.append(answer)
            if len(pages) == 1 and meanwhile == "created":
                served.manager.create_team(served.app.state.context.cards.get("turns"))
            elif len(pages) == 1:
                served.manager.delete_team(third.team_id)
        return answer

    monkeypatch.setattr(served.client, "request_json", paged)
    listed = [t.team_id for t in served.client.list_teams()]

    assert listed == [third.team_id, second.team_id, first.team_id]
    assert len(pages) == 2 and pages[-1].next is None


def test_a_page_by_offset_still_reads_and_a_cursor_not_the_servers_is_a_422(
    served: Served,
) -> None:
    teams = [served.client.create_team("turns").team_id for _ in range(3)]
    newest = teams[::-1]
    page = served.client.request("GET", "/teams", params={"limit": 1, "offset": 1}).json()
    assert [t["team_id"] for t in page["items"]] == [str(newest[1])]
    assert page["total"] == 3 and page["next"] is not None
    rest = served.client.request("GET", "/teams", params={"after": page["next"]}).json()
    assert [t["team_id"] for t in rest["items"]] == [str(newest[2])]
    assert rest["total"] == 3 and rest["next"] is None
    for cursor in ("nonsense", f"2026-01-01T00:00:00,{newest[0]}", "2026-01-01T00:00:00+00:00,x"):
        answer = served.client.request("GET", "/teams", params={"after": cursor}, allow=(422,))
        assert answer.status_code == 422
        assert answer.json()["detail"] == (
            f"after={cursor!r} is not a cursor this server gave: pass the 'next' of the page "
            f"before as it is, or leave 'after' out to start from the newest team"
        )


def test_list_teams_reads_an_older_servers_pages_by_offset(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server older than the cursor sends no ``next``: every page is read by offset."""
    teams = [served.client.create_team("turns").team_id for _ in range(3)]
    monkeypatch.setattr(client_module, "TEAMS_PAGE", 2)
    real = served.client.request_json

    def older(method: str, path: str, shape: type[Any], **kwargs: Any) -> Any:
        assert "after" not in kwargs.get("params", {})
        answer = real(method, path, shape, **kwargs)
        if isinstance(answer, TeamPage):  # as an older server's JSON reads: no 'next' key
            return TeamPage.model_validate(answer.model_dump(exclude={"next"}))
        return answer

    monkeypatch.setattr(served.client, "request_json", older)
    assert [t.team_id for t in served.client.list_teams()] == teams[::-1]
