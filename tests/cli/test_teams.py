"""``akgentic teams list | show | stop | resume | delete`` on a temporary SQLite storage."""

from __future__ import annotations

import os
import pty
import shlex
import signal
import sqlite3
import subprocess
import threading
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from akgentic.core import serialize
from akgentic.llm import register_model
from akgentic.storage import Lease, LeaseHolder, TeamStatus, open_storage, sqlite_path
from akgentic.team import (
    TeamCard,
    TeamManager,
    TeamRunningElsewhereError,
    restorer,
    team_workspaces,
)
from tests.team.test_crash import run_child_until_ready
from tests.team.test_one_runner import process

from .conftest import (
    AKGENTIC,
    HANG,
    REPO,
    RESEARCH,
    Child,
    Invoke,
    assert_in_order,
    child_env,
    run_child,
)

HANG_MODULE = "tests.cli.hang_tool"
DELEGATE = HANG.with_name("delegate.yaml")
BUSY = HANG.with_name("busy_worker.yaml")
Spawn = Callable[[list[str], dict[str, str]], Child]


def run_once(cli: Invoke, question: str = "why?") -> UUID:
    """Run the research team for one exchange; its id."""
    result = cli("run", str(RESEARCH), "-m", question)
    assert result.exit_code == 0, result.output
    return team_ids(cli)[-1]


def team_ids(cli: Invoke) -> list[UUID]:
    listed = cli("teams", "list", "--all")
    assert listed.exit_code == 0, listed.output
    return [UUID(line.split()[0]) for line in listed.stdout.splitlines()[1:]]


def status_of(storage_url: str, team_id: UUID) -> TeamStatus | None:
    storage = open_storage(storage_url)
    try:
        record = storage.teams.get(team_id)
        return record.status if record else None
    finally:
        storage.close()


def test_list_shows_every_team_and_hides_deleted_ones(cli: Invoke) -> None:
    assert "no teams yet in" in cli("teams", "list").stdout
    first, second = run_once(cli), run_once(cli)
    assert cli("teams", "delete", str(first)[:8]).exit_code == 0

    listed = cli("teams", "list").stdout.splitlines()
    assert listed[0].split() == ["ID", "NAME", "STATUS", "EVENTS", "UPDATED", "RUNNER"]
    assert [line.split()[:3] for line in listed[1:]] == [[str(second), "research", "STOPPED"]]
    everything = cli("teams", "list", "--all").stdout
    assert f"{first}  research  DELETED" in everything
    only_deleted = cli("teams", "list", "--status", "deleted").stdout.splitlines()
    assert [line.split()[0] for line in only_deleted[1:]] == [str(first)]


def test_an_empty_list_of_a_store_with_teams_says_what_filtered_them_out(
    cli: Invoke, storage_url: str
) -> None:
    """Not "no teams yet": the store has teams, the filter let none through."""
    team = run_once(cli)
    every = f"list them all with: akgentic teams list --all --storage {storage_url}"

    assert cli("teams", "list", "--status", "DELETED").stdout.strip() == (
        f"no teams match --status DELETED (1 team in {storage_url}; {every})"
    )
    assert cli("teams", "delete", str(team)[:8]).exit_code == 0
    assert cli("teams", "list").stdout.strip() == (
        f"no teams but deleted ones (1 team in {storage_url}; {every})"
    )


def test_show_prints_the_record_the_members_the_last_seq_and_no_interruption(
    cli: Invoke, storage_url: str
) -> None:
    team_id = run_once(cli)
    storage = open_storage(storage_url)
    last = storage.events.last_seq(team_id)
    storage.close()

    result = cli("teams", "show", str(team_id)[:6])

    assert result.exit_code == 0, result.output
    assert_in_order(
        result.stdout,
        [
            f"team:     research ({team_id})",
            "about:    A manager delegates questions to a researcher and reports back.",
            "status:   STOPPED",
            f"last seq: {last}",
            "entry:    @Manager",
            "members:",
            "  @Manager  Manager  scripted:research.scenario.yaml",
            "    @Worker  Worker  scripted:research.scenario.yaml  tools: SkillTool",
            "profiles: @Reviewer (Reviewer)",
            "a resume restores: @Human, @Manager, @Worker",
            "interrupted turns: none",
        ],
    )
    assert "running" not in result.stdout  # a stopped team is not said to run


def test_a_name_or_prefix_must_name_one_team(cli: Invoke) -> None:
    first, second = run_once(cli), run_once(cli)

    ambiguous = cli("teams", "show", "research")
    assert ambiguous.exit_code == 1
    assert ambiguous.stderr.startswith("error: 2 teams are named 'research': ")
    assert "give more of the id" in ambiguous.stderr
    assert cli("teams", "show", str(second)).exit_code == 0
    # Once one of them is deleted, the name means the other one.
    assert cli("teams", "delete", str(first)).exit_code == 0
    assert f"team:     research ({second})" in cli("teams", "show", "research").stdout


def test_stop_marks_a_running_team_stopped(cli: Invoke, storage_url: str) -> None:
    storage = open_storage(storage_url)
    card = serialize(TeamCard.from_yaml(RESEARCH))
    team_id = storage.teams.create("research", card=card).team_id
    storage.close()

    stopped = cli("teams", "stop", "research")
    again = cli("teams", "stop", str(team_id))

    assert stopped.exit_code == 0, stopped.output
    assert stopped.stdout.startswith(f"team research ({str(team_id)[:8]}) is now STOPPED")
    assert status_of(storage_url, team_id) == TeamStatus.STOPPED
    assert again.stdout == f"team research ({str(team_id)[:8]}) is already stopped\n"


def test_resume_talks_to_the_team_again(cli: Invoke, storage_url: str) -> None:
    team_id = run_once(cli)

    result = cli("teams", "resume", str(team_id)[:8], "--message", "and then?")

    assert result.exit_code == 0, result.output
    short = str(team_id)[:8]
    assert result.stdout.startswith(
        f"team research ({short}) resumed: @Manager (entry point), @Worker\n"
    )
    assert "@Human → @Manager: and then?" in result.stdout
    assert result.stdout.splitlines()[-1].startswith(
        "answer: Here is what @Worker found: [scripted] On and then?: one"
    )
    assert "@Human → @Manager: why?" not in result.stdout  # only what happens now
    assert status_of(storage_url, team_id) == TeamStatus.STOPPED


def test_resume_without_message_is_interactive(cli: Invoke) -> None:
    team_id = run_once(cli)

    result = cli("teams", "resume", str(team_id), input="@Worker report back: owls\n")

    assert result.exit_code == 0, result.output
    assert "@Worker → @Human (response): [scripted] On owls: one" in result.stdout


def test_delete_keeps_the_history_and_purge_removes_it(cli: Invoke, storage_url: str) -> None:
    team_id = run_once(cli)
    short = str(team_id)[:8]

    deleted = cli("teams", "delete", short)
    assert (
        deleted.stdout
        == f"team research ({short}) deleted; its history is kept (--purge removes it)\n"
    )
    assert status_of(storage_url, team_id) == TeamStatus.DELETED
    assert "@Human → @Manager: why?" in cli("events", short).stdout
    refused = cli("teams", "resume", short)
    assert refused.exit_code == 1
    where = shlex.join(["--storage", storage_url])  # what a deleted team leaves to do
    assert refused.stderr == (
        f"error: team research ({short}) was deleted and cannot be resumed: start a new team "
        f"from its card with: akgentic run TEAM.yaml {where}; its history still reads with: "
        f"akgentic events {short} {where}\n"
    )

    unasked = cli("teams", "delete", short, "--purge")  # no terminal to ask: --yes or nothing
    assert unasked.exit_code == 1
    assert unasked.stderr == (
        f"error: --purge removes team research ({short}) and all its history for good; with "
        "no terminal to ask, confirm with --yes\n"
    )
    assert status_of(storage_url, team_id) == TeamStatus.DELETED
    purged = cli("teams", "delete", short, "--purge", "--yes")
    assert purged.stdout == f"team research ({short}) purged: its record and history are gone\n"
    assert status_of(storage_url, team_id) is None
    gone = cli("teams", "show", short)
    assert gone.exit_code == 1
    assert gone.stderr.startswith(f"error: no team matches '{short}'")


def test_purge_removes_the_team_s_own_workspace_trees_and_nothing_shared(
    cli: Invoke, storage_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The coder's WorkspaceTool makes its tree and index when the team starts (its journal,
    ``<id>.git``, at the first write: made here by hand)."""
    root = tmp_path / "workspaces"
    monkeypatch.setenv("AKGENTIC_WORKSPACES_ROOT", str(root))
    started = cli("run", str(REPO / "examples" / "teams" / "coder.yaml"), input="")
    assert started.exit_code == 0, started.output
    store = open_storage(storage_url)
    [team] = store.teams.list()
    store.close()
    [cell] = team_workspaces(team.team_id)
    assert cell.tree.is_dir() and cell.index_dir.is_dir()
    (cell.git_dir / "objects").mkdir(parents=True)
    kept = [root / cell.scope / "_id" / "shared-notes", root / cell.scope / "_team" / "other"]
    for folder in kept:
        folder.mkdir(parents=True)

    purged = cli("teams", "delete", str(team.team_id)[:8], "--purge", "--yes")

    assert purged.exit_code == 0, purged.output
    assert purged.stdout == (
        f"team coder ({str(team.team_id)[:8]}) purged: its record and history, and its "
        f"workspace tree {cell.tree} are gone\n"
    )
    assert not cell.tree.exists() and not cell.git_dir.exists() and not cell.index_dir.exists()
    assert all(folder.is_dir() for folder in kept)


def test_a_killed_team_shows_its_interrupted_turn_and_resumes(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    child = spawn(
        [str(AKGENTIC), "run", str(HANG)], child_env(storage_url, AKGENTIC_CLI_TEST_HANG="1")
    )
    child.write("please hang")
    child.wait_for("⚙ @Boss → hang_step(label=please hang)")
    child.stop()  # killed in the middle of the turn

    # Stored data never imports code: the card's module is named again with --import
    # (modules of the current directory are importable, as with `python -m`).
    env = child_env(storage_url, repo_on_path=False)
    show = [str(AKGENTIC), "teams", "show", "hanging"]
    bare = run_child(show, env=env, cwd=REPO)
    assert bare.returncode == 0, bare.stderr
    assert "rerun with --import tests.cli.hang_tool" in bare.stdout
    named = run_child([*show, "--import", HANG_MODULE], env=env, cwd=REPO)
    assert "interrupted turns: 1" in named.stdout.splitlines()
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert shown.exit_code == 0, shown.output
    assert_in_order(
        shown.stdout,
        ["status:   RUNNING", "interrupted turns: 1", "  @Human → @Boss: please hang"],
    )

    resumed = cli(
        "teams", "resume", "hanging", "-m", "nod fine", "--idle", "0.3", "--import", HANG_MODULE
    )
    assert resumed.exit_code == 0, resumed.output
    assert "did not stop cleanly (pid " in resumed.stderr
    assert "that process is gone): restored from its log" in resumed.stderr  # a crash, told
    assert_in_order(
        resumed.stdout,
        [
            "1 turn was interrupted:",
            "  @Human → @Boss: please hang",
            "  rerun with --retry-interrupted to deliver it again, or "
            "--dismiss-interrupted to give it up",
            "@Boss → @Human (acknowledgment): Noted: fine",
            "answer: Noted: fine",
        ],
    )

    retried = cli(
        "teams", "resume", "hanging", "--retry-interrupted", "-m", "go on", "--import", HANG_MODULE
    )
    assert retried.exit_code == 0, retried.output
    assert retried.stderr == ""
    # the note comes from the command, the activity from the live view's thread: either
    # may print first, so the note is looked for on its own; "nod fine", answered by the
    # resume before, was taken on after the interrupted turn: it is redone out of order
    assert (
        "delivered 1 interrupted message again out of order: after 1 newer message its "
        "recipient had taken on since"
    ) in retried.stdout.splitlines()
    assert_in_order(
        retried.stdout,
        [
            "⚙ @Boss → hang_step(label=please hang)",
            "@Boss → @Human (response): [scripted] done: please hang",
            "answer: [scripted] done: go on",
        ],
    )
    assert (
        "interrupted turns: none" in cli("teams", "show", "hanging", "--import", HANG_MODULE).stdout
    )


def stopped_in_a_tool_call(
    cli: Invoke,
    spawn: Spawn,
    storage_url: str,
    tmp_path: Path,
    card: Path,
    line: str,
    *,
    message: bool = False,
    busy: str = "@Boss",
) -> Child:
    """``run CARD``, ``line`` typed (or given with ``-m``: ``message``): ``busy``'s turn
    waits in hang_step while ``teams stop`` starts the graceful stop, then the tool call
    returns and the turn goes on."""
    release = tmp_path / "release"
    os.mkfifo(release)
    one = ["-m", line] if message else []
    child = spawn(
        [str(AKGENTIC), "run", str(card), "--verbose", *one],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release)),
    )
    if not message:
        child.write(line)
    child.wait_for(f"⚙ {busy} → hang_step(label=")
    stopped = cli("teams", "stop", TeamCard.from_yaml(card).name)
    assert stopped.exit_code == 0, stopped.output
    child.wait_for("the team is stopping (grace")  # the session has begun the graceful stop
    with open(release, "w"):  # the tool call returns; the turn goes on
        pass
    return child


def test_teams_stop_lets_the_turn_in_flight_answer_the_person(
    cli: Invoke, storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """A graceful stop from another terminal while a turn is in a tool call: the turn
    finishes, and its answer reaches the person before the session ends."""
    child = stopped_in_a_tool_call(cli, spawn, storage_url, tmp_path, HANG, "please hang")
    child.wait_for("@Boss → @Human (response): [scripted] done: please hang")
    child.wait_for("stopped: it was stopped from elsewhere (akgentic teams stop)")
    code, errors = child.finish()

    assert code == 0, errors
    assert "Traceback" not in errors
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert_in_order(shown.stdout, ["status:   STOPPED", "interrupted turns: none"])
    assert "accepted, not yet received" not in shown.stdout  # the person received it


def test_a_graceful_stop_keeps_what_a_finishing_turn_sends_to_a_member_it_ended(
    cli: Invoke, storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """The stop ends @Worker (idle) while @Boss's turn is in a tool call; the turn then
    delegates to @Worker. It is not failed for naming a member that is gone: the request
    is kept, undelivered, and the resume delivers it — the person gets the answer."""
    child = stopped_in_a_tool_call(cli, spawn, storage_url, tmp_path, DELEGATE, "the job")
    child.wait_for("@Boss → @Worker (request): do the job")
    child.wait_for("stopped: it was stopped from elsewhere (akgentic teams stop)")
    code, errors = child.finish()

    assert code == 0, errors
    assert errors == ""
    shown = cli("teams", "show", "delegating", "--import", HANG_MODULE)
    assert "accepted, not yet received: 1 (delivered on resume)" in shown.stdout
    resumed = cli("teams", "resume", "delegating", "--import", HANG_MODULE, input="")
    assert resumed.exit_code == 0, resumed.output
    assert "@Boss → @Human (response): @Worker says: [scripted] done" in resumed.stdout


def test_run_m_stopped_from_elsewhere_with_the_answer_owed_says_so_not_the_acknowledgment(
    cli: Invoke, storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """``run -m`` of a team stopped while its answer is still owed: @Boss's turn, ending
    during the stop, delegates to @Worker (stopped first) and acknowledges. The
    acknowledgment is no answer (it was printed as one, exit code 0): one ``error:``
    line says the team stopped before answering and how to get the answer; the request
    left for the resume is listed."""
    child = stopped_in_a_tool_call(
        cli, spawn, storage_url, tmp_path, DELEGATE, "the job", message=True
    )
    code, errors = child.finish()
    out = child.output()

    assert code == 1, out
    short = out.split("team delegating (", 1)[1][:8]
    assert errors.splitlines() == [
        "error: the team stopped before answering: it was stopped from elsewhere (akgentic "
        "teams stop); the work on it waits: to get the answer, resume it with: akgentic "
        f"teams resume {short} --storage {storage_url} --import {HANG_MODULE}"
    ]
    assert "answer:" not in out
    assert_in_order(
        out,
        [
            "@Boss → @Human (acknowledgment): On it",
            "1 message waits for the next resume, which delivers it:",
            "  @Boss → @Worker (request): do the job",
        ],
    )
    resumed = cli("teams", "resume", short, "--import", HANG_MODULE, input="")
    assert resumed.exit_code == 0, resumed.output
    assert "@Boss → @Human (response): @Worker says: [scripted] done" in resumed.stdout


def test_a_stop_waits_for_a_busy_child_and_run_m_prints_the_answer_it_relays(
    cli: Invoke, storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """``teams stop`` while @Worker (@Manager's child) is in a tool call: @Manager is not
    stopped under it, takes its answer and passes it on; ``run -m`` prints it."""
    child = stopped_in_a_tool_call(
        cli, spawn, storage_url, tmp_path, BUSY, "question", message=True, busy="@Worker"
    )
    child.wait_for("@Manager → @Human (response): @Worker found: [scripted] done: question")
    child.wait_for("answer: @Worker found: [scripted] done: question")
    code, errors = child.finish()

    assert code == 0, errors
    assert errors == ""
    shown = cli("teams", "show", "busy", "--import", HANG_MODULE)
    assert "accepted, not yet received" not in shown.stdout


def kill_in_a_turn(spawn: Spawn, storage_url: str) -> None:
    child = spawn(
        [str(AKGENTIC), "run", str(HANG)], child_env(storage_url, AKGENTIC_CLI_TEST_HANG="1")
    )
    child.write("please hang")
    child.wait_for("⚙ @Boss → hang_step(label=please hang)")
    child.stop()  # killed in the middle of the turn


def test_a_resume_dismissing_the_turn_a_crash_interrupted_says_so_in_the_singular(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    kill_in_a_turn(spawn, storage_url)

    resumed = cli(
        "teams", "resume", "hanging", "--dismiss-interrupted", "-m", "nod fine",
        "--import", HANG_MODULE,
    )  # fmt: skip

    assert resumed.exit_code == 0, resumed.output
    assert "dismissed 1 interrupted turn" in resumed.stdout.splitlines()
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert "interrupted turns: none" in shown.stdout.splitlines()


def test_teams_stop_of_a_crashed_team_says_it_was_not_running_and_clears_its_runner(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    kill_in_a_turn(spawn, storage_url)

    stopped = cli("teams", "stop", "hanging")

    assert stopped.exit_code == 0, stopped.output
    first, second = stopped.stdout.splitlines()
    assert first.startswith("team hanging (") and "was not running (pid " in first
    assert first.endswith("that process is gone); it is now STOPPED")
    assert second.startswith("akgentic teams show ") and "lists any turn the crash" in second
    assert f" --storage {storage_url} shows the last exchange" in second  # not the default
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert_in_order(
        shown.stdout,
        ["status:   STOPPED", "run by:   no process", "interrupted turns: 1"],
    )


def test_a_crashed_team_is_deleted(cli: Invoke, storage_url: str, spawn: Spawn) -> None:
    """Its process is gone (its lease stays behind): nobody runs it, so it is no team
    "running in another process"."""
    kill_in_a_turn(spawn, storage_url)

    deleted = cli("teams", "delete", "hanging")

    assert deleted.exit_code == 0, deleted.output
    assert "deleted; its history is kept" in deleted.stdout
    assert "DELETED" in cli("teams", "show", "hanging", "--import", HANG_MODULE).stdout


def test_a_resume_after_a_crash_says_so_once(storage_url: str, spawn: Spawn) -> None:
    """The console script: its warning line, and no log line repeating it."""
    kill_in_a_turn(spawn, storage_url)

    resumed = run_child(
        [str(AKGENTIC), "teams", "resume", "hanging", "-m", "nod fine", "--import", HANG_MODULE],
        env=child_env(storage_url),
    )

    assert resumed.returncode == 0, resumed.stderr
    assert "answer: Noted: fine" in resumed.stdout
    [said] = [line for line in resumed.stderr.splitlines() if "pid" in line]
    assert said.startswith("warning: team hanging (") and "did not stop cleanly (pid " in said


def test_a_stored_name_with_control_characters_is_shown_escaped(
    cli: Invoke, storage_url: str, tmp_path: Path
) -> None:
    team_id = run_once(cli)
    forged = "evil\x1b]0;pwned\x07\r\nFAKE-TEAM  RUNNING"
    # a record an earlier version let through: the store refuses such a name now
    with sqlite3.connect(tmp_path / "cli.db") as db:
        db.execute("UPDATE akgentic_teams SET name = ?", (forged,))
    escaped = "evil\\x1b]0;pwned\\x07\\x0d\\x0aFAKE-TEAM  RUNNING"  # as printable writes them

    listed = cli("teams", "list")
    assert listed.exit_code == 0, listed.output
    rows = listed.stdout.splitlines()
    assert len(rows) == 2 and rows[1].startswith(f"{team_id}  {escaped}  STOPPED")
    shown = cli("teams", "show", str(team_id)[:8])
    assert shown.exit_code == 0, shown.output
    assert f"team:     {escaped} ({team_id})" in shown.stdout.splitlines()
    stopped = cli("teams", "stop", str(team_id))
    assert stopped.stdout.startswith(f"team {escaped} ({str(team_id)[:8]}) is already stopped")
    for output in (listed.stdout, shown.stdout, stopped.stdout):
        assert not any(c in output for c in "\x1b\x07\r")


def test_a_card_named_with_control_characters_is_refused_in_one_line(
    cli: Invoke, tmp_path: Path
) -> None:
    card = tmp_path / "evil.yaml"
    card.write_text(RESEARCH.read_text().replace("name: research", 'name: "evil\\e[31mred"', 1))
    scenario = RESEARCH.with_name("research.scenario.yaml")
    (tmp_path / scenario.name).write_bytes(scenario.read_bytes())
    result = cli("run", str(card), "-m", "hi")
    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1 and "\x1b" not in result.stderr
    assert "a team name may not contain control characters: '\\x1b' (U+001B)" in result.stderr
    assert result.stderr.startswith(f"error: {card}:3: name: ")  # the card's file and line
    assert "no teams yet" in cli("teams", "list").stdout


EVIL_MEMBER = """\
name: evil
entry_point: "@Solo"
members:
  - card: {role: Solo, config: {name: "@Solo", role: Solo, models: "scripted:default"}}
  - card: {role: Helper, config: {name: "@Evil\\nFAKE \\e]0;t\\a", models: "scripted:default"}}
"""


def test_a_member_named_with_control_characters_is_shown_escaped_on_its_line(
    cli: Invoke, tmp_path: Path
) -> None:
    """A member's name from a card or a stored log cannot break a line or reach the
    terminal as an escape sequence: the session's roster and ``teams show`` print it
    escaped, on one line."""
    card = tmp_path / "evil.yaml"
    card.write_text(EVIL_MEMBER)
    escaped = "@Evil\\x0aFAKE \\x1b]0;t\\x07"

    ran = cli("run", str(card), "-m", "hi")
    assert ran.exit_code == 0, ran.output
    [team_id] = team_ids(cli)
    intro = f"team evil ({str(team_id)[:8]}) started: @Solo (entry point), {escaped}"
    assert ran.stdout.splitlines()[0] == intro
    shown = cli("teams", "show", "evil")
    assert shown.exit_code == 0, shown.output
    assert_in_order(
        shown.stdout,
        [
            "members:",
            "  @Solo  Solo  scripted:default",
            f"  {escaped}  Helper  scripted:default",
            f"a resume restores: @Human, @Solo, {escaped}",
        ],
    )
    assert "\nFAKE" not in shown.stdout
    misaddressed = cli("run", str(card), "-m", "@Nobody hi")
    assert misaddressed.exit_code == 1
    assert misaddressed.stderr == (
        f"error: @Nobody is not a member of this team (members: {escaped}, @Solo): address "
        f"one of them, or leave the name out to write to @Solo\n"
    )
    for output in (ran.stdout, shown.stdout, misaddressed.stderr):
        assert not any(c in output for c in "\x1b\x07\r")


def test_an_answer_a_crash_kept_from_the_screen_is_shown_by_show_and_resume(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """The log holds the team's answer, the person may never have seen it (a crash between
    its record and its print): ``teams show`` and the resume show their last exchange.
    The child is killed once it printed the answer, so the answer is surely recorded; the
    team's turn ended, so nothing is listed as interrupted."""
    child = spawn([str(AKGENTIC), "run", str(HANG)], child_env(storage_url))
    child.write("nod fine")
    child.wait_for("@Boss → @Human (acknowledgment): Noted: fine")
    child.stop()  # killed with the team RUNNING, its answer recorded
    exchange = ["  @Human → @Boss: nod fine", "  @Boss → @Human (acknowledgment): Noted: fine"]

    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert shown.exit_code == 0, shown.output
    assert_in_order(
        shown.stdout,
        ["status:   RUNNING", "interrupted turns: none", "last exchange:", *exchange],
    )

    resumed = cli(
        "teams", "resume", "hanging", "-m", "nod again", "--idle", "0.3", "--import", HANG_MODULE
    )
    assert resumed.exit_code == 0, resumed.output
    assert "did not stop cleanly (pid " in resumed.stderr
    assert_in_order(
        resumed.stdout,
        [
            "last exchange before the crash:",
            *exchange,
            "@Human → @Boss: nod again",
            "answer: Noted: again",
        ],
    )
    assert "interrupted" not in resumed.stdout

    # that session stopped cleanly: the next resume has nothing to recover
    clean = cli("teams", "resume", "hanging", "-m", "nod once more", "--import", HANG_MODULE)
    assert clean.exit_code == 0, clean.output
    assert "last exchange" not in clean.stdout and "Noted: again" not in clean.stdout
    assert_in_order(
        cli("teams", "show", "hanging", "--import", HANG_MODULE).stdout,
        [
            "status:   STOPPED",
            "last exchange:",
            "  @Human → @Boss: nod once more",
            "  @Boss → @Human (acknowledgment): Noted: once more",
        ],
    )


def test_show_clips_a_huge_description(cli: Invoke, storage_url: str) -> None:
    """A card whose description is a 2 MB line: ``about:`` shows its start and its length,
    as other long fields are clipped, not 2 MB of output."""
    team_id = run_once(cli)
    huge = "word " * 400_000
    with closing(sqlite3.connect(sqlite_path(storage_url))) as db, db:
        db.execute("UPDATE akgentic_teams SET card = json_set(card, '$.description', ?)", (huge,))

    result = cli("teams", "show", str(team_id))

    assert result.exit_code == 0, result.output
    [about] = [line for line in result.stdout.splitlines() if line.startswith("about:")]
    assert about.startswith("about:    word word ")
    assert about.endswith("… (1,999,999 characters)") and len(about) < 500
    assert len(result.stdout) < 5_000


def test_a_turn_another_process_is_on_is_in_progress_not_interrupted(
    cli: Invoke, storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """``show`` of a team a live process runs, or is stopping, lists its turn as in
    progress (no hint to retry it); a second ``stop`` says the team is stopping. Once the
    turn has ended and the process let the team go, nothing is in progress."""
    release = tmp_path / "release"
    os.mkfifo(release)
    child = spawn(
        [str(AKGENTIC), "run", str(HANG)],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release)),
    )
    child.write("please hang")
    child.wait_for("⚙ @Boss → hang_step(label=please hang)")
    show = ("teams", "show", "hanging", "--import", HANG_MODULE)

    running = cli(*show)
    assert running.exit_code == 0, running.output
    assert_in_order(
        running.stdout,
        ["status:   RUNNING", "turns in progress: 1", "  @Human → @Boss: please hang"],
    )
    assert "interrupted" not in running.stdout and "--retry-interrupted" not in running.stdout

    assert cli("teams", "stop", "hanging").exit_code == 0
    again = cli("teams", "stop", "hanging")
    assert again.exit_code == 0, again.output
    [said] = again.stdout.splitlines()
    assert said.startswith("team hanging (")
    assert ") is stopping: the process running it (pid " in said
    assert said.endswith("waits for the turns in progress (up to 30s); nothing more to do")
    stopping = cli(*show)
    assert_in_order(
        stopping.stdout,
        [
            "status:   STOPPED",
            "turns in progress: 1 (the stop waits for it, up to 30s)",
            "  @Human → @Boss: please hang",
        ],
    )
    assert "--retry-interrupted" not in stopping.stdout

    with open(release, "w"):  # the tool call returns; the turn ends, the stop completes
        pass
    code, errors = child.finish()
    assert code == 0, errors
    stopped = cli(*show)
    assert_in_order(stopped.stdout, ["status:   STOPPED", "interrupted turns: none"])
    assert cli("teams", "stop", "hanging").stdout.endswith(") is already stopped\n")


def test_a_resume_that_retries_redoes_the_interrupted_turn_before_the_message_behind_it(
    cli: Invoke, storage_url: str
) -> None:
    """Killed while "block please" ran, with "after block" queued behind it: ``teams resume
    --retry-interrupted`` redoes the interrupted turn first, in its place; the message
    sent after it is answered after it."""
    team_id = run_child_until_ready(storage_url)

    retried = cli("teams", "resume", str(team_id)[:8], "--retry-interrupted", "-m", "later")

    assert retried.exit_code == 0, retried.output
    assert "delivered 1 interrupted message again" in retried.stdout.splitlines()
    assert_in_order(
        retried.stdout,
        [
            "@Boss → @Human (response): [scripted] done: block please",
            "@Boss → @Human (response): [scripted] done: after block",
            "answer: [scripted] done: later",
        ],
    )


def test_a_resume_that_retries_a_turn_the_team_went_on_without_says_it_is_out_of_order(
    cli: Invoke, storage_url: str
) -> None:
    """Resumed once without a decision, the team answered "after block" and "later" (both
    sent after the interrupted "block please"); a later ``--retry-interrupted`` redoes it
    after them, and its line says so rather than claim it was redone in its place."""
    team_id = run_child_until_ready(storage_url)
    short = str(team_id)[:8]
    went_on = cli("teams", "resume", short, "-m", "later")
    assert went_on.exit_code == 0, went_on.output
    assert "answer: [scripted] done: later" in went_on.stdout

    retried = cli("teams", "resume", short, "--retry-interrupted", "-m", "last")

    assert retried.exit_code == 0, retried.output
    assert (
        "delivered 1 interrupted message again out of order: after 2 newer messages its "
        "recipient had taken on since"
    ) in retried.stdout.splitlines()
    assert_in_order(
        retried.stdout,
        [
            "@Boss → @Human (response): [scripted] done: block please",
            "answer: [scripted] done: last",
        ],
    )


def test_a_turn_a_crash_left_is_interrupted_not_in_progress_while_the_resumed_team_runs(
    cli: Invoke, storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """Killed in a turn, then resumed with neither --retry-interrupted nor
    --dismiss-interrupted: while the resumed team runs, ``show`` lists its own turn as in
    progress and the one the crash left as interrupted, with what can be done about it
    (the next resume offers it again: a live team cannot be resumed), and so while it
    stops. Once it has stopped, the crash's turn is interrupted, as every resume says."""
    kill_in_a_turn(spawn, storage_url)
    release = tmp_path / "release"
    os.mkfifo(release)
    resumed = spawn(
        [str(AKGENTIC), "teams", "resume", "hanging", "--import", HANG_MODULE],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release)),
    )
    resumed.wait_for("1 turn was interrupted:")
    resumed.write("hang again")
    resumed.wait_for("⚙ @Boss → hang_step(label=hang again)")
    show = ("teams", "show", "hanging", "--import", HANG_MODULE)

    running = cli(*show)

    assert running.exit_code == 0, running.output
    lines = running.stdout.splitlines()
    stop = f"akgentic teams stop {str(team_ids(cli)[0])[:8]} --storage {storage_url}"
    turns = lines[lines.index("turns in progress: 1") :][:5]
    assert turns == [
        "turns in progress: 1",
        "  @Human → @Boss: hang again",
        "interrupted turns: 1 (not in progress)",
        "  @Human → @Boss: please hang",
        f"  the next resume offers it again, once the team has stopped ({stop}): "
        "--retry-interrupted delivers it again, --dismiss-interrupted gives it up",
    ]

    assert cli("teams", "stop", "hanging").exit_code == 0
    stopping = cli(*show).stdout.splitlines()
    turns = stopping[stopping.index("turns in progress: 1 (the stop waits for it, up to 30s)") :]
    assert turns[1:5] == [
        "  @Human → @Boss: hang again",
        "interrupted turns: 1 (not in progress)",
        "  @Human → @Boss: please hang",
        "  the next resume offers it again, once the team has stopped: "
        "--retry-interrupted delivers it again, --dismiss-interrupted gives it up",
    ]

    with open(release, "w"):  # the tool call returns; the turn ends, the stop completes
        pass
    code, errors = resumed.finish()
    assert code == 0, errors
    stopped = cli(*show)
    assert_in_order(
        stopped.stdout,
        ["status:   STOPPED", "interrupted turns: 1", "  @Human → @Boss: please hang"],
    )
    assert "resume with --retry-interrupted to deliver it again" in stopped.stdout
    assert "or --dismiss-interrupted to give it up" in stopped.stdout


def test_a_resume_short_of_a_registered_model_says_its_module_must_be_importable(
    cli: Invoke, tmp_path: Path
) -> None:
    card = tmp_path / "solo.yaml"
    card.write_text(
        "name: solo\n"
        "entry_point: '@Analyst'\n"
        "members:\n"
        "  - card:\n"
        "      role: Analyst\n"
        "      config: {name: '@Analyst', role: Analyst, models: 'registered:cli-fake'}\n"
    )
    answers = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("hi there")]))
    with register_model("cli-fake", answers):
        ran = cli("run", str(card), "-m", "hello")
    assert ran.exit_code == 0, ran.output

    resumed = cli("teams", "resume", "solo", "-m", "again")

    assert resumed.exit_code == 1
    [line] = resumed.stderr.splitlines()
    assert "resume with the module that calls register_model: akgentic teams resume " in line
    assert (
        " --import MODULE (importable from here: run it from the module's folder or put that "
        "folder on PYTHONPATH), or on another model: "
    ) in line


def answer_purge_prompt(storage_url: str, answer: str) -> tuple[int, str]:
    """Run ``teams delete research --purge`` on a terminal and answer its prompt: a line
    typed (``"n\\n"``), ``"ctrl-d"`` (the end of input) or ``"ctrl-c"`` (SIGINT); its exit
    code and what it wrote to stderr."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [str(AKGENTIC), "teams", "delete", "research", "--purge"],
        env=child_env(storage_url, NO_COLOR="1"),
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(slave)
    try:
        shown = b""
        while b"and all its history? [y/N]:" not in shown:  # the prompt (EOF: the child ended)
            chunk = os.read(master, 4096)
            assert chunk, shown
            shown += chunk
        if answer == "ctrl-c":
            proc.send_signal(signal.SIGINT)
        else:
            os.write(master, b"\x04" if answer == "ctrl-d" else answer.encode())
        _, errors = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    return proc.returncode, errors


@pytest.mark.parametrize(
    ("answer", "code"), [("n\n", 1), ("\n", 1), ("maybe\nno\n", 1), ("ctrl-d", 1), ("ctrl-c", 130)]
)
def test_a_purge_not_confirmed_says_nothing_was_purged(
    cli: Invoke, storage_url: str, answer: str, code: int
) -> None:
    """At the prompt of ``delete --purge`` (a terminal), a no (or just Enter, or the end of
    input; an answer neither yes nor no asks again) is one line and exit code 1, Ctrl-C the
    same line as interrupted and 130 (as Ctrl-C anywhere): the team stays. A Ctrl-C at
    the prompt is always taken: ``input()`` missed one that came just before its read
    (the process then sat at the prompt; 2 runs in 8 on a busy machine)."""
    team_id = run_once(cli)

    returncode, errors = answer_purge_prompt(storage_url, answer)

    assert returncode == code, errors
    short = str(team_id)[:8]
    kept = f"nothing purged: team research ({short}) is kept"
    assert errors.splitlines() == [kept if code == 1 else f"interrupted: {kept}"]
    assert status_of(storage_url, team_id) == TeamStatus.STOPPED


def test_a_purge_confirmed_at_the_prompt_removes_the_team(cli: Invoke, storage_url: str) -> None:
    team_id = run_once(cli)

    returncode, errors = answer_purge_prompt(storage_url, "yes\n")

    assert returncode == 0, errors
    assert status_of(storage_url, team_id) is None


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("--retry-interrupted", "no interrupted turn to deliver again"),
        ("--dismiss-interrupted", "no interrupted turn to dismiss"),
    ],
)
def test_a_resume_asked_to_settle_turns_when_none_was_interrupted_says_so(
    cli: Invoke, flag: str, said: str
) -> None:
    """The flag is answered, not ignored in silence (it said "delivered 0 interrupted
    messages again", and nothing for a dismiss)."""
    short = str(run_once(cli))[:8]

    resumed = cli("teams", "resume", short, flag, input="")

    assert resumed.exit_code == 0, resumed.output
    assert said in resumed.stdout
    assert "interrupted messages again" not in resumed.stdout


def test_the_loser_of_a_race_to_resume_is_told_the_team_runs_not_that_it_is_stopping(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two resumes of a STOPPED team at once: the one that loses the lease must not say the
    team "is stopping" (what the record it read before the attempt suggested): the winner
    has it RUNNING by then."""
    team_id = run_once(cli)
    now = datetime.now(UTC)
    winner = Lease(
        resource=f"team/{team_id}",
        holder=LeaseHolder(owner="winner", host="box-2", pid=4242),
        since=now,
        renewed_at=now,
        expires_at=now,
        expired=False,
    )

    def lose_the_race(self: TeamManager, team: UUID, **kwargs: object) -> None:
        storage = open_storage(storage_url)
        try:  # the other process won: it marked the team RUNNING and holds its lease
            storage.teams.set_status(team, TeamStatus.RUNNING)
        finally:
            storage.close()
        raise TeamRunningElsewhereError(team, winner)

    monkeypatch.setattr(TeamManager, "resume_team", lose_the_race)
    lost = cli("teams", "resume", str(team_id)[:8], "-m", "again")

    assert lost.exit_code == 1
    [line] = lost.stderr.splitlines()
    assert "is running in another process: pid 4242 on host box-2" in line
    assert "is stopping" not in line


def test_two_resumes_racing_for_a_stopped_team_the_loser_never_says_it_is_stopping(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process resumes a STOPPED team (leased, its restore held until this
    command's resume has looked): ``teams resume`` here does not say that process "is
    stopping" the team and wait for its stop (nobody stops it); it ends with one line,
    the team running in that process."""
    team_id = run_once(cli)
    restore, await_stop = restorer.restore, TeamManager._await_stop
    restoring, looked = threading.Event(), threading.Event()

    with process(storage_url) as first:

        def restore_once_looked(manager: TeamManager, *args: Any, **kwargs: Any) -> Any:
            if manager is first:
                restoring.set()  # leased, restoring
                assert looked.wait(60)
            return restore(manager, *args, **kwargs)

        def look(manager: TeamManager, *args: Any) -> Any:
            try:
                return await_stop(manager, *args)
            finally:
                if manager is not first:  # this command's resume has looked
                    looked.set()

        monkeypatch.setattr(restorer, "restore", restore_once_looked)
        monkeypatch.setattr(TeamManager, "_await_stop", look)
        winner = threading.Thread(target=first.resume_team, args=(team_id,))
        winner.start()
        assert restoring.wait(60)
        lost = cli("teams", "resume", str(team_id)[:8], "-m", "again")
        winner.join(60)
        first.stop_team(team_id)

    assert lost.exit_code == 1, lost.output
    assert lost.stdout == ""  # no "is stopping ...: waiting for its stop" line
    [line] = lost.stderr.splitlines()
    holder = first.holder
    assert f"is running in another process: pid {holder.pid} on host {holder.host}" in line
    assert "is stopping" not in line


@pytest.mark.parametrize("saving", [False, True])
def test_stop_and_delete_of_a_team_stopping_elsewhere_say_what_its_stop_is_at(
    cli: Invoke, storage_url: str, saving: bool
) -> None:
    """A team marked STOPPED whose process (on another host) still holds it: a second
    ``stop`` has nothing more to do, a ``delete`` is refused until the stop has ended;
    both say what the stop is at — the turns in progress, or (its saving marker live) the
    last records a store refuses, and then what would free it. Nothing changes."""
    storage = open_storage(storage_url)
    card = serialize(TeamCard.from_yaml(RESEARCH))
    team_id = storage.teams.create("research", card=card).team_id
    storage.teams.set_status(team_id, TeamStatus.STOPPED)
    there = LeaseHolder(owner="stopping-there", host="box-2", pid=4242)
    storage.leases.acquire(f"team/{team_id}", there, 60)
    if saving:
        storage.leases.acquire(f"saving/team/{team_id}", there, 60)
    storage.close()
    title = f"team research ({str(team_id)[:8]}) is stopping"

    again = cli("teams", "stop", "research")
    refused = cli("teams", "delete", "research")

    assert again.exit_code == 0, again.output
    [said] = again.stdout.splitlines()
    assert refused.exit_code == 1, refused.output
    [line] = refused.stderr.splitlines()
    assert said.startswith(title) and line.startswith(f"error: {title}")
    assert "pid 4242 on host box-2" in said and "pid 4242 on host box-2" in line
    if saving:
        store = "which the store refuses; free the store (disk space, permissions, a process"
        assert store in said and store in line
        assert said.endswith("a process holding it)")
        assert line.endswith("a process holding it) and delete it once that stop has ended")
    else:
        assert said.endswith("waits for the turns in progress (up to 30s); nothing more to do")
        assert line.endswith("(up to 30s); delete it once it has stopped")
    assert status_of(storage_url, team_id) == TeamStatus.STOPPED
