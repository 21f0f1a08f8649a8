"""IndexWorker: reads, converts and chunks documents off the ``#Workspace-…`` thread.

Spawned by the workspace actor as ``#index-<leaf>-<id>`` (a tool actor, by the teardown
invariant), told one :class:`IndexJob`, and stopped by itself. For each path it builds the
document's record (MarkItDown for PDF/DOCX/XLSX/PPTX — the slow part), stores it on the
tree (or removes the record of a file that is gone), and **reports to the workspace
actor's mailbox**, which keeps the vector rows in step: ``indexed`` for each path given.
``paths=None`` is the start pass over the whole tree — every file, and every record whose
file is gone. It holds chunk ids, never the tree's text: an unchanged file keeps its
record without being read; any other is read (a converted document is converted again
only if its bytes are not its record's: a copied tree's new ctimes cost a read, not a
conversion); a new or changed one is reported as soon as it is stored
(``refreshed``: its new chunks are embedded then); and at its end every chunk id the tree
holds is reported once (``reconciled``), for the actor to embed only the chunks the store
lacks and delete the rows of removed documents and old chunks.
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


@dataclass(frozen=True, slots=True)
class _Source:
    """What a document is built from: the tree's index, and the record stored for it (if
    any), whose conversion is taken again while the file's bytes are unchanged."""

    index: DocumentIndex
    known: DocRecord | None = None


class IndexWorker(DeferredWorker[str, DocRecord | None]):
    """Builds and stores document records, reporting each; see the module docstring."""

    timeout: ClassVar[float] = 20.0

    def produce(self, key: str, payload: Any, timeout: float) -> DocRecord | None:
        """``key``'s record, built by ``payload``: a :class:`_Source`."""
        if not isinstance(payload, _Source):
            raise TypeError(f"IndexWorker indexes from a _Source, got {type(payload).__name__}")
        return payload.index.build(key, convert=True, known=payload.known)

    def run(self, job: IndexJob) -> None:
        """Index ``job`` (told, once), report every document, then stop."""
        from akgentic.tool.workspace.actor.actor import WorkspaceActor

        try:
            index = DocumentIndex(job.workspace, Filesystem(job.workspace.tree))
            owner = self.proxy_tell(job.owner, WorkspaceActor)
            if job.paths is None:
                try:
                    self._pass(index, owner)
                except Exception:
                    owner.reconciled(None)  # the actor forgets the pass; the next start redoes it
                    raise
                return
            for rel in job.paths:
                previous = index.load(rel)
                record = self._build(index, rel, previous)
                if record is None:
                    if previous is not None:
                        index.remove(rel)
                else:
                    index.save(record)
                kept = set(chunk_refs(rel, record)) if record is not None else set()
                stale = [r for r in chunk_refs(rel, previous) if r not in kept] if previous else []
                owner.indexed(rel, record, stale)
        except AddressError:
            logger.info("%s: the workspace actor is gone; stopping", self.myAddress.name)
        except Exception:
            logger.exception("%s: indexing failed", self.myAddress.name)
        finally:
            self.stop()

    def _pass(self, index: DocumentIndex, owner: Any) -> None:
        """The start pass over the whole tree, holding each document's chunk ids only.

        A file its record still describes (:meth:`DocRecord.describes`) is not read. A new
        or changed one — or one whose record was read too soon after its mtime to tell — is
        re-read, stored and reported at once (``refreshed``), so its new chunks are
        searchable by meaning before the pass ends. At the end, the ids of every chunk
        (``reconciled``): the actor's reconcile embeds what the store still lacks, reading
        those chunks' text back from the records, and deletes what it holds for nothing.
        """
        known: dict[str, tuple[DocRecord, list[str]]] = {  # records without their text
            record.path: (record.model_copy(update={"chunks": []}), chunk_refs(record.path, record))
            for record in index.records()
        }
        refs: dict[str, list[str]] = {}
        for rel in sorted({rel for rel, _ in index.documents()} | set(known)):
            before = known.pop(rel, None)
            if before is not None:
                try:
                    stat = index.fs.resolve(rel).stat()
                except (OSError, ValueError):
                    index.remove(rel)
                    continue
                if before[0].describes(stat):
                    refs[rel] = before[1]  # unchanged since it was indexed
                    continue
            # A converted document is re-read, and converted again only if its bytes changed
            # (a copied or restored tree: new ctimes, the same bytes).
            converted = before is not None and before[0].converted
            record = self._build(index, rel, index.load(rel) if converted else None)
            if record is None:
                if before is not None:
                    index.remove(rel)
                continue
            index.save(record)
            refs[rel] = chunk_refs(rel, record)
            owner.refreshed(rel, record, before[1] if before is not None else [])
        owner.reconciled(refs)

    def _build(
        self, index: DocumentIndex, rel: str, known: DocRecord | None = None
    ) -> DocRecord | None:
        try:
            return self.produce(rel, _Source(index, known), self.timeout)
        except Exception as exc:
            logger.warning("%s: indexing %s failed: %r", self.myAddress.name, rel, exc)
            return None
