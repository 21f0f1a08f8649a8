"""Ctrl-C in a real ``akgentic`` process (SIGINT), waiting on its output, never on time.

The first Ctrl-C cancels the turns at their next step boundary, waits for them, stops the
team and says how to resume, the cut turn reported as interrupted; a second one exits at
once; neither ever prints a traceback — not even during the start-up imports.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import (
    AKGENTIC,
    HANG,
    HANG_UNCUT,
    Child,
    Invoke,
    assert_in_order,
    assert_resume_hints,
    child_env,
)

HANG_MODULE = "tests.cli.hang_tool"
Spawn = Callable[[list[str], dict[str, str]], Child]


def hang_in_a_turn(spawn: Spawn, storage_url: str, hang: str, card: Path = HANG) -> Child:
    """A session whose turn is inside ``hang_step`` (the call begun, not only announced)."""
    env = child_env(storage_url, AKGENTIC_CLI_TEST_HANG=hang, AKGENTIC_CLI_TEST_HANG_SAY="1")
    child = spawn([str(AKGENTIC), "run", str(card)], env)
    child.write("please hang")
    child.wait_for("hang_step: inside")  # printed before or after the call's own line
    return child


def assert_the_cut_turn_is_retried(cli: Invoke) -> None:
    """The stored team is STOPPED with the cut turn listed, and a resume retries it."""
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert_in_order(
        shown.stdout,
        ["status:   STOPPED", "interrupted turns: 1", "  @Human → @Boss: please hang"],
    )
    retried = cli(
        "teams", "resume", "hanging", "--retry-interrupted", "-m", "go on", "--import", HANG_MODULE
    )
    assert retried.exit_code == 0, retried.output
    assert "@Boss → @Human (response): [scripted] done: please hang" in retried.stdout
    assert "answer: [scripted] done: go on" in retried.stdout


@pytest.mark.parametrize(
    ("sent", "said", "exit_code"),
    [
        (signal.SIGINT, "interrupted", 130),
        (signal.SIGTERM, "interrupted by SIGTERM", 143),  # kill PID: taken as Ctrl-C
    ],
)
def test_ctrl_c_cancels_the_turn_at_a_step_stops_the_team_and_says_how_to_resume(
    cli: Invoke,
    storage_url: str,
    spawn: Spawn,
    tmp_path: Path,
    sent: signal.Signals,
    said: str,
    exit_code: int,
) -> None:
    release = tmp_path / "release"
    os.mkfifo(release)
    child = hang_in_a_turn(spawn, storage_url, str(release))

    child.proc.send_signal(sent)
    child.wait_for(f"{said}: cancelling the turns in progress at their next step")
    child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")  # delivered
    with open(release, "w"):  # the tool call returns: its step boundary finds the cancel
        pass
    stopped = child.wait_for(") stopped; 1 interrupted turn:")
    child.wait_for("  @Human → @Boss: please hang")
    hints = child.output().splitlines()[-4:]
    code, errors = child.finish()

    assert code == exit_code
    assert stopped.startswith("team hanging (")
    assert_resume_hints(hints, "akgentic teams resume ")
    assert hints[1].endswith(f"--import {HANG_MODULE} --retry-interrupted")
    assert not any("@Boss → @Human" in line for line in child.lines)  # cut, not answered
    assert "Traceback" not in errors and "Error" not in errors, errors

    assert_the_cut_turn_is_retried(cli)


def test_ctrl_c_while_the_team_stops_gracefully_cancels_the_turns_in_progress(
    storage_url: str, spawn: Spawn, tmp_path: Path
) -> None:
    """/quit while a turn still runs (no answer within --timeout: the session went on)
    stops the team gracefully, which offers Ctrl-C to cancel the turns it waits for: the
    stop runs aside, the Ctrl-C turns it into the interrupt."""
    release = tmp_path / "release"
    os.mkfifo(release)
    child = spawn(
        [str(AKGENTIC), "run", str(HANG), "--timeout", "1"],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG=str(release)),
    )
    child.write("please hang")
    for needle in ("⚙ @Boss → hang_step(label=please hang)", "no answer within 1s"):
        if not any(needle in line for line in child.lines):  # in either order
            child.wait_for(needle)
    child.write("/quit")
    child.wait_for("stopping the team: waiting for the turns in progress (up to 30s; Ctrl-C")

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("interrupted: cancelling the turns in progress at their next step")
    child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")
    with open(release, "w"):
        pass
    child.wait_for(") stopped; 1 interrupted turn:")
    child.wait_for("  @Human → @Boss: please hang")
    child.wait_for("--retry-interrupted")
    code, errors = child.finish()

    assert code == 130
    assert not any("@Boss → @Human" in line for line in child.lines)  # cut, not answered
    assert "Traceback" not in errors and "Error" not in errors, errors


def test_a_second_ctrl_c_exits_at_once(cli: Invoke, storage_url: str, spawn: Spawn) -> None:
    child = hang_in_a_turn(spawn, storage_url, "1", HANG_UNCUT)  # the turn still runs at the second

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("interrupted: cancelling the turns in progress")
    child.wait_for("→ @Boss (CancelMessage): the team is stopping (interrupted)")  # on the log
    child.proc.send_signal(signal.SIGINT)
    code, errors = child.finish(timeout=30)

    assert code == 130
    assert (
        "interrupted again: stopped at once (the turns in progress were cut); resume it with:"
        in errors
    )
    assert "Traceback" not in errors
    shown = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert_in_order(shown.stdout, ["interrupted turns: 1", "  @Human → @Boss: please hang"])
    assert "accepted, not yet received" not in shown.stdout  # the Ctrl-C's cancel is not

    # The cancel was aimed at the turn the process was running: it dies with that process
    # and never cuts the first message of the resumed team.
    resumed = cli("teams", "resume", "hanging", "-m", "go on", "--import", HANG_MODULE)
    assert resumed.exit_code == 0, resumed.output
    assert "CancelMessage" not in resumed.stdout
    assert "answer: [scripted] done: go on" in resumed.stdout
    again = cli("teams", "show", "hanging", "--import", HANG_MODULE)
    assert_in_order(again.stdout, ["interrupted turns: 1", "  @Human → @Boss: please hang"])


def test_one_ctrl_c_cuts_a_tool_call_that_never_returns_at_once(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """One Ctrl-C while a (bounded) tool call never returns: the interrupt cuts the call —
    its thread is abandoned, not waited for — so the team stops without waiting out the
    grace, nobody is left behind (no warning), and the cut turn is offered on resume."""
    child = hang_in_a_turn(spawn, storage_url, "1")

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("interrupted: cancelling the turns in progress")
    child.wait_for(") stopped; 1 interrupted turn:")
    hint = child.wait_for("--retry-interrupted")
    code, errors = child.finish(timeout=60)

    assert code == 130
    assert hint.startswith("akgentic teams resume ")
    assert "grace" not in errors and "left behind" not in errors, errors
    assert_the_cut_turn_is_retried(cli)


def test_a_member_stuck_in_a_tool_call_is_left_behind_once_the_grace_runs_out(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """One Ctrl-C while an uncuttable tool call (``tool_timeout: null``: on the agent's own
    thread) never returns: once the grace (30s) runs out the team
    is stopped without that member, the session ends as usual, and the command exits by
    itself — saying whom it leaves behind, on one ``warning:`` line — instead of waiting
    for it again (the actor system's shutdown used to give it another 10s, silently).
    That line is the team's report of its grace running out, in the CLI's format: no
    raw log lines (they named @Human too, whose turn to stop had not come), and the
    exit does not name the member again."""
    child = hang_in_a_turn(spawn, storage_url, "1", HANG_UNCUT)  # never returns

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("interrupted: cancelling the turns in progress")
    child.wait_for(") stopped; 1 interrupted turn:", timeout=120)  # after the grace
    hint = child.wait_for("--retry-interrupted")
    code, errors = child.finish(timeout=60)

    assert code == 130
    assert hint.startswith("akgentic teams resume ")
    assert errors.splitlines() == [
        "warning: the grace of 30s ran out with @Boss still running (in a tool call that "
        "has not ended); the team stopped without it"
    ], errors
    assert_the_cut_turn_is_retried(cli)


def test_a_tool_call_stuck_in_a_pool_thread_does_not_hold_the_exit(
    storage_url: str, spawn: Spawn
) -> None:
    """One Ctrl-C while an uncuttable tool call (``tool_timeout: null``) waits for ever on a
    ``ThreadPoolExecutor``'s thread (one
    the interpreter's exit joins): once the grace runs out the team is stopped without
    @Boss, and the process ends with 130, naming the thread it did not wait for — it sat
    at its exit for ever, joining that thread."""
    child = spawn(
        [str(AKGENTIC), "run", str(HANG_UNCUT)],
        child_env(
            storage_url,
            AKGENTIC_CLI_TEST_HANG="pool",
            AKGENTIC_CLI_TEST_GRACE="0.5",
            AKGENTIC_CLI_TEST_HANG_SAY="1",
        ),
    )
    child.write("please hang")
    child.wait_for("hang_step: inside")

    child.proc.send_signal(signal.SIGINT)
    child.wait_for(") stopped; 1 interrupted turn:")
    code, errors = child.finish(timeout=60)

    assert code == 130, errors
    assert errors.splitlines() == [
        "warning: the grace of 0.5s ran out with @Boss still running (in a tool call that "
        "has not ended); the team stopped without it",
        "warning: exiting without waiting for 1 thread still running (hang-pool_0; a call "
        "that has not returned?)",
    ], errors


def test_ctrl_c_during_the_start_up_imports_prints_no_traceback(
    storage_url: str, spawn: Spawn
) -> None:
    """The console script's entry, with the import of the framework held open until the
    test has sent its SIGINT (an import hook, so the signal lands inside the imports: those
    of the command's module, imported when the command is resolved, akgentic.cli.lazy)."""
    script = textwrap.dedent(
        """
        import sys, threading

        class Hold:
            def find_spec(self, name, path=None, target=None):
                if name == "pydantic_ai":
                    print("importing", flush=True)
                    threading.Event().wait()
                return None

        sys.meta_path.insert(0, Hold())
        sys.argv = ["akgentic", "teams", "show", "research"]
        from akgentic.cli.entry import main  # the console script's entry point
        main()
        """
    )
    child = spawn([sys.executable, "-c", script], child_env(storage_url))
    child.wait_for("importing")

    child.proc.send_signal(signal.SIGINT)
    code, errors = child.finish()

    assert code == 130
    assert errors == "interrupted before the command started: nothing was done\n"
