"""workspace_exec through the card: the sandbox for real (bubblewrap), and the lease, the
budgets and poll_attempts with a backend the test holds in its hand."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.tool.core import COMMAND, TOOL_CALL
from akgentic.tool.core.time_bound import run_within
from akgentic.tool.errors import RetriableError
from akgentic.tool.sandbox import (
    ALLOWED_COMMANDS,
    BubblewrapBackend,
    ExecLimits,
    ExecResult,
    SandboxNotReadyError,
    registry,
)
from akgentic.tool.sandbox.backend import Started
from akgentic.tool.workspace import (
    ExecFinishedEvent,
    ExecRun,
    ExecStartedEvent,
    GitJournal,
    RunStatus,
    WorkspaceChangeEvent,
    WorkspaceExec,
    WorkspaceTool,
)
from akgentic.tool.workspace.execution import ExecLease, RunBook
from akgentic.tool.workspace.gate import write_yaml

from ..conftest import Team
from ..sandbox.conftest import running
from .conftest import (
    Tools,
    add_member,
    card_of,
    events_of,
    eventually,
    factory_of,
    tools_of,
    wait_events,
)

# -- for real, in bubblewrap ---------------------------------------------------------------------


@pytest.fixture
def real_sandbox(bwrap: BubblewrapBackend, monkeypatch: pytest.MonkeyPatch) -> BubblewrapBackend:
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", bwrap)
    return bwrap


def coder(team: Team, **exec_settings: object) -> Tools:
    card = WorkspaceTool(workspace_exec=WorkspaceExec(**exec_settings), git_journal=True)  # type: ignore[arg-type]
    return tools_of(team, add_member(team, "@Coder", card))


def test_a_command_runs_in_the_tree_and_its_work_is_announced_and_committed(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    tools = coder(team)
    tools["workspace_write"]("app.py", "print('hello from the sandbox')\n")
    answer = tools["workspace_exec"]("python3 app.py > out.txt && cat out.txt")
    lines = answer.splitlines()
    assert lines[0] == "$ python3 app.py > out.txt && cat out.txt"
    assert lines[1].startswith("exit_code: 0 (") and lines[1].endswith("s, bubblewrap)")
    assert lines[2:] == ["--- output ---", "hello from the sandbox", "--- files changed: out.txt"]
    [started] = events_of(team, ExecStartedEvent)
    [finished] = events_of(team, ExecFinishedEvent)
    assert (started.agent, started.command, started.backend) == (
        "@Coder",
        "python3 app.py > out.txt && cat out.txt",
        "bubblewrap",
    )
    assert (finished.exit_code, finished.changed, finished.run_id) == (
        0,
        ["out.txt"],
        started.run_id,
    )
    change = events_of(team, WorkspaceChangeEvent)[-1]
    assert (change.op, change.path, change.agent) == ("exec", "out.txt", "@Coder")
    workspace = card_of(team, _member(team)).workspace
    last = GitJournal(workspace.tree, workspace.git_dir).log(1)[0]
    assert (last.author, last.message) == (
        "@Coder",
        "exec: python3 app.py > out.txt && cat out.txt",
    )


def test_a_sparse_file_of_gigabytes_a_command_leaves_is_left_out_of_the_journal_saying_so(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    """git add read whatever a command left: a sparse file of 3 GB (no disk used) was read
    whole and stored in the history. It is left out of the run's commit, and the run's
    answer says which file and why, in one line; the rest of the run is committed."""
    tools = coder(team)
    command = "python3 -c \"open('big.bin', 'wb').truncate(3 * 2**30)\" && echo kept > small.txt"
    lines = tools["workspace_exec"](command).splitlines()
    assert lines[1].startswith("exit_code: 0 (")
    assert lines[-2:] == [
        "--- files changed: big.bin, small.txt",
        "--- left out of the journal, over the 20,971,520 bytes it takes: big.bin",
    ]
    workspace = card_of(team, _member(team)).workspace
    assert (workspace.tree / "big.bin").stat().st_size == 3 * 2**30
    last = GitJournal(workspace.tree, workspace.git_dir).log(1)[0]
    assert (last.author, last.message) == (
        "@Coder",
        f"exec: {command} [left out of the journal, over the 20,971,520 bytes it takes: big.bin]",
    )
    committed = subprocess.run(
        ["git", f"--git-dir={workspace.git_dir}", "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "small.txt" in committed and "big.bin" not in committed


def _member(team: Team) -> object:
    [member] = [m for m in team.proxy.get_team() if m.name == "@Coder"]
    return member


def test_a_command_off_the_allowlist_never_starts(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    tools = coder(team)
    with pytest.raises(RetriableError, match="The command was not run: 'curl' is not on"):
        tools["workspace_exec"]("curl https://example.com")
    narrow = tools_of(
        team,
        add_member(
            team, "@Narrow", WorkspaceTool(workspace_exec=WorkspaceExec(allowed_commands=["ls"]))
        ),
    )
    with pytest.raises(RetriableError, match="Allowed: ls."):
        narrow["workspace_exec"]("python3 -V")
    assert events_of(team, ExecStartedEvent) == []


def test_a_refusal_names_the_whole_default_allowlist_and_an_excerpt_of_the_command(
    team: Team,
) -> None:
    """The model learns what it may run: the refusal carries every allowed program (the
    default list is ~360 characters), and only the offending program is cut to an excerpt."""
    tools = coder(team)
    listing = ", ".join(sorted(ALLOWED_COMMANDS))
    assert len(listing) > 200  # far past an 80-character excerpt
    with pytest.raises(RetriableError) as refused:
        tools["workspace_exec"]("curl http://example.com")
    assert str(refused.value) == (
        "The command was not run: 'curl' is not on this workspace's command allowlist. "
        f"Allowed: {listing}."
    )
    hostile = "x" * 10_000
    with pytest.raises(RetriableError) as refused:
        tools["workspace_exec"](f"ls; {hostile} --now")
    said = str(refused.value)
    assert said.startswith("The command was not run: 'xxxx") and said.endswith(
        f"(10002 characters) is not on this workspace's command allowlist. Allowed: {listing}."
    )
    assert len(said) < len(listing) + 250
    assert events_of(team, ExecStartedEvent) == []


def test_a_command_killed_at_its_budget_answers_exit_code_124(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    # 5 s, not 1: on a loaded machine bubblewrap's own start can take seconds, and "begun"
    # must be printed before the budget runs out for the assertion to hold
    tools = coder(team, timeout_seconds=5)
    answer = tools["workspace_exec"]("echo begun && sleep 30")
    assert "exit_code: 124" in answer and "killed at its 5s budget" in answer and "begun" in answer
    [finished] = wait_events(team, ExecFinishedEvent, 1)
    assert finished.timed_out and finished.exit_code == 124


def test_a_cancelled_exec_call_kills_its_command(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    """A turn interrupted while workspace_exec waits cancels the call (awaited on its own
    thread, as an agent awaits a tool held to its bound): the command's process group is
    killed, not left to run on; the run still reports, and frees the tree."""
    tools = coder(team, timeout_seconds=600)
    command = "sleep 597"

    async def interrupted() -> None:
        call = asyncio.ensure_future(
            run_within(600, "workspace_exec", tools["workspace_exec"], command)
        )
        await asyncio.to_thread(wait_events, team, ExecStartedEvent, 1)
        # the event says the run started, not that the sandbox has exec'd the command yet
        await asyncio.to_thread(eventually, lambda: running(command))
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    asyncio.run(interrupted())
    [finished] = wait_events(team, ExecFinishedEvent, 1)
    assert finished.exit_code == 137 and not finished.timed_out  # killed, not at its budget
    eventually(lambda: not running(command))
    assert "exit_code: 0" in tools["workspace_exec"]("true")  # the tree is free again


def test_long_output_comes_back_cut_with_a_note(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    tools = coder(team, max_output_chars=1000)
    answer = tools["workspace_exec"]("seq 1 50000")
    assert "characters of output omitted" in answer and answer.rstrip().endswith("50000")


def test_a_command_that_makes_a_name_that_is_not_utf8_still_reports_its_run(
    team: Team, real_sandbox: BubblewrapBackend
) -> None:
    """The run's record could not hold the name, so the run never reported: the model read
    "still running" for ever, and no event said what the command did."""
    tools = coder(team)
    tools["workspace_write"]("mk.py", "open(b'caf\\xe9.txt', 'wb').write(b'x')\nprint('made')\n")
    answer = tools["workspace_exec"]("python3 mk.py && echo ok > ok.txt")
    assert answer.splitlines()[1].startswith("exit_code: 0 (")
    assert answer.splitlines()[3:] == ["made", "--- files changed: ok.txt"]
    [finished] = wait_events(team, ExecFinishedEvent, 1)
    assert (finished.exit_code, finished.changed) == (0, ["ok.txt"])


@pytest.mark.parametrize("run_id", ["\x00", "ab\x00cd", "\ud800", "..", "a/b", "x" * 65])
def test_a_run_id_that_is_no_file_name_is_no_such_run(team: Team, run_id: str) -> None:
    """A NUL or a lone surrogate reached the filesystem, which raised instead of answering."""
    tools = coder(team)
    with pytest.raises(RetriableError, match="There is no run .* in this workspace; check the id"):
        tools["workspace_exec_result"](run_id)


def test_with_no_backend_exec_says_it_is_unavailable_and_why(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", "none")
    tools = coder(team)
    with pytest.raises(RetriableError) as refused:
        tools["workspace_exec"]("ls")
    assert str(refused.value).startswith(
        "Exec is unavailable in this workspace: exec is switched off on this deployment"
    )
    assert "No command was run" in str(refused.value)


# -- the lease and the budgets, with a backend held by the test ----------------------------------


class HeldBackend:
    """Starts at once, writes ``held.txt`` in the tree, and ends when the test says so."""

    name = "held"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.running = threading.Event()
        self.prepare_error: Exception | None = None

    def unavailable_reason(self) -> str | None:
        return None

    def prepare(self, timeout: float) -> None:
        if self.prepare_error is not None:
            raise self.prepare_error

    def run(
        self, tree: Path, command: str, limits: ExecLimits, started: Started | None = None
    ) -> ExecResult:
        if started is not None:
            started(lambda: self.release.set())
        (tree / "held.txt").write_text(command)
        self.running.set()
        self.release.wait(30)
        return ExecResult(
            exit_code=0, output=f"ran {command}\n", duration_seconds=0.01, backend=self.name
        )


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldBackend]:
    backend = HeldBackend()
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", backend)
    yield backend
    backend.release.set()


def run_id_of(answer: str) -> str:
    return answer.split("run id ")[1].split(")")[0].split(",")[0]


def test_poll_attempts_zero_hands_back_a_run_id_and_the_result_comes_later(
    team: Team, held: HeldBackend
) -> None:
    tools = coder(team, poll_attempts=0)
    answer = tools["workspace_exec"]("make build")
    assert answer.startswith("Started (run id ") and 'workspace_exec_result(run_id="' in answer
    run_id = run_id_of(answer)
    held.running.wait(10)
    assert "still running (run id" in tools["workspace_exec_result"](run_id)
    held.release.set()
    wait_events(team, ExecFinishedEvent, 1)
    assert tools["workspace_exec_result"](run_id).splitlines()[-3:] == [
        "--- output ---",
        "ran make build",
        "--- files changed: held.txt",
    ]
    with pytest.raises(RetriableError, match="There is no run 'nope' in this workspace"):
        tools["workspace_exec_result"]("nope")


def test_as_commands_exec_and_its_result_name_what_a_person_types(
    team: Team, held: HeldBackend
) -> None:
    """Exposed on COMMAND, a person starts a run with /workspace_exec and reads it with
    /workspace_exec_result: every answer naming the way to the outcome names that
    command, while the model's tools keep naming their call."""
    card = WorkspaceTool(
        workspace_exec=WorkspaceExec(
            expose={TOOL_CALL, COMMAND}, poll_attempts=0, poll_delay_seconds=0.05
        )
    )
    member = add_member(team, "@Coder", card)
    commands = factory_of(team, member).get_command_registry()
    assert {"workspace_exec", "workspace_exec_result"} <= set(commands.names())
    assert "/workspace_exec_result." in commands.describe("workspace_exec")

    started = commands.dispatch("/workspace_exec make build --jobs 2")
    run = run_id_of(started)
    assert started == (
        f"Started (run id {run}). Ask for the outcome with /workspace_exec_result {run}."
    )
    held.running.wait(10)
    assert (card_of(team, member).workspace.tree / "held.txt").read_text() == "make build --jobs 2"
    with pytest.raises(RetriableError) as busy:
        commands.dispatch("/workspace_exec make other")
    assert str(busy.value).endswith(
        f"Wait for it with /workspace_exec_result {run}, or try again after."
    )
    still = commands.dispatch(f"/workspace_exec_result {run}")
    assert still.startswith(f"$ make build --jobs 2\nstill running (run id {run}, ")
    assert still.endswith(f"Ask again with /workspace_exec_result {run}.")

    tools = tools_of(team, member)  # the model's: its call, not a /command
    assert tools["workspace_exec_result"](run).endswith(
        f'Ask again with workspace_exec_result(run_id="{run}").'
    )
    with pytest.raises(RetriableError) as busy:
        tools["workspace_exec"]("make other")
    assert f'Wait for it with workspace_exec_result(run_id="{run}")' in str(busy.value)

    held.release.set()
    wait_events(team, ExecFinishedEvent, 1)
    assert commands.dispatch(f"/workspace_exec_result {run}").splitlines()[-3:] == [
        "--- output ---",
        "ran make build --jobs 2",
        "--- files changed: held.txt",
    ]


def test_a_positive_poll_budget_looks_that_long_then_hands_back_the_run_id(
    team: Team, held: HeldBackend
) -> None:
    tools = coder(team, poll_attempts=2, poll_delay_seconds=0.05)
    answer = tools["workspace_exec"]("make slow")
    assert answer.startswith("$ make slow\nstill running (run id ")
    held.release.set()
    wait_events(team, ExecFinishedEvent, 1)
    assert "exit_code: 0" in tools["workspace_exec_result"](run_id_of(answer))


def test_the_lease_is_exclusive_and_a_live_overrun_is_never_taken_over(
    team: Team, held: HeldBackend
) -> None:
    tools = coder(team, poll_attempts=0)
    first = run_id_of(tools["workspace_exec"]("make first"))
    held.running.wait(10)
    with pytest.raises(RetriableError) as busy:
        tools["workspace_exec"]("make second")
    assert f"The workspace is busy: @Coder is running `make first` (run {first})" in str(busy.value)
    # Push the holder's deadline into the past: it has overrun, and it is still alive.
    lease = ExecLease(card_of(team, _member(team)).workspace.index_dir)
    holder = lease.holder()
    assert holder is not None and holder.run_id == first and holder.status == RunStatus.RUNNING
    write_yaml(
        lease.record_path,
        holder.model_copy(update={"deadline": time.time() - 42}).model_dump(mode="json"),
    )
    with pytest.raises(
        RetriableError, match=r"has overrun its deadline by 4\ds and is still running"
    ):
        tools["workspace_exec"]("make second")
    held.release.set()
    wait_events(team, ExecFinishedEvent, 1)
    eventually(lambda: lease.holder() is None)
    assert "Started" in tools["workspace_exec"]("make second")


def test_a_lease_whose_holder_is_gone_is_reclaimed_and_recorded(
    team: Team, held: HeldBackend
) -> None:
    tools = coder(team, poll_attempts=0)
    tools["workspace_write"]("x.txt", "x\n")  # the tree exists
    index_dir = card_of(team, _member(team)).workspace.index_dir
    lease = ExecLease(index_dir)
    ghost = ExecRun(
        run_id="ghost",
        command="make ghost",
        agent="@Gone",
        status=RunStatus.RUNNING,
        deadline=time.time() - 5,
    )
    write_yaml(lease.record_path, ghost.model_dump(mode="json"))  # a record, but nobody's flock
    answer = tools["workspace_exec"]("make now")
    assert answer.startswith("Started")
    reclaimed = RunBook(index_dir).load("ghost")
    assert reclaimed is not None and reclaimed.status == RunStatus.RECLAIMED
    held.release.set()


def test_a_run_that_reports_after_losing_its_lease_is_committed_as_nobody(
    team: Team, held: HeldBackend
) -> None:
    tools = coder(team, poll_attempts=0)
    run_id = run_id_of(tools["workspace_exec"]("make late"))
    held.running.wait(10)
    workspace = card_of(team, _member(team)).workspace
    lease = ExecLease(workspace.index_dir)
    other = ExecRun(run_id="other", command="make other", agent="@Other", status=RunStatus.RUNNING)
    write_yaml(lease.record_path, other.model_dump(mode="json"))  # as if it had been reclaimed
    held.release.set()
    wait_events(team, ExecFinishedEvent, 1)
    run = RunBook(workspace.index_dir).load(run_id)
    assert run is not None and run.out_of_band
    last = GitJournal(workspace.tree, workspace.git_dir).log(1)[0]
    assert (last.author, last.message) == ("nobody", "exec: make late")


def test_a_write_during_a_run_is_its_agents_and_the_runs_work_is_the_runs(
    team: Team, held: HeldBackend
) -> None:
    """While @Coder's command runs (it has written held.txt and goes on), @Writer writes a
    file: @Writer's commit holds that file alone, and held.txt is committed by the run, as
    @Coder — never swept up as nobody's before the write."""
    tools = coder(team, poll_attempts=0)
    writer = tools_of(team, add_member(team, "@Writer", WorkspaceTool(git_journal=True)))
    tools["workspace_exec"]("make build")
    assert held.running.wait(10)
    writer["workspace_write"]("notes.md", "mine\n")
    workspace = card_of(team, _member(team)).workspace
    journal = GitJournal(workspace.tree, workspace.git_dir)
    assert [(e.author, e.message) for e in journal.log(1)] == [("@Writer", "write notes.md")]
    held.release.set()
    wait_events(team, ExecFinishedEvent, 1)
    assert [(e.author, e.message) for e in journal.log(2)] == [
        ("@Coder", "exec: make build"),
        ("@Writer", "write notes.md"),
    ]
    shown = subprocess.run(
        ["git", f"--git-dir={workspace.git_dir}", "show", "--name-only", "--format=", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.split() == ["held.txt"]
    assert not journal.dirty()


def test_a_cold_start_past_its_budget_fails_clearly_and_frees_the_tree(
    team: Team, held: HeldBackend
) -> None:
    held.prepare_error = SandboxNotReadyError("the image is still building")
    tools = coder(team, cold_start_seconds=3)
    answer = tools["workspace_exec"]("make build")
    assert answer == (
        "$ make build\nnot run: the sandbox did not become ready within 3s (the image is still "
        "building); the workspace was released — run the command again in a minute"
    )
    [finished] = wait_events(team, ExecFinishedEvent, 1)
    assert finished.exit_code is None and "did not become ready" in (finished.error or "")
    held.prepare_error = None
    assert events_of(team, ExecStartedEvent) == []
    assert "Started" in coder_again(team)["workspace_exec"]("make build")
    held.release.set()


def coder_again(team: Team) -> Tools:
    return tools_of(
        team,
        add_member(team, "@Second", WorkspaceTool(workspace_exec=WorkspaceExec(poll_attempts=0))),
    )


def test_a_repository_a_command_makes_in_the_tree_is_never_run_by_the_journal(
    team: Team, real_sandbox: BubblewrapBackend, tmp_path: Path
) -> None:
    tools = coder(team)
    marker = tmp_path / "ran-on-the-host"
    command = (
        f"git init -q sub && git -C sub config core.fsmonitor 'touch {marker}; echo'"
        " && echo made > made.txt"
    )
    answer = tools["workspace_exec"](command)
    assert answer.splitlines()[1].startswith("exit_code: 0 (")
    tools["workspace_write"]("after.txt", "written\n")
    assert not marker.exists()
    workspace = card_of(team, _member(team)).workspace
    journal = GitJournal(workspace.tree, workspace.git_dir)
    assert [e.message for e in journal.log(2)] == ["write after.txt", f"exec: {command}"]
    assert not journal.dirty()


def _failing_save(monkeypatch: pytest.MonkeyPatch, status: RunStatus) -> None:
    """A fault injected into the save of a run's record, at ``status``: a full disk."""
    save = RunBook.save

    def faulty(book: RunBook, run: ExecRun) -> None:
        if run.status == status:
            raise OSError(28, "No space left on device")
        save(book, run)

    monkeypatch.setattr(RunBook, "save", faulty)


def test_a_run_whose_final_record_cannot_be_saved_ends_failed_not_still_running(
    team: Team, held: HeldBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record on the tree said "running" for ever: every answer was "still running"."""
    _failing_save(monkeypatch, RunStatus.FINISHED)
    tools = coder(team)
    held.release.set()  # the command ends at once
    lines = tools["workspace_exec"]("make build").splitlines()
    assert lines[2] == (
        "failed: its record could not be saved (OSError: [Errno 28] No space left on device)"
    )
    assert lines[3:] == ["--- output ---", "ran make build", "--- files changed: held.txt"]
    [finished] = events_of(team, ExecFinishedEvent)
    assert finished.error is not None and "could not be saved" in finished.error
    assert tools["workspace_exec"]("make again").splitlines()[-1] == "--- files changed: held.txt"


def test_a_run_whose_start_cannot_be_recorded_is_killed_and_ends_failed(
    team: Team, held: HeldBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record could not say the command was running: it ran on, unseen; now it is
    killed (the held command ends only when killed) and the run says why."""
    _failing_save(monkeypatch, RunStatus.RUNNING)
    tools = coder(team)
    answer = tools["workspace_exec"]("make build")
    assert held.release.is_set()  # killed
    assert answer.splitlines()[2] == (
        "failed: its record could not be saved (OSError: [Errno 28] No space left on device); "
        "the command was killed"
    )


def test_a_run_whose_first_record_cannot_be_saved_is_not_run_and_frees_the_tree(
    team: Team, held: HeldBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    _failing_save(monkeypatch, RunStatus.STARTING)
    tools = coder(team)
    assert tools["workspace_exec"]("make build").splitlines()[1] == (
        "not run: its record could not be saved (OSError: [Errno 28] No space left on device)"
    )
    assert not held.running.is_set()
    lease = ExecLease(card_of(team, _member(team)).workspace.index_dir)
    assert lease.holder() is None  # the tree is free


def test_a_lease_whose_record_cannot_be_written_is_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flock is taken, then the holder's record written: when that write fails (a full
    disk), the lock goes too, or the workspace would look busy until the process ended."""
    import akgentic.tool.workspace.execution as execution

    lease = ExecLease(tmp_path)
    run = ExecRun(run_id="first", command="make", agent="@Coder", status=RunStatus.RUNNING)

    def full(path: Path, data: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(execution, "write_yaml", full)
        with pytest.raises(OSError, match="No space left"):
            lease.acquire(run)
    fd = lease.acquire(run.model_copy(update={"run_id": "second"}))  # free, not busy
    lease.release(fd, "second")
