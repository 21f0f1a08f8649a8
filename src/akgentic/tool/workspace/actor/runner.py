"""ExecRunner: one command, on its own worker thread, reporting to ``#Workspace-…``.

The actor takes the tree's lease and starts a runner; the runner waits for the backend's
cold start under its own budget, runs the command, notes which files of the tree changed,
and reports to the actor's mailbox (``exec_started`` the moment the command starts,
``exec_finished`` at the end) — the actor's thread is never held by a command. If the
actor is gone when the run ends, the runner records the run on the tree itself and drops
the lease, so a waiting caller still gets its answer and the tree is never left leased.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from akgentic.core import ActorAddress, AddressError
from akgentic.tool.sandbox import (
    SandboxBackend,
    SandboxNotReadyError,
    SandboxUnavailableError,
)
from akgentic.tool.sandbox.backend import Kill
from akgentic.tool.workspace.execution import (
    ExecBudget,
    ExecLease,
    ExecRun,
    RunBook,
    RunStatus,
    signal_run,
)
from akgentic.tool.workspace.models import MAX_SEARCH_FILES
from akgentic.tool.workspace.workspace import Filesystem

if TYPE_CHECKING:
    from akgentic.tool.workspace.actor.actor import WorkspaceActor

__all__ = ["ExecRunner", "LeaseHandle", "snapshot"]

logger = logging.getLogger("akgentic.tool.workspace")

Snapshot = dict[str, tuple[int, int]]


def snapshot(fs: Filesystem) -> Snapshot:
    """rel → (size, mtime_ns) of the tree's files (bounded), to see what a command changed."""
    out: Snapshot = {}
    for count, (rel, entry) in enumerate(fs.walk()):
        if count >= MAX_SEARCH_FILES * 4:
            break
        try:
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        out[rel] = (stat.st_size, stat.st_mtime_ns)
    return out


def changed_between(before: Snapshot, after: Snapshot) -> list[str]:
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))


class LeaseHandle:
    """The lease's flock descriptor, released exactly once by whoever gets there first; and
    the run's kill (its process group), for a stop that may come before the command
    starts — then the command is killed the moment it does."""

    def __init__(self, lease: ExecLease, fd: int, run_id: str) -> None:
        self._lease = lease
        self._fd: int | None = fd
        self._run_id = run_id
        self._lock = threading.Lock()
        self._kill: Kill | None = None
        self._stopped = False

    def arm(self, kill: Kill) -> None:
        """The command started: ``kill`` ends it (at once when a stop came first)."""
        with self._lock:
            self._kill = kill
            stopped = self._stopped
        if stopped:
            kill()

    def stop(self) -> None:
        """Kill the command, now or the moment it starts."""
        with self._lock:
            self._stopped = True
            kill = self._kill
        if kill is not None:
            kill()

    def release(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            self._lease.release(fd, self._run_id)


class ExecRunner:
    """Runs one command; see the module docstring."""

    def __init__(
        self,
        *,
        owner: ActorAddress,
        actor: WorkspaceActor,
        backend: SandboxBackend,
        fs: Filesystem,
        run: ExecRun,
        budget: ExecBudget,
        lease: ExecLease,
        handle: LeaseHandle,
        book: RunBook,
    ) -> None:
        self.owner = owner
        self.actor = actor
        self.backend = backend
        self.fs = fs
        self.run = run
        self.budget = budget
        self.lease = lease
        self.handle = handle
        self.book = book
        self.thread = threading.Thread(target=self._main, name=f"exec-{run.run_id}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _tell(self) -> WorkspaceActor:
        from akgentic.tool.workspace.actor.actor import WorkspaceActor

        return self.actor.proxy_tell(self.owner, WorkspaceActor)

    def _main(self) -> None:
        run = self.run
        changed: list[str] = []
        try:
            try:
                self.backend.prepare(self.budget.cold_start_seconds)
            except SandboxNotReadyError as exc:
                run.status, run.error = (
                    RunStatus.FAILED,
                    (
                        f"the sandbox did not become ready within "
                        f"{self.budget.cold_start_seconds:g}s ({exc}); the workspace was "
                        f"released — run the command again in a minute"
                    ),
                )
                return
            except SandboxUnavailableError as exc:
                run.status, run.error = RunStatus.FAILED, f"exec is unavailable here: {exc}"
                return
            before = snapshot(self.fs)

            def started(kill: Kill) -> None:
                self.handle.arm(kill)
                now = time.time()
                run.status = RunStatus.RUNNING
                run.started_at = now
                run.deadline = now + self.budget.run_seconds  # re-based: the run starts now
                self.lease.rebase(run)
                with contextlib.suppress(AddressError):
                    self._tell().exec_started(run.model_copy())

            result = self.backend.run(Path(self.fs.root), run.command, self.budget.limits, started)
            changed = changed_between(before, snapshot(self.fs))
            run.result = result
            run.status = RunStatus.FINISHED
        except Exception as exc:
            logger.exception("exec run %s failed", run.run_id)
            run.status = RunStatus.FAILED
            run.error = f"the sandbox failed: {type(exc).__name__}: {exc}"
        finally:
            run.finished_at = time.time()
            run.changed = changed
            self._report()

    def _report(self) -> None:
        try:
            self._tell().exec_finished(self.run, self.handle)
        except Exception:  # the actor is gone: record the run ourselves, free the tree
            logger.info(
                "exec run %s ended after its workspace actor stopped (pid %d)",
                self.run.run_id,
                os.getpid(),
            )
            self.book.save_final(self.run)
            self.handle.release()
            signal_run(self.run.run_id)
