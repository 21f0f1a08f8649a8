"""Restore: rebuild a team from its event log, without re-running side effects.

The log says who was running (a ``StartMessage`` without a later ``StopMessage``, the
stops of a graceful team stop not counting), with
which configuration, under which parent; its ``StateChangedMessage``s give each
member's latest state and its runs (``LlmMessageEvent``, ``ContextReplacedEvent``) each
agent's model context. The state table and the working memory are kept beside the log
for queries; restore trusts the log alone. Restoring:

1. starts the orchestrator again (same id) with its recorder, and replays the log into
   its views inside a ``set_restoring`` bracket (nothing is recorded twice);
2. re-creates the members, parents first and tool actors before the agents that use
   them, each with its own id, name, configuration and latest state, flagged
   ``restoring`` so that ``on_start`` knows;
3. gives each agent back its model context;
4. delivers again every message that was sent to a member but never received (it was
   accepted, so it is not lost), and reports every message whose turn was received but
   never processed as *interrupted* (``TeamRuntime.interrupted``) — re-running it could
   repeat side effects, so retrying is the caller's decision
   (``TeamRuntime.retry_interrupted``).

Transient workers (tool actors created by other actors, such as deferred workers) are
not re-created: their work was in flight and their owners ask again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from uuid import UUID

from pydantic_ai.messages import ModelMessagesTypeAdapter

from akgentic.agent import BaseAgent
from akgentic.core import (
    ActorAddress,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    Message,
    Orchestrator,
    ProcessedMessage,
    ReceivedMessage,
    SentMessage,
    StartMessage,
    StateChangedMessage,
    StopMessage,
    TeamStoppingEvent,
)
from akgentic.core.agent import actor_class_for
from akgentic.llm import ContextReplacedEvent, LlmMessageEvent
from akgentic.storage import DecodeFailure, EventRecord, corrupt_rows
from akgentic.team.card import TeamCard
from akgentic.team.runtime import InterruptedTurnsDismissed, TeamRuntime
from akgentic.team.skills import give_stored_skills, stored_skill_rows

if TYPE_CHECKING:
    from akgentic.team.manager import TeamManager

__all__ = ["RestorePlan", "plan_restore", "restore"]

logger = logging.getLogger("akgentic.team")


@dataclass
class Member:
    agent_id: UUID
    name: str
    agent_class: str
    config: BaseConfig
    parent: UUID | None


@dataclass
class RestorePlan:
    """What the log says about the team at the moment it stopped or crashed."""

    orchestrator_id: UUID | None = None
    members: list[Member] = field(default_factory=list)
    """Running members, in the order they started (parents before children)."""
    undelivered: list[Message] = field(default_factory=list)
    """Sent to a running member, never received."""
    interrupted: list[Message] = field(default_factory=list)
    """Received by a running member, never processed."""
    corrupt: list[DecodeFailure] = field(default_factory=list)
    """Rows that could not be decoded (reported, skipped)."""
    replay: list[Message] = field(default_factory=list)
    """The decodable history, for the orchestrator's views."""
    states: dict[UUID, BaseState] = field(default_factory=dict)
    """Each member's last published state, as the log has it."""
    contexts: dict[UUID, list[dict[str, Any]]] = field(default_factory=dict)
    """Each agent's model context (pydantic-ai messages as JSON), as the log has it."""


def plan_restore(records: list[EventRecord]) -> RestorePlan:
    """Read a team's log into a :class:`RestorePlan` (pure: no actor is touched)."""
    plan = RestorePlan(corrupt=corrupt_rows(records))
    started: dict[UUID, Member] = {}
    sent: dict[UUID, Message] = {}
    received: set[UUID] = set()
    processed: set[UUID] = set()
    stopping = False  # inside a graceful stop, the members' stops are the teardown's
    dismissed: set[UUID] = set()
    for record in records:
        msg = record.message
        if msg is None:
            continue
        plan.replay.append(msg)
        sender = msg.sender
        if isinstance(msg, EventMessage) and isinstance(msg.event, TeamStoppingEvent):
            stopping = True
        elif isinstance(msg, EventMessage) and isinstance(msg.event, InterruptedTurnsDismissed):
            dismissed.update(msg.event.message_ids)
        elif isinstance(msg, StartMessage) and sender is not None:
            if _is_orchestrator(sender.agent_class):
                plan.orchestrator_id = sender.agent_id
                stopping = False
                continue
            if isinstance(msg.config, BaseConfig):
                parent = msg.parent
                if parent is not None and _is_orchestrator(parent.agent_class):
                    # The orchestrator's own start precedes any subscriber: its id is
                    # known from the members it created.
                    plan.orchestrator_id = parent.agent_id
                started[sender.agent_id] = Member(
                    agent_id=sender.agent_id,
                    name=sender.name,
                    agent_class=sender.agent_class,
                    config=msg.config,
                    parent=parent.agent_id if parent is not None else None,
                )
        elif isinstance(msg, StopMessage) and sender is not None and not stopping:
            started.pop(sender.agent_id, None)
        elif isinstance(msg, StateChangedMessage) and sender is not None:
            if isinstance(msg.state, BaseState):
                plan.states[sender.agent_id] = msg.state
        elif isinstance(msg, EventMessage) and sender is not None:
            _follow_context(plan.contexts, sender.agent_id, msg.event)
        elif isinstance(msg, SentMessage):
            sent[msg.message.id] = msg.message
        elif isinstance(msg, ReceivedMessage):
            received.add(msg.message_id)
        elif isinstance(msg, ProcessedMessage):
            processed.add(msg.message_id)
    plan.members = list(started.values())
    running = set(started)
    for message_id, message in sent.items():
        recipient = message.recipient
        if recipient is None or recipient.agent_id not in running:
            continue
        if message_id not in received:
            plan.undelivered.append(message)
        elif message_id not in processed and message_id not in dismissed:
            plan.interrupted.append(message)
    return plan


def _follow_context(contexts: dict[UUID, list[dict[str, Any]]], agent: UUID, event: Any) -> None:
    """An agent's context is its last replacement followed by every later run."""
    if isinstance(event, LlmMessageEvent):
        contexts.setdefault(agent, []).extend(json.loads(event.messages_json))
    elif isinstance(event, ContextReplacedEvent):
        contexts[agent] = json.loads(event.messages_json)


def _is_orchestrator(path: str) -> bool:
    try:
        return issubclass(actor_class_for(path), Orchestrator)
    except LookupError:
        return False


def restore(manager: TeamManager, card: TeamCard, team_id: UUID) -> TeamRuntime:
    """Rebuild ``team_id`` in ``manager``'s actor system; see the module docstring."""
    storage, system = manager.storage, manager.system
    records = storage.events.read(team_id)
    plan = plan_restore(records)
    for row in plan.corrupt:
        logger.error("team %s: event %s skipped on restore: %s", team_id, row.seq, row.reason)
    # The log is the record: states and contexts come from it, so a crash between the
    # log and the convenience tables (latest states, working memory) loses nothing.
    states = plan.states

    orchestrator, recorder = manager._start_orchestrator(card, team_id, plan.orchestrator_id)
    proxy = system.proxy_ask(orchestrator, Orchestrator, timeout=60)
    for msg in plan.replay:
        system.proxy_tell(orchestrator, Orchestrator).restore_message(msg)
    proxy.end_restoration()

    orchestrator_id = orchestrator.agent_id
    tools_first = sorted(
        plan.members,
        key=lambda m: 0 if m.name.startswith("#") and m.parent == orchestrator_id else 1,
    )
    addresses: dict[UUID, ActorAddress] = {}
    human: ActorAddress | None = None
    skills = stored_skill_rows(storage.skills)  # read again: the store, not the log, has them
    for member in tools_first:
        actor_class = actor_class_for(member.agent_class)
        if actor_class.transient:
            continue  # a one-job worker whose job died with the process
        state = states.get(member.agent_id)
        config = member.config.model_copy(deep=True)
        give_stored_skills(config, skills)
        if member.name.startswith("#"):
            if member.parent != orchestrator_id:
                continue  # a transient worker: its owner asks again
            addresses[member.agent_id] = proxy.restore_child(
                actor_class, config, member.agent_id, state
            )
            continue
        parent = addresses.get(member.parent) if member.parent else None
        if parent is not None:
            creator = system.proxy_ask(parent, Akgent, timeout=60)
            address = creator.createActor(
                actor_class, agent_id=member.agent_id, config=config, restoring=True, state=state
            )
        else:
            address = system.createActor(
                actor_class,
                config=config,
                team_id=team_id,
                agent_id=member.agent_id,
                restoring=True,
                state=state,
            )
        addresses[member.agent_id] = address
        if address.is_user_proxy and human is None:
            human = address
        if issubclass(actor_class, BaseAgent):
            items = plan.contexts.get(member.agent_id)
            if items:
                history = ModelMessagesTypeAdapter.validate_python(items)
                system.proxy_ask(address, BaseAgent, timeout=60).restore_history(history)

    runtime = TeamRuntime(
        team_id, card, system, storage, orchestrator, recorder, human, interrupted=[]
    )
    for msg in plan.undelivered:
        target = addresses.get(msg.recipient.agent_id) if msg.recipient else None
        if target is not None:
            runtime._redeliver(target, msg)
    runtime.interrupted = [
        m for m in plan.interrupted if m.recipient is not None and m.recipient.agent_id in addresses
    ]
    return runtime
