"""akgentic.tool.toolsets — ToolsetCard: named groups of tools the model enables per conversation.

The tool layer's half: the card (grouping and naming), the registry (activation, the
10-minute timeout, the response table), the catalog and the active-set context state. The
agent's half (``akgentic.agent.capabilities.DynamicToolsets``) decides per request which
tools the model sees. See README.md beside this file.
"""

from akgentic.tool.toolsets.card import TOOLSET_NAME, ToolsetCard
from akgentic.tool.toolsets.group import (
    TOOLSET_METADATA,
    ToolGroup,
    group_tool_name,
    tool_group,
    toolset_of,
)
from akgentic.tool.toolsets.registry import TOOLSET_TIMEOUT, Clock, ToolsetRegistry
from akgentic.tool.toolsets.state import ActiveToolsets
from akgentic.tool.toolsets.wording import CATALOG_HEADER, render_catalog

__all__ = [
    "CATALOG_HEADER",
    "TOOLSET_METADATA",
    "TOOLSET_NAME",
    "TOOLSET_TIMEOUT",
    "ActiveToolsets",
    "Clock",
    "ToolGroup",
    "ToolsetCard",
    "ToolsetRegistry",
    "group_tool_name",
    "render_catalog",
    "tool_group",
    "toolset_of",
]
