"""Turns a stop cuts are listed, however the stop came: the grace of a graceful stop that
runs out (the session's own, or one asked from another terminal) cuts a model request in
flight, and the session says so as after Ctrl-C. The model is an OpenAI-compatible
server that accepts the connection and never answers; nothing sleeps: a test waits for
the model's connection, or a line."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator

import pytest

from akgentic.cli import chat, interrupt
from akgentic.cli.live import LiveView
from akgentic.cli.watch import Watch
from akgentic.core import CancelMessage, SentMessage
from akgentic.storage import EventRecord, TeamStatus, open_storage, team_resource
from akgentic.team import StopWait, TeamManager, manager
from tests.team.gated import Gate, cut_once_a_resume_waits, gate
from tests.team.test_one_runner import process, stop_held_at_the_gate

from .conftest import (
    AKGENTIC,
    HANG,
    RESEARCH,
    Invoke,
    assert_in_order,
    assert_resume_hints,
    child_env,
)
from .test_ctrl_c import HANG_MODULE, Spawn

MODEL = "openai-compatible:foo"


@pytest.fixture
def silent_model() -> Iterator[socket.socket]:
    """A loopback server that accepts connections (its backlog does) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock


def base_url(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def assert_lists_the_cut_turn(stdout: str, line: str) -> None:
    """The session's last lines list the cut turn and how to retry it."""
    last = stdout.splitlines()[-6:]
    assert re.fullmatch(r"team research \(\w{8}\) stopped; 1 interrupted turn:", last[0])
    assert last[1] == f"  @Human → @Manager: {line}"
    assert_resume_hints(last[2:], "akgentic teams resume ")


def test_a_turn_the_grace_of_quit_cuts_is_listed_and_a_retry_of_it_too(
    cli: Invoke, silent_model: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/quit`` while a turn waits for its model: the graceful stop's grace runs out and
    the turn is cut (it ended "interrupted"); it is listed as after Ctrl-C. A resume that
    retries it, its input ended at once, waits for it (said) and lists it again."""
    monkeypatch.setattr(chat, "GRACE", 0.2)
    url = base_url(silent_model)

    run = cli("run", str(RESEARCH), "--timeout", "1", "--model", MODEL, "--base-url", url,
              input="q1\n/quit\n")  # fmt: skip

    assert run.exit_code == 0, run.output
    assert "no answer within 1s; the team goes on" in run.stdout
    assert_lists_the_cut_turn(run.stdout, "q1")
    short = run.stdout.split("team research (", 1)[1][:8]
    assert "interrupted turns: 1" in cli("teams", "show", short).stdout

    # the session's follower is held until the session asks it to read the retried turn:
    # the "waiting for the turns" line does not depend on which thread runs first
    asked = threading.Event()
    render, catch_up = LiveView.render, Watch.catch_up

    def held_render(view: LiveView, record: EventRecord) -> None:
        asked.wait(30)
        render(view, record)

    def asking(watch: Watch, seq: int, timeout: float) -> None:
        asked.set()
        catch_up(watch, seq, timeout)

    monkeypatch.setattr(LiveView, "render", held_render)
    monkeypatch.setattr(Watch, "catch_up", asking)
    retried = cli("teams", "resume", short, "--retry-interrupted", input="")

    assert retried.exit_code == 0, retried.output
    assert_in_order(
        retried.stdout,
        [
            "delivered 1 interrupted message again",
            "stopping the team: waiting for the turns in progress (up to 0.2s; Ctrl-C to "
            "cancel them)",
        ],
    )
    assert_lists_the_cut_turn(retried.stdout, "q1")


def test_run_m_stopped_from_elsewhere_mid_request_says_why_and_how_to_get_the_answer(
    cli: Invoke, storage_url: str, silent_model: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run -m`` whose team is marked STOPPED (as ``teams stop`` does) while its turn
    waits for the model: the grace runs out, the turn is cut; the error says why the team
    stopped and to resume it with --retry-interrupted."""
    monkeypatch.setattr(manager, "STOP_GRACE", 0.2)
    store = open_storage(storage_url)
    held: list[socket.socket] = []  # the model's connection, open (unanswered) to the end

    def stop_once_asked() -> None:
        silent_model.settimeout(60)
        held.append(silent_model.accept()[0])  # the turn's model request: in progress
        [team] = store.teams.list()
        store.teams.set_status(team.team_id, TeamStatus.STOPPED)

    stopper = threading.Thread(target=stop_once_asked, daemon=True)
    stopper.start()
    try:
        run = cli("run", str(RESEARCH), "-m", "q1", "--model", MODEL, "--base-url",
                  base_url(silent_model))  # fmt: skip
    finally:
        stopper.join(60)
        store.close()
        for connection in held:
            connection.close()

    assert run.exit_code == 1, run.output
    short = run.stdout.split("team research (", 1)[1][:8]
    assert run.stderr.splitlines() == [
        "error: the team stopped before answering: it was stopped from elsewhere (akgentic "
        "teams stop); a turn the answer needs was cut: to get the answer, resume it with: "
        f"akgentic teams resume {short} --storage {storage_url} --retry-interrupted"
    ]
    assert_lists_the_cut_turn(run.stdout, "q1")


def test_teams_stop_and_resume_of_a_team_mid_turn_say_it_waits_for_the_turns(
    cli: Invoke, storage_url: str, spawn: Spawn
) -> None:
    """``teams stop`` of a team mid-turn says its process waits for the turns in progress
    (up to the grace); a resume meanwhile says it waits for that stop, waits for it to end
    (the grace runs out on a tool call that never returns; a grace of 1s here), then
    resumes the team and offers the turn the stop cut again."""
    child = spawn(
        [str(AKGENTIC), "run", str(HANG)],
        child_env(storage_url, AKGENTIC_CLI_TEST_HANG="1", AKGENTIC_CLI_TEST_STOP_GRACE="1"),
    )
    child.write("please hang")
    child.wait_for("⚙ @Boss → hang_step(label=please hang)")  # a tool call that never returns
    [team] = (store := open_storage(storage_url)).teams.list()
    store.close()
    short = str(team.team_id)[:8]

    stopped = cli("teams", "stop", short)
    resumed = cli("teams", "resume", short, "--import", HANG_MODULE)

    assert stopped.exit_code == 0, stopped.output
    said = stopped.stdout.splitlines()[-1]
    assert said.startswith(f"the process running it (pid {child.proc.pid} on host ")
    assert said.endswith(
        "notices within a second or so and stops it gracefully: it waits for the turns in "
        "progress (up to 30s), then says so: a run or resume session exits, a server "
        "serves on"
    )
    assert resumed.exit_code == 0, resumed.output  # it was refused: "is stopping"
    said = resumed.stdout.splitlines()
    # the child's stop holds the team for its grace (1s), cut on the tool call: waited
    # for, and said so when the resume began within it (the deterministic check of that
    # line is the test below: here a busy machine may start the resume after the stop)
    waiting = re.fullmatch(
        rf"team hanging \({short}\) is stopping in process {child.proc.pid} on host \S+: "
        r"waiting for its stop \(up to \d+s\)",
        said[0],
    )
    if waiting:
        said = said[1:]
    assert said[0].startswith(f"team hanging ({short}) resumed: @Boss (entry point)")
    # the turn the stop cut (received, never processed) is offered again
    assert said[1:4] == [
        "1 turn was interrupted:",
        "  @Human → @Boss: please hang",
        "  rerun with --retry-interrupted to deliver it again, or --dismiss-interrupted to "
        "give it up",
    ]
    child.finish(60)  # its session ended once its team had stopped, before the resume


def test_a_resume_that_waits_for_a_stop_elsewhere_says_so_as_its_wait_begins(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop held in its grace by a turn at the gate (another process, as far as the
    store can tell): ``teams resume`` meanwhile says who is stopping the team and how
    long it waits at most, before the wait (the gate opens only once it is said), then
    resumes the team once the stop has ended."""
    tell = TeamManager._tell_stop_wait

    def said_then_open(manager: TeamManager, notice: StopWait) -> None:
        tell(manager, notice)
        Gate.release.set()  # the turn ends, the stop with it: the resume goes on

    monkeypatch.setattr(TeamManager, "_tell_stop_wait", said_then_open)
    for _ in gate():
        with process(storage_url) as first:
            runtime, stopping = stop_held_at_the_gate(first)
            team_id = runtime.team_id
            resumed = cli("teams", "resume", str(team_id)[:8], input="")
            stopping.join(60)

    assert resumed.exit_code == 0, resumed.output
    short = str(team_id)[:8]
    holder = first.holder
    assert resumed.stdout.splitlines()[:2] == [
        f"team blocking ({short}) is stopping in process {holder.pid} on host {holder.host}: "
        f"waiting for its stop (up to {manager.RESUME_WAIT:g}s)",
        f"team blocking ({short}) resumed: @Boss (entry point)",
    ]


def test_a_resume_that_waited_for_a_stop_shows_nothing_of_that_stop(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop (of another process, as far as the store can tell) whose grace runs out
    while a resume waits for it: the cancel the grace's end sends the turn — held until the
    resume has begun to wait — and the rest of that stop are written during the wait, and
    are the past. The resumed session shows none of it (it showed the cancel's "grace ran
    out" line, and listed the turn that stop cut as cut by its own stop), and does not take
    the team, RUNNING when it looked, for one that crashed."""
    cut_once_a_resume_waits(monkeypatch, Gate.release.set)
    for _ in gate():
        with process(storage_url) as first:
            runtime, stopping = stop_held_at_the_gate(first, grace=0.5)
            team_id = runtime.team_id
            resumed = cli("teams", "resume", str(team_id)[:8], input="")
            stopping.join(60)
            log = first.storage.events.read(team_id)

    assert resumed.exit_code == 0, resumed.output
    # the stop's cancel is in the log, written while the resume waited
    assert [
        r.message.message.reason
        for r in log
        if isinstance(r.message, SentMessage) and isinstance(r.message.message, CancelMessage)
    ] == ["the team's stop grace of 0.5s ran out"]
    short = str(team_id)[:8]
    holder = first.holder
    said = resumed.stdout.splitlines()
    assert re.fullmatch(  # how long: what is left of the stop's grace and margin
        rf"team blocking \({short}\) is stopping in process {holder.pid} on host "
        rf"{re.escape(holder.host)}: waiting for its stop \(up to [\d.]+s\)",
        said[0],
    )
    assert said[1:5] == [
        f"team blocking ({short}) resumed: @Boss (entry point)",
        "1 turn was interrupted:",
        "  @Human → @Boss: please block",
        "  rerun with --retry-interrupted to deliver it again, or --dismiss-interrupted to "
        "give it up",
    ]
    assert "ran out" not in resumed.stdout
    assert "@Orchestrator" not in resumed.stdout
    # the session's own stop cut nothing: the turn is still offered, for the next resume
    assert said[-1] == (
        f"team blocking ({short}) stopped; resume it with: akgentic teams resume {short} "
        f"--storage {storage_url}"
    )
    assert "did not stop cleanly" not in resumed.stderr


def test_ctrl_c_ends_a_resume_waiting_for_a_stop_elsewhere_at_once_nothing_resumed(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while ``teams resume`` waits for another process's stop (held in its grace
    by a turn at the gate, which stays closed): the resume gives up there and then —
    ``interrupted before the team was resumed: nothing was changed``, exit 130 — rather
    than waiting out the stop (up to 45s) and resuming the team only to stop it again.
    Nothing is leased or written: the team is the other process's, still stopping. The
    Ctrl-C comes as the wait begins (the signal handler's part: the pending event that the
    CLI's safe points raise)."""
    tell = TeamManager._tell_stop_wait

    def said_then_ctrl_c(manager: TeamManager, notice: StopWait) -> None:
        tell(manager, notice)
        interrupt._quiet[-1].set()  # what the first Ctrl-C does inside interrupt.deferred

    monkeypatch.setattr(TeamManager, "_tell_stop_wait", said_then_ctrl_c)
    for _ in gate():
        with process(storage_url) as first:
            runtime, stopping = stop_held_at_the_gate(first)
            team_id = runtime.team_id
            last = first.storage.events.last_seq(team_id)
            resumed = cli("teams", "resume", str(team_id)[:8], input="")
            still_stopping = stopping.is_alive()
            lease = first.storage.leases.inspect(team_resource(team_id))
            written = first.storage.events.last_seq(team_id)
            Gate.release.set()
            stopping.join(60)

    assert resumed.exit_code == interrupt.EXIT_INTERRUPTED, resumed.output
    assert still_stopping  # the resume did not wait for the stop's end
    assert "waiting for its stop" in resumed.stdout
    assert "resumed" not in resumed.stdout
    assert resumed.stderr.strip() == "interrupted before the team was resumed: nothing was changed"
    assert lease is not None and lease.holder == first.holder
    assert written == last
