"""Actor addresses: what code holds instead of an actor.

An address has three lives, and one class per way it can be obtained:

- :class:`ActorAddressImpl` — *live*: made when the actor is created, it can deliver.
  Once the actor stops it becomes a *stopped* address: its metadata stays readable,
  ``is_alive()`` is false and delivering raises :class:`AddressError`. It also tells
  whether the actor's ``on_start`` has run, and why it failed (:meth:`wait_started`).
- :class:`ActorAddressProxy` — *deserialized*: a snapshot rebuilt from data (storage,
  HTTP, a subscriber's copy). It carries the metadata and cannot deliver.

Equality and hashing are by ``agent_id`` across all variants, so a snapshot equals the
live address it was taken from.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import TYPE_CHECKING, Any
from uuid import UUID

import pykka
from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from akgentic.core.error_pickle import reduce_by_fields
from akgentic.core.excerpt import clip, exception_line, exception_words, excerpt
from akgentic.core.serialization import MODEL_MARKER, register_serializable

if TYPE_CHECKING:
    from akgentic.core.messages.message import Message

__all__ = [
    "ActorAddress",
    "ActorAddressImpl",
    "ActorAddressProxy",
    "ActorNameTakenError",
    "ActorStartError",
    "AddressError",
    "address_name",
    "start_failure_text",
]

START_FAILURE_CHARS = 400
"""The longest cause an :class:`ActorStartError` quotes, in characters."""


def address_name(name: str) -> str:
    """The address name a person or a model means: ``Writer`` is ``@Writer``; names that
    already start with ``@`` (members) or ``#`` (tool actors) are kept as they are."""
    return name if name.startswith(("@", "#")) else f"@{name}"


class AddressError(RuntimeError):
    """A message cannot be delivered through this address."""


class ActorStartError(RuntimeError):
    """An actor could not start: its constructor or its ``on_start`` raised (it has
    stopped), or its ``on_start`` did not finish in time. ``actor`` names it, ``reason``
    says why, on one line (``OSError: [Errno 2] No such file or directory: '/x'``)."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, actor: str, reason: str) -> None:
        super().__init__(f"{actor} could not start: {reason}")
        self.actor = actor
        self.reason = reason


class ActorNameTakenError(ActorStartError, TypeError):
    """A ``#`` tool actor was asked for under a name a live actor of another class holds
    (two cards binding one name to two actor classes). A ``TypeError`` too: it is a
    wiring mistake, and an ``ActorStartError`` so that the factory names the card."""

    def __init__(self, actor: str, reason: str) -> None:
        super().__init__(actor, reason)


def start_failure_text(exc: BaseException) -> str:
    """``exc`` as the cause of a failed start, on one line, clipped: its class and words
    (:func:`~akgentic.core.excerpt.exception_line`) — only its words for an
    :class:`ActorStartError`, which already say what could not start and why."""
    if isinstance(exc, ActorStartError):
        return clip(exception_words(exc), START_FAILURE_CHARS)
    return exception_line(exc, START_FAILURE_CHARS)


class ActorAddress:
    """The metadata of an actor, captured when its address was made.

    ``name`` is the address name (``@Writer``, ``#PlanningTool``), ``role`` the
    agent's role, ``agent_class`` the import path of the actor's class (informative).
    ``object_key`` is the ``id`` of this object, kept as an attribute: how an event pack
    names the address (``akgentic.storage``), read by C code for every record of a busy
    team. Two equal addresses (one agent) may have different keys; an unpickled copy
    takes its own.
    """

    __slots__ = (
        "_data",
        "agent_class",
        "agent_id",
        "is_user_proxy",
        "name",
        "object_key",
        "role",
        "squad_id",
        "team_id",
    )
    _data: dict[str, Any]

    def __init__(
        self,
        *,
        agent_id: UUID,
        name: str,
        role: str = "",
        team_id: UUID | None = None,
        squad_id: UUID | None = None,
        is_user_proxy: bool = False,
        agent_class: str = "",
    ) -> None:
        self.agent_id = agent_id
        self.name = name
        self.role = role
        self.team_id = team_id
        self.squad_id = squad_id
        self.is_user_proxy = is_user_proxy
        self.agent_class = agent_class
        self.object_key = id(self)

    def __setstate__(self, state: Any) -> None:
        """Unpickled (``object.__getstate__``'s ``(dict or None, slots)``, or a subclass's
        ``__dict__`` alone): another object, so its own ``object_key``, not the pickled
        one's."""
        attributes, slots = state if isinstance(state, tuple) else (state, None)
        for part in (attributes, slots):
            for name, value in (part or {}).items():
                object.__setattr__(self, name, value)
        self.object_key = id(self)

    # -- identity -------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, ActorAddress):
            return self.agent_id == other.agent_id
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.agent_id)

    # An address is an immutable handle: copying one (a state snapshot deep-copies its
    # fields) must not try to copy the actor behind it.
    def __copy__(self) -> ActorAddress:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ActorAddress:
        return self

    def __repr__(self) -> str:
        state = "alive" if self.is_alive() else self._dead_state()
        return f"<{type(self).__name__} {self.name} {self.agent_id} {state}>"

    def _dead_state(self) -> str:
        return "snapshot"

    # -- behaviour ------------------------------------------------------------------
    def is_alive(self) -> bool:
        """Whether a message delivered here would reach a running actor."""
        return False

    def deliver(self, msg: Any) -> None:
        """Put ``msg`` in the actor's inbox as is (no stamping, no telemetry).

        Framework plumbing: code inside an actor uses ``Akgent.send``; code outside
        uses ``ActorSystem.tell``.
        """
        raise AddressError(
            f"cannot deliver {type(msg).__name__} to {self.name} ({self.agent_id}): this "
            f"address is a deserialized snapshot, not a live actor. Resolve a live address "
            f"with ActorSystem.get_address(agent_id) first."
        )

    def send(self, recipient: ActorAddress, msg: Message) -> None:
        """Send ``msg`` from the actor at this address to ``recipient``.

        Only a live address can send; see :class:`ActorAddressImpl`.
        """
        raise AddressError(
            f"{self.name} ({self.agent_id}) cannot send: a deserialized address is a "
            f"snapshot of an actor, not the actor"
        )

    def snapshot(self) -> ActorAddressProxy:
        """A serializable copy of the metadata that holds no reference to the actor."""
        return ActorAddressProxy(
            agent_id=self.agent_id,
            name=self.name,
            role=self.role,
            team_id=self.team_id,
            squad_id=self.squad_id,
            is_user_proxy=self.is_user_proxy,
            agent_class=self.agent_class,
        )

    # -- serialization --------------------------------------------------------------
    def serialize(self) -> dict[str, Any]:
        """The metadata as JSON-compatible data, with the ``__model__`` marker.

        Built once per address (an address is immutable; every send and every record
        of it is serialized): each call returns a fresh copy of it."""
        try:
            return dict(self._data)
        except AttributeError:
            self._data = self._serialized()
            return dict(self._data)

    def _serialized(self) -> dict[str, Any]:
        return {
            MODEL_MARKER: _ADDRESS_PATH,
            "agent_id": str(self.agent_id),
            "name": self.name,
            "role": self.role,
            "team_id": None if self.team_id is None else str(self.team_id),
            "squad_id": None if self.squad_id is None else str(self.squad_id),
            "is_user_proxy": self.is_user_proxy,
            "agent_class": self.agent_class,
        }

    def __akgentic_serialize__(self) -> dict[str, Any]:
        return self.serialize()

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> ActorAddressProxy:
        """Rebuild a (non-deliverable) address from :meth:`serialize` output."""
        try:
            team_id = data.get("team_id")
            squad_id = data.get("squad_id")
            return ActorAddressProxy(
                agent_id=_uuid(data["agent_id"]),
                name=str(data.get("name", "")),
                role=str(data.get("role", "")),
                team_id=None if team_id is None else _uuid(team_id),
                squad_id=None if squad_id is None else _uuid(squad_id),
                is_user_proxy=bool(data.get("is_user_proxy", False)),
                agent_class=str(data.get("agent_class", "")),
            )
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise ValueError(
                f"not a serialized ActorAddress: {excerpt(data)} ({clip(str(exc))})"
            ) from exc

    @classmethod
    def __akgentic_deserialize__(cls, fields: dict[str, Any]) -> ActorAddressProxy:
        return cls.deserialize(fields)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        def from_data(value: Any) -> ActorAddress:
            if isinstance(value, ActorAddress):
                return value
            if isinstance(value, dict):
                return ActorAddress.deserialize(value)
            raise ValueError(
                f"expected an ActorAddress or its serialized dict, got {excerpt(value)}"
            )

        return core_schema.no_info_plain_validator_function(
            from_data,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda a: a.serialize(), when_used="always"
            ),
        )


def _uuid(value: Any) -> UUID:
    return value if isinstance(value, UUID) else UUID(str(value))


_ADDRESS_PATH = f"{ActorAddress.__module__}.{ActorAddress.__qualname__}"
register_serializable(ActorAddress)


class ActorAddressProxy(ActorAddress):
    """A deserialized address: metadata only, never deliverable."""

    __slots__ = ()


class ActorAddressImpl(ActorAddress):
    """The live address of a running actor.

    It holds the actor's pykka reference and the actor's send method, both weakly, so
    holding an address never keeps a stopped actor in memory; ``address.send(recipient,
    msg)`` goes through the same stamping and telemetry as ``Akgent.send``.
    """

    __slots__ = ("_actor_ref", "_sender", "_start_failure", "_started")

    def __init__(
        self,
        actor_ref: pykka.ActorRef[Any],
        sender: Any,
        **metadata: Any,
    ) -> None:
        super().__init__(**metadata)
        self._actor_ref = actor_ref
        self._sender = weakref.WeakMethod(sender)
        self._started = threading.Event()
        self._start_failure: str | None = None

    def _mark_started(self, failure: str | None) -> None:
        """Called once by the actor when its ``on_start`` has run (``failure``: why it
        raised; the actor has stopped by then)."""
        if failure is not None:
            self._start_failure = failure
        self._started.set()

    @property
    def start_failure(self) -> str | None:
        """Why the actor's ``on_start`` raised (its class and words, one line), or None."""
        return self._start_failure

    def wait_started(self, timeout: float | None) -> None:
        """Return once the actor's ``on_start`` has run, without queueing behind its
        messages; :class:`ActorStartError` naming the cause when it raised (the actor has
        stopped), or when it has not finished within ``timeout`` seconds — at once when
        asked from the actor's own ``on_start``, which would wait for itself."""
        if not self._started.is_set():
            from akgentic.core._proxy import current  # (it imports this module)

            if getattr(current.actor, "actor_ref", None) is self._actor_ref:
                raise ActorStartError(
                    self.name, "its on_start waits for its own start: bind it after on_start"
                )
        if not self._started.wait(timeout):
            raise ActorStartError(
                self.name,
                f"its on_start did not finish within {timeout:g}s: it may wait on a service "
                f"that does not answer, or on another tool actor that waits for it; see the "
                f"log, fix the cause, then start again",
            )
        if self._start_failure is not None:
            raise ActorStartError(self.name, self._start_failure)

    def is_alive(self) -> bool:
        return not self._actor_ref.actor_stopped.is_set()

    def _dead_state(self) -> str:
        return "stopped"

    def deliver(self, msg: Any) -> None:
        try:
            self._actor_ref.tell(msg)
        except pykka.ActorDeadError:
            raise AddressError(
                f"cannot deliver {type(msg).__name__} to {self.name} ({self.agent_id}): the "
                f"actor has stopped. Look the member up again (Orchestrator.get_team_member) "
                f"or hire a new one."
            ) from None

    def send(self, recipient: ActorAddress, msg: Message) -> None:
        """Send ``msg`` from this actor to ``recipient`` (stamped, with telemetry)."""
        sender = self._sender()
        if sender is None or not self.is_alive():
            raise AddressError(f"{self.name} ({self.agent_id}) cannot send: the actor has stopped")
        sender(recipient, msg)

    def request_stop(self) -> None:
        """Ask the actor to stop after the messages already queued; never blocks or raises."""
        with contextlib.suppress(pykka.ActorDeadError):
            self._actor_ref.stop(block=False)

    def wait_stopped(self, timeout: float | None) -> bool:
        """Block until the actor has stopped; False when ``timeout`` ran out first."""
        return self._actor_ref.actor_stopped.wait(timeout)

    @property
    def actor_ref(self) -> pykka.ActorRef[Any]:
        """The pykka reference (framework plumbing; application code never needs it)."""
        return self._actor_ref
