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
"""

from __future__ import annotations

from typing import Any

import yaml

from akgentic.core.serialization import SerializationError, check_shape

__all__ = ["YamlShapeError", "load_yaml"]


class YamlShapeError(yaml.YAMLError):
    """YAML that parses but is refused for its shape (see the module docstring)."""


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
    is not YAML, :class:`YamlShapeError` (one too) when it is refused for its shape."""
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
