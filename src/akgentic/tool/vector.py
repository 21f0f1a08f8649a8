"""Compatibility façade only: this module moved to ``akgentic.tool.vector_store.vector``.

``VectorEntry`` is still shimmed — it resolves with a DeprecationWarning on attribute
access, never at import — because stored rows name this path. Everything else that
lived here was withdrawn and raises an ImportError naming its new home.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__: list[str] = []

_SHIMMED = {"VectorEntry": "akgentic.tool.vector_store.vector"}

_WITHDRAWN = {
    "EmbeddingService": "akgentic.tool (root) or akgentic.tool.vector_store.vector",
    "VectorIndex": "akgentic.tool (root) or akgentic.tool.vector_store.vector",
}


def __getattr__(name: str) -> Any:
    home = _SHIMMED.get(name)
    if home is not None:
        warnings.warn(
            f"akgentic.tool.vector.{name} moved to {home}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)
    withdrawn = _WITHDRAWN.get(name)
    if withdrawn is not None:
        raise ImportError(
            f"akgentic.tool.vector.{name} was withdrawn; import it from {withdrawn}",
            name=name,
        )
    raise AttributeError(f"module 'akgentic.tool.vector' has no attribute {name!r}")
