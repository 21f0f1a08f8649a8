"""Method-call syntax over messages: ``proxy_ask`` and ``proxy_tell``.

A proxy turns ``proxy.method(*args)`` into a message the target actor handles on its
own thread, one at a time like any other message. An *ask* proxy blocks for the
return value (and re-raises the target's exception in the caller); a *tell* proxy
returns None at once and never blocks — a failure is reported by the target as an
``ErrorMessage`` on the team stream, and the target keeps running.

Proxies are cheap objects over an address; they never introspect the actor.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FunctionType
from typing import Any, NamedTuple

import pykka

from akgentic.core.address import ActorAddress, ActorAddressImpl, AddressError

__all__ = [
    "AskProxy",
    "AskTimeoutError",
    "DeadlockError",
    "MethodCall",
    "TellProxy",
    "acting_for",
    "current",
    "current_actor",
]


class DeadlockError(RuntimeError):
    """An actor asked itself and would wait for ever for its own answer."""


class AskTimeoutError(TimeoutError):
    """An ask got no answer in time (the work may still be running on the target)."""


class MethodCall(NamedTuple):
    """The message a proxy sends: call ``name`` with these arguments."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    reply: bool


class AttributeGet(NamedTuple):
    """The message an ask proxy sends to read a non-callable attribute."""

    name: str


class _Current(threading.local):
    actor: Any = None


current = _Current()
"""Per-thread: the actor whose thread this is (None outside actors)."""


def current_actor() -> Any:
    """The actor whose thread is running this code, or None outside any actor."""
    return current.actor


@contextmanager
def acting_for(actor: Any) -> Iterator[None]:
    """Run the block on this thread as ``actor``'s own, then give the thread its own back.

    For a call an actor's thread hands to another thread and waits for (a tool call held
    to a time bound): inside it, an ask of ``actor`` is still a ``DeadlockError`` and a
    send still carries the message being handled, as on the actor's thread. ``None``
    leaves the thread as it is.
    """
    previous = current.actor
    if actor is not None:
        current.actor = actor
    try:
        yield
    finally:
        current.actor = previous


_kind_cache: dict[tuple[type, str], bool | None] = {}


def _is_method(cls: type, name: str) -> bool | None:
    """True for a method, False for another attribute, None when absent."""
    key = (cls, name)
    try:
        return _kind_cache[key]
    except KeyError:
        pass
    try:
        attr = inspect.getattr_static(cls, name)
    except AttributeError:
        kind: bool | None = None
    else:
        kind = isinstance(attr, FunctionType | classmethod | staticmethod)
    _kind_cache[key] = kind
    return kind


def _live(address: ActorAddress, what: str) -> ActorAddressImpl:
    if not isinstance(address, ActorAddressImpl):
        raise AddressError(
            f"cannot {what} {address.name} ({address.agent_id}): a deserialized address "
            f"is a snapshot, not an actor. Resolve it with ActorSystem.get_address(agent_id)."
        )
    if not address.is_alive():
        raise AddressError(
            f"cannot {what} {address.name} ({address.agent_id}): the actor has stopped"
        )
    return address


def _check_type(address: ActorAddressImpl, expected: type) -> type:
    actual: type = address.actor_ref.actor_class
    if not issubclass(actual, expected):
        raise TypeError(
            f"{address.name} is a {actual.__name__}, not a {expected.__name__}: ask for "
            f"the type the actor really has"
        )
    return actual


class _ProxyBase:
    __slots__ = ("_actual", "_address")

    def __init__(self, address: ActorAddress, expected: type, what: str) -> None:
        live = _live(address, what)
        self._address = live
        self._actual = _check_type(live, expected)

    def _kind(self, name: str) -> bool:
        if name.startswith("_"):
            raise AttributeError(
                f"{name!r} is private to {self._actual.__name__} and not reachable through a proxy"
            )
        kind = _is_method(self._actual, name)
        if kind is None:
            raise AttributeError(f"{self._actual.__name__} has no attribute {name!r}")
        return kind

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._address.name}>"


class AskProxy(_ProxyBase):
    """Calls block until the target has run the method and return its value."""

    __slots__ = ("_timeout",)

    def __init__(self, address: ActorAddress, expected: type, timeout: float | None) -> None:
        super().__init__(address, expected, "ask")
        self._timeout = timeout
        me = current.actor
        if me is not None and me.actor_ref is self._address.actor_ref:
            raise DeadlockError(
                f"{self._address.name} asked itself through proxy_ask: the answer would "
                f"wait for the very thread that is asking. Call the method directly on "
                f"self, or use proxy_tell."
            )

    def _ask(self, message: Any, label: str) -> Any:
        address = self._address
        try:
            return address.actor_ref.ask(message, timeout=self._timeout)
        except pykka.Timeout:
            raise AskTimeoutError(
                f"{address.name} did not answer {label} within {self._timeout}s"
            ) from None
        except pykka.ActorDeadError:
            raise AddressError(
                f"{address.name} ({address.agent_id}) stopped before answering {label}"
            ) from None

    def __getattr__(self, name: str) -> Any:
        if self._kind(name):

            def call(*args: Any, **kwargs: Any) -> Any:
                return self._ask(MethodCall(name, args, kwargs, True), f"{name}()")

            call.__name__ = name
            return call
        return self._ask(AttributeGet(name), name)


class TellProxy(_ProxyBase):
    """Calls return None at once; the target runs them in order, never blocking you."""

    __slots__ = ()

    def __init__(self, address: ActorAddress, expected: type) -> None:
        super().__init__(address, expected, "tell")

    def __getattr__(self, name: str) -> Any:
        if not self._kind(name):
            raise AttributeError(
                f"{name!r} is not a method: a tell proxy cannot read attributes, use proxy_ask"
            )
        address = self._address

        def call(*args: Any, **kwargs: Any) -> None:
            address.deliver(MethodCall(name, args, kwargs, False))

        call.__name__ = name
        return call
