"""AgentConfig and AgentState: what a BaseAgent is created with, and what it keeps."""

from __future__ import annotations

import importlib
import string
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from akgentic.agent.accounting.capability import PromptAccountingConfig
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.serialization import SerializableModel
from akgentic.llm import ModelRoster, UsageLimitsConfig
from akgentic.tool.core import ToolCard, ToolState, lookup
from akgentic.tool.core.dependencies import repeated_capabilities
from akgentic.tool.core.time_bound import DEFAULT_TOOL_TIMEOUT

__all__ = [
    "AgentConfig",
    "AgentState",
    "CompactionConfig",
    "PromptTemplate",
    "card_class",
    "load_shipped_cards",
]


PROMPT_CONTEXT = ("name", "role")
"""The names every prompt template may use without ``params``."""


class PromptTemplate(SerializableModel):
    """The agent's own instructions: a ``str.format`` template and its parameters.

    ``{name}`` and ``{role}`` are always available; every other placeholder must be in
    ``params``. It is rendered once, when the agent starts, into the frozen system prefix;
    :class:`AgentConfig` checks it (:meth:`check`) when the config is built, so a broken
    template is refused with the card, not when the member starts.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    template: str = "You are {name}, the team's {role}."
    """The instructions, with ``{placeholders}``; a literal brace is written twice."""
    params: dict[str, str] = Field(default_factory=dict)

    def placeholders(self) -> list[str]:
        """The bare field names the template uses; ``ValueError`` for a template that
        ``str.format`` cannot read or a placeholder that is not a bare name."""
        names = []
        try:
            parsed = list(string.Formatter().parse(self.template))
        except ValueError as exc:
            raise ValueError(
                f"not a valid template ({exc}); write a literal brace as {{{{ or }}}}"
            ) from None
        for _, field, spec, conversion in parsed:
            if field is None:
                continue
            if not field.isidentifier() or spec or conversion:
                raise ValueError(
                    f"placeholder {{{field}}} must be a bare name such as {{topic}} "
                    f"(no attributes, indices, conversions or format specs)"
                )
            names.append(field)
        return names

    def check(self, context: tuple[str, ...] = PROMPT_CONTEXT) -> None:
        """``ValueError`` when :meth:`render` with ``context`` names would fail."""
        known = {*context, *self.params}
        missing = [n for n in self.placeholders() if n not in known]
        if missing:
            listing = ", ".join(sorted(known)) or "none"
            raise ValueError(
                f"placeholder {', '.join(f'{{{n}}}' for n in missing)} has no value: add it "
                f"to prompt.params (known: {listing})"
            )

    def render(self, **context: str) -> str:
        """The prompt text; an unknown placeholder is a ``ValueError`` naming it."""
        self.check(tuple(context))
        return self.template.format_map({**context, **self.params})


class CompactionConfig(SerializableModel):
    """When to summarise older turns: at ``threshold`` of the model's context window, before a
    turn and between the model requests of a long one, and when the model refuses a request
    of a turn for its window (the request is then sent once more)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    enabled: bool = True
    """Whether older turns are ever summarised."""
    threshold: float = Field(default=0.8, gt=0, le=1)
    """The share of the model's context window that starts a compaction."""
    keep_last: int = Field(default=6, ge=1)
    """How many recent messages are kept as they are."""
    summary_request: Literal["prefix", "bounded"] = "prefix"
    """How a summary is asked for. `prefix`: on the agent's own prompt (its instructions, its
    tool definitions, the history as messages, then one ask), so a provider's prompt cache
    serves all but the ask: the fewest uncached tokens, the most tokens in all (cheaper
    where cached tokens cost a tenth of fresh ones). `bounded`: a request of its own (short
    instructions, no tools, the conversation as text of at most 20,000 characters): fewer
    tokens in all, none cached (cheaper where cached tokens cost half, or with no prompt
    cache). `prefix` is written bounded when the history does not fit the window."""


def card_class(name: str) -> type[ToolCard]:
    """The ToolCard subclass named ``name`` (class name or dotted path).

    Cards register themselves when their module is imported: the shipped ones are
    imported here; a card an installed distribution declares (an ``akgentic.tools``
    entry point) is loaded when its name matches; any other card of your own needs its
    module imported first (a team card's ``imports``). Data never imports a module it
    names (``akgentic.tool.core.lookup``).
    """
    load_shipped_cards()
    return lookup.card_class(name)


SHIPPED_CARD_MODULES = (
    "akgentic.tool",
    "akgentic.tool.planning",
    "akgentic.tool.knowledge_graph",
)
"""The packages whose cards a config may name without an ``imports`` line."""


def load_shipped_cards() -> None:
    """Import the shipped card packages, so their cards, states and deltas are defined
    (and so decodable) in this process. Stored data never imports; this is our code."""
    for module in SHIPPED_CARD_MODULES:
        importlib.import_module(module)


class AgentConfig(BaseConfig):
    """How a BaseAgent is built.

    - ``prompt``: its instructions (rendered once into the system prefix); a string
      such as ``"You are {name}."`` is accepted as the template.
    - ``models``: the model roster (``"scripted:default"`` by default: the offline model);
      a spec string such as ``"openai:gpt-5.2, scripted:default"`` is accepted, and so is
      the list of its entries alone (``[openai:gpt-5.2, {provider: ollama, model: m}]``).
    - ``tools``: its tool cards. In YAML a card is ``{type: PlanningTool, ...fields}``.
      BaseAgent adds TeamTool and MailboxTool when they are not listed.
    - ``usage_limits``, ``compaction``: spending limits and context compaction.
    - ``tool_timeout``: seconds a tool call may take (300 by default; ``null``: no bound).
      Past it the model reads that the tool took too long and the turn goes on; an async
      tool is cancelled, a sync one abandoned on its thread (a thread cannot be killed:
      see ``akgentic.tool.core.time_bound``). It bounds function tools, a toolset's
      members included; an MCP server's calls keep the server connection's own timeout.
    - ``stream_events``: publish text deltas while the model works, and the calls and
      returns of each tool step (a model that cannot stream has its text published in
      one piece when it answers).
    - ``stream_text_interval``: seconds of streamed text gathered into one text-delta
      event, so the event log does not get a row per token; 0 publishes every delta.
    - ``scenario_dir``: where relative scripted-scenario paths are resolved.
    - ``prompt_accounting``: a ``PromptAccountingEvent`` per model request (tokens by card
      and channel, the modelled prefix cache); see ``akgentic.agent.accounting``.
    """

    prompt: PromptTemplate = Field(default_factory=PromptTemplate)
    models: ModelRoster = Field(default_factory=lambda: ModelRoster.from_spec("scripted:default"))
    tools: list[ToolCard] = Field(default_factory=list)
    usage_limits: UsageLimitsConfig = Field(
        default_factory=UsageLimitsConfig,
        description="Spending limits: requests and tokens per run and over the agent's life.",
    )
    compaction: CompactionConfig = Field(
        default_factory=CompactionConfig,
        description="When and how the conversation is summarised to fit the model's window.",
    )
    tool_timeout: float | None = Field(
        default=DEFAULT_TOOL_TIMEOUT,
        gt=0,
        description="Seconds a tool call may take before the model is told it took too "
        "long and the turn goes on; null: no bound.",
    )
    stream_events: bool = True
    stream_text_interval: float = Field(default=0.05, ge=0)
    scenario_dir: str | None = None
    prompt_accounting: PromptAccountingConfig = Field(default_factory=PromptAccountingConfig)

    @model_validator(mode="after")
    def _prompt_renders(self) -> AgentConfig:
        try:
            self.prompt.check()
        except ValueError as exc:
            who = self.name or (f"@{self.role}" if self.role else "this agent")
            raise ValueError(f"{who}: prompt.template: {exc}") from None
        return self

    @field_validator("prompt", mode="before")
    @classmethod
    def _prompt_from_text(cls, value: Any) -> Any:
        """``prompt: "You are {name}."``, the first thing a person writes, is the
        template: refusing it as "not a PromptTemplate" taught nothing."""
        if isinstance(value, str):
            return {"template": value}
        return value

    @field_validator("models", mode="before")
    @classmethod
    def _roster_from_spec(cls, value: Any) -> Any:
        if isinstance(value, str):
            return ModelRoster.from_spec(value)
        if isinstance(value, list):  # the roster's entries, written without `models:`
            return {"models": value}
        return value

    @field_validator("tools", mode="before")
    @classmethod
    def _cards_from_data(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        load_shipped_cards()
        return lookup.cards_from_data(value)

    @field_validator("tools")
    @classmethod
    def _each_capability_once(cls, tools: list[ToolCard], info: ValidationInfo) -> list[ToolCard]:
        """A card listed twice is refused as the card is read, naming the member: the
        factory would refuse it too, but only once the team starts."""
        problem = repeated_capabilities(tools)
        if problem is not None:
            who = info.data.get("name") or "this agent"
            raise ValueError(f"{who}: {problem}")
        return tools


class AgentState(BaseState):
    """What a BaseAgent keeps between turns and across a restore.

    ``tool_state`` is the tool layer's persisted slot (context baselines, the model in
    force); ``lifetime_usage`` keeps lifetime usage limits honest across restarts.
    ``turns`` counts the turns the history holds: a cut turn that kept nothing (the model
    completed no step) is not one, nor is a failed one.
    """

    backstory: str = ""
    tool_state: ToolState = Field(default_factory=ToolState)
    lifetime_usage: dict[str, int] = Field(default_factory=dict)
    turns: int = 0
