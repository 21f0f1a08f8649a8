"""Vector primitives. For now only the stored row, ``VectorEntry``.

``VectorEntry`` moved here from ``akgentic.tool.vector``; stored rows naming the old
path still decode through a serialization alias.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from akgentic.core.serialization import SerializableModel, register_serializable

__all__ = ["VectorEntry"]


class VectorEntry(SerializableModel):
    """One indexed row: its reference, its text, its embedding and free metadata."""

    ref_id: str
    text: str
    vector: list[float]
    metadata: dict[str, Any] = Field(default_factory=dict)


register_serializable(VectorEntry, aliases=["akgentic.tool.vector.VectorEntry"])
