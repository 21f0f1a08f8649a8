"""fuse(): several of the agent's own capabilities handed to pydantic-ai as one.

pydantic-ai dispatches every hook to every capability of an agent, whether it implements
the hook or not: each dispatch copies the run context for that capability, ``wrap_run``
nests one wrapper per capability, and the run's event stream is wrapped in one async
generator per capability, every event passing through each. An agent's own capabilities
(tools on its thread, cancellation, the mailbox, run events, prompt accounting) each cost a
turn about 0.15 ms of that machinery (``bench/agent_turn.py``) for hooks that are one call.

Fused, they are one capability whose hooks call the parts that implement them, with the
same semantics pydantic-ai gives a list of capabilities: ``before_*`` hooks and ``on_event``
in the order given, ``after_*`` hooks in reverse, ``wrap_*`` hooks nested (the first part
outermost), ``get_wrapper_model`` wrapping with the first part outermost, and
``compact_history`` asked of the parts in order, the first result used, and
``on_tool_validate_error`` in reverse, each part given the error the one before raised,
the first that returns arguments recovering it. A fusion carries
``on_event`` and ``compact_history`` only when a part implements them: pydantic-ai streams
every step for a capability with ``on_event``, and takes one with ``compact_history`` for a
compactor. The parts stay what they are
(each is a capability on its own, tested on its own); only a part whose hooks are all among
:data:`FUSABLE_HOOKS` can be fused — any other is a ValueError naming the hook, so a part
that grows a hook fuse() does not carry fails at start-up, not silently at run time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_ai import ModelRetry
from pydantic_ai.capabilities import AbstractCapability, CompactionRequest, CompactionResult
from pydantic_ai.messages import AgentStreamEvent, ModelResponse, ToolCallPart
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.tools import RunContext, ToolDefinition

__all__ = ["FUSABLE_HOOKS", "FusedCapability", "fuse"]

FUSABLE_HOOKS = (
    "wrap_run",
    "before_node_run",
    "after_node_run",
    "before_model_request",
    "after_model_request",
    "wrap_tool_execute",
    "on_tool_validate_error",
    "get_wrapper_model",
    "on_event",
    "compact_history",
)
"""The hooks a fused part may implement; the fused capability carries exactly these."""

_BOOKKEEPING = frozenset({"get_serialization_name"})


def _overrides(part: AbstractCapability[Any], name: str) -> bool:
    return getattr(type(part), name) is not getattr(AbstractCapability, name)


def _hooks(part: AbstractCapability[Any]) -> set[str]:
    """The public methods of AbstractCapability that ``part``'s class overrides."""
    return {
        name
        for name, value in vars(AbstractCapability).items()
        if not name.startswith("_") and callable(value) and _overrides(part, name)
    } - _BOOKKEEPING


class FusedCapability(AbstractCapability[Any]):
    """The parts as one capability, with no ``on_event`` (a capability that has one makes
    pydantic-ai stream every step) and no ``compact_history`` (one that has it is taken
    for a compactor). Build it with :func:`fuse`."""

    __eq__ = object.__eq__  # identity: the parts hold one agent's state
    __hash__ = object.__hash__

    def __init__(self, parts: Sequence[AbstractCapability[Any]]) -> None:
        self.parts = list(parts)
        self._wrap = [p for p in self.parts if _overrides(p, "wrap_run")]
        self._before_node = [p for p in self.parts if _overrides(p, "before_node_run")]
        self._after_node = [p for p in reversed(self.parts) if _overrides(p, "after_node_run")]
        self._model_wrappers = [
            p for p in reversed(self.parts) if _overrides(p, "get_wrapper_model")
        ]
        self._before_request = [p for p in self.parts if _overrides(p, "before_model_request")]
        self._after_request = [
            p for p in reversed(self.parts) if _overrides(p, "after_model_request")
        ]
        self._wrap_tool = [p for p in self.parts if _overrides(p, "wrap_tool_execute")]
        self._validate_errors = [
            p for p in reversed(self.parts) if _overrides(p, "on_tool_validate_error")
        ]
        self._events = [p for p in self.parts if p.has_on_event]
        self._compactors = [p for p in self.parts if _overrides(p, "compact_history")]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.parts!r})"

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        chain: Callable[[], Awaitable[Any]] = handler
        for part in reversed(self._wrap):
            chain = _wrapped(part, ctx, chain)
        return await chain()

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Callable[[dict[str, Any]], Awaitable[Any]],
    ) -> Any:
        chain = handler
        for part in reversed(self._wrap_tool):
            chain = _wrapped_tool(part, ctx, call, tool_def, chain)
        return await chain(args)

    async def on_tool_validate_error(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: Any,
        error: ValidationError | ModelRetry,
    ) -> Any:
        for part in self._validate_errors:
            try:
                return await part.on_tool_validate_error(
                    ctx, call=call, tool_def=tool_def, args=args, error=error
                )
            except (ValidationError, ModelRetry) as raised:
                error = raised
        raise error

    async def before_node_run(self, ctx: RunContext[Any], *, node: Any) -> Any:
        for part in self._before_node:
            node = await part.before_node_run(ctx, node=node)
        return node

    async def after_node_run(self, ctx: RunContext[Any], *, node: Any, result: Any) -> Any:
        for part in self._after_node:
            result = await part.after_node_run(ctx, node=node, result=result)
        return result

    def get_wrapper_model(self, model: Model) -> Model | None:
        wrapped: Model | None = None
        for part in self._model_wrappers:  # the innermost first: the first part outermost
            wrapper = part.get_wrapper_model(model if wrapped is None else wrapped)
            if wrapper is not None:
                wrapped = wrapper
        return wrapped

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        for part in self._before_request:
            request_context = await part.before_model_request(ctx, request_context)
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        for part in self._after_request:
            response = await part.after_model_request(
                ctx, request_context=request_context, response=response
            )
        return response


class _FusedWithEvents(FusedCapability):
    """The parts as one capability, ``on_event`` included (some part listens to events)."""

    async def on_event(self, ctx: RunContext[Any], *, event: AgentStreamEvent) -> None:
        for part in self._events:
            await part.on_event(ctx, event=event)


class _FusedWithCompaction(FusedCapability):
    """The parts as one capability, ``compact_history`` included (some part compacts)."""

    async def compact_history(
        self, ctx: RunContext[Any], request: CompactionRequest
    ) -> CompactionResult | None:
        for part in self._compactors:
            result = await part.compact_history(ctx, request)
            if result is not None:
                return result
        return None


class _FusedWithEventsAndCompaction(_FusedWithCompaction, _FusedWithEvents):
    """The parts as one capability, ``on_event`` and ``compact_history`` included."""


def _wrapped(
    part: AbstractCapability[Any], ctx: RunContext[Any], inner: Callable[[], Awaitable[Any]]
) -> Callable[[], Awaitable[Any]]:
    async def run() -> Any:
        return await part.wrap_run(ctx, handler=inner)

    return run


def _wrapped_tool(
    part: AbstractCapability[Any],
    ctx: RunContext[Any],
    call: ToolCallPart,
    tool_def: ToolDefinition,
    inner: Callable[[dict[str, Any]], Awaitable[Any]],
) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    async def run(args: dict[str, Any]) -> Any:
        return await part.wrap_tool_execute(
            ctx, call=call, tool_def=tool_def, args=args, handler=inner
        )

    return run


def fuse(parts: Sequence[AbstractCapability[Any]]) -> FusedCapability:
    """``parts`` as one capability (see the module docstring). A part implementing a hook
    outside :data:`FUSABLE_HOOKS` is a ValueError naming the part and the hook."""
    for part in parts:
        other = sorted(_hooks(part) - set(FUSABLE_HOOKS))
        if other:
            raise ValueError(
                f"{type(part).__name__} implements {', '.join(other)}: fuse() carries only "
                f"{', '.join(FUSABLE_HOOKS)}; give it to the agent as a capability of its own"
            )
    events = any(p.has_on_event for p in parts)
    if any(_overrides(p, "compact_history") for p in parts):
        return (_FusedWithEventsAndCompaction if events else _FusedWithCompaction)(parts)
    return (_FusedWithEvents if events else FusedCapability)(parts)
