"""DynamicToolsets: the agent's half of ToolsetCard — which toolsets the model sees, per request.

The tool layer hands every toolset's tools over as a ``ToolGroup`` (``get_toolsets()``).
This capability owns one conversation's :class:`ToolsetRegistry` and puts the groups to
work through pydantic-ai's own hooks:

- ``get_toolset()`` — ``enable_toolset`` / ``disable_toolset`` (ordinary tools: their calls
  and returns are ordinary history rows) and every group, **all** registered with the run,
  so a call into an inactive set is resolved and validated like any other call.
- ``before_model_request`` — what goes on the wire: the request's tool list keeps a
  group's tools only while the set is active (the run keeps them all). Lazy cleanup: the
  registry is read, and expired sets dropped, on every request.
- ``before_tool_execute`` — a call into a set is a use: it activates the set or extends it
  to 10 minutes from now. So a call into an inactive set whose arguments validate runs at
  once, and the set is active from the next step on.
- ``on_tool_validate_error`` — invalid arguments for a set's tool are answered with its
  schema; when the set was inactive the answer also says it is now active, lists its tools
  and says, explicitly, that the call was NOT executed yet.

The catalog (``catalog()``, for the frozen system prompt) and the active sets
(``context_states()``, for the per-turn context block) come from here too, so the prompt
never changes when a set is enabled. Nothing here exists when no toolset is configured:
see :func:`dynamic_toolsets`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from pydantic import ValidationError
from pydantic_ai import ModelRetry
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, FunctionToolset

from akgentic.core.excerpt import validation_words
from akgentic.tool.core import ContextState, RetriableError
from akgentic.tool.toolsets import (
    TOOLSET_TIMEOUT,
    ActiveToolsets,
    Clock,
    ToolGroup,
    ToolsetRegistry,
    render_catalog,
    toolset_of,
    wording,
)

__all__ = ["DynamicToolsets", "dynamic_toolsets"]


class DynamicToolsets(AbstractCapability[Any]):
    """Per-request toolsets over ``groups``; see the module docstring.

    ``clock`` (seconds) and ``timeout`` are the registry's. Two groups sharing a name are
    a ValueError naming it.
    """

    __eq__ = object.__eq__  # identity: two agents' registries are never one
    __hash__ = object.__hash__

    def __init__(
        self,
        groups: Sequence[ToolGroup],
        *,
        clock: Clock = time.monotonic,
        timeout: float = TOOLSET_TIMEOUT,
    ) -> None:
        names = [group.name for group in groups]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(
                f"toolset {', '.join(repr(n) for n in twice)} is configured twice: one "
                f"ToolsetCard per name"
            )
        self.groups = list(groups)
        self.registry = ToolsetRegistry(names, clock=clock, timeout=timeout)
        registry = self.registry

        def enable_toolset(name: str) -> str:
            """Switch on a toolset from the Toolsets list in your instructions.

            Its tools are in your tool list from your next step on, until 10 minutes after
            their last use. Calling it for an active toolset extends that time.
            """
            try:
                return registry.enable(name)
            except RetriableError as exc:
                raise ModelRetry(str(exc)) from exc

        def disable_toolset(name: str) -> str:
            """Switch off a toolset you no longer need; its tools leave your tool list."""
            try:
                return registry.disable(name)
            except RetriableError as exc:
                raise ModelRetry(str(exc)) from exc

        members: list[AbstractToolset[Any]] = [FunctionToolset([enable_toolset, disable_toolset])]
        self._toolset = CombinedToolset([*members, *self.groups])

    def __repr__(self) -> str:
        return f"DynamicToolsets({[g.name for g in self.groups]})"

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    # -- what the agent reads ---------------------------------------------------------------
    def catalog(self) -> str:
        """The SYSTEM_PROMPT section: every toolset as ``name — description``."""
        return render_catalog((g.name, g.description) for g in self.groups)

    def context_states(self) -> list[Callable[[], ContextState | None]]:
        """The LLM_CONTEXT provider saying which toolsets are active."""
        registry = self.registry

        def active_toolsets() -> ContextState | None:
            return ActiveToolsets(names=sorted(registry.active()))

        return [active_toolsets]

    def active_toolsets(self) -> frozenset[str]:
        return self.registry.active()

    def reset(self) -> None:
        """A new conversation: no toolset is active."""
        self.registry.reset()

    # -- pydantic-ai hooks ----------------------------------------------------------------------
    def get_toolset(self) -> AbstractToolset[Any]:
        return self._toolset

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = request_context.model_request_parameters
        active = self.registry.active()
        visible = [
            tool
            for tool in params.function_tools
            if (name := toolset_of(tool)) is None or name in active
        ]
        if len(visible) != len(params.function_tools):
            request_context.model_request_parameters = replace(params, function_tools=visible)
        return request_context

    async def before_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
    ) -> dict[str, Any]:
        name = toolset_of(tool_def)
        if name is not None:
            self.registry.use(name)
        return args

    async def on_tool_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: str | dict[str, Any],
        error: ValidationError | ModelRetry,
    ) -> dict[str, Any]:
        name = toolset_of(tool_def)
        if name is None:
            raise error
        activated = self.registry.use(name)
        schema = json.dumps(tool_def.parameters_json_schema, separators=(",", ":"))
        problems = _problems(error)
        if activated:
            signatures = [
                wording.tool_signature(t.name, t.parameters_json_schema)
                for t in ctx.tools.values()
                if toolset_of(t) == name
            ]
            raise ModelRetry(
                wording.auto_activated_not_executed(
                    name,
                    tool_def.name,
                    signatures,
                    problems,
                    schema,
                )
            ) from error
        if isinstance(error, ValidationError):
            raise ModelRetry(wording.invalid_arguments(tool_def.name, problems, schema)) from error
        raise error


def _problems(error: ValidationError | ModelRetry) -> str:
    if isinstance(error, ModelRetry):
        return error.message
    return validation_words(error, top="arguments")


def dynamic_toolsets(
    toolsets: Sequence[Any], *, clock: Clock = time.monotonic, taken: Collection[str] = ()
) -> tuple[DynamicToolsets | None, list[Any]]:
    """Split a factory's toolsets: the groups become one capability, the rest stay as they are.

    No group, no capability (None): an agent with no ToolsetCard has no toolset tool, no
    catalog and no context state — zero footprint. ``taken``: the names of the agent's
    tools outside every set; a group's plain tool named as one of them is a ValueError
    saying what to rename (pydantic-ai would fail the first turn on it).
    """
    groups = [t for t in toolsets if isinstance(t, ToolGroup)]
    rest = [t for t in toolsets if not isinstance(t, ToolGroup)]
    for group in groups:
        clash = sorted(set(group.known_tools) & set(taken))
        if clash:
            raise ValueError(
                f"toolset {group.name!r}: its tool {', '.join(clash)} has the name of a tool "
                f"this agent has outside every toolset; rename the toolset (its tools are "
                f"named {group.name}_<verb>), or move one of the two cards"
            )
    return (DynamicToolsets(groups, clock=clock) if groups else None), rest
