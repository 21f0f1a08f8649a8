"""A graceful stop of ``akgentic serve`` drains: from the first Ctrl-C (or SIGTERM) until
its teams have stopped, the server still listens — ``/health`` answers 503
``{"status": "draining"}``, what would start work (create or resume a team, a message, a
command) is a 503 with one line saying the server is shutting down, reads still work —
and then it exits. The team's turn is held by a FIFO the test opens, never by time."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from uuid import UUID

import httpx
import pytest

from akgentic.client import AkgenticClient, RemoteTeam, ServerError
from akgentic.storage import TeamStatus, open_storage, sqlite_url
from tests.cli import hang_tool
from tests.cli.conftest import AKGENTIC, HANG, HANG_UNCUT, Child, child_env
from tests.server.conftest import Served, kind

SHUTTING_DOWN = "the server is shutting down"


def _release(fifo: Path) -> None:
    """Let the held ``hang_step`` return: it opens the FIFO to read and waits for a writer
    to open and close it. Opening to write waits for that reader (the ToolCall record
    may come before hang_step opens the FIFO), on a thread: a server that is gone fails
    the test instead of hanging it."""

    def write() -> None:
        with open(fifo, "w"):
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(60)
    assert not writer.is_alive(), "nothing read the FIFO: the held turn is gone"


def serve_hang_card(tmp_path: Path, hang: str, card: Path = HANG) -> tuple[Child, str, str]:
    """``akgentic serve`` of the hang card in a child (``hang``: what its tool call waits
    for), its store in ``tmp_path``: the child, its URL and the storage URL."""
    storage = sqlite_url(tmp_path / "serve.db")
    env = child_env(storage, AKGENTIC_CLI_TEST_HANG=hang)
    child = Child([str(AKGENTIC), "serve", "--port", "0", "--cards", str(card)], env)
    try:
        said = child.wait_for("akgentic serving on ")
    except BaseException:
        child.stop()
        raise
    return child, said.split("serving on ")[1].split()[0], storage


def until_the_tool_call(team: RemoteTeam) -> None:
    """Follow ``team`` until its turn is inside the held tool call."""
    for record in team.follow(idle_timeout=60):
        if kind(record) == "ToolCall":
            return


def assert_stored_stopped(storage: str, team_id: UUID) -> None:
    bundle = open_storage(storage)
    try:
        assert bundle.teams.get(team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]
    finally:
        bundle.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stopping_server_answers_while_its_teams_stop_and_refuses_new_work(
    tmp_path: Path, sig: signal.Signals
) -> None:
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    child, url, storage = serve_hang_card(tmp_path, str(fifo))
    try:
        with AkgenticClient(url) as client:
            assert hang_tool.HangStep  # defined here too, so the team's records decode
            team = client.create_team("hanging")
            idle = client.create_team("hanging")
            idle.stop()
            team.send("please hang")
            until_the_tool_call(team)
            child.proc.send_signal(sig)
            child.wait_for("stopping: ")  # said once the server drains

            health = httpx.get(f"{url}/health", timeout=30)
            assert health.status_code == 503
            assert health.json()["status"] == "draining"
            assert health.json()["teams_running"] == 1
            assert client.health().status == "draining"  # the client reads it as a Health

            refused = [
                lambda: client.create_team("hanging"),
                lambda: team.send("more work"),
                lambda: team.command("/compact"),
                lambda: client.resume_team(idle.team_id),
            ]
            for call in refused:
                with pytest.raises(ServerError) as err:
                    call()
                assert err.value.status == 503
                assert SHUTTING_DOWN in err.value.detail
                assert "\n" not in err.value.detail

            assert client.info(team.team_id).running  # reads still work
            assert [t.team_id for t in client.list_teams()] == [idle.team_id, team.team_id]
            assert team.history(limit=1)

            _release(fifo)
            code, errors = child.finish(60)
    finally:
        child.stop()  # a server still running (a failed test) is killed, held turn and all
    assert code == 128 + sig, errors  # 130 after Ctrl-C, 143 after SIGTERM
    assert "Traceback" not in errors, errors
    assert_stored_stopped(storage, team.team_id)


def test_a_draining_server_refuses_work_in_one_line_and_answers_reads(served: Served) -> None:
    """The same, in process: the app's draining state, as ``akgentic serve`` sets it."""
    team = served.client.create_team("turns")
    served.app.state.context.draining = True
    response = httpx.get(f"{served.url}/health", timeout=30)
    assert response.status_code == 503
    assert response.json() == {
        "status": "draining",
        "version": response.json()["version"],
        "teams_running": 1,
    }
    for method, path, body in [
        ("POST", "/teams", {"card": "turns"}),
        ("POST", f"/teams/{team.team_id}/messages", {"content": "hi"}),
        ("POST", f"/teams/{team.team_id}/commands", {"command": "/compact"}),
        ("POST", f"/teams/{team.team_id}/resume", {"retry_interrupted": True}),
    ]:
        answer = httpx.request(method, f"{served.url}{path}", json=body, timeout=30)
        assert answer.status_code == 503, (path, answer.text)
        detail = answer.json()["detail"]
        assert detail.startswith(SHUTTING_DOWN) and "\n" not in detail
        assert answer.headers.get("retry-after")
    assert httpx.get(f"{served.url}/teams/{team.team_id}", timeout=30).status_code == 200
    assert httpx.get(f"{served.url}/teams", timeout=30).status_code == 200
    assert served.client.stop_team(team.team_id).status == "STOPPED"  # stopping is not work


def test_a_member_stuck_in_a_tool_call_does_not_hold_up_the_servers_exit(
    tmp_path: Path,
) -> None:
    """An uncuttable tool call (``tool_timeout: null``) that never returns: once the team
    has had its grace the server stops it without that member, logs one line naming whom
    it leaves behind, and exits with no further wait for it."""
    child, url, storage = serve_hang_card(tmp_path, "1", HANG_UNCUT)  # never returns
    try:
        with AkgenticClient(url) as client:
            assert hang_tool.HangStep  # defined here too, so the team's records decode
            team = client.create_team("hanging")
            team.send("please hang")
            until_the_tool_call(team)
            child.proc.send_signal(signal.SIGTERM)
            code, errors = child.finish(120)  # the team's grace (30s), then the exit
    finally:
        child.stop()
    assert code == 143, errors
    left = [line for line in errors.splitlines() if "has not returned" in line]
    assert len(left) == 1 and "@Boss is stuck in a call that has not returned" in left[0], errors
    assert "Traceback" not in errors, errors
    assert_stored_stopped(storage, team.team_id)


@pytest.mark.parametrize("handled", [False, True], ids=["embedder", "akgentic-serve"])
def test_sigterm_drains_unless_the_caller_says_its_handler_does(handled: bool) -> None:
    """An application embedding ``serve(stop=...)`` may have a SIGTERM handler of its own
    (one that logs, say): SIGTERM still sets ``stop`` — only ``sigterm_handled`` (what
    ``akgentic serve`` passes) leaves SIGTERM to the caller."""
    import uvicorn
    from fastapi import FastAPI

    from akgentic.server.serve import _Server

    stop = threading.Event()
    heard: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: heard.append(signum))
    try:
        server = _Server(
            uvicorn.Config(FastAPI()), FastAPI(), stop, None, lambda: None, sigterm_handled=handled
        )
        with server.capture_signals():
            handler = signal.getsignal(signal.SIGTERM)
            assert callable(handler)
            handler(signal.SIGTERM, None)
        assert stop.is_set() is not handled
        assert heard == ([signal.SIGTERM] if handled else [])
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_session_whose_server_shuts_down_says_so_and_ends_without_waiting_it_out(
    tmp_path: Path,
) -> None:
    """``akgentic run --server`` on a team the server stops as it shuts down: the stream
    says the team stopped before the server goes (its last records, then ``stopped``), so
    the session ends at once, saying why — not after its reconnections to a server that
    is gone have failed, with a failed stop of a team the server already stopped."""
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    server, url, storage = serve_hang_card(tmp_path, str(fifo))
    session = Child([str(AKGENTIC), "run", str(HANG), "--server", url], child_env())
    try:
        session.wait_for("Write to @Boss")
        session.write("please hang")
        session.wait_for("hang_step")  # the turn is inside the held tool call
        server.proc.send_signal(signal.SIGTERM)
        server.wait_for("stopping: ")  # draining: the team has its grace
        _release(fifo)
        code, errors = server.finish(60)
        assert code == 143, errors
        out = session.output(120)  # the session ends by itself: its team stopped
        session_code, session_errors = session.finish(30)
    finally:
        session.stop()
        server.stop()
    assert session_code == 0, session_errors
    [said] = [line for line in out.splitlines() if " stopped: " in line]
    assert said.endswith(
        "stopped: the server is shutting down, and its teams stop with it"
    ) or said.endswith(
        "stopped: the server stopped answering (it shut down, or it cannot be reached)"
    )
    assert "did not stop cleanly" not in out + session_errors
    assert "Traceback" not in session_errors
    bundle = open_storage(storage)
    try:
        [team] = bundle.teams.list()
    finally:
        bundle.close()
    assert_stored_stopped(storage, team.team_id)  # the server stopped it as it shut down


def test_a_head_probe_of_health_gets_the_status_a_get_gets(served: Served) -> None:
    """Load balancers and probes (``curl -I``) often ask ``HEAD /health``: 200 while the
    server serves, 503 while it drains, as ``GET`` (not a 405)."""
    up = httpx.head(f"{served.url}/health", timeout=30)
    assert (up.status_code, up.content) == (200, b"")
    served.app.state.context.draining = True
    try:
        draining = httpx.head(f"{served.url}/health", timeout=30)
    finally:
        served.app.state.context.draining = False
    assert (draining.status_code, draining.content) == (503, b"")


FEW_RECONNECTS = """
import sys
from akgentic.client import client
client.RECONNECTS = 2  # the session gives up on a dead server in a second, not a minute
sys.argv = ["akgentic", *sys.argv[1:]]
from akgentic.cli.entry import main
main()
"""


def test_a_session_whose_server_is_killed_says_the_server_is_gone_and_how_to_resume(
    tmp_path: Path,
) -> None:
    """The server dies at once (kill -9), its team mid-turn: past its reconnections the
    session asks the server's health, finds nothing answers, and ends as when a server
    shuts down — the team stopped with its server, and how to resume it — not with the
    event stream's failure and nothing to do."""
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    server, url, _ = serve_hang_card(tmp_path, str(fifo))
    argv = [sys.executable, "-c", FEW_RECONNECTS, "run", str(HANG), "--server", url]
    try:
        session = Child(argv, child_env())
    except BaseException:
        server.stop()
        raise
    try:
        session.wait_for("Write to @Boss")
        session.write("please hang")
        session.wait_for("hang_step")  # the turn is inside the held tool call
        server.proc.kill()
        server.finish(60)
        out = session.output(120)  # the session ends by itself: its server is gone
        _, errors = session.finish(30)
    finally:
        session.stop()
        server.stop()
    assert "stopped: the server stopped answering (it shut down, or it cannot be reached)" in out
    assert "resume it with: akgentic teams resume " in out
    assert "keeps failing" not in out + errors
    assert "Traceback" not in errors
