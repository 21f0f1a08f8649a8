"""The tool layer's contracts: cards, params, channels, the factory and what it builds.

``akgentic.tool.core.deferred`` (the deferred-result pattern for tool actors) is
deliberately not on this façade: import it directly.
"""

from akgentic.tool.core.availability import offer_predicate, offer_while, offered_now
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    Channels,
    invocation,
)
from akgentic.tool.core.commands import CommandRegistry, RestOfLine
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.context_update import ContextUpdater, iter_message_texts, marker
from akgentic.tool.core.dependencies import order_cards
from akgentic.tool.core.event import (
    CommandArg,
    CommandDescriptor,
    CommandsAnnouncedEvent,
    ToolStateEmitter,
    ToolStateEvent,
)
from akgentic.tool.core.factory import ToolFactory
from akgentic.tool.core.journal import (
    DeltaGapError,
    DeltaState,
    SnapshotPolicy,
    StateJournal,
    fold_deltas,
)
from akgentic.tool.core.observer import (
    ActorToolObserver,
    ToolObserver,
    ToolsetActivityObserver,
    ToolStateCarrier,
)
from akgentic.tool.core.params import (
    BaseToolParam,
    attach_param,
    normalize_system_prompt_to_llm_context,
    param_of,
    resolve_param,
    serve,
)
from akgentic.tool.core.state import ToolState, read_tool_state
from akgentic.tool.core.team_actor import ask_tool_actor, bind_team_actor, require_team_observer
from akgentic.tool.errors import (
    CardHookError,
    CommandArgumentError,
    CommandNotRecognized,
    RetriableError,
    ToolNotWiredError,
    ToolObserverGone,
)

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
    "DeltaGapError",
    "DeltaState",
    "RestOfLine",
    "RetriableError",
    "SnapshotPolicy",
    "StateJournal",
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
    "ask_tool_actor",
    "attach_param",
    "bind_team_actor",
    "fold_deltas",
    "invocation",
    "iter_message_texts",
    "marker",
    "normalize_system_prompt_to_llm_context",
    "offer_predicate",
    "offer_while",
    "offered_now",
    "order_cards",
    "param_of",
    "read_tool_state",
    "require_team_observer",
    "resolve_param",
    "serve",
]
