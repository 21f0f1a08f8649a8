"""Manifests of the shipped cards.

The cards live in ``akgentic.tool``, which never imports the catalog, so their manifests
are written here, beside the catalog, rather than on the classes. TeamTool and MailboxTool
are not listed: every agent carries them (``BaseAgent.default_cards``).

The cards with an outside exit — ``SearchTool`` (``web_search``: ``bind_credential`` for
its Tavily key, ``probe`` reading Tavily's ``/usage``) and ``MCPTool`` (``mcp``: ``probe``
starting the server and listing its tools) — are listed when their module imports; their
hooks are checked like any type's (a missing hook is a discovery problem naming it, never
a crash).
"""

from __future__ import annotations

import importlib
from typing import Any

from akgentic.catalog.manifest import ToolManifest

__all__ = ["shipped_cards"]

_SHIPPED = (
    (
        "akgentic.tool.planning",
        "PlanningTool",
        ToolManifest(
            name="planning",
            description="The team's shared plan: tasks, owners, status, hybrid search.",
            access="write",
        ),
    ),
    (
        "akgentic.tool.knowledge_graph",
        "KnowledgeGraphTool",
        ToolManifest(
            name="knowledge_graph",
            description="The team's knowledge graph: entities, relations, search by meaning.",
            access="write",
        ),
    ),
    (
        "akgentic.tool.notification",
        "NotificationTool",
        ToolManifest(
            name="notification",
            description="Reminders an agent sets for itself, delivered after a delay.",
            access="write",
        ),
    ),
    (
        "akgentic.tool.skill",
        "SkillTool",
        ToolManifest(
            name="skill",
            description="Domain guidance: a menu in the prompt, the bodies on demand.",
        ),
    ),
    (
        "akgentic.tool.model",
        "ModelTool",
        ToolManifest(
            name="model",
            description="List the agent's models and switch the one in force.",
            access="write",
        ),
    ),
    (
        "akgentic.tool.metadata",
        "MetadataTool",
        ToolManifest(
            name="metadata",
            description="The team's business context, rendered into every prompt.",
        ),
    ),
)

_BESIDE = (
    (
        "akgentic.tool.search",
        "SearchTool",
        ToolManifest(
            name="web_search",
            description="Web search, fetch and crawl through a search provider.",
            credential="api_key",
        ),
    ),
    (
        "akgentic.tool.mcp",
        "MCPTool",
        ToolManifest(
            name="mcp",
            description="An external MCP server's tools, as one toolset.",
            access="write",
        ),
    ),
)


def shipped_cards() -> list[tuple[type[Any], ToolManifest | None]]:
    """The shipped cards with their manifests; a card whose module is absent is skipped."""
    found: list[tuple[type[Any], ToolManifest | None]] = []
    for module_name, class_name, manifest in (*_SHIPPED, *_BESIDE):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        cls = getattr(module, class_name, None)
        if cls is not None:
            found.append((cls, manifest))
    return found
