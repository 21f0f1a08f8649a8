"""IndexWorker: reads, converts and chunks documents off the ``#Workspace-…`` thread.

Spawned by the workspace actor as ``#index-<leaf>-<id>`` (a tool actor, by the teardown
invariant), told one :class:`IndexJob`, and stopped by itself. For each path it builds the
document's record (MarkItDown for PDF/DOCX/XLSX/PPTX — the slow part), stores it on the
tree (or removes the record of a file that is gone), and **reports to the workspace
actor's mailbox**, which keeps the vector rows in step: ``indexed`` for each path given.
``paths=None`` is a reconcile pass over the whole tree — every file, and every record
whose file is gone — reported once, at its end (``reconciled``, every record the tree
holds): an unchanged file keeps its record without being read, and the actor embeds only
the chunks the store lacks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from akgentic.core import ActorAddress, AddressError
from akgentic.tool.core.deferred import DeferredWorker
from akgentic.tool.workspace.search import DocRecord, DocumentIndex, chunk_refs
from akgentic.tool.workspace.workspace import Filesystem, WorkspacePath

__all__ = ["IndexJob", "IndexWorker"]

logger = logging.getLogger("akgentic.tool.workspace")


@dataclass(frozen=True, slots=True)
class IndexJob:
    """Which documents to (re)index, and whom to report to."""

    workspace: WorkspacePath
    owner: ActorAddress
    paths: tuple[str, ...] | None = None


class IndexWorker(DeferredWorker[str, DocRecord | None]):
    """Builds and stores document records, reporting each; see the module docstring."""

    timeout: ClassVar[float] = 20.0

    def produce(self, key: str, payload: Any, timeout: float) -> DocRecord | None:
        index = payload
        if not isinstance(index, DocumentIndex):
            raise TypeError(f"IndexWorker indexes with a DocumentIndex, got {type(index).__name__}")
        return index.build(key, convert=True)

    def run(self, job: IndexJob) -> None:
        """Index ``job`` (told, once), report every document, then stop."""
        from akgentic.tool.workspace.actor.actor import WorkspaceActor

        try:
            index = DocumentIndex(job.workspace, Filesystem(job.workspace.tree))
            owner = self.proxy_tell(job.owner, WorkspaceActor)
            reconcile = job.paths is None
            if reconcile:
                stored = index.stored()
                paths = sorted({rel for rel, _ in index.documents()} | set(stored))
            else:
                stored = {}
                paths = list(job.paths or ())
            records: dict[str, DocRecord] = {}
            for rel in paths:
                previous = stored.get(rel) if reconcile else index.load(rel)
                record = self._current(index, rel, previous, reconcile)
                if record is None:
                    if previous is not None:
                        index.remove(rel)
                elif record is not previous:
                    index.save(record)
                if reconcile:
                    if record is not None:
                        records[rel] = record
                    continue
                kept = set(chunk_refs(rel, record)) if record is not None else set()
                stale = [r for r in chunk_refs(rel, previous) if r not in kept] if previous else []
                owner.indexed(rel, record, stale)
            if reconcile:
                owner.reconciled(records)
        except AddressError:
            logger.info("%s: the workspace actor is gone; stopping", self.myAddress.name)
        except Exception:
            logger.exception("%s: indexing failed", self.myAddress.name)
        finally:
            self.stop()

    def _current(
        self, index: DocumentIndex, rel: str, previous: DocRecord | None, reconcile: bool
    ) -> DocRecord | None:
        if reconcile and previous is not None:
            try:
                stat = index.fs.resolve(rel).stat()
            except (OSError, ValueError):
                return None
            if (stat.st_size, stat.st_mtime_ns) == (previous.size, previous.mtime_ns):
                return previous  # unchanged since it was indexed
        try:
            return self.produce(rel, index, self.timeout)
        except Exception as exc:
            logger.warning("%s: indexing %s failed: %r", self.myAddress.name, rel, exc)
            return None
