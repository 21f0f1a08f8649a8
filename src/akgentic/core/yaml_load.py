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

YAML larger than ``MAX_YAML_BYTES`` (4 MiB) is refused before it is parsed
(:class:`YamlTooLargeError`): PyYAML's safe loader is pure Python, and a card with a 50 MB
description holds it for minutes at hundreds of MB before any answer. A file is read through
:func:`read_yaml_file`, which checks its size first, so such a file is not even read,
and reads at most one byte past the limit whatever the size says (a device, a FIFO or a
``/proc`` file says 0: ``/dev/zero`` given as a card must not fill the memory); the
server's request bodies are capped lower still (``--max-body``, 1 MiB by default), so a
posted ``card_yaml`` meets this limit only where the operator raised that one past it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from akgentic.core.serialization import SerializationError, check_shape

__all__ = [
    "MAX_YAML_BYTES",
    "NotUtf8Error",
    "YamlShapeError",
    "YamlTooLargeError",
    "check_yaml_size",
    "load_yaml",
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


def check_yaml_size(size: int, *, at_least: bool = False) -> None:
    """Refuse YAML of ``size`` bytes over ``MAX_YAML_BYTES`` (:class:`YamlTooLargeError`);
    ``at_least``: ``size`` is as far as it was read (it goes on)."""
    if size > MAX_YAML_BYTES:
        said = f"more than {MAX_YAML_BYTES:,} bytes" if at_least else f"{size:,} bytes"
        raise YamlTooLargeError(
            f"{said} ({size / 1024 / 1024:.1f} MiB), over akgentic's "
            f"{MAX_YAML_BYTES // 1024 // 1024} MiB limit for YAML: make it smaller (keep long "
            f"text out of it) or split it"
        )


def read_yaml_file(path: Path) -> bytes:
    """The bytes of a YAML file, refused (:class:`YamlTooLargeError`) over
    ``MAX_YAML_BYTES`` before it is read when its size says so, and read at most one byte
    past the limit otherwise: a device, a FIFO or a ``/proc`` file says its size is 0.
    ``OSError`` as opening or reading it raises."""
    with path.open("rb") as file:
        check_yaml_size(os.fstat(file.fileno()).st_size)
        data = file.read(MAX_YAML_BYTES + 1)
    check_yaml_size(len(data), at_least=True)
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
        for key_node, _ in node.value:
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


def load_yaml(text: str) -> Any:
    """The data of YAML ``text``, read with the safe loader; ``yaml.YAMLError`` when it
    is not YAML, :class:`YamlShapeError` (one too) when it is refused for its shape,
    :class:`YamlTooLargeError` (one too), unparsed, when it is over ``MAX_YAML_BYTES``."""
    if len(text) > MAX_YAML_BYTES // 4:  # at most 4 bytes a character: smaller is in bounds
        check_yaml_size(len(text.encode("utf-8", errors="surrogatepass")))
    try:
        data = yaml.load(text, Loader=_Loader)  # _Loader is the safe loader
    except RecursionError:
        raise YamlShapeError(
            "the YAML is nested too deep to read; akgentic refuses it: flatten it"
        ) from None
    try:
        check_shape(data)
    except SerializationError as exc:
        raise YamlShapeError(str(exc)) from None
    return data
