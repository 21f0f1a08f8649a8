"""The vector store (filled in by its own issue). For now: ``VectorEntry``."""

from akgentic.tool.vector_store.vector import VectorEntry

__all__ = ["VectorEntry"]
