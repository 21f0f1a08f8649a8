"""ToolCard: the serializable configuration every tool follows.

A card is inert: every field round-trips through serialization, runtime handles
(proxies, clients, open files) live in ``PrivateAttr``, and the only way to reach the
running system is the observer the factory hands it at wiring time — held weakly, so
a tool, its closures and its command registry never keep a stopped agent alive.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Self

from pydantic import ConfigDict, PrivateAttr

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.channels import COMMAND, Channels, group_tool_name, invocation
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.core.params import BaseToolParam, refuse_arbitrary_types
from akgentic.tool.errors import ToolNotWiredError, ToolObserverGone

__all__ = ["ToolCard"]


class ToolCard(SerializableModel):
    """Base of every tool configuration.

    Rules (Golden Rule 1b): fields are serializable types only;
    ``ConfigDict(arbitrary_types_allowed=True)`` is refused at class definition;
    unknown fields are an error naming the field.

    Hooks — each serves one channel and defaults to nothing:

    - :meth:`get_tools` (TOOL_CALL), :meth:`get_system_prompts` (SYSTEM_PROMPT),
      :meth:`get_context_states` (LLM_CONTEXT), :meth:`get_commands` (COMMAND),
      :meth:`get_toolsets` (runtime toolset objects), :meth:`depends_on` (wiring order).

    A capability exposed on a channel whose hook the card does not override is dropped
    silently: the factory aggregates what the hooks return and nothing else.

    The observer: :meth:`observer` attaches it (weakly) and returns the card.
    :meth:`get_observer` raises :class:`ToolObserverGone` once the owner is collected —
    the form for synchronous in-life code; :meth:`observer_or_none` returns None instead
    — the form for a closure that may outlive its agent. Closures capture the card's
    accessors, never the agent. ``self._observer`` reads and assigns through the same
    weak reference, so a card written as ``self._observer = observer`` stays weak.

    Its tools' names: a card grouped in a ToolsetCard has its tools renamed
    ``<set>_<verb>`` on the way to the model. Every text a card writes that names one of
    its own tools — a prompt, a context view, a tool's docstring, a retry's advice, a
    command's answer — names it through :meth:`called_as` (or :meth:`invocation`), so it
    says the name the model can call, in a set or not.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    _observer_ref: weakref.ref[Any] | None = PrivateAttr(default=None)
    _toolset: str | None = PrivateAttr(default=None)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        refuse_arbitrary_types(cls, "ToolCard")
        if "_observer" in cls.__private_attributes__:
            raise TypeError(
                f"{cls.__qualname__} redeclares _observer: ToolCard holds the observer "
                f"weakly; a private attribute of your own would be a strong reference "
                f"that keeps a stopped agent alive. Use get_observer()/observer_or_none()."
            )
        super().__pydantic_init_subclass__(**kwargs)

    @classmethod
    def written_model(cls, value: Any) -> type[ToolCard] | None:
        """The card class a value written for this one really is: a mapping whose
        ``type`` names a card (``{type: PlanningTool, ...}``) is that card, whatever card
        field lists it; None when ``type`` names no card. How an error says which field a
        misspelt key was meant to be (``akgentic.core.excerpt.field_errors``)."""
        named = value.get("type") if isinstance(value, dict) else None
        if not isinstance(named, str) or cls is not ToolCard:
            return cls  # a card class given itself (the catalog's config): its own fields
        from akgentic.tool.core.lookup import card_class  # lookup imports this module

        try:
            found = card_class(named)
        except ValueError:
            return None
        return found if issubclass(found, cls) else None

    # -- the observer ---------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the owning agent (held weakly) and return the card.

        Override to set up runtime handles; keep the base parameter type and narrow
        in an accessor of your own, and call ``super().observer(observer)``.
        """
        self._observer = observer
        return self

    @property
    def _observer(self) -> Any:
        """The attached observer, or None (never attached, or collected)."""
        return self.observer_or_none()

    @_observer.setter
    def _observer(self, observer: Any) -> None:
        if observer is None:
            self._observer_ref = None
            return
        try:
            self._observer_ref = weakref.ref(observer)
        except TypeError:
            raise TypeError(
                f"{type(observer).__name__} cannot be held weakly: a tool observer must "
                f"support weak references (a card must never keep its agent alive)"
            ) from None

    def observer_or_none(self) -> ToolObserver | None:
        """The observer, or None when none was attached or its owner is gone."""
        ref = self._observer_ref
        if ref is None:
            return None
        observer: ToolObserver | None = ref()
        return observer

    def get_observer(self) -> ToolObserver:
        """The observer; raises :class:`ToolObserverGone` once its owner is collected.

        Raises ToolNotWiredError (a RuntimeError) when no observer was ever attached — a
        wiring bug, not an outcome to handle.
        """
        ref = self._observer_ref
        if ref is None:
            raise ToolNotWiredError(
                f"{type(self).__name__} has no observer: wire it through ToolFactory "
                f"(or call card.observer(agent)) before using its tools"
            )
        observer: ToolObserver | None = ref()
        if observer is None:
            raise ToolObserverGone(
                f"the agent that owned this {type(self).__name__} is gone; its tools "
                f"cannot act any more"
            )
        return observer

    # -- its tools' names -------------------------------------------------------------
    def join_toolset(self, toolset: str | None) -> None:
        """Say which toolset groups this card (None: none). The ToolsetCard calls it for
        each member as it is built and again as it wires them, before any hook runs: the
        names :meth:`called_as` gives from then on are the group's."""
        self._toolset = toolset

    def called_as(self, name: str) -> str:
        """The name the model calls this card's tool ``name`` by: ``name`` itself, or in a
        toolset the group's name for it (``use_skill`` in set ``docs`` is
        ``docs_use_skill``; see :func:`~akgentic.tool.core.channels.group_tool_name`)."""
        return name if self._toolset is None else group_tool_name(self._toolset, name)

    def invocation(self, name: str, channel: Channels, args: str | None = None) -> str:
        """:func:`~akgentic.tool.core.channels.invocation` for one of this card's own
        capabilities: the model's call names the tool as :meth:`called_as` does; a
        person's ``/command`` keeps its name (a toolset groups tools, not commands)."""
        return invocation(name if channel == COMMAND else self.called_as(name), channel, args)

    # -- hooks ----------------------------------------------------------------------
    def get_tools(self) -> list[Callable[..., Any]]:
        """TOOL_CALL: callables the model may invoke. Their docstring is the contract."""
        return []

    def get_system_prompts(self) -> list[Callable[[], str]]:
        """SYSTEM_PROMPT: static text rendered once into the frozen, cached prefix."""
        return []

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        """LLM_CONTEXT: zero-argument providers of context state snapshots.

        A provider returns None when its state is unavailable and never raises. Its
        ``__name__`` is its key, and must be unique among the factory's providers.
        """
        return []

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        """COMMAND: callables invoked by name, keyed by the param class that built them."""
        return {}

    def get_toolsets(self) -> list[Any]:
        """Runtime toolset objects (e.g. pydantic-ai MCP toolsets) handed over as is."""
        return []

    def depends_on(self) -> list[str | type[ToolCard]]:
        """Cards this one must be wired after: classes, or class names.

        A name matches any card whose class (or a base class) has that name, so a
        domain can declare an edge without importing the other domain.
        """
        return []
