"""BaseToolParam: configuration of one capability, and the rules that resolve it.

Every custom field of a param must be read at bind time and change what the tool
does — as a closure variable, a function default or an observer setup value. A field
that merely mirrors the LLM-facing signature is dead code: the signature belongs to the
callable the card builds, not to the param.

A card declares each capability as ``name: Param | bool``. :func:`resolve_param` is the
one resolution rule (False removes the capability, True means the default param, an
instance is used as is) and :func:`serve` adds the channel gate every hook applies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeVar

from pydantic import ConfigDict

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.channels import LLM_CONTEXT, SYSTEM_PROMPT, TOOL_CALL, Channels

__all__ = [
    "BaseToolParam",
    "attach_param",
    "normalize_system_prompt_to_llm_context",
    "param_of",
    "resolve_param",
    "serve",
]

P = TypeVar("P", bound="BaseToolParam")
F = TypeVar("F", bound=Callable[..., Any])

_PARAM_ATTRIBUTE = "__akgentic_tool_param__"


def refuse_arbitrary_types(cls: type, kind: str) -> None:
    """Golden Rule 1b: a configuration model holds serializable types only.

    Called at class definition, so the mistake surfaces where it is written rather
    than when a catalog row fails to round-trip.
    """
    config: Any = getattr(cls, "model_config", {})
    if config.get("arbitrary_types_allowed"):
        raise TypeError(
            f"{cls.__module__}.{cls.__qualname__}: ConfigDict(arbitrary_types_allowed=True) "
            f"is forbidden on a {kind} subclass — every field must round-trip through "
            f"serialization. Keep runtime handles (proxies, clients, open files) in "
            f"PrivateAttr instead."
        )


class BaseToolParam(SerializableModel):
    """Configuration of one capability of a card.

    ``instructions`` is appended to the tool's docstring at factory time: guidance
    injected by configuration without touching source. ``expose`` is the set of
    channels the capability is offered on, named in any case (``TOOL_CALL`` or
    ``tool_call``); a capability is served on a channel only
    when the card's hook for that channel builds it (see :func:`serve`). Unknown
    fields are an error naming the field.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    instructions: str | None = None
    expose: set[Channels] = {TOOL_CALL}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        refuse_arbitrary_types(cls, "BaseToolParam")
        super().__pydantic_init_subclass__(**kwargs)


def resolve_param(value: P | bool, param_cls: type[P]) -> P | None:
    """The ``Param | bool`` rule: False removes, True is ``param_cls()``, an instance is kept."""
    if value is False:
        return None
    if value is True:
        return param_cls()
    if isinstance(value, BaseToolParam):
        return value
    raise TypeError(f"a capability is a {param_cls.__name__} or a bool, got {type(value).__name__}")


def serve(value: P | bool, param_cls: type[P], channel: Channels) -> P | None:
    """The routing rule: the param, when it resolves *and* its ``expose`` holds ``channel``.

    Every serving hook applies this same two-step gate: ``get_tools`` for TOOL_CALL,
    ``get_system_prompts`` for SYSTEM_PROMPT, ``get_context_states`` for LLM_CONTEXT,
    ``get_commands`` for COMMAND.
    """
    param = resolve_param(value, param_cls)
    if param is None or channel not in param.expose:
        return None
    return param


def attach_param(fn: F, param: BaseToolParam) -> F:
    """Record which param built ``fn``, so the factory appends that param's instructions.

    Needed only when the callable's ``__name__`` differs from the card field holding the
    param; otherwise the factory pairs them by name.
    """
    setattr(fn, _PARAM_ATTRIBUTE, param)
    return fn


def param_of(fn: Callable[..., Any]) -> BaseToolParam | None:
    """The param recorded on ``fn`` by :func:`attach_param`, if any."""
    param = getattr(fn, _PARAM_ATTRIBUTE, None)
    return param if isinstance(param, BaseToolParam) else None


def normalize_system_prompt_to_llm_context(value: Any) -> Any:
    """Rewrite a persisted ``SYSTEM_PROMPT`` exposure to ``LLM_CONTEXT``.

    For a param whose content moved from the frozen prefix to per-turn context state:
    a payload stored with an explicit ``expose: ["system_prompt", ...]`` would otherwise
    resolve to a channel the card no longer serves and vanish silently. Attach it per
    moved param class, never globally — globally it would drag static content out of
    the cached prefix::

        class GetPlanning(BaseToolParam):
            expose: set[Channels] = {LLM_CONTEXT, COMMAND}
            _moved = field_validator("expose", mode="before")(
                normalize_system_prompt_to_llm_context
            )

    Values it does not understand are returned unchanged for the field's own
    validation to report.
    """
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        return value
    items = list(value)
    if not any(_is_system_prompt(item) for item in items):
        return value
    return {LLM_CONTEXT if _is_system_prompt(item) else item for item in items}


def _is_system_prompt(item: object) -> bool:
    return isinstance(item, str) and item.lower() == SYSTEM_PROMPT.value
