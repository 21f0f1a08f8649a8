"""load_yaml: the one way akgentic reads YAML that a person or a program wrote.

``yaml.safe_load`` builds no objects but plain ones, yet a few hundred bytes of aliases
nested in aliases expand to millions of values, and an alias inside its own anchor builds
data that holds itself: whatever walks the result next (a depth check, validation,
serialization for the store) spends minutes or never ends. :func:`load_yaml` refuses
both, and data nested deeper than ``MAX_DEPTH``, as it reads (:func:`check_shape`, linear
in what the text holds), with a ``yaml.YAMLError`` — so every reader's existing "not
valid YAML: ..." answer carries it, on one line.

A key written twice in one mapping is an error too, naming both lines (PyYAML keeps the
last one silently: a card's second ``model:`` would win without a word); a key a merge
(``<<: *base``) brings in may be overridden, as YAML means it to be.

A value PyYAML parses but cannot build — an integer longer than Python converts (5,000
digits), a date that is no date (``2001-13-45``), an explicit tag on a value not of that
type (``!!int abc``) — and a character YAML does not allow (a NUL, binary junk) are
``yaml.YAMLError`` too, marked with their line and column, never the constructor's or the
reader's own exception: every reader's YAML answer says them on one line.

YAML larger than ``MAX_YAML_BYTES`` (4 MiB) is refused before it is parsed
(:class:`YamlTooLargeError`): PyYAML's safe loader is pure Python, and a card with a 50 MB
description holds it for minutes at hundreds of MB before any answer. A file is read through
:func:`read_yaml_file`, which checks its size first, so such a file is not even read,
and reads at most one byte past the limit whatever the size says (a ``/proc`` file says
0); anything but a regular file — a FIFO, a socket, a device such as ``/dev/tty`` or
``/dev/zero`` — is refused from its status before it is opened (:func:`not_a_file`), as
reading it would wait for a writer or never end; the
server's request bodies are capped lower still (``--max-body``, 1 MiB by default), so a
posted ``card_yaml`` meets this limit only where the operator raised that one past it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

import yaml

from akgentic.core.excerpt import exception_words, excerpt
from akgentic.core.serialization import MAX_DEPTH, SerializationError, check_shape

__all__ = [
    "MAX_YAML_BYTES",
    "NotUtf8Error",
    "YamlShapeError",
    "YamlTooLargeError",
    "check_yaml_size",
    "load_yaml",
    "not_a_file",
    "read_yaml_file",
    "yaml_text",
]

MAX_YAML_BYTES = 4 * 1024 * 1024
"""The largest YAML akgentic parses (a card, a scenario, a skill's frontmatter): far past
any real card, well short of what keeps the pure-Python loader busy for long."""


class YamlShapeError(yaml.YAMLError):
    """YAML that parses but is refused for its shape (see the module docstring)."""


class YamlTooLargeError(YamlShapeError):
    """YAML refused unparsed for its size (over ``MAX_YAML_BYTES``); its words say the
    size, the limit and what to do, for a reader to put after the file's name."""


TOO_LARGE_FIX = "make it smaller (keep long text out of it) or split it"
"""What to do with YAML over the limit, unless the reader knows better (a skill file's
long text is its content: it is split into skills, not kept out)."""


def check_yaml_size(
    size: int, *, at_least: bool = False, what: str = "YAML", fix: str = TOO_LARGE_FIX
) -> None:
    """Refuse ``what`` of ``size`` bytes over ``MAX_YAML_BYTES`` (:class:`YamlTooLargeError`
    saying ``fix``); ``at_least``: ``size`` is as far as it was read (it goes on)."""
    if size > MAX_YAML_BYTES:
        said = f"more than {MAX_YAML_BYTES:,} bytes" if at_least else f"{size:,} bytes"
        raise YamlTooLargeError(
            f"{said} ({size / 1024 / 1024:.1f} MiB), over akgentic's "
            f"{MAX_YAML_BYTES // 1024 // 1024} MiB limit for {what}: {fix}"
        )


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def not_a_file(mode: int) -> str | None:
    """What a file of status mode ``mode`` is when it is neither a regular file nor a
    folder — ``a FIFO``, ``a socket``, ``a character device`` (a terminal, ``/dev/zero``),
    ``a block device`` — or None: reading such a thing waits for a writer or never ends."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def _refuse_unless_regular(mode: int) -> None:
    """``OSError`` unless ``mode`` is a regular file's: a folder's is ``EISDIR`` (the
    words reading it would give), anything else says what it is (:func:`not_a_file`)."""
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    kind = not_a_file(mode)
    if kind is not None:
        raise OSError(errno.EINVAL, f"{kind}, not a file: name the YAML file itself")


def read_yaml_file(path: Path, *, what: str = "YAML", fix: str = TOO_LARGE_FIX) -> bytes:
    """The bytes of a YAML file, refused (:class:`YamlTooLargeError`, its words naming
    ``what`` and ``fix``) over ``MAX_YAML_BYTES`` before it is read when its size says so,
    and read at most one byte past the limit otherwise: a ``/proc`` file says its size is
    0. ``OSError`` as opening or reading it raises, and for anything but a regular file —
    a FIFO, a socket, a device (``/dev/tty``, ``/dev/zero``), said by its status before
    it is opened: opened as a file is, a FIFO waits for a writer and a terminal for a
    line, deaf to Ctrl-C (``akgentic run /dev/tty``, a FIFO in a cards folder), and a
    device's open may act by itself. The open does not wait either (``O_NONBLOCK``), and
    what it opened is checked again: a FIFO put in the file's place meanwhile is refused
    the same way."""
    _refuse_unless_regular(os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open returns at once
    try:
        status = os.fstat(fd)
        _refuse_unless_regular(status.st_mode)
        check_yaml_size(status.st_size, what=what, fix=fix)
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as file:  # the fd is closed below
            data = file.read(MAX_YAML_BYTES + 1)
    finally:
        os.close(fd)
    check_yaml_size(len(data), at_least=True, what=what, fix=fix)
    return data


class NotUtf8Error(ValueError):
    """A YAML file whose bytes are not UTF-8 text; ``line`` is where the first bad byte is,
    the words say which byte and what to do, for a reader to put after the file's name."""

    def __init__(self, line: int, words: str) -> None:
        super().__init__(words)
        self.line = line


def yaml_text(raw: bytes, what: str) -> str:
    """A YAML file's bytes as text; :class:`NotUtf8Error` saying to save the ``what`` (a
    card, a scenario) as UTF-8 when they are not — a person who saved it as Latin-1 or
    pointed at a binary file learns the fix, not the codec's words."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(
            raw[: exc.start].count(b"\n") + 1,
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}): save the "
            f"{what} as UTF-8",
        ) from None


class _Loader(yaml.SafeLoader):
    """The safe loader, refusing a key written twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        written: dict[tuple[str, str], yaml.Node] = {}  # (tag, text): 1 and "1" differ
        pairs = node.value if isinstance(node, yaml.MappingNode) else []  # else super refuses
        for key_node, _ in pairs:
            if (
                not isinstance(key_node, yaml.ScalarNode)
                or key_node.tag == "tag:yaml.org,2002:merge"
            ):
                continue
            first = written.setdefault((key_node.tag, key_node.value), key_node)
            if first is not key_node:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"found the key {key_node.value!r} a second time (first at line "
                    f"{first.start_mark.line + 1}): write it once",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)

    def scan_flow_scalar_non_spaces(self, double: bool, start_mark: yaml.Mark) -> list[Any]:
        """A quoted scalar's text; an escape past the last character (``"\\U00110000"``:
        the scanner's ``chr()`` raises) is a ``ScannerError`` marked where it is."""
        try:
            return super().scan_flow_scalar_non_spaces(double, start_mark)
        except (OverflowError, ValueError):
            raise yaml.scanner.ScannerError(
                "while scanning a double-quoted scalar",
                start_mark,
                "this escape names no character (\\U0010FFFF is the last one): correct it",
                self.get_mark(),
            ) from None

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """The value of ``node``; a value the safe constructors cannot build (they raise
        what Python's ``int``, ``datetime``, ``base64`` raise) is a ``ConstructorError``
        marked where it is written."""
        try:
            return super().construct_object(node, deep=deep)
        except (ArithmeticError, AttributeError, LookupError, TypeError, ValueError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, _unbuildable(node, exc), node.start_mark
            ) from None


_INT_TAG = "tag:yaml.org,2002:int"


def _unbuildable(node: yaml.Node, exc: Exception) -> str:
    """What is wrong with a value the constructor could not build, and what to do."""
    kind = str(node.tag).rsplit(":", 1)[-1]
    if not isinstance(node, yaml.ScalarNode):
        return f"cannot read this {kind}: {exception_words(exc)}"
    digits = sum(c.isdigit() for c in node.value)
    limit = sys.get_int_max_str_digits()
    if node.tag == _INT_TAG and 0 < limit < digits:
        return (
            f"an integer of {digits:,} digits, more than the {limit:,} Python reads: write a "
            f"shorter number, or quote it to make it text"
        )
    why = f" ({exception_words(exc)})" if type(exc) is ValueError else ""  # else Python's own
    return (
        f"{excerpt(node.value, 60)} is not a valid {kind}{why}: correct it, or quote it to "
        f"make it text"
    )


def _reader_error(text: str, exc: yaml.reader.ReaderError) -> yaml.MarkedYAMLError:
    """A character YAML does not allow, marked at its line and column (the reader's own
    words give a character offset in ``"<unicode string>"``)."""
    at = exc.position
    line = text.count("\n", 0, at)
    column = at - (text.rfind("\n", 0, at) + 1)
    what = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return yaml.MarkedYAMLError(
        problem=f"character #x{what:04x} is not allowed in YAML ({exc.reason}): remove it",
        problem_mark=yaml.Mark("<text>", at, line, column, None, 0),  # no snippet
    )


def load_yaml(text: str) -> Any:
    """The data of YAML ``text``, read with the safe loader; ``yaml.YAMLError`` when it
    is not YAML, :class:`YamlShapeError` (one too) when it is refused for its shape,
    :class:`YamlTooLargeError` (one too), unparsed, when it is over ``MAX_YAML_BYTES``."""
    if len(text) > MAX_YAML_BYTES // 4:  # at most 4 bytes a character: smaller is in bounds
        check_yaml_size(len(text.encode("utf-8", errors="surrogatepass")))
    try:
        data = yaml.load(text, Loader=_Loader)  # _Loader is the safe loader
    except yaml.reader.ReaderError as exc:
        raise _reader_error(text, exc) from None
    except RecursionError:
        raise YamlShapeError(
            f"the YAML is nested deeper than {MAX_DEPTH} levels, too deep to read; akgentic "
            f"refuses it: flatten it"
        ) from None
    try:
        check_shape(data)
    except SerializationError as exc:
        raise YamlShapeError(str(exc)) from None
    return data
