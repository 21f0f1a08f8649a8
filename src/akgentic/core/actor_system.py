"""ActorSystem: the only door into the actor world from outside it.

Tests, web handlers and the CLI create actors, send messages and wait for replies
through an ``ActorSystem``; code inside actors uses the ``Akgent`` methods instead.
Replies to messages sent from outside arrive in an inbox: the system's own (read with
:meth:`ActorSystem.listen`) or a private one (:meth:`ActorSystem.private`), so two
callers never read each other's replies.
"""

from __future__ import annotations

import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar, cast
from uuid import UUID, uuid4

from akgentic.core._proxy import AskProxy, DeadlockError, TellProxy, current
from akgentic.core._telemetry import NULL_CHANNEL, TeamChannel
from akgentic.core.address import ActorAddress, ActorAddressImpl, AddressError
from akgentic.core.agent import Akgent, check_actor_class, spawn
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import Message

__all__ = ["EXTERNAL_ROLE", "ActorSystem", "ExternalContext", "InboxAddress", "left_behind"]

EXTERNAL_ROLE = "External"
"""The role of an :class:`InboxAddress`: a caller outside the actor world (``@System``, a
private inbox). It takes no turn: a message to it is never received by a member."""

A = TypeVar("A")


class InboxAddress(ActorAddress):
    """The address of a caller outside the actor world: messages to it land in a queue."""

    __slots__ = ("_context",)

    def __init__(self, context: ExternalContext, **metadata: Any) -> None:
        super().__init__(**metadata)
        self._context = context

    def is_alive(self) -> bool:
        return not self._context.closed

    def _dead_state(self) -> str:
        return "closed"

    def deliver(self, msg: Any) -> None:
        if self._context.closed:
            raise AddressError(
                f"cannot deliver {type(msg).__name__} to {self.name}: that private inbox "
                f"was closed when its `with system.private()` block ended"
            )
        self._context.inbox.put(msg)


_ALIVE_CHECK = 0.1
"""How often (seconds) a waiting ask checks that its recipient is still alive."""


class ExternalContext:
    """A reply inbox with an address: what ``tell`` stamps as the sender."""

    def __init__(self, system: ActorSystem, name: str) -> None:
        self.system = system
        self.inbox: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self.closed = False
        self.address = InboxAddress(self, agent_id=uuid4(), name=name, role=EXTERNAL_ROLE)
        system._externals[self.address.agent_id] = self.address

    def close(self) -> None:
        """Stop receiving: later deliveries to this inbox raise ``AddressError``."""
        self.closed = True
        self.system._externals.pop(self.address.agent_id, None)

    def tell(self, addr: ActorAddress, msg: Message) -> None:
        """Send ``msg`` to ``addr``; replies come back to this context's inbox."""
        msg.init(self.address, addr.team_id, None)
        msg.__dict__["recipient"] = addr
        self.system._channel_for(addr.team_id).report_and_deliver(self.address, msg, addr)

    def listen(self, timeout: float | None = None) -> Message | None:
        """The next message sent to this context, or None after ``timeout`` seconds."""
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            return None

    def ask(self, addr: ActorAddress, msg: Message, timeout: float | None = None) -> Message:
        """Send ``msg`` and wait for the first message sent back.

        Raises ``TimeoutError`` when nothing comes back within ``timeout`` seconds, and
        ``AddressError`` as soon as ``addr`` has stopped without replying (its ``on_start``
        failed, its handler stopped it): an ask never waits out its timeout — or, with
        none, for ever — on an actor that can no longer answer.
        """
        me = current.actor
        if me is not None and isinstance(addr, ActorAddressImpl) and me.actor_ref is addr.actor_ref:
            raise DeadlockError(
                f"{addr.name} asked itself through the ActorSystem: the reply would wait "
                f"for the very thread that is asking"
            )
        self.tell(addr, msg)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _ALIVE_CHECK if deadline is None else deadline - time.monotonic()
            reply = self.listen(max(0.0, min(left, _ALIVE_CHECK)))
            if reply is not None:
                return reply
            if not addr.is_alive():
                reply = self.listen(0)  # a reply sent just before it stopped
                if reply is not None:
                    return reply
                failure = getattr(addr, "start_failure", None)
                why = f": it could not start ({failure})" if failure else ""
                raise AddressError(
                    f"{addr.name} stopped before replying to {type(msg).__name__}{why}"
                )
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(
                    f"no reply from {addr.name} to {type(msg).__name__} within {timeout}s"
                )


class ActorSystem:
    """Creates actors, talks to them from outside, and shuts them all down."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._actors: dict[UUID, tuple[ActorAddressImpl, weakref.ref[Akgent[Any, Any]]]] = {}
        self._teams: dict[UUID, tuple[ActorAddressImpl, TeamChannel]] = {}
        self._externals: dict[UUID, InboxAddress] = {}
        self._default = ExternalContext(self, "@System")

    # -- registry (called by actors) ----------------------------------------------------
    def _register(self, address: ActorAddressImpl, actor: weakref.ref[Akgent[Any, Any]]) -> None:
        with self._lock:
            self._actors[address.agent_id] = (address, actor)

    def _unregister(self, address: ActorAddressImpl) -> None:
        with self._lock:
            self._actors.pop(address.agent_id, None)
            team = self._teams.get(address.team_id) if address.team_id else None
            if team is not None and team[0] == address:
                del self._teams[address.team_id]  # type: ignore[arg-type]

    def _channel_for(self, team_id: UUID | None) -> TeamChannel:
        team = self._teams.get(team_id) if team_id is not None else None
        return team[1] if team is not None else NULL_CHANNEL

    def _addresses_in_team(self, team_id: UUID | None) -> list[ActorAddressImpl]:
        with self._lock:
            return [a for a, _ in self._actors.values() if a.team_id == team_id]

    def _actor_of(self, agent_id: UUID) -> Akgent[Any, Any] | None:
        """The running actor object (framework plumbing: read only what never changes)."""
        entry = self._actors.get(agent_id)
        return entry[1]() if entry is not None else None

    # -- creating -------------------------------------------------------------------------
    def createActor(
        self,
        actor_class: type[Akgent[Any, Any]],
        config: BaseConfig | None = None,
        team_id: UUID | None = None,
        agent_id: UUID | None = None,
        restoring: bool = False,
        *,
        state: BaseState | None = None,
    ) -> ActorAddress:
        """Create an actor.

        An ``Orchestrator`` starts a team (``team_id`` defaults to a new id; one
        orchestrator per team). Any other actor joins the team of ``team_id`` and reports
        to its orchestrator; without a team it runs alone and reports to nobody.
        ``state`` seeds the actor's state (restore); ``restoring`` tells it so.
        """
        from akgentic.core.orchestrator import Orchestrator

        check_actor_class(actor_class)
        if issubclass(actor_class, Orchestrator):
            team_id = team_id or uuid4()
            with self._lock:
                existing = self._teams.get(team_id)
                if existing is not None and existing[0].is_alive():
                    raise ValueError(f"team {team_id} already has a running orchestrator")
                channel = TeamChannel()
            address = spawn(
                self,
                actor_class,
                config=config,
                agent_id=agent_id,
                team_id=team_id,
                orchestrator=None,
                parent=None,
                channel=channel,
                restoring=restoring,
                state=state,
            )
            with self._lock:
                self._teams[team_id] = (cast(ActorAddressImpl, address), channel)
            return address
        team = self._teams.get(team_id) if team_id is not None else None
        return spawn(
            self,
            actor_class,
            config=config,
            agent_id=agent_id,
            team_id=team_id,
            orchestrator=team[0] if team is not None else None,
            parent=None,
            channel=team[1] if team is not None else NULL_CHANNEL,
            restoring=restoring,
            state=state,
        )

    # -- talking --------------------------------------------------------------------------
    def tell(self, addr: ActorAddress, msg: Message) -> None:
        """Send ``msg``; replies arrive in the system inbox (:meth:`listen`)."""
        self._default.tell(addr, msg)

    def ask(self, addr: ActorAddress, msg: Message, timeout: float | None = None) -> Message:
        """Send ``msg`` from a private inbox and return the first message sent back."""
        with self.private() as context:
            return context.ask(addr, msg, timeout)

    def listen(self, timeout: float | None = None) -> Message | None:
        """The next message sent back to the system inbox, or None after ``timeout``."""
        return self._default.listen(timeout)

    @contextmanager
    def private(self, name: str = "@External") -> Iterator[ExternalContext]:
        """A context with its own reply inbox, closed when the block ends."""
        context = ExternalContext(self, name)
        try:
            yield context
        finally:
            context.close()

    def proxy_ask(self, addr: ActorAddress, actor_type: type[A], timeout: float | None = None) -> A:
        """A proxy whose method calls block for the actor's return value."""
        return cast(A, AskProxy(addr, actor_type, timeout))

    def proxy_tell(self, addr: ActorAddress, actor_type: type[A]) -> A:
        """A proxy whose method calls return None at once."""
        return cast(A, TellProxy(addr, actor_type))

    # -- looking up -------------------------------------------------------------------------
    def get_address(self, agent_id: UUID) -> ActorAddress | None:
        """The live address of a running actor (or open inbox) of this system, or None."""
        entry = self._actors.get(agent_id)
        if entry is not None:
            return entry[0]
        return self._externals.get(agent_id)

    def get_actor(self, addr: ActorAddress) -> Akgent[Any, Any]:
        """The actor object behind ``addr`` (tests and debugging only: not thread-safe).

        Works for snapshots too (looked up by ``agent_id``). Raises ``LookupError`` when
        the actor is not running in this system.
        """
        entry = self._actors.get(addr.agent_id)
        actor = entry[1]() if entry is not None else None
        if actor is None:
            raise LookupError(f"{addr.name} ({addr.agent_id}) is not running in this system")
        return actor

    def parent_of(self, addr: ActorAddress) -> ActorAddress | None:
        """The actor that created the one behind ``addr`` (None: created by the system, or
        not running here). Fixed at creation and read without asking the actor, so it never
        waits on a busy one."""
        entry = self._actors.get(addr.agent_id)
        actor = entry[1]() if entry is not None else None
        return actor.parent if actor is not None else None

    def get_orchestrator(self, team_id: UUID) -> ActorAddress | None:
        """The address of the running orchestrator of ``team_id``, or None."""
        team = self._teams.get(team_id)
        return team[0] if team is not None else None

    def members_stopped(self, team_id: UUID) -> bool:
        """Whether ``team_id``'s graceful stop is past its regular members — all stopped,
        no turn runs any more (``TeamChannel.members_stopped``) — or the team runs here no
        more. Read without a lock or asking an actor: a signal handler may call it."""
        team = self._teams.get(team_id)
        return team is None or team[1].members_stopped

    def wait_started(self, addr: ActorAddress, timeout: float | None = None) -> None:
        """Block until the actor behind ``addr`` has run its ``on_start``, without queueing
        behind its messages: ``ActorStartError`` naming the cause when it raised there (it
        has stopped) or did not finish within ``timeout``; ``AddressError`` when no such
        actor runs in this process."""
        live = addr if isinstance(addr, ActorAddressImpl) else self.get_address(addr.agent_id)
        if not isinstance(live, ActorAddressImpl):
            raise AddressError(f"{addr.name} is not an actor running in this process")
        live.wait_started(timeout)

    # -- stopping ---------------------------------------------------------------------------
    def wait_stopped(self, addr: ActorAddress, timeout: float | None = None) -> bool:
        """Block until the actor behind ``addr`` has stopped; False on timeout."""
        if not isinstance(addr, ActorAddressImpl):
            return self.get_address(addr.agent_id) is None
        return addr.wait_stopped(timeout)

    def shutdown(self, timeout: float = 10.0) -> list[ActorAddress]:
        """Stop every team gracefully (within ``timeout``), then every remaining actor
        (within ``timeout`` too, all of them together); returns the actors still running
        then, which is never waited for again.

        An actor still running is inside a call that has not returned (a tool call that
        never ends): nothing stops it but its process's end, which its thread (a daemon)
        does not hold up. A caller that has already given its teams their grace passes a
        short ``timeout`` (waiting longer only delays the exit), and may say who was left.
        """
        from akgentic.core.orchestrator import Orchestrator

        with self._lock:
            orchestrators = [entry[0] for entry in self._teams.values()]
        for orchestrator in orchestrators:
            with suppress(AddressError):
                self.proxy_tell(orchestrator, Orchestrator).stop(timeout)
        for orchestrator in orchestrators:
            orchestrator.wait_stopped(timeout + 1.0)
        with self._lock:
            remaining = [entry[0] for entry in self._actors.values()]
        for address in remaining:
            address.request_stop()
        deadline = time.monotonic() + timeout
        for address in remaining:
            address.wait_stopped(max(0.0, deadline - time.monotonic()))
        self._default.close()
        return [address for address in remaining if address.is_alive()]


def left_behind(left: Sequence[ActorAddress], name: Callable[[str], str] = str) -> str:
    """What a process says of the actors :meth:`ActorSystem.shutdown` left running (each
    inside a call that has not returned) as it exits without them: one line, their
    names through ``name`` (the CLI escapes them)."""
    names = ", ".join(name(address.name) for address in left)
    verb, them = ("is", "it") if len(left) == 1 else ("are", "them")
    return (
        f"{names} {verb} stuck in a call that has not returned (a tool call?); "
        f"exiting without waiting for {them}"
    )
