"""akgentic: teams of LLM agents as actors.

The layers live in subpackages (``akgentic.core``, ``akgentic.tool``, ...); this root
only carries the version so that importing ``akgentic`` stays free of side effects.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
