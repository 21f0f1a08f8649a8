"""ToolGroup: one toolset's tools as one pydantic-ai toolset, named ``<set>_<verb>``.

The prefix is the routing: a tool name says which set it belongs to, so the agent can
activate the set a model calls into without a side registry. The rule, per tool:

- a tool already named ``<set>_…`` keeps its name (``workspace_read`` in set
  ``workspace`` stays ``workspace_read``, never ``workspace_workspace_read``);
- any other tool is renamed ``<set>_<name>`` (``search`` in set ``media`` is
  ``media_search``).

The rule is :func:`~akgentic.tool.core.channels.group_tool_name`'s, which a member card
reads too (``ToolCard.called_as``): the texts it writes name its tools as renamed here.
Two members producing one name is an error naming it. Every tool carries the set's name
in its definition's ``metadata`` (never sent to the model) under :data:`TOOLSET_METADATA`,
which is how the agent side recognises a grouped tool whatever wraps it later.

A group wraps whatever its members give: plain callables (through a FunctionToolset) and
runtime toolsets from ``get_toolsets()`` (an MCP server's, for one), entered and exited
with the group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, ToolsetTool

from akgentic.tool.core.channels import group_tool_name
from akgentic.tool.core.guard import as_the_model_reads, check_return
from akgentic.tool.core.guarded import GuardedToolset

__all__ = ["TOOLSET_METADATA", "ToolGroup", "group_tool_name", "tool_group", "toolset_of"]

TOOLSET_METADATA = "akgentic_toolset"
"""The ``ToolDefinition.metadata`` key holding the name of the set a tool belongs to."""

_ORIGINAL_NAME = "akgentic_toolset_tool"


def toolset_of(tool_def: ToolDefinition) -> str | None:
    """The set a tool belongs to, or None for a tool outside every toolset."""
    name = (tool_def.metadata or {}).get(TOOLSET_METADATA)
    return name if isinstance(name, str) else None


@dataclass
class ToolGroup(GuardedToolset):
    """The tools of one toolset: ``name``, ``description`` and the wrapped member toolset.

    A ``GuardedToolset``: a call that raises reaches the model as a retry (its members'
    are guarded by their own factory already; the group is handed out as is)."""

    name: str
    description: str
    known_tools: tuple[str, ...] = ()
    """The names of its plain tools (a card's ``get_tools()``), known before any run; an
    MCP server's are listed only when the run asks."""

    @property
    def label(self) -> str:
        return f"toolset {self.name!r}"

    @property
    def tool_name_conflict_hint(self) -> str:
        return "Rename the toolset, or move one of the clashing cards to another toolset."

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools: dict[str, ToolsetTool[Any]] = {}
        for original, tool in (await super().get_tools(ctx)).items():
            name = group_tool_name(self.name, original)
            if name in tools:
                raise UserError(
                    f"toolset {self.name!r}: two member tools are both named {name!r} "
                    f"(one of them is {original!r}); rename one, or put it in another toolset"
                )
            metadata = {
                **(tool.tool_def.metadata or {}),
                TOOLSET_METADATA: self.name,
                _ORIGINAL_NAME: original,
            }
            tools[name] = replace(
                tool, toolset=self, tool_def=replace(tool.tool_def, name=name, metadata=metadata)
            )
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        metadata = dict(tool.tool_def.metadata or {})
        original = metadata.pop(_ORIGINAL_NAME, name)
        metadata.pop(TOOLSET_METADATA, None)
        inner = replace(tool, tool_def=replace(tool.tool_def, name=original, metadata=metadata))
        with as_the_model_reads(name, self.retry):  # said of the tool by its name here
            called = self.wrapped.call_tool(
                original, tool_args, replace(ctx, tool_name=original), inner
            )
            return check_return(await called)


def tool_group(
    name: str,
    description: str,
    toolsets: Sequence[AbstractToolset[Any]],
    known_tools: Sequence[str] = (),
) -> ToolGroup:
    """A group named ``name`` over ``toolsets``, combined; ``known_tools``: the names its
    plain tools have in the group."""
    return ToolGroup(
        wrapped=CombinedToolset(list(toolsets)),
        name=name,
        description=description,
        known_tools=tuple(known_tools),
    )
