"""Compatibility façade only: this module moved to ``akgentic.tool.vector_store.vector``.

``VectorEntry`` is still shimmed — it resolves with a DeprecationWarning on attribute
access, never at import — because stored rows name this path. Everything else that
lived here was withdrawn and raises an ImportError naming its new home.
"""

from __future__ import annotations

from akgentic.tool._facade import facade_getattr

__all__: list[str] = []

_SHIMMED = {"VectorEntry": "akgentic.tool.vector_store.vector"}

_WITHDRAWN = {
    "EmbeddingService": "akgentic.tool (root) or akgentic.tool.vector_store.vector",
    "VectorIndex": "akgentic.tool (root) or akgentic.tool.vector_store.vector",
}


__getattr__ = facade_getattr("akgentic.tool.vector", _SHIMMED, _WITHDRAWN)
