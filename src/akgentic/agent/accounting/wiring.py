"""PromptWiring: which card put what into an agent's requests, read from its wiring.

Attribution is never guessed from names or text. The agent's :class:`ToolFactory` records
which card's hook served each tool, prompt renderer, context provider and toolset it
handed out (``ToolFactory.card_of`` / ``served``); this class reads that record and adds
what the agent layer serves itself:

- **the system prompt** — rendered here, once, part by part (the agent's own prompt and
  backstory, each card's SYSTEM_PROMPT text, the toolset catalog), so each part's span of
  the joined text is known (:attr:`system_parts`);
- **tools** — by the name the factory's callable carries; a toolset's tools by the set name
  their definition carries (``ToolsetCard[tasks]``, and the member card within it); a
  runtime toolset's (an MCP server's) by a tag this class puts on its definitions
  (:meth:`tagged`); the toolsets capability's own tools; the agent's output tool;
- **the turn's context block** — each section by the provider that wrote it
  (``ContextUpdater.last_sections``), recorded with the turn's prompt (:meth:`turn_prompt`).

A part nothing claims is named :data:`~akgentic.agent.accounting.source.UNATTRIBUTED`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import (
    AbstractToolset,
    CombinedToolset,
    FunctionToolset,
    ToolsetTool,
    WrapperToolset,
)

from akgentic.agent.accounting.source import (
    AGENT,
    CONTEXT_MARKER,
    TOOLSETS,
    UNATTRIBUTED,
    Source,
)
from akgentic.agent.capabilities.toolsets import DynamicToolsets
from akgentic.tool.core import ToolFactory
from akgentic.tool.toolsets import TOOLSET_METADATA, ToolGroup, ToolsetCard

__all__ = ["CARD_METADATA", "CardTaggedToolset", "Layout", "PromptWiring"]

CARD_METADATA = "akgentic_card"
"""The ``ToolDefinition.metadata`` key naming the card a runtime toolset's tool came from
(never sent to the model)."""

Layout = tuple[str, tuple[tuple[Source, int], ...]]
"""A text and its spans: each source with the offset where its part starts (the first 0)."""

PART_SEPARATOR = "\n\n"


@dataclass
class CardTaggedToolset(WrapperToolset[Any]):
    """A card's runtime toolset whose tool definitions name the card (:data:`CARD_METADATA`)."""

    card: str = UNATTRIBUTED

    @property
    def tool_name_conflict_hint(self) -> str:
        """The wrapped toolset's: what renames its tools (an MCP card's ``tool_prefix``)."""
        return self.wrapped.tool_name_conflict_hint

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        return {
            name: replace(
                tool,
                tool_def=replace(
                    tool.tool_def,
                    metadata={**(tool.tool_def.metadata or {}), CARD_METADATA: self.card},
                ),
            )
            for name, tool in tools.items()
        }


def _joined(parts: Sequence[tuple[Source, str]]) -> Layout:
    """The parts joined with blank lines, each separator belonging to the part it opens."""
    spans: list[tuple[Source, int]] = []
    pieces: list[str] = []
    offset = 0
    for index, (source, text) in enumerate(parts):
        spans.append((source, offset))
        piece = text if index == 0 else f"{PART_SEPARATOR}{text}"
        pieces.append(piece)
        offset += len(piece)
    return "".join(pieces), tuple(spans)


class PromptWiring:
    """What each card put into one agent's requests; see the module docstring.

    Built by the agent over its factory (and its toolsets capability, when it has one)
    before the factory's aggregators are called; the tool and provider maps are read from
    the factory on first use, once every aggregator has run.
    """

    def __init__(self, factory: ToolFactory, toolsets: DynamicToolsets | None = None) -> None:
        self._factory = factory
        self._toolsets = toolsets
        self._system: Layout = ("", ())
        self._system_parts: list[tuple[Source, str]] = []
        self._entries: list[tuple[Source, str, Callable[[], str] | None]] = []
        self._turn: Layout | None = None
        self._tools: dict[str, Source] | None = None
        self._sets: dict[str, tuple[str, dict[str, str]]] = {}
        self._providers: dict[str, Source] | None = None

    # -- labels -------------------------------------------------------------------------
    def _label(self, factory: ToolFactory, item: object) -> str:
        card = factory.card_of(item)
        if card is None:
            return UNATTRIBUTED
        if isinstance(card, ToolsetCard):
            inner = card.members()
            member = inner.card_of(item)
            outer = f"ToolsetCard[{card.name}]"
            return outer if member is None else f"{outer}.{inner.label_of(member)}"
        return factory.label_of(card)

    # -- the system prompt ----------------------------------------------------------------
    def render_system_prompt(self, *, prompt: str, backstory: str = "") -> str:
        """The agent's system prompt, rendered once: its own ``prompt``, its ``backstory``
        (when set), every card's SYSTEM_PROMPT text that is not empty, the toolset catalog;
        joined by blank lines. Each part is recorded with its card. A card's renderer that
        gives nothing yet is kept for :meth:`complete_system_prompt`."""
        entries: list[tuple[Source, str, Callable[[], str] | None]] = [
            (Source("system_prompt", AGENT, "prompt"), prompt, None)
        ]
        if backstory:
            entries.append((Source("system_prompt", AGENT, "backstory"), backstory, None))
        for renderer in self._factory.get_system_prompts():
            name = getattr(renderer, "__name__", "")
            card = self._label(self._factory, renderer)
            entries.append((Source("system_prompt", card, name), renderer(), renderer))
        if self._toolsets is not None:
            catalog = self._toolsets.catalog()
            entries.append((Source("system_prompt", TOOLSETS, "catalog"), catalog, None))
        self._entries = entries
        self.set_system_parts([(source, text) for source, text, _ in entries if text])
        return self.system_prompt

    def complete_system_prompt(self) -> bool:
        """Ask again the renderers that gave nothing (a card whose content was not there
        yet: team metadata set after the agent started); True when one now gives text,
        and the system prompt then has it, in its place. A renderer that gave text is
        never asked again: the prompt changes only by what was missing, once."""
        changed = False
        for index, (source, text, renderer) in enumerate(self._entries):
            if renderer is not None and not text:
                text = renderer()
                if text:
                    self._entries[index] = (source, text, renderer)
                    changed = True
        if changed:
            self.set_system_parts([(source, text) for source, text, _ in self._entries if text])
        return changed

    def set_system_parts(self, parts: Sequence[tuple[Source, str]]) -> None:
        """Record the system prompt as these parts (a caller that renders its own)."""
        self._system_parts = list(parts)
        self._system = _joined(parts)

    @property
    def system_parts(self) -> list[tuple[Source, str]]:
        """The system prompt's parts, each with its source, in order."""
        return list(self._system_parts)

    @property
    def system_prompt(self) -> str:
        return self._system[0]

    @property
    def system_layout(self) -> Layout:
        """The system prompt and the span of each part."""
        return self._system

    # -- the turn's prompt ----------------------------------------------------------------
    def turn_prompt(
        self, body: str, block: str | None, sections: Sequence[tuple[str, str]] = ()
    ) -> str:
        """The turn's prompt — ``body``, then the context ``block`` after a blank line — with
        its layout recorded: the body is the new message, the block's marker and each of
        its ``sections`` (``(provider key, text)``, as ``ContextUpdater.last_sections``
        gives them) are LLM_CONTEXT parts of the card whose provider wrote them."""
        if block is None:
            self._turn = (body, ((Source("message"), 0),))
            return body
        prompt = f"{body}{PART_SEPARATOR}{block}"
        spans: list[tuple[Source, int]] = [
            (Source("message"), 0),
            (Source("llm_context", CONTEXT_MARKER, "marker"), len(body)),
        ]
        tail = sum(len(PART_SEPARATOR) + len(text) for _, text in sections)
        offset = len(prompt) - tail
        for key, text in sections:
            if prompt[offset : offset + len(PART_SEPARATOR) + len(text)] != PART_SEPARATOR + text:
                spans = spans[:2]  # not the layout composed: the whole block as one part
                break
            spans.append((self.provider_source(key), offset))
            offset += len(PART_SEPARATOR) + len(text)
        self._turn = (prompt, tuple(spans))
        return prompt

    @property
    def turn_layout(self) -> Layout | None:
        """The last turn's prompt and its spans (None before the first turn)."""
        return self._turn

    # -- context providers ----------------------------------------------------------------
    def provider_source(self, key: str) -> Source:
        """The source of the context section provider ``key`` wrote."""
        if self._providers is None:
            providers = {
                getattr(p, "__name__", ""): Source("llm_context", self._label(self._factory, p), "")
                for p, _ in self._factory.served("context_state")
            }
            if self._toolsets is not None:
                for p in self._toolsets.context_states():
                    providers[getattr(p, "__name__", "")] = Source("llm_context", TOOLSETS, "")
            self._providers = {k: replace(s, name=k) for k, s in providers.items()}
        return self._providers.get(key, Source("llm_context", UNATTRIBUTED, key))

    # -- tools ------------------------------------------------------------------------------
    def tagged(self, toolset: Any) -> Any:
        """``toolset`` (one the factory handed out) with its tools naming the card that
        served it; a toolset the factory does not know is returned as is."""
        if self._factory.card_of(toolset) is None or not isinstance(toolset, AbstractToolset):
            return toolset
        return CardTaggedToolset(wrapped=toolset, card=self._label(self._factory, toolset))

    def prepare_tool_sources(self) -> None:
        """Build the map of the tools' sources now, on the caller's thread: it is read
        from the agent's factory and toolsets, and the accountant's ``record``, which
        only reads the map, runs on the orchestrator's."""
        self._tool_map()

    def _tool_map(self) -> dict[str, Source]:
        if self._tools is None:
            tools: dict[str, Source] = {}
            for fn, _ in self._factory.served("tool"):
                name = getattr(fn, "__name__", "")
                tools[name] = Source("tool_call", self._label(self._factory, fn), name)
            for toolset, card in self._factory.served("toolset"):
                if isinstance(toolset, ToolGroup) and isinstance(card, ToolsetCard):
                    inner = card.members()
                    members = {
                        getattr(fn, "__name__", ""): inner.label_of(member)
                        for fn, member in inner.served("tool")
                    }
                    self._sets[toolset.name] = (self._label(self._factory, toolset), members)
            if self._toolsets is not None:
                for name in _function_tool_names(self._toolsets.get_toolset()):
                    tools[name] = Source("tool_call", TOOLSETS, name)
            self._tools = tools
        return self._tools

    def tool_source(self, tool_def: ToolDefinition, *, output: bool = False) -> Source:
        """The source of one tool definition of a request (``output``: an output tool)."""
        tools = self._tool_map()
        metadata = tool_def.metadata or {}
        name = tool_def.name
        toolset = metadata.get(TOOLSET_METADATA)
        if isinstance(toolset, str):
            label, members = self._sets.get(toolset, (UNATTRIBUTED, {}))
            member = members.get(name) or members.get(name.removeprefix(f"{toolset}_"))
            if member is None and len(set(members.values())) == 1:
                member = next(iter(members.values()))  # the set's only card served it
            return Source("tool_call", label if member is None else f"{label}.{member}", name)
        tagged = metadata.get(CARD_METADATA)
        if isinstance(tagged, str):
            return Source("tool_call", tagged, name)
        if name in tools:
            return tools[name]
        if output:
            return Source("tool_call", AGENT, name)
        return Source("tool_call", UNATTRIBUTED, name)


def _function_tool_names(toolset: AbstractToolset[Any]) -> list[str]:
    """The names of the plain function tools in ``toolset`` (walking combined toolsets)."""
    if isinstance(toolset, FunctionToolset):
        return list(toolset.tools)
    if isinstance(toolset, CombinedToolset):
        return [name for inner in toolset.toolsets for name in _function_tool_names(inner)]
    return []
