"""A team card's suggestions: ``akgentic run`` with no message says what to type, and each
suggestion of the analyst example puts its tools to work (a real subprocess, read line by
line; the reminder is waited for, not slept on)."""

from __future__ import annotations

from collections.abc import Callable

from akgentic.team import TeamCard

from .conftest import AKGENTIC, REPO, Child, child_env

ANALYST = REPO / "examples" / "teams" / "analyst.yaml"

EXPECTED = {  # what each suggestion must show, in the order it shows it
    "study concurrency": [
        "⚙ @Analyst → update_planning(",
        "◆ #PlanningTool state changed",
        "⚙ @Analyst → update_graph(",
        "◆ #KnowledgeGraphTool state changed",
        "⚙ @Analyst → notify_me_in(delay_seconds=120",
        "@Analyst → @Human (response): [scripted] Planned two tasks",
    ],
    "search actor": [
        "⚙ @Analyst → search_graph(query=actor)",
        "@Analyst → @Human (response): [scripted] Found:",
        "- actor model for concurrency (concept)",
    ],
    "remind me in 5 seconds to stretch": [
        "⚙ @Analyst → notify_me_in(delay_seconds=5",
        "@Analyst → @Human (response): [scripted] I will remind you in 5 seconds to stretch.",
        "#NotificationTool → @Analyst (request): reminder: stretch",
        "@Analyst → @Human (notification): [scripted] Reminder: stretch.",
    ],
    "/planning": ["@Analyst → @Human (response): Team plan", "Collect facts on concurrency"],
}


def test_the_analyst_says_what_to_type_and_each_suggestion_shows_its_tools(
    storage_url: str, spawn: Callable[[list[str], dict[str, str]], Child]
) -> None:
    card = TeamCard.from_yaml(ANALYST)
    assert [s.message for s in card.suggestions] == list(EXPECTED)
    child = spawn([str(AKGENTIC), "run", str(ANALYST), "--idle", "1"], child_env(storage_url))

    child.wait_for("Try:")
    for suggestion in card.suggestions:
        line = child.wait_for(suggestion.message)
        assert line.split() == [*suggestion.message.split(), *suggestion.shows.split()]
    for suggestion in card.suggestions:
        child.write(suggestion.message)
        child.wait_for(f"@Human → @Analyst: {suggestion.message}")
        for expected in EXPECTED[suggestion.message]:
            child.wait_for(expected)
    child.write("/quit")
    code, errors = child.finish()
    assert code == 0, errors
    assert "warning" not in " ".join(child.lines)


def test_with_a_message_no_suggestions_are_printed(storage_url: str) -> None:
    from .conftest import run_child

    done = run_child(
        [str(AKGENTIC), "run", str(ANALYST), "-m", "study actors"], env=child_env(storage_url)
    )
    assert done.returncode == 0, done.stderr
    assert "Try:" not in done.stdout
    assert done.stdout.splitlines()[-1].startswith("answer: [scripted] Planned two tasks")


def test_a_second_study_in_the_same_team_records_its_topic_too(storage_url: str) -> None:
    """Each study records its own concept: the second one's update_graph returns, not
    ``✗ @Analyst update_graph retried`` (entity already exists)."""
    from .conftest import run_child

    done = run_child(
        [str(AKGENTIC), "run", str(ANALYST), "--idle", "1"],
        env=child_env(storage_url),
        input="study alpha\nstudy beta\nsearch actor\n",
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not [line for line in lines if line.startswith("✗")]
    assert lines.count("✓ @Analyst update_graph returned") == 2
    for topic in ("alpha", "beta"):  # scores vary with the embeddings extra
        assert any(line.startswith(f"  - actor model for {topic} (concept)") for line in lines)


def test_a_reminder_of_one_second_is_said_in_the_singular(storage_url: str) -> None:
    from .conftest import run_child

    done = run_child(
        [str(AKGENTIC), "run", str(ANALYST), "-m", "remind me in 1 second to stretch"],
        env=child_env(storage_url),
    )
    assert done.returncode == 0, done.stderr
    assert "answer: [scripted] I will remind you in 1 second to stretch." in done.stdout
