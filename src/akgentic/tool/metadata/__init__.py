"""akgentic.tool.metadata — MetadataTool: the team's business context in every prefix.

See README.md beside this file for the template grammar, both validation points, the
degradation table and the snapshot contract.
"""

from akgentic.tool.metadata.tool import ASK_TIMEOUT, MetadataTool, RenderMetadata, placeholders

__all__ = ["ASK_TIMEOUT", "MetadataTool", "RenderMetadata", "placeholders"]
