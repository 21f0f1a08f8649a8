"""Akgent: the base of every agent and tool actor.

An ``Akgent`` is a pykka ``ThreadingActor`` with a typed config and state, a place in
a team, and a message protocol. Application code never touches pykka.

The contract:

- Created only through ``createActor`` (on the ``ActorSystem`` or on another actor);
  initialise in ``on_start()``, which runs on the actor's own thread, never in
  ``__init__``.
- A message of class ``Foo`` goes to ``receiveMsg_Foo(self, msg, sender)``; the lookup
  walks the message's class hierarchy, so a handler for a base class catches
  subclasses. The lookup is cached per class: dispatch costs one dict read.
- A handler that raises does not kill the actor: the failure is reported on the team
  stream as an ``ErrorMessage`` (a ``WarningMessage`` for ``WarningError``) and the
  next message is processed. A message nobody handles is reported the same way.
- Every send, receipt and completion is reported to the team's orchestrator through
  the team's telemetry channel (see ``_telemetry``): no message, no sleep, no copy on
  the hot path.
- ``stop()`` stops the children first, then the actor itself.
"""

from __future__ import annotations

import copy
import logging
import queue
import time
import traceback
import typing
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar, cast
from uuid import UUID, uuid4

import pykka
from pydantic import ValidationError

from akgentic.core._proxy import AskProxy, AttributeGet, MethodCall, TellProxy, current
from akgentic.core._telemetry import (
    KIND_PROCESSED,
    KIND_RECEIVED,
    KIND_REPORT,
    KIND_SENT,
    NULL_CHANNEL,
    LaterEvent,
    TeamChannel,
)
from akgentic.core.address import (
    ActorAddress,
    ActorAddressImpl,
    AddressError,
    start_failure_text,
)
from akgentic.core.agent_config import BaseConfig
from akgentic.core.agent_state import BaseState
from akgentic.core.messages.message import CancelMessage, Message, StopRecursively
from akgentic.core.messages.orchestrator import (
    ErrorMessage,
    EventMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TelemetryMessage,
    WarningMessage,
)
from akgentic.core.serialization import SerializableModel, model_path

if typing.TYPE_CHECKING:
    from akgentic.core.actor_system import ActorSystem

__all__ = [
    "LEFT_BEHIND",
    "ON_STREAM",
    "Akgent",
    "GraceRanOut",
    "WarningError",
    "actor_class_for",
]

logger = logging.getLogger("akgentic.core")

ON_STREAM = "akgentic_on_stream"
"""Set on a log record (``extra={ON_STREAM: True}``) whose news is also on the team stream
as an ``ErrorMessage``: a program that shows the stream (the CLI) may skip the line."""

LEFT_BEHIND = "akgentic_left_behind"
"""Set on the log record of a team whose stop grace ran out with members still running, to
a :class:`GraceRanOut`: a program may say it in its own format (the CLI's ``warning:``
line, its names escaped), and not again when it exits without them."""


_INSIDE_UNKNOWN = "a tool call that never ends?"
"""What a member left running was inside when it did not say (``Akgent.busy_with``)."""


class GraceRanOut(NamedTuple):
    """A team's stop grace ran out with ``names`` still running (asked to stop, inside a
    call that has not returned): the team stopped without them. ``inside`` says, name by
    name, what each was inside when it could tell (``Akgent.busy_with``)."""

    grace: float
    names: tuple[str, ...]
    inside: tuple[str | None, ...] = ()

    def says(self, name: Callable[[str], str] = str) -> str:
        """``the grace of 30s ran out with @Worker still running (in a tool call that has not
        ended); the team stopped without it``, each name through ``name`` (the CLI
        escapes them)."""
        inside = [
            self.inside[i] if i < len(self.inside) and self.inside[i] else _INSIDE_UNKNOWN
            for i in range(len(self.names))
        ]
        them = "it" if len(self.names) == 1 else "them"
        if len(set(inside)) == 1:
            names = ", ".join(name(n) for n in self.names)
            still = f"{names} still running (in {inside[0]})"
        else:
            each = ", ".join(f"{name(n)} (in {i})" for n, i in zip(self.names, inside, strict=True))
            still = f"{each} still running"
        return f"the grace of {self.grace:g}s ran out with {still}; the team stopped without {them}"


ConfigType = TypeVar("ConfigType", bound=BaseConfig)
StateType = TypeVar("StateType", bound=BaseState)
A = TypeVar("A")

_actor_classes: dict[str, type[Akgent[Any, Any]]] = {}


def actor_class_for(path: str) -> type[Akgent[Any, Any]]:
    """The actor class defined in this process under ``path`` (never imports).

    Raises ``LookupError`` naming the path when no such class has been defined.
    """
    try:
        return _actor_classes[path]
    except KeyError:
        raise LookupError(
            f"no Akgent subclass named {path!r} is defined in this process: import the "
            f"module that defines it first"
        ) from None


class WarningError(Exception):
    """Raise from a handler for a recoverable problem: reported as a warning, not an error."""


@dataclass(slots=True)
class SpawnSpec:
    """Everything the framework hands a new actor (``createActor`` builds it)."""

    system: ActorSystem
    agent_id: UUID
    config: BaseConfig
    team_id: UUID | None
    orchestrator: ActorAddress | None
    parent: ActorAddress | None
    channel: TeamChannel
    restoring: bool = False
    state: BaseState | None = None
    squad_id: UUID | None = None
    address: ActorAddressImpl | None = None
    """Filled in by the actor's constructor."""


def _generic_class(cls: type, base: type) -> type | None:
    """The first concrete ``base`` subclass among the generic arguments of ``cls``'s bases."""
    for klass in cls.__mro__:
        for orig in klass.__dict__.get("__orig_bases__", ()):
            for arg in typing.get_args(orig):
                if isinstance(arg, type) and issubclass(arg, base):
                    return arg
    return None


class Akgent(pykka.ThreadingActor, Generic[ConfigType, StateType]):
    """Base class of agents and tool actors; see the module docstring for the contract."""

    use_daemon_thread = True

    stop_timeout: ClassVar[float] = 10.0
    """How long ``stop()`` waits for its children before giving up on them, when its
    team is not stopping (a member fired, an actor stopped alone); in a team's graceful
    stop it waits as long as the team's grace lasts (``TeamChannel.stop_deadline``)."""

    config_class: ClassVar[type[BaseConfig]] = BaseConfig
    """Resolved from the ``ConfigType`` argument; the config built when none is given."""

    upgrades_base_config: ClassVar[bool] = False
    """True: a plain ``BaseConfig`` given to ``createActor`` is upgraded to
    ``config_class`` (its fields kept, the others at their defaults) instead of refused."""

    state_class: ClassVar[type[BaseState]] = BaseState
    """Resolved from the ``StateType`` argument; the state built before ``on_start``."""

    transient: ClassVar[bool] = False
    """A short-lived worker (one job, then it stops). A team's teardown stops a tool actor
    only once the transient workers that report to it (:meth:`reports_to`) have finished,
    so their results land — and only those: it never waits for a worker it has nothing
    to do with."""

    _is_user_proxy: ClassVar[bool] = False

    @staticmethod
    def _create_actor_inbox() -> Any:
        """The inbox is a ``queue.SimpleQueue``: its put and get are C calls, where pykka's
        default ``queue.Queue`` takes a Python lock and a condition on every message (and a
        new lock each time the actor waits): about 2-4 µs of the sender's and the
        receiver's time per message (``bench/actors.py``). An actor that must look into its
        waiting messages (``BaseAgent``'s mailbox) creates an inspectable one instead."""
        return queue.SimpleQueue()

    _handlers: ClassVar[dict[type, Callable[..., Any] | None]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._handlers = {}
        # A class body that names its config/state class wins over the generic arguments.
        config_class = _generic_class(cls, BaseConfig)
        if config_class is not None and "config_class" not in cls.__dict__:
            cls.config_class = config_class
        state_class = _generic_class(cls, BaseState)
        if state_class is not None and "state_class" not in cls.__dict__:
            cls.state_class = state_class
        _actor_classes[model_path(cls)] = cls

    # -- construction (framework only) ----------------------------------------------
    def __init__(self, spec: SpawnSpec) -> None:
        super().__init__()
        self._system = spec.system
        self._config = cast(ConfigType, spec.config)
        self._team_id = spec.team_id
        self._parent = spec.parent
        self._channel = spec.channel
        self._restoring = spec.restoring
        self._children: dict[UUID, ActorAddressImpl] = {}
        self._current_message: Message | None = None
        self._address = ActorAddressImpl(
            self.actor_ref,
            self._send_as_self,
            agent_id=spec.agent_id,
            name=spec.config.name,
            role=spec.config.role,
            team_id=spec.team_id,
            squad_id=spec.squad_id,
            is_user_proxy=self._is_user_proxy,
            agent_class=model_path(type(self)),
        )
        self._orchestrator = spec.orchestrator if spec.orchestrator is not None else None
        self._state: StateType | None = None
        initial = spec.state
        if initial is None:
            try:
                initial = self.state_class()
            except Exception:  # a state with required fields is set by on_start
                initial = None
        if initial is not None:
            self.state = cast(StateType, initial)
        spec.address = self._address
        spec.system._register(self._address, weakref.ref(self))
        # Announced here, in the creator's thread, so that START precedes anything the
        # actor reports from on_start and the roster has it before createActor returns.
        self._report(StartMessage(config=spec.config, parent=spec.parent))
        self._channel.team_changed()

    # -- identity -------------------------------------------------------------------
    @property
    def myAddress(self) -> ActorAddress:
        """This actor's live address."""
        return self._address

    @property
    def agent_id(self) -> UUID:
        return self._address.agent_id

    @property
    def config(self) -> ConfigType:
        """This instance's own copy of its configuration."""
        return self._config

    @property
    def team_id(self) -> UUID | None:
        return self._team_id

    @property
    def orchestrator(self) -> ActorAddress | None:
        """The address of the team's orchestrator (None outside a team)."""
        return self._orchestrator

    @property
    def team_revision(self) -> int:
        """Moves whenever the team's members or its role catalog may have changed (0,
        forever, outside a team). Read before a query of the orchestrator, it says when
        the answer can be reused: while the revision is the same, asking again would
        answer the same (TeamTool's roster and catalog, read every turn, ask only then)."""
        return self._channel.revision

    @property
    def parent(self) -> ActorAddress | None:
        """The actor that created this one (None when created from the system)."""
        return self._parent

    @property
    def restoring(self) -> bool:
        """True when this actor was re-created from persisted history."""
        return self._restoring

    @property
    def state(self) -> StateType:
        """The typed state. Assigning a new state attaches this actor as its observer."""
        if self._state is None:
            raise RuntimeError(
                f"{type(self).__name__} has no state yet: assign self.state in on_start "
                f"(its state class {self.state_class.__name__} needs arguments)"
            )
        return self._state

    @state.setter
    def state(self, value: StateType) -> None:
        value.observer(self)
        self._state = value

    @property
    def system(self) -> ActorSystem:
        return self._system

    def busy_with(self) -> str | None:
        """What this actor is inside now, when it can tell (``"a model request that has not
        been answered"``); None: it does not say. Read from another thread — a team whose stop grace
        ran out names it — so it reads a field, never waits."""
        return None

    def reports_to(self) -> list[ActorAddress]:
        """Where a transient worker's result goes: its parent, by default.

        A worker whose result goes elsewhere too (an embedding worker writes to the
        team's ``#VectorStore``) says so; the teardown keeps each of these tool actors
        running until the worker has finished. Read from the teardown's thread: answer
        from what never changes after construction (the parent, the config).
        """
        return [self._parent] if self._parent is not None else []

    # -- lifecycle hooks --------------------------------------------------------------
    def on_start(self) -> None:
        """Initialise here (on the actor's thread). The default does nothing."""

    def _actor_loop_setup(self) -> None:
        """Run ``on_start``; if it raises, stop (reported, unregistered) before a waiter
        of :meth:`ActorAddressImpl.wait_started` gets why.

        A ``BaseException`` that is not an ``Exception`` (``SystemExit`` from a library
        that parses its arguments, ``KeyboardInterrupt``) is handled the same way: this
        actor stops and nothing else does. A tool that exits while it starts fails its
        team's create or resume; it must not stop every other team in the process (a
        server's). It is not raised on: out of here it would end the thread before pykka's
        loop answers the asks already queued, which would wait out their timeouts.
        """
        current.actor = self
        failure: str | None = "its on_start failed"  # unless it returns (set when it raises)
        try:
            self.on_start()
            failure = None
        except BaseException as exc:
            failure = start_failure_text(exc)
            self._report_failure(exc, None, "on_start failed; the actor is stopping")
            self._stop()
        finally:  # once stopped, if it failed: a waiter finds nothing of it left running
            self._address._mark_started(failure)

    def _stop(self) -> None:
        # pykka's order is unregister, mark stopped, on_stop. Ours reports the stop
        # before marking it, so whoever waits for the stopped flag (the orchestrator's
        # teardown) finds the StopMessage already queued on the team stream.
        self._stop_children()
        try:
            self.on_stop()
        except Exception as exc:
            self._report_failure(exc, None, "on_stop failed")
        self._report(StopMessage())
        self._channel.team_changed()
        self._before_stopped()
        self._system._unregister(self._address)
        pykka.ActorRegistry.unregister(self.actor_ref)
        self.actor_stopped.set()

    def _before_stopped(self) -> None:
        """Last words, after the StopMessage and before anyone sees the actor stopped."""

    def _stop_children(self) -> None:
        """Stop the children and wait for them: within the team's grace when the team is
        stopping — whose end the team reports, naming who was still running — else
        within :attr:`stop_timeout`, saying which child it went on without."""
        children = [c for c in self._children.values() if c.is_alive()]
        for child in children:
            child.request_stop()
        team_deadline = self._channel.stop_deadline
        deadline = time.monotonic() + self.stop_timeout if team_deadline is None else team_deadline
        for child in children:
            stopped = child.wait_stopped(max(0.0, deadline - time.monotonic()))
            if not stopped and team_deadline is None:
                logger.warning(
                    "%s: child %s did not stop within %ss; going on without it",
                    self._address.name,
                    child.name,
                    self.stop_timeout,
                )
        self._children.clear()

    # -- messages ---------------------------------------------------------------------
    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Message):
            self._handle_message(message)
            return None
        if type(message) is MethodCall:
            return self._handle_call(message)
        if type(message) is AttributeGet:
            return getattr(self, message.name)
        self._report(
            WarningMessage(
                content=f"{self._address.name} received a {type(message).__name__}, which "
                f"is not a Message: send akgentic.core.Message subclasses",
            )
        )
        return None

    def _handle_message(self, msg: Message) -> None:
        channel = self._channel
        address = self._address
        msg_id = msg.id
        channel.receive(address, msg_id)
        handler = self._handler_for(type(msg))
        previous = self._current_message
        self._current_message = msg
        try:
            if handler is None:
                self._report_unhandled(msg)
            else:
                handler(self, msg, msg.sender)
        except WarningError as exc:
            self._report(WarningMessage(content=str(exc), current_message=msg))
        except Exception as exc:
            self._report_failure(exc, msg, f"handler for {type(msg).__name__} raised")
        finally:
            self._current_message = previous
            channel.processed(address, msg_id)

    def _handle_call(self, call: MethodCall) -> Any:
        method = getattr(self, call.name)
        if call.reply:
            return method(*call.args, **call.kwargs)
        try:
            method(*call.args, **call.kwargs)
        except WarningError as exc:
            self._report(WarningMessage(content=str(exc)))
        except Exception as exc:
            self._report_failure(exc, None, f"{call.name}() called through proxy_tell raised")
        return None

    @classmethod
    def _handler_for(cls, msg_type: type) -> Callable[..., Any] | None:
        handlers = cls._handlers
        try:
            return handlers[msg_type]
        except KeyError:
            pass
        found: Callable[..., Any] | None = None
        for klass in msg_type.__mro__:
            found = getattr(cls, f"receiveMsg_{klass.__name__}", None)
            if found is not None:
                break
        handlers[msg_type] = found
        return found

    def receiveMsg_StopRecursively(self, msg: StopRecursively, sender: ActorAddress | None) -> None:
        """Stop this actor, its children first."""
        self.stop()

    def receiveMsg_CancelMessage(self, msg: CancelMessage, sender: ActorAddress | None) -> None:
        """No run to cancel on a plain actor: nothing to do."""

    # -- sending ----------------------------------------------------------------------
    def send(self, recipient: ActorAddress, msg: Message) -> None:
        """Stamp ``msg`` (sender, team, parent), report it, and deliver it.

        Raises ``AddressError`` when ``recipient`` is stopped or a deserialized snapshot.
        """
        self._stamp(recipient, msg)
        self._channel.report_and_deliver(self._address, msg, recipient)

    def _stamp(self, recipient: ActorAddress, msg: Message) -> None:
        msg.init(self._address, self._team_id, self._current_message)
        msg.__dict__["recipient"] = recipient

    def send_or_record(self, recipient: ActorAddress, msg: Message) -> bool:
        """``send``, except that a ``recipient`` that has stopped does not lose ``msg``.

        A reply must not vanish because its recipient stopped first — a team's graceful
        stop ends members that have nothing left to do while others finish their turn.
        Undeliverable, ``msg`` is recorded on the team stream all the same (a
        ``SentMessage`` that is never received): a client sees it, and a restore of the
        team delivers it to the restored member. True when delivered now.
        """
        self._stamp(recipient, msg)
        self._channel.emit(KIND_SENT, self._address, msg, recipient)  # before its receipt
        try:
            recipient.deliver(msg)
        except AddressError:
            return False
        return True

    def _send_as_self(self, recipient: ActorAddress, msg: Message) -> None:
        """``myAddress.send``: a send from another thread carries no parent."""
        if current.actor is self:
            self.send(recipient, msg)
            return
        msg.init(self._address, self._team_id, None)
        msg.__dict__["recipient"] = recipient
        self._channel.report_and_deliver(self._address, msg, recipient)

    def createActor(
        self,
        actor_class: type[Akgent[Any, Any]],
        agent_id: UUID | None = None,
        config: BaseConfig | None = None,
        *,
        restoring: bool = False,
        state: BaseState | None = None,
    ) -> ActorAddress:
        """Create a child that inherits this actor's team, orchestrator and system."""
        if len(self._children) >= 32:
            self._children = {k: v for k, v in self._children.items() if v.is_alive()}
        address = spawn(
            self._system,
            actor_class,
            config=config,
            agent_id=agent_id,
            team_id=self._team_id,
            orchestrator=self._orchestrator,
            parent=self._address,
            channel=self._channel,
            restoring=restoring,
            state=state,
        )
        self._children[address.agent_id] = cast(ActorAddressImpl, address)
        return address

    def get_children(self) -> list[ActorAddress]:
        """The live children this actor created."""
        return [c for c in self._children.values() if c.is_alive()]

    def proxy_ask(self, addr: ActorAddress, actor_type: type[A], timeout: float | None = None) -> A:
        """A proxy whose method calls block for the target's return value.

        Asking oneself raises ``DeadlockError``; ``timeout`` raises ``AskTimeoutError``.
        """
        return cast(A, AskProxy(addr, actor_type, timeout))

    def proxy_tell(self, addr: ActorAddress, actor_type: type[A]) -> A:
        """A proxy whose method calls return None at once and never block."""
        return cast(A, TellProxy(addr, actor_type))

    # -- publishing ---------------------------------------------------------------------
    def notify_event(self, event: Any) -> None:
        """Publish a domain event on the team stream (as an ``EventMessage``).

        An event that is itself a ``Message`` is stamped like a send (sender, team,
        parent) before it is published.
        """
        if isinstance(event, Message):
            event.init(self._address, self._team_id, self._current_message)
        self._report(EventMessage(event=event))

    def notify_event_later(self, build: Callable[[], Any]) -> None:
        """Publish the domain event ``build`` makes, built on the orchestrator's thread
        when it drains the team's telemetry instead of on this actor's thread.

        For an event that costs its making and that this actor does not read back (a
        run's messages as JSON, a model request's accounting): the turn does not wait for
        it, and the orchestrator builds a batch of them in a row. The contract:

        - The event takes its place on the team stream now: its order among this actor's
          records, its timestamp and its parent message are the call's (the event's own
          too, when it is a ``Message``).
        - ``build`` is called at most once (never, when the team is gone first), later and
          on another thread: it must read only what was captured when it was made, never
          state this actor changes afterwards. When: at the orchestrator's next drain —
          within ``DEFER_DELAY`` with an event store subscribed, at once with a live
          subscriber, and otherwise at the next query or every ``LAZY_BATCH`` records.
        - A ``build`` that raises is logged, and an ``ErrorMessage`` saying what failed
          takes the event's place: the stream shows the gap instead of hiding it.
        - Whatever the event holds by reference must not change before it is built:
          publish with :meth:`notify_event` when it might (a tool's return value that the
          tool's owner may still modify).
        """
        self._channel.emit(KIND_REPORT, self._address, LaterEvent(build, self._current_message))

    def notify_state_change(self, state: Any = None) -> None:
        """Publish a snapshot of ``state`` (default: this actor's state)."""
        target = self.state if state is None else state
        self._report(StateChangedMessage(state=_snapshot(target)))

    def update_state(self, updates: dict[str, Any]) -> None:
        """Merge ``updates`` into the typed state (validated), then publish it.

        An unknown field or a value of the wrong type raises ``ValidationError``.
        """
        current_state = self.state
        merged = {**current_state.__dict__, **updates}
        self.state = type(current_state).model_validate(merged)
        self.notify_state_change()

    def report_received(self, message_id: UUID) -> None:
        """Report taking a message out of the inbox by hand (not through a handler)."""
        self._channel.emit(KIND_RECEIVED, self._address, message_id)

    def report_processed(self, message_id: UUID) -> None:
        """Report being done with a message taken out of the inbox by hand."""
        self._channel.emit(KIND_PROCESSED, self._address, message_id)

    # -- reporting ----------------------------------------------------------------------
    def _report(self, telemetry: TelemetryMessage) -> None:
        telemetry.init(self._address, self._team_id, self._current_message)
        self._channel.emit(KIND_REPORT, self._address, telemetry)

    def _report_failure(self, exc: BaseException, msg: Message | None, what: str) -> None:
        logger.error(
            "%s: %s: %r", self._address.name, what, exc, exc_info=exc, extra={ON_STREAM: True}
        )
        self._report(
            ErrorMessage(
                content_type="error",
                content=f"{what}: {type(exc).__name__}: {exc}",
                current_message=msg,
                traceback="".join(traceback.format_exception(exc)),
            )
        )

    def _report_unhandled(self, msg: Message) -> None:
        name = type(msg).__name__
        self._report(
            WarningMessage(
                content=f"{self._address.name} ({type(self).__name__}) has no handler for "
                f"{name}; the message was not processed. Define receiveMsg_{name} (or a "
                f"handler for one of its base classes).",
                current_message=msg,
            )
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._address.name} {self._address.agent_id}>"


def _snapshot(state: Any) -> SerializableModel:
    """A detached copy of ``state``: same values, no observer, safe to hand to another thread."""
    if not isinstance(state, SerializableModel):
        raise TypeError(
            f"a state must be a SerializableModel (BaseState), got {type(state).__name__}"
        )
    values = copy.deepcopy(state.__dict__)
    return type(state).model_construct(_fields_set=set(state.model_fields_set), **values)


def check_actor_class(actor_class: Any) -> None:
    """Raise ``TypeError`` unless ``actor_class`` is an ``Akgent`` subclass."""
    if not (isinstance(actor_class, type) and issubclass(actor_class, Akgent)):
        raise TypeError(
            f"{actor_class!r} is not an Akgent subclass: createActor only creates actors "
            f"that derive from akgentic.core.Akgent"
        )


def _upgraded(actor_class: type[Akgent[Any, Any]], config: BaseConfig) -> BaseConfig:
    """A plain ``BaseConfig`` as the actor's own config, for a class that
    ``upgrades_base_config`` (the ``Orchestrator``): the fields it set, the others at
    their defaults. Any other config is a ``TypeError`` naming the class wanted."""
    wanted = actor_class.config_class
    if not (actor_class.upgrades_base_config and type(config) is BaseConfig):
        raise TypeError(
            f"{actor_class.__name__} is configured by {wanted.__name__}, "
            f"got a {type(config).__name__}"
        )
    try:
        return wanted.model_validate(config.model_dump(exclude_unset=True))
    except ValidationError as exc:
        raise TypeError(
            f"{actor_class.__name__} is configured by {wanted.__name__}; the "
            f"{type(config).__name__} given lacks what it needs: "
            f"{exc.errors(include_url=False)}"
        ) from None


def spawn(
    system: ActorSystem,
    actor_class: type[Akgent[Any, Any]],
    *,
    config: BaseConfig | None,
    agent_id: UUID | None,
    team_id: UUID | None,
    orchestrator: ActorAddress | None,
    parent: ActorAddress | None,
    channel: TeamChannel,
    restoring: bool,
    state: BaseState | None,
) -> ActorAddress:
    """Start ``actor_class`` with a private copy of ``config``; return its address."""
    check_actor_class(actor_class)
    if config is None:
        config = actor_class.config_class()
    elif isinstance(config, actor_class.config_class):
        config = config.model_copy(deep=True)
    else:
        config = _upgraded(actor_class, config)
    if not config.name:
        config.name = f"@{actor_class.__name__}"
    spec = SpawnSpec(
        system=system,
        agent_id=agent_id or uuid4(),
        config=config,
        team_id=team_id,
        orchestrator=orchestrator,
        parent=parent,
        channel=channel if channel is not None else NULL_CHANNEL,
        restoring=restoring,
        state=state,
    )
    actor_class.start(spec)
    assert spec.address is not None, "Akgent.__init__ was overridden without calling super()"
    return spec.address
