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
record of a file only while it still describes the file (:meth:`DocRecord.describes`: the
same size, mtime and ctime, read long enough after that mtime), and chunks the file on
the spot otherwise (the indexing worker will store it). Converted documents are only
searched once a worker has converted them; one whose record was read too soon after its
mtime is read again and converted again only if its bytes are not the record's
(:meth:`DocumentIndex._settle`).

Search does not re-read the tree's records either. What :meth:`DocumentIndex.current`
settled for a document is kept in memory, in one cache per tree shared by every
``DocumentIndex`` of the process (the card's, the indexing worker's), with each chunk's
BM25 terms (so a search tokenises only its query), and taken again only while the
document's identity (inode, size, mtime, ctime) *and* its record file's are still those it
was settled under: a second search over an unchanged tree reads no record, re-reads no
file and tokenises no chunk; a document changed through the tool, by a command, or by
another process is settled afresh — that document alone. :meth:`DocumentIndex.save` and
:meth:`DocumentIndex.remove` drop the document's entry, so a record the indexer stores is
what the next search takes. Memory is bounded: at most :data:`CACHED_TREES` trees (least
recently searched dropped first), each holding what one search of it holds anyway — the
records of its current documents (at most ``MAX_SEARCH_FILES``) and their chunks' terms
(about 2.5 times the text they count: each distinct word held once); a document that
leaves the tree leaves the cache at the next search.

An identity is only as fine as the filesystem's clock: two writes of one size within one
timestamp tick (a second on some filesystems, a few milliseconds on others) leave the
size, the mtime and the ctime as they were, and an inode freed by one replace can be
reused by the next. So, as git does with "racily clean" index entries, what was read less
than :data:`RACY_WINDOW_NS` after its file's mtime is not trusted on that identity: a
cache entry is settled again at the next search, and a record whose ``indexed_at`` is
that close to its ``mtime_ns`` does not describe its file. Once read a window after the
last change, it is trusted; a file still being written is re-read by every search, as it
must be.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

from pydantic import Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.vector_store import Terms, hybrid_rank, keyword_scores, terms_of
from akgentic.tool.workspace.gate import read_yaml, write_yaml
from akgentic.tool.workspace.models import MAX_INDEX_BYTES, MAX_SEARCH_FILES, content_sha
from akgentic.tool.workspace.readers import DocumentReader
from akgentic.tool.workspace.workspace import Filesystem, WorkspacePath

__all__ = [
    "CACHED_TREES",
    "CHUNK_LINES",
    "RACY_WINDOW_NS",
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

RACY_WINDOW_NS = 2_000_000_000
"""How long after a file's mtime it must have been read for that read to be trusted on the
file's identity (see the module docstring): above any filesystem's timestamp tick (FAT's
is 2 s) and the skew between this clock and a network filesystem's."""


def _read_long_after(mtime_ns: int, read_ns: int) -> bool:
    """Whether a read begun at ``read_ns`` (this clock) is past every write that can leave
    ``mtime_ns`` as it is — so a file found with that mtime later still holds what it read."""
    return read_ns - mtime_ns >= RACY_WINDOW_NS


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
    ctime_ns: int | None = None
    """None in a record stored before it was kept: size and mtime only are compared."""
    converted: bool = False
    chunks: list[DocChunk] = Field(default_factory=list)
    indexed_at: float = Field(default_factory=time.time)
    """When the file was read (:meth:`DocumentIndex.build` takes it before the read)."""

    def describes(self, stat: os.stat_result) -> bool:
        """Whether this record is what the file of ``stat`` holds: of its identity
        (:meth:`identifies`), and read long enough after that mtime that no write since can
        have kept it. (A copied or restored tree has new ctimes: its files are read once
        again.)"""
        return self.identifies(stat) and _read_long_after(self.mtime_ns, int(self.indexed_at * 1e9))

    def identifies(self, stat: os.stat_result) -> bool:
        """Whether the file of ``stat`` has the size, mtime and ctime this record was read
        at — which says it holds what was read only if that read was not racy."""
        same = (self.size, self.mtime_ns) == (stat.st_size, stat.st_mtime_ns)
        return same and self.ctime_ns in (None, stat.st_ctime_ns)


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


CACHED_TREES = 16
"""How many trees' settled documents a process keeps (see the module docstring)."""


_Identity = tuple[int, int, int, int]
"""A file's ``(inode, size, mtime_ns, ctime_ns)``."""


@dataclass(frozen=True, slots=True)
class _Settled:
    """What search takes for one document, and the state it was settled under.

    ``source`` is the document's identity; ``stored`` its record file's (None: no record
    file) — taken *before* the record was read, so a record replaced meanwhile is settled
    again next time. ``record`` is None for a file that is not searchable (a binary, too
    large); ``terms`` are its chunks' BM25 terms, ``refs`` their row ids. ``trusted`` is
    False when either file was read within :data:`RACY_WINDOW_NS` of its mtime: the entry
    is settled again at the next search, whatever the identities say."""

    source: _Identity
    stored: _Identity | None
    record: DocRecord | None
    refs: tuple[str, ...]
    terms: tuple[Terms, ...]
    trusted: bool


class _TreeCache:
    """One tree's settled documents, by path; every access under the lock (searches run
    on the agents' threads, the indexer stores on its worker's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Settled] = {}

    def get(self, rel: str) -> _Settled | None:
        with self._lock:
            return self._entries.get(rel)

    def put(self, rel: str, settled: _Settled) -> None:
        with self._lock:
            self._entries[rel] = settled

    def drop(self, rel: str) -> None:
        with self._lock:
            self._entries.pop(rel, None)

    def keep_only(self, rels: set[str]) -> None:
        with self._lock:
            for rel in [r for r in self._entries if r not in rels]:
                del self._entries[rel]


_TREES: OrderedDict[Path, _TreeCache] = OrderedDict()
_TREES_LOCK = threading.Lock()


def _tree_cache(docs_dir: Path) -> _TreeCache:
    """The process's cache for the tree whose records are under ``docs_dir``."""
    with _TREES_LOCK:
        cache = _TREES.get(docs_dir)
        if cache is None:
            cache = _TREES[docs_dir] = _TreeCache()
            while len(_TREES) > CACHED_TREES:
                _TREES.popitem(last=False)
        else:
            _TREES.move_to_end(docs_dir)
        return cache


def _identity(stat: os.stat_result) -> _Identity:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _file_identity(path: str) -> _Identity | None:
    try:
        return _identity(os.stat(path))
    except OSError:
        return None


class DocumentIndex:
    """The tree's document records and the search over them; see the module docstring."""

    max_files: int = MAX_SEARCH_FILES
    """The most files a search or an index pass looks at (``MAX_SEARCH_FILES``)."""

    def __init__(
        self, workspace: WorkspacePath, fs: Filesystem, reader: DocumentReader | None = None
    ) -> None:
        self.workspace = workspace
        self.fs = fs
        self.reader = reader or DocumentReader()
        self.dir = workspace.index_dir / "docs"
        self._dir = os.fspath(self.dir)
        self._cache = _tree_cache(self.dir)
        self.left_out = 0
        """Files the last :meth:`documents` pass did not look at, past ``MAX_SEARCH_FILES``:
        a search's answer says so (the files past the cap are counted, never read)."""

    # -- records ------------------------------------------------------------------------------
    def _file(self, rel: str) -> Path:
        return Path(self._record_path(rel))

    def _record_path(self, rel: str) -> str:
        """Where ``rel``'s record is, as text: search ``stat``s it for every document on
        each call, without ``pathlib``."""
        return os.path.join(self._dir, f"{hashlib.sha1(rel.encode('utf-8')).hexdigest()[:24]}.yaml")

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
        """Store ``record``; the next search takes it (its settled entry is dropped)."""
        write_yaml(self._file(record.path), record.model_dump(mode="json"))
        self._cache.drop(record.path)

    def remove(self, rel: str) -> DocRecord | None:
        """Remove ``rel``'s record (its settled entry too); the record it was, if any."""
        record = self.load(rel)
        self._file(rel).unlink(missing_ok=True)
        self._cache.drop(rel)
        return record

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
    def build(self, rel: str, *, convert: bool, known: DocRecord | None = None) -> DocRecord | None:
        """A fresh record of ``rel``, or None when it is gone or not a searchable document.

        ``convert`` allows the slow path (MarkItDown); a failed conversion is None.
        ``known``, a converted record of ``rel`` read before, spares that path while the
        file's bytes are still the ones it was converted from (its ``sha``): its chunks are
        taken, the file read and hashed only.
        """
        read_at = time.time()  # before the stat: a lower bound of when the bytes were read
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
            data = self.fs.read_bytes(path, self.reader.max_bytes)  # no link, no pipe
        except OSError:
            return None
        sha = content_sha(data)
        if is_document and known is not None and known.converted and known.sha == sha:
            chunks = known.chunks
        elif is_document:
            try:
                chunks = chunk_text(self.reader.extract(rel, data))
            except ValueError:
                return None
        else:
            maybe = self.reader.as_text(rel, data)
            if maybe is None:
                return None
            chunks = chunk_text(maybe)
        return DocRecord(
            path=rel,
            sha=sha,
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
            ctime_ns=stat.st_ctime_ns,
            converted=is_document,
            chunks=chunks,
            indexed_at=read_at,
        )

    def documents(self, start: Path | None = None) -> Iterable[tuple[str, os.stat_result]]:
        """Every file of the tree (bounded) — of the folder ``start`` inside it, when given —
        with its stat (:meth:`Filesystem.walk`'s: a file replaced by a symlink since the scan
        is left out, as the walk leaves links).

        Past the first :attr:`max_files` files the walk goes on counting only — no
        ``stat``, no read — into :attr:`left_out`, so a search can say what it did not see."""
        self.left_out = 0
        for count, (rel, entry) in enumerate(self.fs.walk(start)):
            if count >= self.max_files:
                self.left_out += 1
                continue
            try:
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if S_ISREG(stat.st_mode):
                yield rel, stat

    def current(self) -> dict[str, DocRecord]:
        """A record for every searchable document as it is *now* (see the module docstring)."""
        return {rel: s.record for rel, s in self._settled() if s.record is not None}

    def _settled(self, start: Path | None = None) -> list[tuple[str, _Settled]]:
        """Every document of the tree (of the folder ``start``, when given), settled: from the
        cache while the document and its record file are as they were (and were read long
        after they last changed), afresh otherwise (see the module docstring). Only a pass
        over the whole tree drops the entries of documents it did not find."""
        now = time.time_ns()  # before any stat or read of this pass: a lower bound for all
        out: list[tuple[str, _Settled]] = []
        for rel, stat in self.documents(start):
            source = _identity(stat)
            stored = _file_identity(self._record_path(rel))
            settled = self._cache.get(rel)
            if (
                settled is None
                or not settled.trusted
                or (settled.source, settled.stored) != (source, stored)
            ):
                settled = self._settled_now(rel, stat, source, stored, now, settled)
                self._cache.put(rel, settled)
            out.append((rel, settled))
        if start is None:  # a folder's pass knows nothing of the documents outside it
            self._cache.keep_only({rel for rel, _ in out})
        return out

    def _settled_now(
        self,
        rel: str,
        stat: os.stat_result,
        source: _Identity,
        stored: _Identity | None,
        now: int,
        before: _Settled | None,
    ) -> _Settled:
        """``rel`` settled afresh, at ``now``; the chunks' terms are taken over from
        ``before`` while the chunks are the same (a ref carries its text's digest)."""
        record = self._settle(rel, stat)
        refs = tuple(chunk_refs(rel, record)) if record is not None else ()
        if before is not None and before.refs == refs:
            terms = before.terms
        else:
            terms = tuple(terms_of(c.text) for c in record.chunks) if record is not None else ()
        trusted = _read_long_after(source[2], now) and (
            stored is None or _read_long_after(stored[2], now)
        )
        return _Settled(source, stored, record, refs, terms, trusted)

    def _settle(self, rel: str, stat: os.stat_result) -> DocRecord | None:
        """``rel``'s stored record while it still describes the file, else the file chunked
        now.

        A converted document is read again too, but converted again only if need be: a
        conversion takes up to seconds, on the searching agent's thread. While its record
        is of the file's identity but was read too soon after its mtime to be sure of (a
        write in the same tick may have followed; the indexer converts a document just
        after it is written, so this is the usual state of a new record), the file is read
        and hashed, and the record taken while its ``sha`` is the file's — converted again
        only when it is not, which nothing else would ever notice. A document whose
        identity changed is searched by its last known text until the indexing worker, told
        of the change (or the next start's pass), has converted it."""
        record = self.load(rel)
        if record is not None and record.describes(stat):
            return record
        if record is not None and record.converted and record.identifies(stat):
            return self.build(rel, convert=True, known=record)
        fresh = self.build(rel, convert=False)
        if fresh is not None:
            return fresh
        if record is not None and record.converted:
            return record
        return None

    # -- searching ------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int,
        semantic: dict[str, float] | None = None,
        alpha: float = 0.7,
        start: Path | None = None,
    ) -> list[SearchHit]:
        """The best ``limit`` chunks for ``query``, best first (hybrid, or keyword-only),
        among the documents of the folder ``start`` (the whole tree by default): a cosine of
        a chunk outside it is not counted."""
        records: dict[str, DocRecord] = {}
        texts: dict[str, Terms] = {}
        for rel, settled in self._settled(start):
            if settled.record is not None:
                records[rel] = settled.record
                texts.update(zip(settled.refs, settled.terms, strict=True))
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
