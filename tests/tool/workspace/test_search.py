"""Document search (keyword, hybrid, the shared collection) and document reading."""

from __future__ import annotations

import io
import os
import sys
import time
import zipfile
from pathlib import Path

import pytest

from akgentic.tool.errors import RetriableError
from akgentic.tool.vector_store import STORE_ACTOR_NAME, VectorStoreActor, hybrid
from akgentic.tool.workspace import WORKSPACE_COLLECTION, DocumentIndex, WorkspaceTool
from akgentic.tool.workspace import readers as readers_module
from akgentic.tool.workspace import search as search_module
from akgentic.tool.workspace.gate import write_yaml
from akgentic.tool.workspace.models import content_sha
from akgentic.tool.workspace.search import DocRecord, chunk_text
from akgentic.tool.workspace.tool import WorkspaceSearch
from akgentic.tool.workspace.workspace import (
    KIND_ID,
    Filesystem,
    WorkspacePath,
    resolve_workspace_path,
)

from ..conftest import Team
from .conftest import ConceptEmbedder, add_member, card_of, eventually, tool_address, tools_of


def test_chunks_overlap_and_know_their_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 101)) + "\n"
    chunks = chunk_text(text)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 40), (33, 72), (65, 100)]
    assert chunks[1].text.splitlines()[0] == "line 33"


def test_search_finds_a_document_after_an_edit(team: Team) -> None:
    member = add_member(team, "@Author", WorkspaceTool())
    tools = tools_of(team, member)
    tools["workspace_write"]("notes/fruit.md", "# Fruit\nWe grow apples in the north orchard.\n")
    tools["workspace_write"]("notes/tools.md", "# Tools\nA ladder and a basket.\n")
    assert tools["workspace_search"]("pears") == "No passage matches 'pears'."
    tools["workspace_edit"]("notes/fruit.md", "apples", "pears")
    found = tools["workspace_search"]("pears orchard")
    assert found.splitlines()[0].startswith("notes/fruit.md:1-2 (1.00)")
    assert "We grow pears in the north orchard." in found
    # The worker brings the stored record (on the tree) up to date as well.
    workspace = card_of(team, member).workspace
    docs = DocumentIndex(workspace, Filesystem(workspace.tree))
    eventually(lambda: "pears" in stored_text(docs, "notes/fruit.md"))


def stored_text(docs: DocumentIndex, rel: str) -> str:
    record = docs.load(rel)
    return "\n".join(c.text for c in record.chunks) if record is not None else ""


def test_search_is_hybrid_in_the_shared_collection_scoped_by_the_tree(
    team: Team, fake_embedder: ConceptEmbedder
) -> None:
    member = add_member(team, "@Author", WorkspaceTool())
    tools = tools_of(team, member)
    tools["workspace_write"]("pets.md", "Our kitten eats cat food.\n")
    tools["workspace_write"]("money.md", "The budget forecast for spending.\n")
    store = team.system.proxy_ask(
        tool_address(team, STORE_ACTOR_NAME), VectorStoreActor, timeout=30
    )
    eventually(lambda: store.count(WORKSPACE_COLLECTION, "") == 2)
    assert store.count(WORKSPACE_COLLECTION, str(team.orchestrator.team_id)) == 0  # team ""
    found = tools["workspace_search"]("feline pets")  # no keyword overlap with pets.md's text
    assert found.splitlines()[0].startswith("pets.md:1-1")
    # Another tree of the same team shares the store, never the rows.
    other = tools_of(team, add_member(team, "@Other", WorkspaceTool(workspace_id="other")))
    assert other["workspace_search"]("feline pets") == "No passage matches 'feline pets'."


# -- reading ---------------------------------------------------------------------------------------


def test_read_shows_numbered_ranges_and_says_how_to_read_on(team: Team) -> None:
    tools = tools_of(team, add_member(team, "@Reader", WorkspaceTool(workspace_read=_lines(3))))
    tools["workspace_write"]("long.txt", "".join(f"row {i}\n" for i in range(1, 11)))
    first = tools["workspace_read"]("long.txt")
    assert first.splitlines() == [
        "long.txt (lines 1-3 of 10)",
        "     1\trow 1",
        "     2\trow 2",
        "     3\trow 3",
        "[… 7 more lines: read on with start_line=4]",
    ]
    assert tools["workspace_read"]("long.txt", start_line=9).splitlines()[1:] == [
        "     9\trow 9",
        "    10\trow 10",
    ]
    with pytest.raises(RetriableError, match="has 10 lines; start_line 20 is past its end"):
        tools["workspace_read"]("long.txt", start_line=20)
    with pytest.raises(RetriableError, match="File not found: missing.txt"):
        tools["workspace_read"]("missing.txt")
    with pytest.raises(RetriableError, match="Path escapes workspace root"):
        tools["workspace_read"]("../../etc/passwd")
    _write_bytes(team, "blob.bin", b"\x00\x01\x02")
    with pytest.raises(RetriableError, match="is a binary file"):
        tools["workspace_read"]("blob.bin")


def _lines(n: int) -> object:
    from akgentic.tool.workspace import WorkspaceRead

    return WorkspaceRead(max_lines=n)


def _write_bytes(team: Team, rel: str, data: bytes) -> None:
    """Put a file in the team's tree behind the tools' back (the tree may not exist yet)."""
    root = Path(os.environ["AKGENTIC_WORKSPACES_ROOT"])
    path = root / "alice" / "_team" / str(team.orchestrator.team_id) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def docx_bytes(text: str) -> bytes:
    """A minimal Word document holding one paragraph."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
            'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.'
            'openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType='
            '"application/xml"/><Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        z.writestr(
            "_rels/.rels",
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxml'
            'formats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
            'openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/'
            'document.xml"/></Relationships>',
        )
        z.writestr(
            "word/document.xml",
            '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxml'
            f'formats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>{text}</w:t></w:r>'
            "</w:p></w:body></w:document>",
        )
    return buffer.getvalue()


def pdf_bytes(text: str) -> bytes:
    """A minimal one-page PDF showing ``text`` in Helvetica."""
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


def xlsx_bytes() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["fruit", "crates"])
    sheet.append(["mango", 12])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def pptx_bytes() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Roadmap for the harvest"
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def test_documents_are_read_and_searched_as_text(team: Team) -> None:
    for name, data in (  # already in the tree when its actor starts (and reconciles)
        ("memo.docx", docx_bytes("The quarterly invoice is late")),
        ("report.pdf", pdf_bytes("Hello from a PDF")),
        ("stock.xlsx", xlsx_bytes()),
        ("plan.pptx", pptx_bytes()),
    ):
        _write_bytes(team, name, data)
    member = add_member(team, "@Reader", WorkspaceTool())
    tools = tools_of(team, member)
    assert "The quarterly invoice is late" in tools["workspace_read"]("memo.docx")
    assert "Hello from a PDF" in tools["workspace_read"]("report.pdf")
    assert "| mango | 12 |" in tools["workspace_read"]("stock.xlsx")
    assert "# Roadmap for the harvest" in tools["workspace_read"]("plan.pptx")
    # Converted documents are searchable once the indexing worker has converted them.
    workspace = card_of(team, member).workspace
    docs = DocumentIndex(workspace, Filesystem(workspace.tree))
    eventually(lambda: all(docs.load(n) for n in ("memo.docx", "plan.pptx", "report.pdf")))
    assert tools["workspace_search"]("invoice").startswith("memo.docx:1-")
    assert tools["workspace_search"]("harvest roadmap").startswith("plan.pptx:")


def test_without_the_docs_extra_a_document_read_says_how_to_install_it(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tools_of(team, add_member(team, "@Reader", WorkspaceTool()))
    _write_bytes(team, "memo.docx", docx_bytes("x"))
    monkeypatch.setattr(readers_module, "_converter", None)
    monkeypatch.setitem(sys.modules, "markitdown", None)  # as if not installed
    with pytest.raises(
        RetriableError, match=r"needs the 'docs' extra: pip install 'akgentic\[docs\]'"
    ):
        tools["workspace_read"]("memo.docx")


# -- what a search reads ---------------------------------------------------------------------------


class ReadCounter:
    """Counts, per path, the record files loaded and the documents re-read by searches."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.records: list[str] = []
        self.built: list[str] = []
        read_yaml, build = search_module.read_yaml, DocumentIndex.build

        def counted_read(path: Path) -> object:
            self.records.append(path.name)
            return read_yaml(path)

        def counted_build(docs: DocumentIndex, rel: str, *, convert: bool) -> object:
            self.built.append(rel)
            return build(docs, rel, convert=convert)

        monkeypatch.setattr(search_module, "read_yaml", counted_read)
        monkeypatch.setattr(DocumentIndex, "build", counted_build)

    def take(self) -> tuple[int, list[str]]:
        """(records loaded, documents re-read) since the last take."""
        out = (len(self.records), sorted(self.built))
        self.records, self.built = [], []
        return out


def _age(path: Path, seconds: int = 3600) -> int:
    """Set ``path``'s mtime ``seconds`` back, as if the search came that long after the last
    write (past ``RACY_WINDOW_NS``: what is read now is trusted on the file's identity); the
    mtime set, in ns."""
    mtime = time.time_ns() - seconds * 1_000_000_000
    os.utime(path, ns=(mtime, mtime))
    return mtime


def _indexed_tree(tmp_path: Path, files: dict[str, str]) -> tuple[WorkspacePath, Filesystem]:
    """A tree holding ``files``, each with its stored record (as the indexer leaves it, a
    while after the files were written)."""
    workspace = resolve_workspace_path(kind=KIND_ID, leaf="reads", root=tmp_path)
    fs = Filesystem(workspace.tree)
    docs = DocumentIndex(workspace, fs)
    for rel, text in files.items():
        path = workspace.tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        _age(path)
        record = docs.build(rel, convert=False)
        assert record is not None
        docs.save(record)
        _age(docs._file(rel))
    return workspace, fs


def _search(workspace: WorkspacePath, fs: Filesystem, query: str) -> list[tuple[str, str]]:
    """``(path, text)`` of every hit, through a new index — as the card searches."""
    return [(h.path, h.text) for h in DocumentIndex(workspace, fs).search(query, 10)]


def test_a_second_search_of_an_unchanged_tree_reads_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"notes/n{i}.md": f"Note {i} about the orchard.\n" for i in range(5)}
    workspace, fs = _indexed_tree(tmp_path, files)
    reads = ReadCounter(monkeypatch)
    assert len(_search(workspace, fs, "orchard")) == 5
    assert reads.take() == (5, [])  # the first search loads each record once
    assert len(_search(workspace, fs, "orchard")) == 5
    assert reads.take() == (0, [])  # the second: none, and no document re-read
    # A change behind the tool's back (a command, another process): that document only.
    (workspace.tree / "notes/n2.md").write_text("Note 2 is now about the vineyard.\n")
    _age(workspace.tree / "notes/n2.md", 60)  # searched a minute after it was written
    assert _search(workspace, fs, "vineyard") == [
        ("notes/n2.md", "Note 2 is now about the vineyard.")
    ]
    assert reads.take() == (1, ["notes/n2.md"])
    assert _search(workspace, fs, "vineyard") == [
        ("notes/n2.md", "Note 2 is now about the vineyard.")
    ]
    assert reads.take() == (0, [])  # chunked once, kept until it changes again
    # The indexer stores its record: the next search takes that record, nothing else.
    docs = DocumentIndex(workspace, fs)
    record = docs.build("notes/n2.md", convert=True)
    assert record is not None
    docs.save(record)
    reads.take()
    assert [p for p, _ in _search(workspace, fs, "vineyard")] == ["notes/n2.md"]
    assert reads.take() == (1, [])


def test_a_record_stored_behind_the_search_is_taken_next(tmp_path: Path) -> None:
    """Another process's indexer replaces a record (its document unchanged): what search
    kept is keyed on the record file too, so the next search takes the new record."""
    workspace, fs = _indexed_tree(tmp_path, {"memo.md": "placeholder\n"})
    assert _search(workspace, fs, "placeholder") == [("memo.md", "placeholder")]
    docs = DocumentIndex(workspace, fs)
    record = docs.load("memo.md")
    assert record is not None
    rewritten = record.model_copy(update={"chunks": chunk_text("invoice")})
    write_yaml(docs._file("memo.md"), rewritten.model_dump(mode="json"))  # not through save()
    assert _search(workspace, fs, "invoice") == [("memo.md", "invoice")]
    assert _search(workspace, fs, "placeholder") == []


def test_an_edit_within_one_clock_tick_is_found(tmp_path: Path) -> None:
    """Two writes of one size in one mtime tick: the tool's write replaces the file (a new
    inode), so what the first search kept of it is not taken for the second text."""
    workspace, fs = _indexed_tree(tmp_path, {"fruit.md": "apples\n"})
    path = workspace.tree / "fruit.md"
    fs.write(path, b"pears and plums\n")  # not indexed yet: chunked on the spot, kept
    assert _search(workspace, fs, "pears") == [("fruit.md", "pears and plums")]
    tick = path.stat()
    fs.write(path, b"figs and grapes\n")  # same size, and (forced) the same mtime
    os.utime(path, ns=(tick.st_atime_ns, tick.st_mtime_ns))
    assert _search(workspace, fs, "figs") == [("fruit.md", "figs and grapes")]


def test_a_same_size_edit_in_place_within_one_tick_is_found(tmp_path: Path) -> None:
    """Rewritten in place (the same inode: a command, another process), of one size, within
    one mtime tick: what the first search read is not taken for the second text."""
    workspace, fs = _indexed_tree(tmp_path, {})
    path = workspace.tree / "fruit.md"
    path.write_text("pears and plums\n")
    assert _search(workspace, fs, "pears") == [("fruit.md", "pears and plums")]
    tick = path.stat()
    path.write_text("figs and grapes\n")  # same size, and (forced) the same mtime
    os.utime(path, ns=(tick.st_atime_ns, tick.st_mtime_ns))
    assert path.stat().st_ino == tick.st_ino
    assert _search(workspace, fs, "figs") == [("fruit.md", "figs and grapes")]
    assert _search(workspace, fs, "pears") == []


def test_a_change_that_keeps_size_and_mtime_is_seen_by_its_ctime(tmp_path: Path) -> None:
    """Long after its mtime (trusted), rewritten in place with its size and mtime put back
    (``touch -r``, an rsync): the ctime still says it changed."""
    workspace, fs = _indexed_tree(tmp_path, {"fruit.md": "pears and plums\n"})
    assert _search(workspace, fs, "pears") == [("fruit.md", "pears and plums")]
    path = workspace.tree / "fruit.md"
    old = path.stat()
    path.write_text("figs and grapes\n")
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert _search(workspace, fs, "figs") == [("fruit.md", "figs and grapes")]


def test_a_document_read_soon_after_its_mtime_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read within ``RACY_WINDOW_NS`` of its last change, a document is settled again by the
    next search, however unchanged it looks; read past that window, it is kept."""
    workspace, fs = _indexed_tree(tmp_path, {"old.md": "an old orchard\n"})
    (workspace.tree / "new.md").write_text("a new orchard\n")
    reads = ReadCounter(monkeypatch)
    assert len(_search(workspace, fs, "orchard")) == 2
    assert reads.take() == (2, ["new.md"])  # both records looked up; new.md has none: chunked
    assert len(_search(workspace, fs, "orchard")) == 2
    assert reads.take() == (1, ["new.md"])  # old.md kept; new.md may have changed unseen
    _age(workspace.tree / "new.md")
    assert len(_search(workspace, fs, "orchard")) == 2
    assert reads.take() == (1, ["new.md"])  # its identity changed
    assert len(_search(workspace, fs, "orchard")) == 2
    assert reads.take() == (0, [])  # read long after its mtime: kept


def test_a_record_read_soon_after_its_mtime_does_not_describe_it(tmp_path: Path) -> None:
    """The indexer read the file's first text, and a second write of one size followed in
    that tick (size, mtime and ctime as they were): the record is not taken for the file,
    which is chunked as it is now. Read long after that mtime, the same record is taken."""
    workspace, fs = _indexed_tree(tmp_path, {})
    path = workspace.tree / "fruit.md"
    path.write_text("grapes\n")
    stat = path.stat()
    first = DocRecord(
        path="fruit.md",
        sha=content_sha(b"apples\n"),
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        ctime_ns=stat.st_ctime_ns,
        chunks=chunk_text("apples\n"),
        indexed_at=stat.st_mtime_ns / 1e9,  # read in the tick of the writes
    )
    assert first.describes(stat) is False
    DocumentIndex(workspace, fs).save(first)
    assert _search(workspace, fs, "grapes") == [("fruit.md", "grapes")]
    assert _search(workspace, fs, "apples") == []
    assert first.model_copy(update={"indexed_at": time.time() + 3}).describes(stat)


def test_a_converted_record_read_soon_after_its_mtime_is_checked_against_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document's record converted in the tick of its last write (as the indexer leaves
    one just written) is not taken on the file's identity alone: the file is read again,
    and converted again when its bytes are not the ones the record was converted from; when
    they are, the record is taken and nothing is converted."""
    workspace, fs = _indexed_tree(tmp_path, {})
    path = workspace.tree / "memo.docx"
    path.write_bytes(docx_bytes("grapes"))
    stat = path.stat()
    racy = DocRecord(
        path="memo.docx",
        sha=content_sha(docx_bytes("apple")),  # a first text of the tick, of one size
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        ctime_ns=stat.st_ctime_ns,
        converted=True,
        chunks=chunk_text("apple\n"),
        indexed_at=stat.st_mtime_ns / 1e9,  # read in the tick of the writes
    )
    assert racy.identifies(stat) and not racy.describes(stat)
    DocumentIndex(workspace, fs).save(racy)
    assert _search(workspace, fs, "grapes") == [("memo.docx", "grapes")]
    assert _search(workspace, fs, "apple") == []
    # The bytes the record was converted from: the record is taken, with no conversion.
    DocumentIndex(workspace, fs).save(
        racy.model_copy(
            update={"sha": content_sha(path.read_bytes()), "chunks": chunk_text("figs")}
        )
    )
    converted: list[str] = []
    convert = readers_module._convert
    monkeypatch.setattr(
        readers_module, "_convert", lambda name, data: converted.append(name) or convert(name, data)
    )
    assert _search(workspace, fs, "figs") == [("memo.docx", "figs")]
    assert converted == []


def test_a_second_search_tokenises_only_its_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunks' BM25 terms are kept with what search settled: an unchanged tree's chunks
    are not tokenised again; a changed document's are, that document's alone."""
    files = {f"n{i}.md": "".join(f"orchard row {j}\n" for j in range(60)) for i in range(3)}
    workspace, fs = _indexed_tree(tmp_path, files)
    tokenised: list[str] = []
    tokenize = hybrid.tokenize

    def counted(text: str) -> list[str]:
        tokenised.append(text)
        return tokenize(text)

    monkeypatch.setattr(hybrid, "tokenize", counted)
    first = _search(workspace, fs, "orchard row 7")
    assert len(tokenised) == 1 + 3 * 2  # the query, and each document's two chunks
    tokenised.clear()
    assert _search(workspace, fs, "orchard row 7") == first
    assert tokenised == ["orchard row 7"]
    tokenised.clear()
    (workspace.tree / "n1.md").write_text("a vineyard now\n")
    _age(workspace.tree / "n1.md", 60)
    assert _search(workspace, fs, "vineyard") == [("n1.md", "a vineyard now")]
    assert sorted(tokenised) == ["a vineyard now", "vineyard"]


def test_a_removed_document_is_gone_from_the_next_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, fs = _indexed_tree(tmp_path, {"a.md": "apples here\n", "b.md": "apples there\n"})
    assert [p for p, _ in _search(workspace, fs, "apples")] == ["a.md", "b.md"]
    (workspace.tree / "a.md").unlink()  # its record is still stored: the file decides
    reads = ReadCounter(monkeypatch)
    assert [p for p, _ in _search(workspace, fs, "apples")] == ["b.md"]
    assert reads.take() == (0, [])
    DocumentIndex(workspace, fs).remove("a.md")
    assert [p for p, _ in _search(workspace, fs, "apples")] == ["b.md"]


def test_search_through_the_tool_sees_every_change_at_once(team: Team) -> None:
    tools = tools_of(team, add_member(team, "@Author", WorkspaceTool()))
    tools["workspace_write"]("fruit.md", "We grow apples in the north orchard.\n")
    tools["workspace_write"]("keep.md", "The orchard gate is green.\n")
    assert tools["workspace_search"]("apples").startswith("fruit.md:1-1")
    tools["workspace_edit"]("fruit.md", "apples", "quinces")  # through the tool
    assert tools["workspace_search"]("apples") == "No passage matches 'apples'."
    assert "We grow quinces in the north orchard." in tools["workspace_search"]("quinces")
    _write_bytes(team, "fruit.md", b"Now the north orchard grows medlars.\n")  # behind it
    assert tools["workspace_search"]("quinces") == "No passage matches 'quinces'."
    assert "grows medlars" in tools["workspace_search"]("medlars")
    tools["workspace_read"]("fruit.md")  # the gate deletes only what was seen
    tools["workspace_delete"]("fruit.md")
    assert tools["workspace_search"]("medlars") == "No passage matches 'medlars'."
    assert tools["workspace_search"]("orchard").startswith("keep.md:1-1")


def test_a_search_with_a_path_looks_in_that_folder_only(team: Team) -> None:
    """workspace_search looked at the whole tree, always: a passage could not be looked
    for in one part of it. path limits it to a folder, validated as every path is."""
    tools = tools_of(team, add_member(team, "@Author", WorkspaceTool()))
    tools["workspace_write"]("notes/fruit.md", "We grow apples in the north orchard.\n")
    tools["workspace_write"]("notes/deep/more.md", "Apples keep in the cellar.\n")
    tools["workspace_write"]("shop/prices.md", "Apples cost two coins.\n")
    everywhere = {line.split(":")[0] for line in tools["workspace_search"]("apples").splitlines()}
    assert {"notes/fruit.md", "notes/deep/more.md", "shop/prices.md"} <= everywhere
    in_notes = tools["workspace_search"]("apples", path="notes/")
    found = {line.split(":")[0] for line in in_notes.splitlines() if not line.startswith(" ")}
    assert found == {"notes/fruit.md", "notes/deep/more.md"}
    assert tools["workspace_search"]("apples", path="shop").startswith("shop/prices.md:1-1")
    assert tools["workspace_search"]("orchard", path="shop") == (
        "No passage matches 'orchard' in shop/."
    )
    # the whole tree's answer is whole again after a folder's search (its cache kept)
    assert tools["workspace_search"]("orchard").startswith("notes/fruit.md:1-1")


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../elsewhere", "Path escapes workspace root — use a relative path inside the workspace"),
        ("/etc", "Path escapes workspace root — use a relative path inside the workspace"),
        ("gone", "Folder not found: gone; workspace_list shows the workspace's folders"),
        (
            "notes/fruit.md",
            "notes/fruit.md is a file: path limits the search to a folder; read the file with "
            "workspace_read, or pass its folder",
        ),
    ],
)
def test_a_search_path_outside_missing_or_a_file_is_refused_saying_what_to_pass(
    team: Team, path: str, says: str
) -> None:
    tools = tools_of(team, add_member(team, "@Author", WorkspaceTool()))
    tools["workspace_write"]("notes/fruit.md", "We grow apples.\n")
    with pytest.raises(RetriableError) as refused:
        tools["workspace_search"]("apples", path=path)
    assert str(refused.value).startswith(says)


@pytest.mark.parametrize("limit", [0, -3, 101])
def test_a_search_limit_out_of_bounds_is_refused_saying_the_range(team: Team, limit: int) -> None:
    """``workspace_search(query, limit=0)`` answered one passage (the limit was raised to
    1 in silence): a limit outside 1..100 is refused with the bounds, as the plan's and
    the graph's searches refuse theirs, and a card's default is bound the same."""
    tools = tools_of(team, add_member(team, "@Author", WorkspaceTool()))
    tools["workspace_write"]("fruit.md", "We grow apples.\n")
    with pytest.raises(RetriableError) as refused:
        tools["workspace_search"]("apples", limit=limit)
    bound = "greater than or equal to 1" if limit < 1 else "less than or equal to 100"
    assert str(refused.value) == (
        f"workspace_search: invalid argument limit: Input should be {bound}, got {limit}. "
        f"Call it as workspace_search(query: str, limit: int = 8, path: str = '.')."
    )
    assert tools["workspace_search"]("apples", limit=1).startswith("fruit.md:1-1")
    with pytest.raises(ValueError, match="limit"):
        WorkspaceSearch(limit=limit)
