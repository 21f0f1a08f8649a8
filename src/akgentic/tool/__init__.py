"""akgentic.tool — the capability layer between the actor system and LLM agents.

The package root is the supported (Stable) surface: import from here and no
migration is ever needed. The contracts live in ``akgentic.tool.core``; domain cards
live one folder each beside it.
"""

from typing import Any

# Imported for its serialization aliases: stored rows naming a moved vector path
# decode once akgentic.tool is imported.
import akgentic.tool.vector_store  # noqa: F401
from akgentic.tool.core import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    ActorToolObserver,
    BaseToolParam,
    CardHookError,
    Channels,
    CommandArg,
    CommandArgumentError,
    CommandDescriptor,
    CommandNotRecognized,
    CommandRegistry,
    CommandsAnnouncedEvent,
    ContextState,
    ContextUpdater,
    RestOfLine,
    RetriableError,
    ToolCard,
    ToolFactory,
    ToolNotWiredError,
    ToolObserver,
    ToolObserverGone,
    ToolsetActivityObserver,
    ToolState,
    ToolStateCarrier,
    ToolStateEmitter,
    ToolStateEvent,
    normalize_system_prompt_to_llm_context,
)
from akgentic.tool.mailbox import MailboxTool
from akgentic.tool.mcp import MCPTool
from akgentic.tool.metadata import MetadataTool
from akgentic.tool.model import ModelTool
from akgentic.tool.notification import NotificationTool
from akgentic.tool.search import SearchTool
from akgentic.tool.skill import SkillTool
from akgentic.tool.team import TeamManagementToolObserver, TeamTool
from akgentic.tool.toolsets import ToolsetCard
from akgentic.tool.vector_store import EmbeddingService, VectorIndex
from akgentic.tool.workspace import WorkspaceTool

__all__ = [
    "COMMAND",
    "LLM_CONTEXT",
    "SYSTEM_PROMPT",
    "TOOL_CALL",
    "ActorToolObserver",
    "BaseToolParam",
    "CardHookError",
    "Channels",
    "CommandArg",
    "CommandArgumentError",
    "CommandDescriptor",
    "CommandNotRecognized",
    "CommandRegistry",
    "CommandsAnnouncedEvent",
    "ContextState",
    "ContextUpdater",
    "EmbeddingService",
    "MCPTool",
    "MailboxTool",
    "MetadataTool",
    "ModelTool",
    "NotificationTool",
    "RestOfLine",
    "RetriableError",
    "SearchTool",
    "SkillTool",
    "TeamManagementToolObserver",
    "TeamTool",
    "ToolCard",
    "ToolFactory",
    "ToolNotWiredError",
    "ToolObserver",
    "ToolObserverGone",
    "ToolState",
    "ToolStateCarrier",
    "ToolStateEmitter",
    "ToolStateEvent",
    "ToolsetActivityObserver",
    "ToolsetCard",
    "VectorIndex",
    "WorkspaceTool",
    "normalize_system_prompt_to_llm_context",
]

_REMOVED = {
    "ExecTool": (
        "akgentic.tool.ExecTool was removed, not moved: use "
        "WorkspaceTool(workspace_exec=...) from akgentic.tool. When migrating a stored "
        "row, turn every other WorkspaceTool capability off explicitly — they default "
        "to True."
    ),
}


def __getattr__(name: str) -> Any:
    message = _REMOVED.get(name)
    if message is not None:
        raise ImportError(message, name=name)
    raise AttributeError(f"module 'akgentic.tool' has no attribute {name!r}")
