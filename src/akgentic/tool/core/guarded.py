"""GuardedToolset: a runtime toolset's calls held to the rule every tool callable keeps.

A card's ``get_tools()`` callables are wrapped by the factory so that nothing raw
escapes them (see ``guard.py``). A card's ``get_toolsets()`` objects (an MCP server's,
a ``FunctionToolset`` a card built itself, a toolset of the card's own) call their tools
through ``call_tool``, which that wrapper never sees: a ``RetriableError`` raised there
would end the turn instead of reaching the model. ``ToolFactory.get_toolsets()`` wraps
every toolset it hands out in this class, so every toolset gets the same translation as
a function tool, in one place:

- a ``RetriableError`` becomes ``retry`` (pydantic-ai's ``ModelRetry`` unless the factory
  names another class): the model reads it and tries again;
- any other exception (the :func:`~akgentic.tool.core.guard.passes_through` signals
  excepted) is logged and becomes that retry too, naming the tool.

A subclass (``ToolGroup``) is guarded already and is handed out as is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import ModelRetry
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset

from akgentic.tool.core.guard import as_the_model_reads, check_return

__all__ = ["GuardedToolset", "guarded"]


@dataclass
class GuardedToolset(WrapperToolset[Any]):
    """``wrapped``, its every tool call seen through ``as_the_model_reads``; ``called``
    gives the name the model calls a tool by (its card's ``called_as``), for the words
    said of it (the name it has in ``wrapped`` when None)."""

    retry: type[Exception] = field(default=ModelRetry, kw_only=True)
    called: Callable[[str], str] | None = field(default=None, kw_only=True)

    @property
    def tool_name_conflict_hint(self) -> str:
        """The wrapped toolset's (an MCP server's says which card option renames its
        tools): a wrapper knows nothing of the names."""
        return self.wrapped.tool_name_conflict_hint

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        said = name if self.called is None else self.called(name)
        with as_the_model_reads(said, self.retry):
            return check_return(await super().call_tool(name, tool_args, ctx, tool))


def guarded(
    toolset: Any, retry: type[Exception] | None, called: Callable[[str], str] | None = None
) -> Any:
    """``toolset`` wrapped in a :class:`GuardedToolset` (one already guarded, or an object
    that is not a pydantic-ai toolset, is returned as is). ``retry`` None means
    pydantic-ai's ``ModelRetry``: a toolset is a pydantic-ai object, so its retry is.
    ``called``: see :class:`GuardedToolset`."""
    if isinstance(toolset, GuardedToolset) or not isinstance(toolset, AbstractToolset):
        return toolset
    return GuardedToolset(wrapped=toolset, retry=retry or ModelRetry, called=called)
