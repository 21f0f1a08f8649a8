"""The package's own catalog types: the shipped cards and the services behind them.

- cards (``cards.py``): the shipped tool cards an agent may be given through the catalog,
  with their manifests — and the cards being written beside them (web search, MCP) as
  soon as their packages exist;
- services with an outside exit: the embeddings endpoints (``embeddings.py``) and the
  vector clusters (``vector.py``), each with a ``probe()``.
"""

from __future__ import annotations

from typing import Any

from akgentic.catalog.builtin.cards import shipped_cards
from akgentic.catalog.builtin.embeddings import OpenAICompatibleEmbeddings, OpenAIEmbeddings
from akgentic.catalog.builtin.vector import QdrantServer, WeaviateCluster
from akgentic.catalog.manifest import ToolManifest

__all__ = [
    "OpenAICompatibleEmbeddings",
    "OpenAIEmbeddings",
    "QdrantServer",
    "WeaviateCluster",
    "builtin_types",
]

SERVICES: tuple[type[Any], ...] = (
    OpenAIEmbeddings,
    OpenAICompatibleEmbeddings,
    QdrantServer,
    WeaviateCluster,
)


def builtin_types() -> list[tuple[type[Any], ToolManifest | None]]:
    """Every shipped type with its manifest (None: the class carries it)."""
    return [*shipped_cards(), *((cls, None) for cls in SERVICES)]
