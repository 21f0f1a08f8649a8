"""Document search (keyword, hybrid, the shared collection) and document reading."""

from __future__ import annotations

import io
import os
import sys
import zipfile
from pathlib import Path

import pytest

from akgentic.tool.errors import RetriableError
from akgentic.tool.vector_store import STORE_ACTOR_NAME, VectorStoreActor
from akgentic.tool.workspace import WORKSPACE_COLLECTION, DocumentIndex, WorkspaceTool
from akgentic.tool.workspace import readers as readers_module
from akgentic.tool.workspace.search import chunk_text
from akgentic.tool.workspace.workspace import Filesystem

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
