"""``GET /teams/{id}/usage``: the prompt economy of a team on a server, the same report
``akgentic usage --json`` prints, through the real server and client; a compaction's
summary request included."""

from __future__ import annotations

import httpx
import pytest

from akgentic.agent.accounting import UsageReport
from akgentic.client import ServerError
from akgentic.team import team_usage
from tests.server.conftest import Served, kind, until
from tests.server.test_conversation import data


def test_the_usage_of_a_team_adds_up_its_accounted_requests(served: Served) -> None:
    team = served.client.create_team("analyst")
    message_id = team.send("study actors")
    seen = until(
        team,
        lambda r: kind(r) == "End" and getattr(r.message.event, "turn_id", None) == message_id,  # type: ignore[union-attr]
    )
    accounted = [
        r.message.event  # type: ignore[union-attr]
        for r in seen
        if kind(r) == "PromptAccountingEvent"
    ]
    assert accounted, "every model request is a PromptAccountingEvent on the stream"

    report = team.usage()
    assert report == team_usage(served.storage, team.team_id, "analyst")
    [member] = report.members
    assert member.name == "@Analyst" and member.requests == len(accounted)
    assert report.input_tokens == sum(e.input_tokens for e in accounted)
    cards = {c.card for c in member.cards}
    assert {"PlanningTool", "KnowledgeGraphTool", "(history)"} <= cards
    assert report.team == "analyst"

    raw = httpx.get(f"{served.url}/teams/{team.team_id}/usage", timeout=10)
    assert raw.status_code == 200
    assert UsageReport.model_validate(raw.json()) == report
    assert "__model__" not in raw.text


def test_the_usage_of_a_team_counts_its_summary_requests(served: Served) -> None:
    team = served.client.create_team("analyst")
    message_id = team.send("study actors")
    seen = until(
        team,
        lambda r: kind(r) == "End" and getattr(r.message.event, "turn_id", None) == message_id,  # type: ignore[union-attr]
    )
    command_id = team.command("/compact")
    seen += until(
        team,
        lambda r: kind(r) == "Message" and data(r)["parentId"] == str(command_id),
        from_seq=seen[-1].seq + 1,
    )
    assert data(seen[-1])["content"].startswith("Compacted ")
    accounted = [
        r.message.event  # type: ignore[union-attr]
        for r in seen
        if kind(r) == "PromptAccountingEvent"
    ]
    assert [e.kind for e in accounted][-1] == "summary"  # on the stream before the answer
    summary = accounted[-1]

    report = team.usage()
    assert report == team_usage(served.storage, team.team_id, "analyst")
    assert report.requests == len(accounted)
    assert report.input_tokens == sum(e.input_tokens for e in accounted)
    assert report.kinds["summary"].requests == 1
    assert report.kinds["summary"].input_tokens == summary.input_tokens
    [member] = report.members
    assert member.channels["summary"] == summary.input_tokens


def test_a_team_that_made_no_request_has_an_empty_report(served: Served) -> None:
    team = served.client.create_team("research")
    report = team.usage()
    assert (report.requests, report.members) == (0, [])


def test_the_usage_of_an_unknown_team_is_404(served: Served) -> None:
    raw = httpx.get(f"{served.url}/teams/00000000-0000-0000-0000-000000000000/usage", timeout=10)
    assert raw.status_code == 404
    assert "teams" in raw.json()["detail"]
    with pytest.raises(ServerError) as caught:
        served.client.get_team("00000000-0000-0000-0000-000000000000")
    assert caught.value.status == 404
