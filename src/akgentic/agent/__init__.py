"""akgentic.agent: agents that think — BaseAgent, AgentMessage, HumanProxy.

``BaseAgent`` runs a pydantic-ai ReAct loop as an actor over the tools, prompts and
context states of its tool cards; ``HumanProxy`` is the person in the team.
"""

from akgentic.agent.agent import BUILTIN_COMMANDS, CHAT_COMMANDS, BaseAgent, is_cancel
from akgentic.agent.config import AgentConfig, AgentState, CompactionConfig, PromptTemplate
from akgentic.agent.human_proxy import HumanProxy, HumanProxyConfig
from akgentic.agent.messages import (
    AgentHopLimitReached,
    AgentMessage,
    AgentReply,
    MessageType,
    Outgoing,
    TurnInterrupted,
)

__all__ = [
    "BUILTIN_COMMANDS",
    "CHAT_COMMANDS",
    "AgentConfig",
    "AgentHopLimitReached",
    "AgentMessage",
    "AgentReply",
    "AgentState",
    "BaseAgent",
    "CompactionConfig",
    "HumanProxy",
    "HumanProxyConfig",
    "MessageType",
    "Outgoing",
    "PromptTemplate",
    "TurnInterrupted",
    "is_cancel",
]
