"""The two package-global observer levels, and the carrier of ToolState.

A card is inert configuration; the observer handed to it at wiring time is its only
channel to the running system. Ask for the least you need:

- :class:`ToolObserver` — emit a domain event on the orchestrator's stream. Nothing more.
- :class:`ActorToolObserver` — also reach any actor by address (``proxy_ask`` /
  ``proxy_tell``) and the persisted tool-layer slot, ``state.tool_state``, read live on
  every call.
- :class:`ToolsetActivityObserver` — also say which toolsets are active in the
  conversation (toolsets and skills both read it).

Domain protocols (one card's own contract) live beside their card and extend
whichever level they genuinely need. Narrow in an accessor, never in the signature of
``ToolCard.observer()``: the factory attaches one observer to every card uniformly.

``proxy_tell`` for what needs no answer: an ask has no default timeout, so a merely
slow target stalls the caller; a tell cannot stall the sender at all.

Every protocol keeps ``@runtime_checkable`` even where it is inherited: it is the
convention, and it becomes load-bearing the day a base stops carrying it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable
from uuid import UUID

from akgentic.core.address import ActorAddress
from akgentic.tool.core.state import ToolState

__all__ = ["ActorToolObserver", "ToolObserver", "ToolStateCarrier", "ToolsetActivityObserver"]


@runtime_checkable
class ToolObserver(Protocol):
    """Emits domain events onto the team's event stream."""

    def notify_event(self, event: Any) -> None:
        """Publish ``event`` (a serializable model) on the orchestrator's stream."""
        ...


@runtime_checkable
class ActorToolObserver(ToolObserver, Protocol):
    """A ToolObserver that is an actor: its address, its team, its state, its proxies."""

    @property
    def myAddress(self) -> ActorAddress:
        """The observing actor's own address."""
        ...

    @property
    def orchestrator(self) -> ActorAddress | None:
        """The team orchestrator's address; ask it for a proxy before calling it."""
        ...

    @property
    def team_id(self) -> UUID | None:
        """The team the observing actor belongs to."""
        ...

    @property
    def state(self) -> Any:
        """The actor's live state; the tool layer's slot is ``state.tool_state``."""
        ...

    def proxy_ask(
        self, addr: ActorAddress, actor_type: type[Any], timeout: float | None = None
    ) -> Any:
        """A proxy whose method calls block and return the actor's answer."""
        ...

    def proxy_tell(self, addr: ActorAddress, actor_type: type[Any]) -> Any:
        """A proxy whose method calls return None at once and never block."""
        ...


@runtime_checkable
class ToolsetActivityObserver(ToolObserver, Protocol):
    """A ToolObserver that knows which toolsets are active in its conversation.

    On core because two domains need it: the agent's toolsets answer it, and SkillTool
    reads it to set aside a skill whose toolset is already active. An observer that does
    not implement it has no active toolset.
    """

    def active_toolsets(self) -> frozenset[str]:
        """The names of the toolsets active now (read per turn; never cached)."""
        ...


@runtime_checkable
class ToolStateCarrier(Protocol):
    """Structurally, anything holding the tool-layer slot (an agent state does)."""

    tool_state: ToolState
