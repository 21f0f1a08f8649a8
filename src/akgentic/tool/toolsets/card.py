"""ToolsetCard: cards grouped under a name, their tools switched on per conversation.

``ToolsetCard(name, description, cards=[...])``. The card groups any cards — plain ones
whose tools come from ``get_tools()`` and ones whose capability comes as runtime toolsets
through ``get_toolsets()`` (an MCP server's) — and hands their tools over as **one**
:class:`~akgentic.tool.toolsets.group.ToolGroup` through its own ``get_toolsets()``, named
``<set>_<verb>``. It serves no tool directly: the agent side decides per request which
groups the model sees (the active ones) and answers a call into an inactive one.

Only the tools are grouped. A member's SYSTEM_PROMPT text, LLM_CONTEXT providers and
COMMANDs are served as if the member were listed on its own: they cost nothing per tool,
and dropping them silently would be the channel system's known failure mode. What they
say of the member's tools names them as the group does: each member is told its set
(``ToolCard.join_toolset``) when the card is built and again when it is wired, and names
its tools through ``ToolCard.called_as`` (``docs_use_skill``, not ``use_skill``).

Wiring: the members are wired through a ToolFactory of their own (same observer,
``ModelRetry`` as the retry exception, the observer's ``tool_timeout``, their
``depends_on`` ordered among themselves);
a member dependency on a card outside the set becomes the toolset card's own dependency.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Self

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator
from pydantic_ai import ModelRetry, Tool
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset

from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.dependencies import matches_dependency, repeated_capabilities
from akgentic.tool.core.factory import ToolFactory
from akgentic.tool.core.lookup import cards_from_data
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.core.params import BaseToolParam
from akgentic.tool.core.time_bound import runs_alone, tool_timeout_of
from akgentic.tool.mailbox import MailboxTool
from akgentic.tool.toolsets.group import ToolGroup, group_tool_name, tool_group

__all__ = ["TOOLSET_NAME", "ToolsetCard"]

TOOLSET_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,31}$")
"""A toolset name: a letter, then letters, digits or ``-`` (32 at most). No ``_``: the
underscore separates the set from the verb in ``<set>_<verb>``."""


class ToolsetCard(ToolCard):
    """A named group of cards whose tools the model enables when it needs them.

    - ``name`` — the prefix of its tools and what ``enable_toolset`` is called with.
    - ``description`` — one line, in the catalog of every agent carrying the card.
    - ``cards`` — the members (at least one; never another ToolsetCard).
    """

    name: str
    description: str = Field(min_length=1)
    cards: list[ToolCard] = Field(min_length=1)

    _members: ToolFactory | None = PrivateAttr(default=None)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not TOOLSET_NAME.match(value):
            raise ValueError(
                f"toolset name {value!r} must start with a letter and hold only letters, "
                f"digits and '-' (32 at most): its tools are named <name>_<verb>"
            )
        return value

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = value.strip()
        if not value or len(value.splitlines()) > 1:  # U+2028, U+0085... break lines too
            raise ValueError("must be one non-blank line: it becomes one line of the catalog")
        return value

    @field_validator("cards", mode="before")
    @classmethod
    def _cards_from_data(cls, value: Any) -> Any:
        return cards_from_data(value) if isinstance(value, list) else value

    @field_validator("cards")
    @classmethod
    def _flat(cls, cards: list[ToolCard], info: ValidationInfo) -> list[ToolCard]:
        """Toolsets do not nest, and the members serve each capability once: refused as
        the card is read, not when the group is built at the team's start."""
        for card in cards:
            if isinstance(card, ToolsetCard):
                raise ValueError(
                    f"toolset {card.name!r} is nested in another toolset: list it on the "
                    f"agent instead (toolsets do not nest)"
                )
            if isinstance(card, MailboxTool) and card.read_mailbox is not False:
                # the agent reads mail through the call named read_mailbox; in a set the
                # model's tool would be <set>_read_mailbox, which reads nothing
                raise ValueError(
                    "MailboxTool cannot be in a toolset (the agent reads its mail through "
                    "the tool named read_mailbox, which a set would rename): list it on the "
                    "agent instead"
                )
        problem = repeated_capabilities(cards, "cards")
        if problem is not None:
            raise ValueError(f"toolset {info.data.get('name', '?')!r}: {problem}")
        return cards

    @model_validator(mode="after")
    def _members_named(self) -> Self:
        """Each member names its tools as this group does, from the start."""
        self._name_members()
        return self

    def _name_members(self) -> None:
        """Tell every member its set (see the module docstring): again at wiring, for a
        member list changed since the card was built."""
        for card in self.cards:
            card.join_toolset(self.name)

    # -- wiring --------------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        super().observer(observer)
        self._name_members()
        self._members = ToolFactory(
            self.cards,
            observer=observer,
            retry_exception=ModelRetry,
            tool_timeout=tool_timeout_of(observer),  # the agent's bound, as for its own tools
        )
        return self

    def members(self) -> ToolFactory:
        """The members' factory (built unwired when no observer was attached)."""
        if self._members is None:
            self._name_members()
            self._members = ToolFactory(self.cards, retry_exception=ModelRetry)
        return self._members

    def depends_on(self) -> list[str | type[ToolCard]]:
        return [
            dependency
            for card in self.cards
            for dependency in card.depends_on()
            if not any(matches_dependency(member, dependency) for member in self.cards)
        ]

    # -- hooks -----------------------------------------------------------------------------
    def get_toolsets(self) -> list[Any]:
        """One ToolGroup: the members' tools and toolsets, named ``<set>_<verb>``."""
        members = self.members()
        inner: list[AbstractToolset[Any]] = []
        try:  # two members' tools sharing a name: the factory names both members
            tools = members.get_tools()
        except ValueError as exc:
            raise ValueError(f"toolset {self.name!r}: {exc}") from None
        if tools:
            inner.append(
                FunctionToolset([Tool(t, sequential=True) if runs_alone(t) else t for t in tools])
            )
        inner.extend(members.get_toolsets())
        known = [group_tool_name(self.name, t.__name__) for t in tools]
        group: ToolGroup = tool_group(self.name, self.description, inner, known)
        return [group]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        return self.members().get_system_prompts()

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        return self.members().get_context_states()

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        return self.members().get_commands()
