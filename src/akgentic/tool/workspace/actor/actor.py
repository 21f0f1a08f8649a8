"""WorkspaceActor: ``#Workspace-<scope>/<kind>/<leaf>``, one per tree, owning its dispatch.

It holds no shared state: the write gate's memory, the document records, the exec lease
and the run records are all on the tree (``<leaf>.index``), ordered by ``flock`` — so two
teams over one tree get two actors, correctly, and two processes are ordered too. What
the actor owns is dispatch:

- **Mutations** (asked: the card needs the verdict) go through the :class:`WriteGate` on
  the actor's thread — fast local I/O, plus a git commit when the journal is on. Every file
  changed is announced (:class:`WorkspaceChangeEvent`) before the answer returns, and
  handed to an indexing worker.
- **Read observations** (told: the reader needs nothing back) are recorded for the gate.
- **Exec** runs on its own worker thread (:class:`ExecRunner`) under the tree's lease; the
  actor only starts it and records what it reports. The backend is resolved once, from the
  ``SANDBOX_BACKEND`` setting; with none, exec answers that it is unavailable and why.
- **Indexing** runs in ``#index-…`` workers (:class:`IndexWorker`) that report here; the
  actor keeps the ``workspace_chunks`` rows in step (team ``""``, tenant = the tree). An
  embedding that fails (the embedder raised) leaves rows missing; the actor says so once
  and reconciles the tree's rows again on a later report or search (``catch_up``), at
  most once per backoff delay, so a failing embedder is retried, never hammered.
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from typing import ClassVar

from akgentic.core import Akgent, BaseConfig, BaseState, clip
from akgentic.tool.core.channels import TOOL_CALL, Channels
from akgentic.tool.errors import RetriableError
from akgentic.tool.sandbox import SandboxBackend, resolve_backend
from akgentic.tool.vector_store import SemanticIndex, WriteWatch
from akgentic.tool.workspace.actor.indexer import IndexJob, IndexWorker
from akgentic.tool.workspace.actor.runner import ExecRunner, LeaseHandle
from akgentic.tool.workspace.event import (
    ExecFinishedEvent,
    ExecStartedEvent,
    WorkspaceChangeEvent,
)
from akgentic.tool.workspace.execution import (
    REPORT_MARGIN_SECONDS,
    RESULT_TOOL,
    ExecBudget,
    ExecLease,
    ExecRun,
    RunBook,
    RunStatus,
    signal_run,
)
from akgentic.tool.workspace.gate import WriteGate
from akgentic.tool.workspace.journal import NOBODY, GitJournal, Identity
from akgentic.tool.workspace.models import (
    BARE,
    CalledAs,
    FileChange,
    Mutation,
    MutationOutcome,
    WorkspaceConfig,
    path_error,
)
from akgentic.tool.workspace.search import (
    WORKSPACE_COLLECTION,
    DocRecord,
    DocumentIndex,
    chunk_refs,
    chunk_rows,
)
from akgentic.tool.workspace.workspace import get_workspace

__all__ = ["WorkspaceActor"]

logger = logging.getLogger("akgentic.tool.workspace")


class WorkspaceActor(Akgent[WorkspaceConfig, BaseState]):
    """Dispatch for one tree; see the module docstring."""

    retry_first: ClassVar[float] = 5.0
    """Seconds after a failed retry of missing embeddings before the next one may run;
    doubled at each failure, up to :attr:`retry_most`. The first retry after a failure
    runs at the next report or search."""

    retry_most: ClassVar[float] = 300.0
    """The longest wait between two retries of a failing embedder."""

    def on_start(self) -> None:
        workspace = self.config.workspace
        self._fs = get_workspace(workspace)
        self._gate = WriteGate(workspace, self._fs)
        self._journal = GitJournal(workspace.tree, workspace.git_dir)
        self._lease = ExecLease(workspace.index_dir)
        self._book = RunBook(workspace.index_dir)
        self._active: dict[str, tuple[Identity, bool, LeaseHandle]] = {}
        self._unsaved_runs: dict[str, str] = {}
        """Runs whose start could not be recorded: the reason, for :meth:`exec_finished`."""
        self._backend: SandboxBackend | None = None
        self._index: SemanticIndex | None = None
        self._since_pass: dict[str, list[str]] | None = None
        """While the start pass runs, the chunk ids a mutation's ``indexed`` reported for a
        document: newer than what the pass read (None once the pass reported)."""
        self._early: dict[str, list[str]] = {}
        """While the start pass runs, the chunk ids it embedded early (``refreshed``), by
        document: a mutation of that document deletes those its text no longer has."""
        self._watch: WriteWatch | None = None
        """While the start pass runs, the rows written since it began: its reconcile leaves
        them to those writes (an early embedding still in flight is not embedded twice)."""
        self._retry_at: float | None = None
        """When an embedding failed: the monotonic time from which ``catch_up`` reconciles
        the rows it left missing (None: nothing failed since the last good reconcile)."""
        self._retry_delay = self.retry_first
        self._retrying = False
        if self.config.search:
            try:
                self._index = SemanticIndex.bind(
                    self.config.vector_store,
                    self,
                    WORKSPACE_COLLECTION,
                    tenant=workspace.name,
                    team_id="",
                )
            except Exception:  # the tree's actor degrades to keyword-only, never dies of it
                logger.exception("%s: no semantic index; keyword search only", self.myAddress.name)
            self._since_pass = {}
            if self._index is not None and self._index.available:
                self._watch = self._index.watch()
            self._reindex(None)

    def on_stop(self) -> None:
        self._end_pass()
        for _identity, _journal, handle in list(self._active.values()):
            handle.stop()

    # -- reads ----------------------------------------------------------------------------------
    def observe(self, identity: Identity, rel: str, sha: str) -> None:
        """Remember what ``identity`` read (told by the card after a read)."""
        self._gate.observe(identity, rel, sha)

    # -- mutations ------------------------------------------------------------------------------
    def mutate(
        self,
        identity: Identity,
        mutation: Mutation,
        journal: bool = False,
        called: CalledAs = BARE,
    ) -> MutationOutcome:
        """Apply ``mutation`` through the gate (asked); emit, then return. Its errors name
        the tools as ``called`` says the caller's model calls them.

        Raises ``RetriableError`` with the model's instruction: a gate refusal, an edit or
        patch that does not apply, or a path the error table words.
        """
        try:
            journaled = self._journal if journal else None
            outcome = self._gate.mutate(identity, mutation, journaled, called)
        except RetriableError:
            raise
        except (OSError, ValueError) as exc:
            raise path_error(exc, getattr(mutation, "path", "the patch"), called) from None
        self._announce(identity, mutation.op, outcome.changes, outcome.commit)
        self._reindex(c.path for c in outcome.changes if c.action != "directory")
        return outcome

    def _announce(
        self, identity: Identity, op: str, changes: Iterable[FileChange], commit: str | None
    ) -> None:
        for change in changes:
            self.notify_event(
                WorkspaceChangeEvent(
                    workspace=self.config.workspace.name,
                    agent=identity.name,
                    op=op,
                    path=change.path,
                    action=change.action,
                    added=change.added,
                    removed=change.removed,
                    commit=commit,
                )
            )

    # -- exec -----------------------------------------------------------------------------------
    def _resolve_backend(self) -> SandboxBackend:
        if self._backend is None:
            backend, reason = resolve_backend()
            if backend is None:
                raise RetriableError(
                    f"Exec is unavailable in this workspace: {reason}. No command was run; do "
                    f"the work with the file tools, or report that commands cannot run here."
                )
            self._backend = backend
        return self._backend

    def exec_start(
        self,
        identity: Identity,
        command: str,
        budget: ExecBudget,
        journal: bool = False,
        channel: Channels = TOOL_CALL,
        result_tool: str = RESULT_TOOL,
    ) -> ExecRun:
        """Lease the tree and start ``command`` on a worker thread (asked); the run's record.

        Raises ``RetriableError`` when exec is unavailable or a live run holds the tree
        (saying how to wait for that run to whoever is on ``channel``; ``result_tool``:
        the name the caller's model calls ``workspace_exec_result`` by).
        """
        backend = self._resolve_backend()
        now = time.time()
        run = ExecRun(
            run_id=uuid.uuid4().hex[:12],
            command=command,
            agent=identity.name,
            team=identity.team,
            backend=backend.name,
            created_at=now,
            deadline=now + budget.cold_start_seconds + REPORT_MARGIN_SECONDS,
            timeout_seconds=budget.limits.timeout_seconds,
        )
        with self._gate.records.lock("journal"):  # where a write asks whether a run is on
            fd = self._lease.acquire(run, channel, result_tool)
            handle = LeaseHandle(self._lease, fd, run.run_id)
            if journal:  # what was there before the run is not the run's: it is nobody's
                self._journal_held(lambda j: j.commit_out_of_band())
        try:
            self._book.save(run)
        except Exception:  # never started: the run ends failed, the tree freed
            run.finished_at = time.time()
            self._book.save_final(run)
            handle.release()
            signal_run(run.run_id)
            return run
        self._active[run.run_id] = (identity, journal, handle)
        ExecRunner(
            owner=self.myAddress,
            actor=self,
            backend=backend,
            fs=self._fs,
            run=run.model_copy(),
            budget=budget,
            lease=self._lease,
            handle=handle,
            book=self._book,
        ).start()
        return run

    def exec_stop(self, run_id: str) -> None:
        """Kill the run ``run_id`` (its process group), now or the moment it starts (told by
        the card when the tool call waiting for it was cancelled: its turn was interrupted).
        A run that has ended, or is not this tree's, is left alone. It still reports like
        any run (``exec_finished``): what it changed is committed, the tree is freed."""
        active = self._active.get(run_id)
        if active is not None:
            active[2].stop()

    def exec_started(self, run: ExecRun) -> None:
        """The command started (told by the runner). When its record cannot say so, the
        command is killed and the run ends failed with the reason (:meth:`exec_finished`):
        a run whose record is not kept is not left running unseen."""
        try:
            self._book.save(run)
        except Exception as exc:
            logger.warning("%s: run %s: record not saved: %r", self.myAddress.name, run.run_id, exc)
            self._unsaved_runs[run.run_id] = clip(f"{type(exc).__name__}: {exc}", 300)
            active = self._active.get(run.run_id)
            if active is not None:
                active[2].stop()
        self.notify_event(
            ExecStartedEvent(
                workspace=self.config.workspace.name,
                agent=run.agent,
                run_id=run.run_id,
                command=run.command,
                backend=run.backend,
            )
        )

    def exec_finished(self, run: ExecRun, handle: LeaseHandle) -> None:
        """The run ended (told by the runner): commit, record, announce — then free the tree
        and wake the waiting caller (emit before return)."""
        fallback = (Identity(name=run.agent, team=run.team), False, handle)
        identity, journal, _ = self._active.pop(run.run_id, fallback)
        try:
            run.out_of_band = not self._lease.still_holds(run.run_id)
            if journal and run.changed:
                author = NOBODY if run.out_of_band else identity
                message = f"exec: {run.command}"[:200]
                run.commit = self._journal_step(lambda j: j.commit(author, message))
                mine = set(run.changed)  # not a file left out before, still as it was
                run.left_out = [p for p in self._journal.left_out if p in mine]
            reason = self._unsaved_runs.pop(run.run_id, None)
            if reason is not None:
                run.status = RunStatus.FAILED
                run.error = f"its record could not be saved ({reason}); the command was killed"
            self._book.save_final(run)
            with contextlib.suppress(OSError):
                self._book.prune()
            self._announce_run(identity, run)
        finally:
            handle.release()
            signal_run(run.run_id)
        self._reindex(run.changed)

    def _journal_step(self, step: Callable[[GitJournal], str | None]) -> str | None:
        """``step`` on the journal under the tree's journal lock; None when off or failed
        (a journal failure is logged, never raised: it is a record, not the gate)."""
        if not self._journal.available:
            return None
        with self._gate.records.lock("journal"):
            return self._journal_held(step)

    def _journal_held(self, step: Callable[[GitJournal], str | None]) -> str | None:
        """``_journal_step`` for a caller that holds the journal lock already."""
        if not self._journal.available:
            return None
        try:
            self._journal.ensure()
            return step(self._journal)
        except Exception as exc:
            logger.warning("%s: journal step failed: %r", self.myAddress.name, exc)
            return None

    def _announce_run(self, identity: Identity, run: ExecRun) -> None:
        changes = [
            FileChange(path=p, action="modified" if (self._fs.root / p).exists() else "deleted")
            for p in run.changed
        ]
        self._announce(identity, "exec", changes, run.commit)
        result = run.result
        self.notify_event(
            ExecFinishedEvent(
                workspace=self.config.workspace.name,
                agent=run.agent,
                run_id=run.run_id,
                command=run.command,
                exit_code=result.exit_code if result is not None else None,
                duration_seconds=result.duration_seconds if result is not None else 0.0,
                timed_out=result.timed_out if result is not None else False,
                error=run.error if run.status == RunStatus.FAILED else None,
                changed=run.changed[:50],
            )
        )

    # -- indexing -------------------------------------------------------------------------------
    def _reindex(self, paths: Iterable[str] | None) -> None:
        """Have an ``#index-…`` worker (re)index ``paths`` (None: the whole tree)."""
        if not self.config.search:
            return
        selected = None if paths is None else tuple(paths)
        if selected is not None and not selected:
            return
        config = BaseConfig(
            name=f"#index-{self.config.workspace.leaf[:16]}-{uuid.uuid4().hex[:8]}",
            role="IndexWorker",
        )
        try:
            address = self.createActor(IndexWorker, config=config)
            self.proxy_tell(address, IndexWorker).run(
                IndexJob(workspace=self.config.workspace, owner=self.myAddress, paths=selected)
            )
        except Exception as exc:
            logger.warning("%s: could not start an index worker: %r", self.myAddress.name, exc)

    def indexed(self, rel: str, record: DocRecord | None, stale: list[str]) -> None:
        """A worker's report of a changed path: embed ``rel``'s chunks (its record, None
        when it is gone) and delete the ``stale`` rows its previous record had."""
        kept = chunk_refs(rel, record) if record is not None else []
        if self._since_pass is not None:
            self._since_pass[rel] = kept
            keep = {*kept, *stale}
            stale = [*stale, *(r for r in self._early.pop(rel, []) if r not in keep)]
        index = self._index
        if index is None or not index.available:
            return
        if record is not None:
            rows = chunk_rows(rel, record)
            index.upsert_many(
                [(ref, text, meta) for ref, (text, meta) in rows.items()], done=self._embedded
            )
        for ref in stale:
            index.delete(ref)
        self.catch_up()

    def refreshed(self, rel: str, record: DocRecord, before: list[str]) -> None:
        """The start pass stored a new or changed document (told, as it walks): embed its
        chunks that ``before`` — its previous record's ids — lacks, now rather than at the
        pass's end. Its old rows wait for that end (``reconciled``); a mutation of the
        document reported already is newer than what the pass read, and wins."""
        index = self._index
        if self._since_pass is None or rel in self._since_pass:
            return
        if index is None or not index.available:
            return
        known = set(before)
        rows = {ref: row for ref, row in chunk_rows(rel, record).items() if ref not in known}
        if rows:
            self._early[rel] = list(rows)
            index.upsert_many(
                [(ref, text, meta) for ref, (text, meta) in rows.items()], done=self._embedded
            )

    def reconciled(self, refs: dict[str, list[str]] | None) -> None:
        """The start pass's report, every chunk id of the tree by document (None: the pass
        failed, and the store is left as it is until the next start): bring the store in
        step.

        A chunk's row id carries its text's digest (``chunk_ref``), so the store lacks
        exactly the chunks that are new or changed — or whose embedding a stop or a crash
        dropped — and holds for nothing those of changed and removed documents: the index's
        reconcile embeds the former only, reading their text back from the tree's records a
        batch at a time, and deletes the latter. A start over an unchanged, indexed tree
        embeds nothing. A document a mutation re-indexed while the pass ran counts as that
        mutation left it: the pass may have read it before; and a row written since the
        pass began (a mutation's, or the pass's own early embedding) is left to that write.
        """
        since, watch = self._since_pass or {}, self._watch
        self._watch = None
        self._end_pass()
        index = self._index
        if refs is None or index is None or not index.available:
            if watch is not None:
                watch.close()
            return
        ids = {ref for chunk_ids in {**refs, **since}.values() for ref in chunk_ids}
        fetch = DocumentIndex(self.config.workspace, self._fs).read_chunk_rows
        index.reconcile_ids(ids, fetch, since=watch, done=self._embedded)

    # -- embeddings that failed -----------------------------------------------------------------
    def _embedded(self, ok: bool) -> None:
        """How an embedding fared (on a worker's thread): a failure — or a success while a
        retry waits, the embedder being back — is told to the actor (``embedding_done``)."""
        if ok and self._retry_at is None:
            return
        try:
            self.proxy_tell(self.myAddress, WorkspaceActor).embedding_done(ok)
        except Exception as exc:  # the actor is stopping: the next start reconciles
            logger.info("%s: embedding outcome not delivered: %r", self.myAddress.name, exc)

    def embedding_done(self, ok: bool) -> None:
        """An embedding of this tree's rows failed (told): say so once, and have the next
        ``catch_up`` reconcile what it left missing. A success meanwhile makes a waiting
        retry due at once."""
        now = time.monotonic()
        if not ok and self._retry_at is None:
            logger.warning(
                "%s: embedding passages of workspace %r failed; search by meaning misses them "
                "until a retry after a later write or search indexes them",
                self.myAddress.name,
                self.config.workspace.name,
            )
            self._retry_at = now
        elif ok and self._retry_at is not None:
            self._retry_at = min(self._retry_at, now)

    def catch_up(self) -> None:
        """Reconcile the rows a failed embedding left missing, if one did and its retry is
        due (told by a search; run after each report): one id listing, and embeddings of
        the missing rows only. Not while the start pass runs (its end reconciles), nor
        while a retry runs."""
        index = self._index
        if self._retry_at is None or self._retrying or self._since_pass is not None:
            return
        if index is None or not index.available or time.monotonic() < self._retry_at:
            return
        docs = DocumentIndex(self.config.workspace, self._fs)
        try:
            ids = {ref for record in docs.records() for ref in chunk_refs(record.path, record)}
        except Exception as exc:
            logger.warning("%s: reading the tree's records failed: %r", self.myAddress.name, exc)
            self.retried(False)
            return
        self._retrying = True
        index.reconcile_ids(ids, docs.read_chunk_rows, done=self._retry_done)

    def _retry_done(self, ok: bool) -> None:
        """A retry's end (on a worker's thread), told to the actor (``retried``)."""
        try:
            self.proxy_tell(self.myAddress, WorkspaceActor).retried(ok)
        except Exception as exc:
            logger.info("%s: retry outcome not delivered: %r", self.myAddress.name, exc)

    def retried(self, ok: bool) -> None:
        """A retry ended (told): done, or the next one waits twice as long (bounded)."""
        self._retrying = False
        if ok:
            logger.info("%s: the passages left unembedded are indexed", self.myAddress.name)
            self._retry_at, self._retry_delay = None, self.retry_first
            return
        self._retry_at = time.monotonic() + self._retry_delay
        self._retry_delay = min(2 * self._retry_delay, self.retry_most)

    def _end_pass(self) -> None:
        """Forget what the start pass kept (it reported, failed, or the actor stops)."""
        self._since_pass = None
        self._early = {}
        if self._watch is not None:
            self._watch.close()
            self._watch = None
