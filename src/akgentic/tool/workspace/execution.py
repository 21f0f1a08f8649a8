"""workspace_exec's models, its budgets, the lease on the tree, and the one formatter.

**The lease.** A run takes an exclusive lease over the tree: an ``fcntl.flock`` on
``<leaf>.index/locks/exec.lock``, held by the run's worker for as long as the command
runs, plus a record beside it (``exec.lease.yaml``) saying which run holds it, for whom,
and until when. The flock is what makes the lease safe across actors and processes, and
what tells a live holder from a dead one: the kernel drops it when the holder is gone.
The lease is taken under the tree's journal lock, where a write asks whether a run holds
it (:meth:`TreeRecords.exec_running`): a write during a run leaves the run's changes to
the run's own commit.

- The deadline covers the run, not the wait for a backend that has not started: it is
  set to the cold-start budget first and **re-based the moment the command actually
  starts** (:meth:`ExecLease.rebase`) to the run's budget plus a small report margin.
- A lease whose flock is held is never taken over. Before its deadline the caller is told
  the tree is busy; past it, that the run has overrun and is still running.
- A lease whose record names a run but whose flock is free belongs to a holder that is
  gone (killed during teardown): it is reclaimed, and the old run is recorded as such. If
  that run ever reports afterwards, what it wrote is committed as out-of-band — belonging
  to nobody — rather than left for the next agent's commit to sweep up.

**The budgets** (:class:`ExecBudget`): the run's :class:`ExecLimits`, the cold-start budget
(about twenty seconds by default), and ``poll_attempts``: ``-1`` waits the run out (its
budget plus the margin, so a command killed at its budget still comes back as a readable
``exit_code: 124``), a positive count looks ``count x poll_delay_seconds`` (clamped to the
run budget) and then hands back the run id, ``0`` hands back the run id at once. Polling
buys more looking, never more running.

**The record** of every run is YAML under ``<leaf>.index/runs`` — readable by
``workspace_exec_result`` from any process — and :func:`render_run` is the one formatter
every finished run is shown through. A text that says how to ask for a run's outcome
says it to its reader: the call to the model, the ``/command`` to a person
(:func:`result_call`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
import time
from enum import StrEnum
from pathlib import Path
from typing import ClassVar

from pydantic import ConfigDict, Field

from akgentic.core import clip
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels, invocation
from akgentic.tool.errors import RetriableError
from akgentic.tool.sandbox import ExecLimits, ExecResult
from akgentic.tool.workspace.gate import EXEC_LEASE, lock_file, read_yaml, write_yaml
from akgentic.tool.workspace.journal import left_out_note

__all__ = [
    "REPORT_MARGIN_SECONDS",
    "RESULT_TOOL",
    "ExecBudget",
    "ExecLease",
    "ExecRun",
    "LeaseBusyError",
    "RunBook",
    "RunStatus",
    "load_run",
    "render_run",
    "result_call",
    "run_finished",
    "signal_run",
    "wait_run",
]

REPORT_MARGIN_SECONDS = 5.0
"""Added to a run's budget for its worker to report: the waiting caller gets the run's own
``exit_code: 124`` rather than a tool timeout."""

MAX_RUN_RECORDS = 200


class RunStatus(StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    RECLAIMED = "reclaimed"


class ExecRun(SerializableModel):
    """One run of ``workspace_exec``, as recorded on the tree."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    run_id: str
    command: str
    agent: str
    team: str = ""
    status: RunStatus = RunStatus.STARTING
    backend: str = ""
    created_at: float = Field(default_factory=time.time)
    started_at: float | None = None
    deadline: float = 0.0
    finished_at: float | None = None
    timeout_seconds: float = 0.0
    result: ExecResult | None = None
    error: str | None = None
    changed: list[str] = Field(default_factory=list)
    commit: str | None = None
    left_out: list[str] = Field(default_factory=list)
    """Files the run changed that the journal left out for their size (over
    ``MAX_CHANGE_BYTES``: a runaway log, a sparse file of gigabytes); its answer says so."""
    out_of_band: bool = False

    @property
    def done(self) -> bool:
        return self.status in (RunStatus.FINISHED, RunStatus.FAILED, RunStatus.RECLAIMED)


class ExecBudget(SerializableModel):
    """How long a run may take, how long its cold start may take, and how long to look."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    limits: ExecLimits = Field(default_factory=ExecLimits)
    cold_start_seconds: float = Field(default=20.0, gt=0, le=600)
    poll_attempts: int = Field(default=-1, ge=-1)
    poll_delay_seconds: float = Field(default=2.0, gt=0, le=60)

    @property
    def run_seconds(self) -> float:
        """The run's budget plus the margin for its worker to report."""
        return self.limits.timeout_seconds + REPORT_MARGIN_SECONDS

    def wait_seconds(self) -> float:
        """How long ``workspace_exec`` waits for the outcome (see the module docstring)."""
        whole = self.cold_start_seconds + self.run_seconds
        if self.poll_attempts < 0:
            return whole
        return min(self.poll_attempts * self.poll_delay_seconds, whole)


RESULT_TOOL = "workspace_exec_result"
"""The tool (and command) that answers a run's outcome."""


def result_call(run_id: str, channel: Channels, tool: str = RESULT_TOOL) -> str:
    """How whoever is on ``channel`` asks for run ``run_id``'s outcome:
    ``workspace_exec_result(run_id="…")`` for the model, ``/workspace_exec_result …`` for a
    person (:func:`~akgentic.tool.core.channels.invocation`). ``tool``: the name the model
    calls it by (``<set>_workspace_exec_result`` in a toolset: the card's ``called_as``);
    a person's command keeps its own."""
    args = run_id if channel == COMMAND else f'run_id="{run_id}"'
    return invocation(RESULT_TOOL if channel == COMMAND else tool, channel, args)


class LeaseBusyError(RetriableError):
    """The tree's exec lease is held by a live run; the message says by whom and until when."""


def load_run(path: Path) -> ExecRun | None:
    """The run recorded at ``path``, or None (missing or unreadable)."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        return None
    try:
        return ExecRun.model_validate(data)
    except ValueError:
        return None


_RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What a run id may be: a file name of ordinary characters (ours are 12 hex digits).
Anything else — a NUL, a lone surrogate, a path — names no run, and is never handed to
the filesystem (which would raise, not answer "no such run")."""


_unsaved: dict[Path, ExecRun] = {}
"""Ended runs whose record could not be saved, by record path (see :meth:`RunBook.save_final`)."""
_unsaved_lock = threading.Lock()


class RunBook:
    """The run records under ``<leaf>.index/runs`` (pruned to the newest 200)."""

    def __init__(self, index_dir: Path) -> None:
        self.dir = index_dir / "runs"

    def save(self, run: ExecRun) -> None:
        write_yaml(self.dir / f"{run.run_id}.yaml", run.model_dump(mode="json"))

    def save_final(self, run: ExecRun) -> None:
        """Record ``run``, ended. When its record cannot be saved (a full disk, a folder
        made read-only, anything), the run is marked failed with that reason in one line
        and kept in this process's memory, where :meth:`load` answers it before the file —
        which would say "still running" for ever. Never raises: the caller frees the tree."""
        try:
            self.save(run)
            return
        except Exception as exc:
            reason = clip(f"{type(exc).__name__}: {exc}".replace("\n", " "), 300)
        run.status = RunStatus.FAILED
        run.error = f"its record could not be saved ({reason})"
        with _unsaved_lock:
            _unsaved[self.dir / f"{run.run_id}.yaml"] = run.model_copy()
            while len(_unsaved) > MAX_RUN_RECORDS:
                del _unsaved[next(iter(_unsaved))]
        with contextlib.suppress(Exception):  # the failed record, if the fault has passed
            self.save(run)

    def load(self, run_id: str) -> ExecRun | None:
        if _RUN_ID.fullmatch(run_id) is None:
            return None
        path = self.dir / f"{run_id}.yaml"
        with _unsaved_lock:
            unsaved = _unsaved.get(path)
        return unsaved.model_copy() if unsaved is not None else load_run(path)

    def prune(self) -> None:
        files = sorted(self.dir.glob("*.yaml"), key=lambda p: p.stat().st_mtime)
        for old in files[:-MAX_RUN_RECORDS]:
            old.unlink(missing_ok=True)


class ExecLease:
    """The exclusive exec lease of one tree; see the module docstring."""

    def __init__(self, index_dir: Path) -> None:
        self.lock_path = lock_file(index_dir, EXEC_LEASE)
        self.record_path = index_dir / "exec.lease.yaml"
        self.runs = RunBook(index_dir)

    def holder(self) -> ExecRun | None:
        """The run the lease record names, if any."""
        return load_run(self.record_path)

    def acquire(self, run: ExecRun, channel: Channels = TOOL_CALL, tool: str = RESULT_TOOL) -> int:
        """Take the lease for ``run``; the flock's descriptor (hand it to :meth:`release`).

        Raises :class:`LeaseBusyError` when a live run holds it, saying how to wait for
        that run in the words of whoever is on ``channel`` (``tool``: see
        :func:`result_call`).
        """
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LeaseBusyError(self._busy_message(channel, tool)) from None
        try:
            stale = self.holder()
            if stale is not None and stale.run_id != run.run_id and not stale.done:
                stale.status = RunStatus.RECLAIMED
                stale.error = "its worker was gone when the lease was reclaimed"
                stale.finished_at = time.time()
                self.runs.save(stale)
            write_yaml(self.record_path, run.model_dump(mode="json"))
        except BaseException:
            os.close(fd)  # the flock goes with it: a lease not recorded is not held
            raise
        return fd

    def _busy_message(self, channel: Channels, tool: str) -> str:
        holder = self.holder()
        if holder is None:
            return "The workspace is busy running another command. Try again in a moment."
        now = time.time()
        if holder.deadline and now > holder.deadline:
            return (
                f"The workspace is still leased by run {holder.run_id} (`{holder.command}`, by "
                f"{holder.agent}), which has overrun its deadline by {now - holder.deadline:.0f}s "
                f"and is still running; a live run is never taken over. Try again later."
            )
        left = max(0.0, holder.deadline - now)
        return (
            f"The workspace is busy: {holder.agent} is running `{holder.command}` (run "
            f"{holder.run_id}), which must end within {left:.0f}s. Wait for it with "
            f"{result_call(holder.run_id, channel, tool)}, or try again after."
        )

    def rebase(self, run: ExecRun) -> None:
        """Record ``run`` (its deadline re-based at its real start) as the lease holder."""
        holder = self.holder()
        if holder is None or holder.run_id == run.run_id:
            write_yaml(self.record_path, run.model_dump(mode="json"))

    def still_holds(self, run_id: str) -> bool:
        holder = self.holder()
        return holder is not None and holder.run_id == run_id

    def release(self, fd: int, run_id: str) -> None:
        """Clear the record (if it is still ``run_id``'s) and drop the flock."""
        try:
            if self.still_holds(run_id):
                self.record_path.unlink(missing_ok=True)
        finally:
            os.close(fd)


# -- in-process completion signals: a waiting caller wakes when the run is recorded ----------

_signals: dict[str, threading.Event] = {}
_signals_lock = threading.Lock()


def _signal(run_id: str) -> threading.Event:
    with _signals_lock:
        event = _signals.get(run_id)
        if event is None:
            event = _signals[run_id] = threading.Event()
            if len(_signals) > 1024:
                for key in [k for k, e in _signals.items() if e.is_set()][:512]:
                    _signals.pop(key, None)
        return event


def signal_run(run_id: str) -> None:
    """Wake whoever waits on ``run_id`` (its record is final)."""
    _signal(run_id).set()


def run_finished(run_id: str) -> bool:
    return _signal(run_id).is_set()


def wait_run(book: RunBook, run_id: str, seconds: float) -> ExecRun | None:
    """The record of ``run_id`` once final, waiting at most ``seconds`` (in-process signal,
    then the tree's record: a run recorded by another process is read as it is)."""
    if seconds > 0:
        _signal(run_id).wait(seconds)
    return book.load(run_id)


def render_run(run: ExecRun, channel: Channels = TOOL_CALL, tool: str = RESULT_TOOL) -> str:
    """A run as whoever is on ``channel`` reads it — the one formatter every run goes
    through; a run still going says how that reader asks again (``tool``: see
    :func:`result_call`)."""
    lines = [f"$ {run.command}"]
    if run.status in (RunStatus.STARTING, RunStatus.RUNNING):
        elapsed = time.time() - (run.started_at or run.created_at)
        left = max(0.0, run.deadline - time.time()) if run.deadline else 0.0
        lines.append(
            f"still running (run id {run.run_id}, {elapsed:.0f}s so far, at most {left:.0f}s "
            f"more). Ask again with {result_call(run.run_id, channel, tool)}."
        )
        return "\n".join(lines)
    if run.status == RunStatus.RECLAIMED:
        lines.append(f"run {run.run_id} was abandoned: {run.error or 'its worker is gone'}")
        return "\n".join(lines)
    if run.result is None:
        lines.append(f"not run: {run.error or 'the sandbox failed'}")
        return "\n".join(lines)
    result = run.result
    lines.append(
        f"exit_code: {result.exit_code} ({result.duration_seconds:.2f}s, {result.backend})"
    )
    if run.status == RunStatus.FAILED and run.error:
        lines.append(f"failed: {run.error}")
    if result.timed_out:
        lines.append(f"killed at its {run.timeout_seconds:g}s budget")
    lines.append("--- output ---")
    lines.append(result.output.rstrip("\n") if result.output.strip() else "(no output)")
    if run.changed:
        shown = ", ".join(run.changed[:20])
        more = f" and {len(run.changed) - 20} more" if len(run.changed) > 20 else ""
        lines.append(f"--- files changed: {shown}{more}")
    if run.left_out:
        lines.append(f"--- {left_out_note(run.left_out)}")
    return "\n".join(lines)
