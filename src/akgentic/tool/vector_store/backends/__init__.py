"""The built-in backends; each registers itself on import (no optional client imported).

Import the classes from ``akgentic.tool.vector_store``, not from here.
"""

from akgentic.tool.vector_store.backends.inmemory import InMemoryBackend
from akgentic.tool.vector_store.backends.qdrant import QdrantBackend
from akgentic.tool.vector_store.backends.weaviate import WeaviateBackend

__all__ = ["InMemoryBackend", "QdrantBackend", "WeaviateBackend"]
