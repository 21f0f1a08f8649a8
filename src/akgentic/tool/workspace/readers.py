"""Turning a file into what a model can read: text, converted documents, resized images.

:class:`DocumentReader` extracts text in two passes:

1. **As text** — a known text extension, or bytes with no NUL that decode as UTF-8
   (a BOM is dropped). Most of a workspace is this, and it costs nothing.
2. **As a document** — PDF, DOCX, XLSX/XLS, PPTX and Outlook ``.msg`` through MarkItDown
   (the ``docs`` extra). Without it the read fails with a ``ValueError`` carrying the
   install hint, which the card turns into a ``RetriableError`` the model can act on.

Anything else is binary: the reader says so instead of pouring bytes into a context.

:func:`load_image` prepares an image for ``workspace_view``: resized with Pillow (the
``vision`` extra) so its longest side fits, cached beside the tree (``<leaf>.index``) keyed
by content and size; without Pillow the original is sent and a warning is logged once.
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BINARY_DOCUMENT_EXTENSIONS",
    "IMAGE_EXTENSIONS",
    "TEXT_EXTENSIONS",
    "DocumentReader",
    "cut_line",
    "load_image",
    "number_lines",
]

logger = logging.getLogger("akgentic.tool.workspace")

TEXT_EXTENSIONS: frozenset[str] = frozenset(
    [
        ".txt",
        ".md",
        ".markdown",
        ".rst",
        ".py",
        ".pyi",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".jsx",
        ".json",
        ".jsonl",
        ".yaml",
        ".yml",
        ".toml",
        ".ini",
        ".cfg",
        ".conf",
        ".env",
        ".csv",
        ".tsv",
        ".html",
        ".htm",
        ".css",
        ".scss",
        ".xml",
        ".svg",
        ".sh",
        ".bash",
        ".zsh",
        ".sql",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".rb",
        ".php",
        ".pl",
        ".lua",
        ".r",
        ".jl",
        ".swift",
        ".scala",
        ".tex",
        ".bib",
        ".log",
        ".diff",
        ".patch",
        ".gitignore",
        ".dockerfile",
        ".makefile",
        ".mk",
        ".proto",
        ".graphql",
        ".vue",
        ".svelte",
    ]
)
BINARY_DOCUMENT_EXTENSIONS: frozenset[str] = frozenset(
    {".pdf", ".docx", ".xlsx", ".xls", ".pptx", ".msg"}
)
IMAGE_EXTENSIONS: frozenset[str] = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"})

_DOCS_HINT = (
    "reading {name} (a {ext} document) needs the 'docs' extra: "
    "pip install 'akgentic[docs]' — until then, only text files can be read"
)


class DocumentReader(BaseModel):
    """Two-pass text extraction; see the module docstring.

    ``max_bytes`` bounds what is read at all; bigger files are refused with their size.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    max_bytes: int = Field(default=20 * 1024 * 1024, gt=0)

    def is_document(self, name: str) -> bool:
        """Whether ``name`` is a binary document format MarkItDown converts."""
        return Path(name).suffix.lower() in BINARY_DOCUMENT_EXTENSIONS

    def as_text(self, name: str, data: bytes) -> str | None:
        """Pass one: the text of ``data`` when it is text, else None."""
        if b"\x00" in data[:8192] and Path(name).suffix.lower() not in TEXT_EXTENSIONS:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            if Path(name).suffix.lower() in TEXT_EXTENSIONS:
                return data.decode("utf-8", errors="replace")
            return None
        return text[1:] if text.startswith("\ufeff") else text

    def extract(self, name: str, data: bytes, view_tool: str = "workspace_view") -> str:
        """The text of the file ``name`` holding ``data`` (``view_tool``: what the caller's
        model calls the tool that shows an image, named by the error for a binary).

        Raises ``ValueError`` for a document format without the ``docs`` extra (with the
        install hint), for a document MarkItDown cannot convert, and for other binaries.
        """
        if len(data) > self.max_bytes:
            raise ValueError(
                f"{name} is {len(data)} bytes, more than the {self.max_bytes} a read may take"
            )
        if not self.is_document(name):
            text = self.as_text(name, data)
            if text is not None:
                return text
            raise ValueError(
                f"{name} is a binary file ({len(data)} bytes) and not a document format "
                f"(PDF, DOCX, XLSX, PPTX); use {view_tool} for images"
            )
        return _convert(name, data)


_converter: Any = None
_converter_lock = threading.Lock()


def _convert(name: str, data: bytes) -> str:
    """Pass two: MarkItDown, made once per process."""
    global _converter
    suffix = Path(name).suffix.lower()
    with _converter_lock:
        if _converter is None:
            try:
                from markitdown import MarkItDown
            except ImportError:
                raise ValueError(_DOCS_HINT.format(name=name, ext=suffix)) from None
            _converter = MarkItDown(enable_plugins=False)
        converter = _converter
    try:
        from markitdown import StreamInfo

        result = converter.convert_stream(
            io.BytesIO(data), stream_info=StreamInfo(extension=suffix, filename=Path(name).name)
        )
    except Exception as exc:
        raise ValueError(
            f"{name} could not be converted to text: {type(exc).__name__}: {exc}"
        ) from None
    return str(result.text_content or "")


def cut_line(line: str, max_chars: int = 2000) -> str:
    """``line`` cut at ``max_chars``, saying how many characters were left out: what a read
    and a grep show of a long line (minified code, a row of data)."""
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]} … [{len(line) - max_chars} more characters]"


def number_lines(
    text: str, start: int = 1, end: int | None = None, max_lines: int = 2000, max_chars: int = 2000
) -> tuple[str, int, int, int]:
    """Lines ``start``..``end`` (1-based, inclusive) numbered like ``cat -n``.

    Returns (rendered, first line shown, last line shown, total lines). At most
    ``max_lines`` lines are shown; a line longer than ``max_chars`` is cut with a note.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    first = max(1, start)
    last = total if end is None else min(end, total)
    last = min(last, first + max_lines - 1)
    out = []
    for number in range(first, last + 1):
        line = lines[number - 1]
        out.append(f"{number:6d}\t{cut_line(line, max_chars)}")
    return "\n".join(out), first, last, total


_vision_warned = False
_vision_lock = threading.Lock()


def load_image(data: bytes, suffix: str, cache_dir: Path, max_side: int) -> tuple[bytes, str, str]:
    """(bytes, media type, note) of an image ready for a model: resized so its longest side
    is at most ``max_side`` (Pillow), cached in ``cache_dir`` by content and size. Without
    Pillow the original is returned and a warning is logged once."""
    media = _media_type(suffix)
    try:
        from PIL import Image
    except ImportError:
        global _vision_warned
        with _vision_lock:
            if not _vision_warned:
                logger.warning(
                    "image resizing for workspace_view is skipped: install the 'vision' "
                    "extra (pip install 'akgentic[vision]')"
                )
                _vision_warned = True
        return data, media, "not resized (the 'vision' extra is not installed)"
    digest = hashlib.sha256(data).hexdigest()[:32]
    cached = cache_dir / f"{digest}-{max_side}.png"
    if cached.is_file():
        return cached.read_bytes(), "image/png", "resized (cached)"
    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            if max(width, height) <= max_side:
                return data, media, f"{width}x{height}, original size"
            scale = max_side / max(width, height)
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            resized = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
            resized = resized.resize(size)
            buffer = io.BytesIO()
            resized.save(buffer, format="PNG")
    except Exception as exc:
        raise ValueError(f"the image cannot be decoded: {type(exc).__name__}: {exc}") from None
    out = buffer.getvalue()
    cache_dir.mkdir(parents=True, exist_ok=True)
    temp = cached.with_suffix(f".{digest[:6]}.tmp")
    temp.write_bytes(out)
    temp.replace(cached)
    return out, "image/png", f"resized from {width}x{height} to {size[0]}x{size[1]}"


def _media_type(suffix: str) -> str:
    return {
        ".png": "image/png",
        ".jpg": "image/jpeg",
        ".jpeg": "image/jpeg",
        ".gif": "image/gif",
        ".webp": "image/webp",
        ".bmp": "image/bmp",
    }.get(suffix.lower(), "application/octet-stream")
