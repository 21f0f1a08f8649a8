"""``akgentic usage``: a team's prompt economy from its log, as a table and as JSON — the
requests that wrote a compaction's summary included, before a resume or after it."""

from __future__ import annotations

import json

from akgentic.agent.accounting import PromptAccountingEvent, UsageReport, accounting_events
from akgentic.storage import open_storage

from .conftest import REPO, Invoke

LIBRARIAN = REPO / "examples" / "teams" / "librarian.yaml"


def stored_events(storage_url: str) -> list[PromptAccountingEvent]:
    storage = open_storage(storage_url)
    try:
        [team] = storage.teams.list()
        return accounting_events(r.message for r in storage.events.read(team.team_id))
    finally:
        storage.close()


def test_usage_as_json_adds_up_the_stored_records(cli: Invoke, storage_url: str) -> None:
    ran = cli("run", str(LIBRARIAN), "-m", "plan the archive move")
    assert ran.exit_code == 0, ran.output
    events = stored_events(storage_url)
    assert len(events) == 4  # use_skill, enable_toolset, update_planning, the answer

    result = cli("usage", "librarian", "--json")
    assert result.exit_code == 0, result.output
    report = UsageReport.model_validate(json.loads(result.stdout))
    [member] = report.members
    assert member.name == "@Librarian" and member.requests == 4
    assert report.input_tokens == sum(e.input_tokens for e in events)
    assert report.cached_tokens == sum(e.cached_tokens for e in events)
    cards = {c.card for c in member.cards}
    assert {"ToolsetCard[tasks].PlanningTool", "SkillTool", "TeamTool", "(history)"} <= cards
    [breaker] = member.breakers  # enabling the board added its tools before the rest
    assert (breaker.card, breaker.change, breaker.breaks) == (
        "ToolsetCard[tasks].PlanningTool",
        "added",
        1,
    )
    assert report.team == "librarian"  # the document GET /teams/{id}/usage returns


def test_usage_as_a_table(cli: Invoke, storage_url: str) -> None:
    assert cli("run", str(LIBRARIAN), "-m", "plan the archive move").exit_code == 0
    result = cli("usage", "librarian")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("team librarian (") and "4 model requests" in lines[0]
    assert any(line.startswith("@Librarian (scripted:librarian): 4 requests") for line in lines)
    assert any(line.split()[:1] == ["ToolsetCard[tasks].PlanningTool"] for line in lines)
    assert "  cache broken by:" in lines
    assert any(
        "ToolsetCard[tasks].PlanningTool" in line and "(added): once" in line for line in lines
    )


def test_usage_counts_the_summary_requests_and_names_them(cli: Invoke, storage_url: str) -> None:
    assert cli("run", str(LIBRARIAN), "-m", "plan the archive move").exit_code == 0
    compacted = cli("teams", "resume", "librarian", "-m", "/compact")
    assert compacted.exit_code == 0, compacted.output
    assert "answer: Compacted" in compacted.stdout
    events = stored_events(storage_url)
    assert [e.kind for e in events] == ["turn"] * 4 + ["summary"]
    summary = events[-1]
    assert summary.provider.input_tokens > 0  # the scripted model reports its usage

    result = cli("usage", "librarian", "--json")
    assert result.exit_code == 0, result.output
    report = UsageReport.model_validate(json.loads(result.stdout))
    assert report.requests == 5
    assert report.input_tokens == sum(e.input_tokens for e in events)
    assert report.provider.input_tokens == sum(e.provider.input_tokens for e in events)
    assert report.provider.output_tokens == sum(e.provider.output_tokens for e in events)
    assert report.kinds["summary"].requests == 1
    assert report.kinds["summary"].provider == summary.provider
    [member] = report.members
    cards = {c.card: c for c in member.cards}
    assert cards["(summary requests)"].tokens == summary.input_tokens

    table = cli("usage", "librarian")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert "5 model requests" in lines[0]
    assert lines[2].startswith("compaction summaries: 1 request, ")
    assert any(
        line.split()[:3] == ["(summary", "requests)", f"{summary.input_tokens:,}"] for line in lines
    )


def test_usage_of_an_unknown_team_says_how_to_list_them(cli: Invoke) -> None:
    result = cli("usage", "nobody")
    assert result.exit_code == 1
    assert "error: no team matches 'nobody'" in result.output
    assert "Traceback" not in result.output
