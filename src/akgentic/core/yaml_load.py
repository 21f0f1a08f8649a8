"""load_yaml: the one way akgentic reads YAML that a person or a program wrote.

``yaml.safe_load`` builds no objects but plain ones, yet a few hundred bytes of aliases
nested in aliases expand to millions of values, and an alias inside its own anchor builds
data that holds itself: whatever walks the result next (a depth check, validation,
serialization for the store) spends minutes or never ends. :func:`load_yaml` refuses
both, and data nested deeper than ``MAX_DEPTH``, as it reads (:func:`check_shape`, linear
in what the text holds), with a ``yaml.YAMLError`` — so every reader's existing "not
valid YAML: ..." answer carries it, on one line.
"""

from __future__ import annotations

from typing import Any

import yaml

from akgentic.core.serialization import SerializationError, check_shape

__all__ = ["YamlShapeError", "load_yaml"]


class YamlShapeError(yaml.YAMLError):
    """YAML that parses but is refused for its shape (see the module docstring)."""


def load_yaml(text: str) -> Any:
    """The data of YAML ``text``, read with the safe loader; ``yaml.YAMLError`` when it
    is not YAML, :class:`YamlShapeError` (one too) when it is refused for its shape."""
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise YamlShapeError(
            "the YAML is nested too deep to read; akgentic refuses it: flatten it"
        ) from None
    try:
        check_shape(data)
    except SerializationError as exc:
        raise YamlShapeError(str(exc)) from None
    return data
