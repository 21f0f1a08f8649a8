"""Document search over a tree: chunks on the tree, vectors in the shared collection.

Every text document of the tree (and every PDF/DOCX/XLSX/PPTX, with the ``docs`` extra)
is cut into overlapping chunks of lines. What is known of a document lives on the tree —
one YAML :class:`DocRecord` per source document under ``<leaf>.index/docs`` — so a second
actor, or a second process over the same mount, reads it back with no handoff. The chunks'
vectors go to the vector store's shared ``workspace_chunks`` collection
(:data:`WORKSPACE_COLLECTION`): each row carries ``""`` for its team — so a row's identity
does not move when the actor that wrote it is replaced — and the workspace's name
(``scope/kind/leaf``) as its mandatory tenant, which bounds every query to the tree.

Ranking is the vector store's one hybrid rule: BM25 over the chunks' text
(``keyword_scores``) fused with the cosines the index answers (``hybrid_rank``, the
card's ``hybrid_alpha``). Without an embedder it is keyword-only, as for the other cards.

Search is never stale for text files: :meth:`DocumentIndex.current` takes the stored
record of a file only while its size and modification time still match, and chunks the
file on the spot otherwise (the indexing worker will store it). Converted documents are
only searched once a worker has converted them.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.vector_store import hybrid_rank, keyword_scores
from akgentic.tool.workspace.gate import read_yaml, write_yaml
from akgentic.tool.workspace.models import MAX_INDEX_BYTES, MAX_SEARCH_FILES, content_sha
from akgentic.tool.workspace.readers import DocumentReader
from akgentic.tool.workspace.workspace import Filesystem, WorkspacePath

__all__ = [
    "CHUNK_LINES",
    "WORKSPACE_COLLECTION",
    "DocChunk",
    "DocRecord",
    "DocumentIndex",
    "SearchHit",
    "chunk_ref",
    "chunk_refs",
    "chunk_rows",
    "chunk_text",
    "split_ref",
]

WORKSPACE_COLLECTION = "workspace_chunks"
"""The vector store collection every workspace shares (team ``""``, tenant = the tree)."""

CHUNK_LINES = 40
CHUNK_OVERLAP = 8
CHUNK_MAX_CHARS = 2400


class DocChunk(SerializableModel):
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of a document, as text."""

    start_line: int
    end_line: int
    text: str


class DocRecord(SerializableModel):
    """What the tree knows of one source document: its identity and its chunks."""

    path: str
    sha: str
    size: int
    mtime_ns: int
    converted: bool = False
    chunks: list[DocChunk] = Field(default_factory=list)
    indexed_at: float = Field(default_factory=time.time)


class SearchHit(SerializableModel):
    """One chunk that matched, with its fused score."""

    path: str
    start_line: int
    end_line: int
    score: float
    text: str


def chunk_ref(rel: str, index: int, text: str) -> str:
    """The vector row id of chunk ``index`` of ``rel`` whose text is ``text``.

    The id carries a digest of the text, so a row is held under its id only while it is
    this text's embedding: a chunk whose text changed is a new id, missing from the store,
    and its old row is held for nothing — which is all the start's reconcile pass
    (``SemanticIndex.reconcile``) needs to know to embed only what changed.
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{rel}#{index}-{digest}"


def chunk_refs(rel: str, record: DocRecord) -> list[str]:
    """The vector row ids of ``record``'s chunks, in order."""
    return [chunk_ref(rel, i, chunk.text) for i, chunk in enumerate(record.chunks)]


def chunk_rows(rel: str, record: DocRecord) -> dict[str, tuple[str, dict[str, Any] | None]]:
    """``ref_id -> (text, metadata)`` of ``record``'s chunks, as the vector store keeps them."""
    return {
        ref: (c.text, {"path": rel, "start_line": c.start_line, "end_line": c.end_line})
        for ref, c in zip(chunk_refs(rel, record), record.chunks, strict=True)
    }


def split_ref(ref: str) -> tuple[str, int] | None:
    """``(rel, index)`` of a chunk ref, or None when it is not one."""
    rel, _, tail = ref.rpartition("#")
    number, _, digest = tail.partition("-")
    return (rel, int(number)) if rel and number.isdigit() and digest else None


def chunk_text(text: str) -> list[DocChunk]:
    """Overlapping windows of :data:`CHUNK_LINES` lines (cut at :data:`CHUNK_MAX_CHARS`)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    chunks: list[DocChunk] = []
    start = 0
    step = CHUNK_LINES - CHUNK_OVERLAP
    while start < len(lines):
        window = lines[start : start + CHUNK_LINES]
        body = "\n".join(window)[:CHUNK_MAX_CHARS]
        if body.strip():
            chunks.append(DocChunk(start_line=start + 1, end_line=start + len(window), text=body))
        if start + CHUNK_LINES >= len(lines):
            break
        start += step
    return chunks


class DocumentIndex:
    """The tree's document records and the search over them; see the module docstring."""

    def __init__(
        self, workspace: WorkspacePath, fs: Filesystem, reader: DocumentReader | None = None
    ) -> None:
        self.workspace = workspace
        self.fs = fs
        self.reader = reader or DocumentReader()
        self.dir = workspace.index_dir / "docs"

    # -- records ------------------------------------------------------------------------------
    def _file(self, rel: str) -> Path:
        return self.dir / f"{hashlib.sha1(rel.encode('utf-8')).hexdigest()[:24]}.yaml"

    def load(self, rel: str) -> DocRecord | None:
        data = read_yaml(self._file(rel))
        if not isinstance(data, dict):
            return None
        try:
            record = DocRecord.model_validate(data)
        except ValueError:
            return None
        return record if record.path == rel else None

    def save(self, record: DocRecord) -> None:
        write_yaml(self._file(record.path), record.model_dump(mode="json"))

    def remove(self, rel: str) -> DocRecord | None:
        record = self.load(rel)
        self._file(rel).unlink(missing_ok=True)
        return record

    def stored(self) -> dict[str, DocRecord]:
        """Every stored record, by path."""
        return {record.path: record for record in self.records()}

    def records(self) -> Iterator[DocRecord]:
        """Every stored record, one at a time (a caller keeping less than a record — the
        start pass keeps a summary — never holds the tree's text)."""
        if not self.dir.is_dir():
            return
        for file in sorted(self.dir.glob("*.yaml")):
            data = read_yaml(file)
            if isinstance(data, dict):
                try:
                    yield DocRecord.model_validate(data)
                except ValueError:
                    continue

    def read_chunk_rows(self, refs: Sequence[str]) -> dict[str, tuple[str, dict[str, Any] | None]]:
        """``ref -> (text, metadata)`` of the chunks ``refs`` name, read from the stored
        records (each record once); a ref its record no longer holds — the document changed
        or went since the ref was taken — is left out."""
        wanted: dict[str, list[tuple[str, int]]] = {}
        for ref in refs:
            parts = split_ref(ref)
            if parts is not None:
                wanted.setdefault(parts[0], []).append((ref, parts[1]))
        out: dict[str, tuple[str, dict[str, Any] | None]] = {}
        for rel, named in wanted.items():
            record = self.load(rel)
            if record is None:
                continue
            rows = chunk_rows(rel, record)
            out.update((ref, rows[ref]) for ref, _ in named if ref in rows)
        return out

    # -- building -------------------------------------------------------------------------------
    def build(self, rel: str, *, convert: bool) -> DocRecord | None:
        """A fresh record of ``rel``, or None when it is gone or not a searchable document.

        ``convert`` allows the slow path (MarkItDown); a failed conversion is None.
        """
        try:
            path = self.fs.resolve(rel)
            stat = path.stat()
        except (OSError, ValueError):
            return None
        if not path.is_file() or stat.st_size > self.reader.max_bytes:
            return None
        is_document = self.reader.is_document(rel)
        if is_document and not convert:
            return None
        if not is_document and stat.st_size > MAX_INDEX_BYTES:
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if is_document:
            try:
                text = self.reader.extract(rel, data)
            except ValueError:
                return None
        else:
            maybe = self.reader.as_text(rel, data)
            if maybe is None:
                return None
            text = maybe
        return DocRecord(
            path=rel,
            sha=content_sha(data),
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
            converted=is_document,
            chunks=chunk_text(text),
        )

    def documents(self) -> Iterable[tuple[str, os.stat_result]]:
        """Every file of the tree (bounded), with its stat."""
        for count, path in enumerate(self.fs.iter_files()):
            if count >= MAX_SEARCH_FILES:
                return
            try:
                yield self.fs.relative(path), path.stat()
            except OSError:
                continue

    def current(self) -> dict[str, DocRecord]:
        """A record for every searchable document as it is *now* (see the module docstring)."""
        stored = self.stored()
        out: dict[str, DocRecord] = {}
        for rel, stat in self.documents():
            record = stored.get(rel)
            if record is not None and (record.size, record.mtime_ns) == (
                stat.st_size,
                stat.st_mtime_ns,
            ):
                out[rel] = record
                continue
            fresh = self.build(rel, convert=False)
            if fresh is not None:
                out[rel] = fresh
            elif record is not None and record.converted:
                out[rel] = record  # a converted document not re-converted yet: last known text
        return out

    # -- searching ------------------------------------------------------------------------------
    def search(
        self, query: str, limit: int, semantic: dict[str, float] | None = None, alpha: float = 0.7
    ) -> list[SearchHit]:
        """The best ``limit`` chunks for ``query``, best first (hybrid, or keyword-only)."""
        records = self.current()
        texts = {
            ref: chunk.text
            for rel, r in records.items()
            for ref, chunk in zip(chunk_refs(rel, r), r.chunks, strict=True)
        }
        keyword = keyword_scores(query, texts)
        cosines = {ref: v for ref, v in (semantic or {}).items() if ref in texts}
        if cosines:
            ranked = [
                (r, v)
                for r, v in hybrid_rank(keyword, cosines, alpha, len(texts))
                if v > 0 or r in keyword
            ]
        else:
            top = max(keyword.values(), default=1.0) or 1.0
            ranked = sorted(
                ((r, v / top) for r, v in keyword.items()), key=lambda kv: (-kv[1], kv[0])
            )
        hits: list[SearchHit] = []
        for ref, score in ranked[:limit]:
            parts = split_ref(ref)
            if parts is None:
                continue
            rel, index = parts
            chunk = records[rel].chunks[index]
            hits.append(
                SearchHit(
                    path=rel,
                    start_line=chunk.start_line,
                    end_line=chunk.end_line,
                    score=round(score, 4),
                    text=chunk.text,
                )
            )
        return hits
