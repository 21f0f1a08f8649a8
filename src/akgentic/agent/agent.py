"""BaseAgent: an LLM ReAct loop as an actor.

An agent is an ``Akgent`` whose message handler runs a pydantic-ai run over the tools,
prompts and context states of its tool cards. The contract:

- On start it builds everything once: the model from its roster, the ``ToolFactory``
  (observer = itself, ``retry_exception=ModelRetry``) over its cards plus TeamTool and
  MailboxTool, the command registry (the cards' commands plus ``/compact``, ``/clear``
  and ``/stop``, announced as ``CommandsAnnouncedEvent``), the ``ContextUpdater`` and the
  system prompt. The system prompt is rendered **once** and stays byte-identical across
  turns: volatile state reaches the model only as the per-turn context block appended at
  the tail of the turn's request. The one change: a card's text that was not there yet
  (team metadata set after start-up) joins it at the next turn, once.
- A message whose text starts with ``/`` goes to the command registry, never to the
  model; the reply goes back to the sender. An unknown command gets the list. The reply
  to a command that is unknown, refuses its arguments or raises is marked
  ``AgentMessage.failed``.
- Any other message is a turn. The output is either text (a reply to the sender — the
  person when the sender is a tool actor, such as a reminder from ``#NotificationTool``:
  tool actors do not converse) or an
  ``AgentReply`` addressing several members; a recipient that is not a member is an
  error the model is told about (it retries) — hiring only happens through TeamTool.
  An answer is never dropped: one to a member that has stopped meanwhile (the team is
  stopping) is recorded as sent (``send_or_record``), and a resume delivers it.
  Messages between agents are bounded: each carries ``agent_hops`` (one more than the
  message it answers; a person's counts 0), and one to another agent past the team's
  ``max_agent_hops`` is refused in the run, the model told to report to the person, the
  stream told why (``AgentHopLimitReached``).
- A ``CancelMessage`` or ``/stop`` that arrives mid-run stops the run at the next step
  boundary; other messages arriving mid-run are announced to the model (MailboxTool).
  An *interrupting* cancel (the team is stopping: Ctrl-C, or its stop grace ran out)
  also cuts a model request or a tool call in flight at once (a compaction's summary
  request too, the history left as it was), and closes the agent to new turns; the turn
  it cut and each message it then declines are published as ``TurnInterrupted`` (no
  reply is sent), so a resume offers them again. A *fired* one (TeamTool's fire: the
  member stops for good) cuts and closes alike, but no resume will offer those turns:
  each one's sender is told instead, in a line naming the cancel's reason — and so is the
  sender of each message the cut run had absorbed through the mailbox.
- The history is compacted (summarised, its tail kept) when it nears the model's window:
  before a turn, on ``/compact``, and within a turn between its model requests
  (``CompactWithinRun``: a turn of many tool round trips would fill the window by itself).
  A compaction is published as a ``ContextReplacedEvent``, one within a turn before the
  turn's own messages, so a resume rebuilds the same context; the system prompt is not
  part of it.
- Everything is published on the team stream: the run's messages (``LlmMessageEvent``,
  enough to rebuild the context on restore), tool calls and returns, text deltas (batched,
  see ``AgentConfig.stream_text_interval``), usage — framed by the turn protocol
  (:mod:`akgentic.agent.turn`): started, then ended, after any error it reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, cast
from uuid import UUID

from pydantic_ai import Agent, CancellationToken, ModelRetry, RunContext, Tool
from pydantic_ai.exceptions import (
    ModelContextWindowExceededError,
    RunCancelled,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ToolReturnPart,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RunUsage, UsageLimits

from akgentic.agent.accounting import (
    AGENT,
    PrefixCacheRules,
    PromptAccounting,
    PromptWiring,
    RequestAccountant,
    Source,
    rules_for,
)
from akgentic.agent.capabilities import (
    CancelAtStepBoundary,
    CompactWithinRun,
    LastTurnRequest,
    PublishRunEvents,
    RecordAnswers,
    RunInterruptedError,
    SoundModelOutput,
    SummaryAsTurn,
    ToolArgsAdvice,
    dynamic_toolsets,
    fuse,
    on_the_agent_thread,
)
from akgentic.agent.config import AgentConfig, AgentState
from akgentic.agent.cut import kept_of_cut
from akgentic.agent.messages import (
    AgentHopLimitReached,
    AgentMessage,
    AgentReply,
    MessageType,
    TurnInterrupted,
)
from akgentic.agent.turn import (
    TurnEndedEvent,
    TurnInterruptedEvent,
    TurnOutcome,
    TurnStartedEvent,
)
from akgentic.core import (
    ActorAddress,
    ActorAddressImpl,
    AddressError,
    Akgent,
    CancelMessage,
    ErrorMessage,
    Message,
    Orchestrator,
    WarningError,
    WarningMessage,
    address_name,
    clip,
    is_tool_actor,
)
from akgentic.core.agent import ON_STREAM
from akgentic.core.words import counted
from akgentic.llm import (
    SUMMARY_INSTRUCTIONS,
    ContextReplacedEvent,
    LlmMessageEvent,
    LlmUsageEvent,
    UsageLimitReached,
    UsageTracker,
    answering_config,
    apply_summary,
    build_roster_model,
    describe_model_failure,
    estimate_tokens,
    model_label,
    needs_compaction,
    plan_compaction,
    summary_prompt,
    usage_by_model,
    with_summary_ask,
)
from akgentic.tool.core import (
    CommandNotRecognized,
    CommandRegistry,
    ContextUpdater,
    RetriableError,
    ToolCard,
    ToolFactory,
    offer_predicate,
    offered_now,
)
from akgentic.tool.core.time_bound import runs_alone
from akgentic.tool.mailbox import MailboxCapability, MailboxMessage, MailboxTool
from akgentic.tool.model import ModelRow
from akgentic.tool.team import TeamTool

__all__ = ["BUILTIN_COMMANDS", "CHAT_COMMANDS", "BaseAgent", "is_cancel"]

logger = logging.getLogger("akgentic.agent")

_USAGE_FIELDS = ("requests", "tool_calls", "input_tokens", "output_tokens")

BUILTIN_COMMANDS = ("compact", "clear", "stop", "help")
"""The commands every agent answers itself: no card may give one of these names — but
MailboxTool, which registers ``/stop`` (the agent's vocabulary and enforcement either way)."""

CHAT_COMMANDS = ("quit", "exit")
"""The commands a chat keeps for itself (``akgentic chat`` leaves on ``/quit`` and
``/exit``): a card command of one of these names would never reach the agent from there,
so no card may give one either."""


def _reserved_commands() -> dict[str, str]:
    """Each name a card command may not take, with what holds it (for the error)."""
    reserved = {name: f"the agent's built-in /{name}" for name in BUILTIN_COMMANDS}
    reserved.update({name: f"the chat's /{name} (it leaves the chat)" for name in CHAT_COMMANDS})
    return reserved


def message_text(msg: Message) -> str | None:
    """The text a message carries (its ``content``), or None."""
    content = getattr(msg, "content", None)
    return content if isinstance(content, str) else None


_VALUES = (str, int, float, bool, type(None))


def _returns_are_values(messages: Sequence[ModelMessage]) -> bool:
    """Whether every tool return in ``messages`` is a plain value (text, a number, None),
    which nobody can change afterwards; a tool's object (a dict, a model) is its owner's."""
    return all(
        type(part.content) in _VALUES
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    )


def _first_of_run(messages: Sequence[ModelMessage], after: int) -> int:
    """Where the run's own messages start in ``messages`` from ``after`` on: the first
    stamped with the run's id (its last message's), as ``new_messages()`` has it."""
    run_id = next((m.run_id for m in reversed(messages) if getattr(m, "run_id", None)), None)
    for index in range(after, len(messages)):
        if run_id is not None and getattr(messages[index], "run_id", None) == run_id:
            return index
    return after


def _carries(history: Sequence[ModelMessage], prompt: str) -> bool:
    """Whether ``history`` holds ``prompt`` as a user prompt (looked for from the end:
    after a run that kept the turn, it is among the last messages)."""
    return any(
        isinstance(part, UserPromptPart) and part.content == prompt
        for message in reversed(history)
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


def _hops_of(msg: Message, current: int = 0) -> int:
    """How many messages between agents in a row ``msg`` ends (``AgentMessage.agent_hops``):
    0 for a person's or a program's (any other class, or one from a user proxy). A ``#``
    tool actor's (a reminder the agent set itself) is no person writing: the count goes
    on from ``current``, the agent's own — else an agent told to stop could start it again
    by setting itself a reminder."""
    sender = msg.sender
    if sender is not None and is_tool_actor(sender):
        return current
    if isinstance(msg, AgentMessage) and not (sender is not None and sender.is_user_proxy):
        return msg.agent_hops
    return 0


def _is_agent(address: ActorAddress | None) -> bool:
    """Whether ``address`` is another agent: neither a person nor a ``#`` tool actor."""
    return address is not None and not address.is_user_proxy and not is_tool_actor(address)


def is_cancel(msg: Message) -> bool:
    """Whether ``msg`` asks to cancel a run: a ``CancelMessage``, or the text ``/stop``.

    A cancel is aimed at the run in progress when it was sent. It never outlives that
    run's process: a restore does not deliver one again (see ``akgentic.team.restorer``).
    """
    return isinstance(msg, CancelMessage) or (message_text(msg) or "").strip() == "/stop"


def offered_tools(tools: Sequence[Any]) -> list[Any]:
    """The factory's tools for pydantic-ai: one marked with ``offer_while`` becomes a
    ``Tool`` whose ``prepare`` leaves it out while its predicate does not hold (seed 001:
    knowledge search is absent while its base is empty).

    The predicate is asked once per run, at its first request, and the answer holds for
    the run: the tool list stays the same from step to step (no mid-run "now available"
    notice, a stable prefix for prompt caches), and a base filled during a run brings its
    tools back at the next run."""

    def prepare(fn: Any) -> Any:
        decided: dict[str | None, bool] = {}

        def check(ctx: RunContext[Any], tool_def: ToolDefinition) -> ToolDefinition | None:
            if ctx.run_id not in decided:
                decided.clear()  # one run at a time per agent: forget the last one
                decided[ctx.run_id] = offered_now(fn)
            return tool_def if decided[ctx.run_id] else None

        return check

    return [
        fn
        if offer_predicate(fn) is None and not runs_alone(fn)
        else Tool(
            fn,
            prepare=None if offer_predicate(fn) is None else prepare(fn),
            sequential=runs_alone(fn),
        )
        for fn in tools
    ]


class _Inbox(queue.Queue[Any]):
    """An inspectable inbox (the mailbox and cancellation look into it) that calls
    ``on_interrupt`` when an interrupting cancel is put in — on the sender's thread, for
    the agent's own thread may be waiting for a model that nothing else would wake."""

    on_interrupt: Callable[[], None] | None = None

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        message = getattr(item, "message", None)
        hook = self.on_interrupt
        if hook is not None and isinstance(message, CancelMessage) and message.interrupt:
            hook()


class BaseAgent(Akgent[AgentConfig, AgentState]):
    """An LLM agent; see the module docstring for the contract."""

    default_cards: ClassVar[tuple[type[ToolCard], ...]] = (TeamTool, MailboxTool)
    """Cards every agent carries; listing one in the config replaces the default."""

    toolset_clock: ClassVar[Callable[[], float]] = time.monotonic
    """The clock (seconds) toolset activation reads; a test subclass injects its own."""

    accounting_clock: ClassVar[Callable[[], float]] = time.time
    """The clock (seconds) prompt accounting dates requests with (the cache's TTL): the
    wall clock, as the last request before a resume is dated by its response's timestamp
    (a monotonic clock does not survive the process)."""

    # -- start-up -----------------------------------------------------------------------
    def on_start(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._history: list[ModelMessage] = []
        self._accountant: RequestAccountant | None = None
        self._summary_accounting: PromptAccounting | None = None
        self._bounded_accounting: PromptAccounting | None = None
        self._turn_sender: ActorAddress | None = None
        self._absorbed: list[Any] = []  # the inbox envelopes the run in progress absorbed
        self._cancelled_by: Message | None = None
        self._interrupted = False  # the team is stopping: no new turn
        self._fired: str | None = None  # fired (why): what it cuts or declines is answered
        self._turn_hops = 0  # the messages between agents in a row the one handled ends
        self._hops_told = False  # this run was told the team's max_agent_hops is reached
        self._max_hops: tuple[int | None] | None = None  # the team's bound, once read
        self._boundary = CancelAtStepBoundary(self._cancel_requested)
        self._answers = RecordAnswers()  # who answered: usage and accounting are booked to it
        self._roster = self.config.models.model_copy(deep=True)
        self._roster.restore_active(self.state.tool_state.active_model)
        self._base_dir = Path(self.config.scenario_dir) if self.config.scenario_dir else None
        model = self._build_model()
        cards = list(self.config.tools)
        for default in self.default_cards:
            if not any(isinstance(card, default) for card in cards):
                cards.append(default())
        self._cards = cards
        self._factory = ToolFactory(
            tool_cards=cards,
            observer=self,
            retry_exception=ModelRetry,
            tool_timeout=self.config.tool_timeout,
        )
        # ToolsetCards' groups: activated per conversation (none configured: nothing at all)
        tools = self._factory.get_tools()
        self._toolsets, toolsets = dynamic_toolsets(
            self._factory.get_toolsets(),
            clock=type(self).toolset_clock,
            taken=[getattr(fn, "__name__", "") for fn in tools],
        )
        self._wiring = PromptWiring(self._factory, self._toolsets)
        states = self._factory.get_context_states()
        if self._toolsets is not None:
            states += self._toolsets.context_states()
        self._updater = ContextUpdater(self, states)
        # a card's command never takes a built-in's name: one would hide the other
        self._commands: CommandRegistry = self._factory.get_command_registry(
            reserved=_reserved_commands(), registrars={"stop": MailboxTool}
        )
        self._register_builtin_commands()
        self._system_prompt = self._render_system_prompt()
        used = self.state.lifetime_usage
        total = RunUsage(
            requests=used.get("requests", 0),
            tool_calls=used.get("tool_calls", 0),
            input_tokens=used.get("input_tokens", 0),
            output_tokens=used.get("output_tokens", 0),
        )
        self._usage = UsageTracker(self.config.usage_limits, total=total)
        mailbox_card = next((c for c in cards if isinstance(c, MailboxTool)), None)
        # the agent's own hooks, fused: pydantic-ai's dispatch costs per capability
        self._last_turn = LastTurnRequest()  # what a summary within a turn reuses
        own: list[Any] = [
            on_the_agent_thread(),
            self._boundary,
            MailboxCapability(self, mailbox_card),
            self._last_turn,
        ]
        self._within: CompactWithinRun | None = None
        if self.config.compaction.enabled:  # measures the request the mailbox completed
            self._within = CompactWithinRun(
                window=lambda: self._roster.active_config.context_length,
                threshold=self.config.compaction.threshold,
                keep_last=self.config.compaction.keep_last,
                summarize=self._summary_within,
                failed=self._summary_within_failed,
            )
            own.append(self._within)
        if self.config.stream_events:
            own.append(
                PublishRunEvents(self.notify_event, text_interval=self.config.stream_text_interval)
            )
        if self.config.prompt_accounting.enabled:  # after the request is shaped: as sent
            own.append(self._prompt_accounting())
        own.append(self._answers)  # its after-hook before the accounting's, which reads it
        own.append(ToolArgsAdvice())  # arguments that are not JSON: the model told what to send
        own.append(SoundModelOutput())  # last: its after_model_request runs first
        capabilities: list[Any] = [fuse(own)]
        if self._toolsets is not None:  # its before_model_request after the mailbox's
            capabilities.append(self._toolsets)
        # runtime toolsets (MCP servers) name their card in the accounting; held for life
        self._run_toolsets = [self._wiring.tagged(t) for t in toolsets]
        self._held_toolsets: AsyncExitStack | None = None
        self._built_prompt = self._system_prompt
        self._offered_tools = offered_tools(tools)  # a turn's, and a summary's before one
        self._agent: Agent[None, str | AgentReply] = Agent(
            model,
            output_type=[str, AgentReply],
            instructions=self._system_prompt,
            tools=self._offered_tools,
            toolsets=self._run_toolsets or None,
            capabilities=capabilities,
            name=self.config.name,
        )
        self._agent.output_validator(self._check_recipients)
        self.notify_event(self._commands.announcement())
        cast("_Inbox", self.actor_inbox).on_interrupt = self._interrupt_arrived

    def _build_model(self) -> Any:
        return build_roster_model(self._roster, role=self.config.role, base_dir=self._base_dir)

    def _render_system_prompt(self) -> str:
        return self._wiring.render_system_prompt(
            prompt=self.config.prompt.render(name=self.config.name, role=self.config.role),
            backstory=self.state.backstory,
        )

    def _prompt_accounting(self) -> PromptAccounting:
        def rules() -> PrefixCacheRules:  # those of the model that answered (a fallback?)
            last = self._answers.last
            entry = answering_config(self._roster, last.model if last is not None else None)
            return self.config.prompt_accounting.cache or rules_for(entry.provider, entry.model)

        self._accountant = RequestAccountant(self._wiring)
        # a compaction's summary request: the turns' prefix (SummaryAsTurn), its own
        # records (kind "summary"), numbered with the turns' and modelled on their cache
        self._summary_accounting = PromptAccounting(
            self._accountant.companion("summary"),
            self.notify_event_later,
            agent=self.config.name,
            rules=rules,
            clock=type(self).accounting_clock,
        )
        # the bounded summary (the fallback when the prefix does not fit the window): its
        # own prompt (its instructions, no tools) on a prefix cache of its own
        bounded = PromptWiring(self._factory)
        bounded.set_system_parts(
            [(Source("system_prompt", AGENT, "summary_instructions"), SUMMARY_INSTRUCTIONS)]
        )
        self._bounded_accounting = PromptAccounting(
            self._accountant.companion("summary", bounded),
            self.notify_event_later,
            agent=self.config.name,
            rules=rules,
            clock=type(self).accounting_clock,
        )
        return PromptAccounting(
            self._accountant,
            self.notify_event_later,
            agent=self.config.name,
            rules=rules,
            clock=type(self).accounting_clock,
        )

    def _register_builtin_commands(self) -> None:
        def compact() -> str:
            """Summarise the older part of the conversation to free context."""
            answer = self._compact(force=True)
            if answer is None:
                return "The compaction was cut short (the team is stopping): nothing changed."
            return answer

        def clear() -> str:
            """Forget the conversation (the system prompt and tools stay)."""
            self._replace_history([])
            self._updater.reset()
            if self._toolsets is not None:
                self._toolsets.reset()
            self.state.notify_state_change()
            return "Conversation cleared."

        def stop() -> str:
            """Cancel the run in progress."""
            return "There is no run to cancel."

        def help(command: str | None = None) -> str:
            """List the commands, or describe one: /help, /help NAME."""
            return self._commands.describe(command)

        for command in (compact, clear, stop, help):  # BUILTIN_COMMANDS, kept from the cards
            if command.__name__ not in self._commands:  # only /stop, from MailboxTool
                self._commands.register(command, owner="BaseAgent")

    # -- what tests and tools may read ----------------------------------------------------
    def get_system_prompt(self) -> str:
        """The system prompt, rendered once at start-up (and completed once by a card's
        text that was not there yet)."""
        return self._system_prompt

    def get_history(self) -> list[ModelMessage]:
        """The model context (pydantic-ai messages), oldest first."""
        return list(self._history)

    def restore_history(self, messages: Sequence[ModelMessage]) -> None:
        """Replace the model context (restore from ``LlmMessageEvent``s); the prompt
        accounting compares the next request with the last one before the stop."""
        self._history = list(messages)
        if self._accountant is not None:
            self._accountant.resume(self._history)

    def get_commands(self) -> list[str]:
        return self._commands.names()

    @property
    def tool_timeout(self) -> float | None:
        """Seconds each tool call may take (``AgentConfig.tool_timeout``): read by a card
        that wires cards of its own (a ToolsetCard's members), to hold them to it too."""
        return self.config.tool_timeout

    def active_toolsets(self) -> frozenset[str]:
        """The toolsets active in this conversation now (ToolsetActivityObserver)."""
        return frozenset() if self._toolsets is None else self._toolsets.active_toolsets()

    # -- messages ---------------------------------------------------------------------------
    def receiveMsg_CancelMessage(self, msg: CancelMessage, sender: ActorAddress | None) -> None:
        """No run in progress: nothing to cancel; an interrupt still closes new turns."""
        if msg.interrupt:
            self._closed_by(msg)

    def receiveMsg_Message(self, msg: Message, sender: ActorAddress | None) -> None:
        self._turn_hops = _hops_of(msg, self._turn_hops)  # what it sends counts one more
        if self._interrupted:
            self._decline(msg, sender)
            return
        text = message_text(msg)
        if text is None:
            logger.warning("%s: %s carries no text; ignored", self.config.name, type(msg).__name__)
            return
        if text.lstrip().startswith("/"):
            self._run_command(msg, text.strip(), sender)
            return
        self._run_turn(msg, text, sender)

    def _reply(
        self,
        to: ActorAddress | None,
        content: str,
        kind: MessageType = "response",
        *,
        failed: bool = False,
    ) -> None:
        """Answer ``to`` (``failed``: the answer reports a failure, see ``AgentMessage``).
        One that has stopped meanwhile (the team is stopping) still has the answer
        recorded, for the person to see and a resume to deliver.

        A tool actor does not converse: what a message from one asks (a reminder the agent
        set itself, from ``#NotificationTool``) is the agent's own business, and the
        answer goes to the person, as a ``notification`` — to nobody in a team without a
        person (the turn's text is on the team stream all the same)."""
        if to is not None and is_tool_actor(to):
            to, kind = self._person(), "notification"
        if to is None:
            return
        self.send_or_record(to, self._message(content, kind, failed=failed))

    def _message(self, content: str, kind: MessageType, *, failed: bool = False) -> AgentMessage:
        """A message this agent sends answering the one it handles: one more message
        between agents in a row (``AgentMessage.agent_hops``)."""
        hops = self._turn_hops + 1
        return AgentMessage(content=content, type=kind, failed=failed, agent_hops=hops)

    def _person(self) -> ActorAddress | None:
        """The team's person (its first user proxy), or None."""
        if self.orchestrator is None:
            return None
        team = self.proxy_ask(self.orchestrator, Orchestrator, timeout=10).get_team()
        return next((a for a in team if a.is_user_proxy), None)

    # -- commands -----------------------------------------------------------------------------
    def _run_command(self, msg: Message, text: str, sender: ActorAddress | None) -> None:
        """Run ``/command``; whoever sent it always gets an answer — a command that is
        unknown, refuses its arguments or raises answers what failed, marked ``failed``;
        one that raised is also reported like any handler's failure."""
        name = clip(text.split()[0])
        failed = True
        try:
            result = self._commands.dispatch(text)
            if asyncio.iscoroutine(result):
                result = self._loop.run_until_complete(result)
            answer = "" if result is None else str(result)
            failed = False
        except CommandNotRecognized as exc:
            listing = ", ".join(f"/{n}" for n in self._commands.names())
            if exc.command == name.removeprefix("/"):  # the command typed
                answer = f"Unknown command {name}. Commands: {listing} (/help describes them)"
            else:  # the one a command was asked about (/help NAME)
                answer = (
                    f"{name}: no command named {exc.command}; commands: {listing} "
                    f"(/help NAME describes one)"
                )
        except RetriableError as exc:
            answer = str(exc)
        except Exception as exc:
            self._report_failure(exc, msg, f"command {name} raised")
            answer = f"{name} failed: {type(exc).__name__}: {exc}"
        self._reply(sender, answer, failed=failed)

    # -- turns ----------------------------------------------------------------------------------
    def _run_turn(self, msg: Message, text: str, sender: ActorAddress | None) -> None:
        """One turn, framed by the turn protocol (:mod:`akgentic.agent.turn`): started,
        then — after the failure is reported, so a client sees Error before End — ended."""
        name = self.config.name
        self.notify_event(TurnStartedEvent(turn_id=msg.id, agent=name))
        outcome: TurnOutcome = "completed"
        error: str | None = None
        try:
            if not self._take_turn(msg, text, sender):
                outcome = "interrupted"
        except WarningError as exc:
            outcome, error = "failed", str(exc)
            self._report(WarningMessage(content=str(exc), current_message=msg))
        except Exception as exc:
            outcome = "failed"
            if self._hops_told and isinstance(exc, UnexpectedModelBehavior):
                # told to stop writing to agents, it went on until its retries ran out: the
                # bound held, no bug — a warning saying so, not a traceback
                error = (
                    f"{name} kept writing to other agents past the team's max_agent_hops: "
                    f"nothing was sent; write to a member to let the agents go on"
                )
                self._report(WarningMessage(content=error, current_message=msg))
            elif (
                failure := describe_model_failure(exc, self._roster.active_config, self._roster)
            ) is None:
                error = f"{type(exc).__name__}: {exc}"
                self._report_failure(exc, msg, f"handler for {type(msg).__name__} raised")
            else:
                error = failure
                self._report_model_failure(exc, msg, failure)
        self.notify_event(TurnEndedEvent(turn_id=msg.id, agent=name, outcome=outcome, error=error))

    def _report_model_failure(self, exc: Exception, msg: Message, failure: str) -> None:
        """A model request that failed (a server that cannot be reached, a refused key) is
        the setup's problem, not a bug: the line says which endpoint and what to check;
        the traceback goes with the event and to the DEBUG log only."""
        logger.error("%s: %s", self.config.name, failure, extra={ON_STREAM: True})
        logger.debug("%s: the model request failed", self.config.name, exc_info=exc)
        self._report(
            ErrorMessage(
                content_type="error",
                content=failure,
                current_message=msg,
                traceback="".join(traceback.format_exception(exc)),
            )
        )

    def _take_turn(self, msg: Message, text: str, sender: ActorAddress | None) -> bool:
        """Run the model on ``msg``; False when a cancel interrupted the run."""
        body = msg.rendering() if isinstance(msg, MailboxMessage) else text
        if not isinstance(msg, MailboxMessage) and sender is not None:
            body = f"Message from {sender.name}:\n{text}"
        self._cancelled_by = None
        if self.config.compaction.enabled and not self._compact_before_turn(msg):
            return self._say_cut(msg, sender)  # the history is as it was
        self._complete_system_prompt()
        undo = self._context_checkpoint()
        block = self._updater.compose_update([*self._history, body])
        for key, failure in self._updater.last_failures:
            self._report(
                WarningMessage(
                    content=f"{self.config.name}: context provider {key} failed ({failure}); "
                    f"this turn goes on without its state",
                    current_message=msg,
                )
            )
        prompt = self._wiring.turn_prompt(body, block, self._updater.last_sections)
        try:
            return self._run_prompt(msg, prompt, sender)
        finally:
            if block is not None and not _carries(self._history, prompt):
                undo()  # the block never reached the history: compose it again next turn

    def _complete_system_prompt(self) -> None:
        """Take into the system prompt a card's content that arrived since start-up (team
        metadata set later: once, :meth:`PromptWiring.complete_system_prompt`) — before a
        turn, and before a summary asked ahead of one, so both send the same prompt."""
        if self._wiring.complete_system_prompt():
            self._system_prompt = self._wiring.system_prompt

    def _instructions(self) -> contextlib.AbstractContextManager[object]:
        """The run's system prompt: the one the agent was built with, unless a card's
        content arrived since (:meth:`PromptWiring.complete_system_prompt`)."""
        if self._system_prompt == self._built_prompt:
            return contextlib.nullcontext()
        return self._agent.override(instructions=self._system_prompt)

    def _context_checkpoint(self) -> Callable[[], None]:
        """What the context baselines are now, as a callable that puts them back.

        ``compose_update`` records its block as delivered. A turn that keeps nothing of its
        prompt (a failed model request, a cut before any step) did not deliver it; putting
        the baselines back makes the next turn's block the delta since the last one the
        history does carry. Left as they are, the updater's trust gate would find the
        marker missing and send a full snapshot, every unchanged section again.
        """
        tool_state = self.state.tool_state
        baselines, seq = dict(tool_state.context_baselines), tool_state.context_update_seq

        def undo() -> None:
            current = self.state.tool_state  # read again: a restore replaces the state
            current.context_baselines, current.context_update_seq = baselines, seq
            self.state.notify_state_change()

        return undo

    def _run_prompt(self, msg: Message, prompt: str, sender: ActorAddress | None) -> bool:
        """Run the model on the turn's ``prompt``; False when a cancel interrupted the run."""
        self._turn_sender = sender
        self._hops_told = False
        self._hold_toolsets()
        if self._within is not None:
            self._within.start_run()
        run_usage = RunUsage()
        try:
            with (
                self._boundary.scope() as token,
                self._usage.track(run_usage) as limits,
                self._instructions(),
            ):
                result = self._loop.run_until_complete(
                    self._agent.run(
                        prompt,
                        message_history=self._history,
                        usage_limits=limits,
                        usage=run_usage,
                        cancellation_token=token,
                    )
                )
        except RunInterruptedError as interrupted:
            return self._cut(msg, sender, interrupted.messages, run_usage)
        except RunCancelled as cut:  # an interrupt cut the model request or tool call in flight
            self._was_cut()
            return self._cut(msg, sender, cut.all_messages(), run_usage)
        except UsageLimitReached as exc:
            self._publish_usage(run_usage)
            self._return_absorbed()
            self._reply(sender, f"I had to stop: {exc}", "notification")
            raise
        except BaseException:  # what its answered requests used was used all the same
            self._publish_usage(run_usage)
            self._return_absorbed()
            raise
        finally:
            self._turn_sender = None
        history, new = list(result.all_messages()), list(result.new_messages())
        if result.compactions:  # compacted within the run: recorded as a replacement
            times = len(result.compactions)
            logger.info("%s: compacted %d time(s) within the turn", self.config.name, times)
            self._replace_history(history[: len(history) - len(new)])
        self._history = history
        self._publish_run(new, run_usage)
        self._route(result.output, sender)
        return True

    def _cut(
        self,
        msg: Message,
        sender: ActorAddress | None,
        messages: Sequence[ModelMessage],
        run_usage: RunUsage,
    ) -> bool:
        """A cancel stopped the run (``messages``: its history, the turn's own at the end):
        keep and publish what :func:`kept_of_cut` keeps of the turn — nothing when the model
        completed no step, so the prompt is not carried into the next run — and say so
        (:meth:`_say_cut`)."""
        summarized = self._summarized_at(messages)
        if summarized is None:
            # pydantic-ai starts a run from the history cleaned (adjacent requests merged,
            # as a compaction's summary and the request after it): the turn's own messages
            # begin where that ends, not at the history's own length
            start = len(repair_messages(self._history, repair_last_response=False))
        else:  # compacted within the run: the summary replaced the history, recorded so
            # with the earlier turns' messages its tail kept, as a completed run's is
            start = _first_of_run(messages, summarized + 1)
            self._replace_history(list(messages[:start]))
        kept = kept_of_cut(messages[start:], stopping=self._interrupted and self._fired is None)
        if not kept:  # nothing of the run is kept, nor what it absorbed: back they go
            self._return_absorbed()
        # fired: what the kept run absorbed is settled with it, and answered by nobody
        absorbed = [e.message for e in self._absorbed] if self._fired is not None else []
        self._history = [*self._history, *kept]  # as a resume rebuilds it from the log
        self._publish_run(kept, run_usage)
        for taken in absorbed:  # each sender waits for an answer: told, as for the turn
            with self._handling(taken):
                self._decline(taken, taken.sender)
        return self._say_cut(msg, sender)

    @contextlib.contextmanager
    def _handling(self, msg: Message) -> Iterator[None]:
        """Within it, what the agent sends answers ``msg`` (its ``parent_id``): a message
        its run absorbed is answered as its own turn's would be, not as the turn's."""
        previous, self._current_message = self._current_message, msg
        try:
            yield
        finally:
            self._current_message = previous

    def _summarized_at(self, messages: Sequence[ModelMessage]) -> int | None:
        """Where in a run's ``messages`` the latest summary made within the run is (the
        message holding it), or None: the run compacted nothing that it kept."""
        made = self._within.made if self._within is not None else []
        for index in range(len(messages) - 1, -1, -1):
            if any(part is summary for part in messages[index].parts for summary in made):
                return index
        return None

    def _say_cut(self, msg: Message, sender: ActorAddress | None) -> bool:
        """A cancel cut the turn on ``msg``: say so; when the team is stopping, report the
        turn interrupted (resumable), no reply; when the agent was fired, tell the sender."""
        canceller = self._cancelled_by.sender if self._cancelled_by else None
        self.notify_event(
            TurnInterruptedEvent(
                turn_id=msg.id,
                agent=self.config.name,
                by=canceller.name if canceller is not None else None,
            )
        )
        if self._interrupted:
            self._decline(msg, sender)
            return False
        self._reply(sender, "The run was cancelled.", "notification")
        if canceller is not None and canceller != sender:
            self._reply(canceller, "The run was cancelled.", "acknowledgment")
        return False

    def _interrupt_arrived(self) -> None:
        """On the sender's thread: have the agent's loop cut a model request or a tool call
        in flight (``CancelAtStepBoundary.interrupt``: there, ``in_flight`` is exact; the
        loop is free during a tool call, sync ones included, as they are awaited on a thread
        of their own). A cut run ends with ``RunCancelled``, keeping what it completed."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the agent has stopped
            self._loop.call_soon_threadsafe(self._boundary.interrupt)

    def _was_cut(self) -> None:
        """An interrupt cut a model request or a tool call: the team is stopping, or the
        agent was fired."""
        self._cancel_requested()  # takes the interrupting cancel out of the inbox
        self._interrupted = True

    def busy_with(self) -> str | None:
        """What the turn (or ``/compact``) in progress is inside now (read by a team whose
        stop grace ran out)."""
        if self._boundary.token is None:
            return None
        if self._boundary.requesting:
            return "a model request that has not been answered"
        return "a tool call that has not ended"

    def _hold_toolsets(self) -> None:
        """Enter the cards' toolsets on the first turn and hold them until the agent stops,
        so a toolset with a connection (an MCP server) opens once, lazily, not per run."""
        if self._held_toolsets is not None or not self._run_toolsets:
            return
        stack = AsyncExitStack()
        try:
            for toolset in self._run_toolsets:
                self._loop.run_until_complete(stack.enter_async_context(toolset))
        except BaseException:
            self._loop.run_until_complete(stack.aclose())
            raise
        self._held_toolsets = stack

    def _publish_run(self, new: list[ModelMessage], run_usage: RunUsage) -> None:
        """Publish the run's messages and usage. The messages' JSON is built on the
        orchestrator's thread (``notify_event_later``), so the turn's reply need not wait
        for their encoding: pydantic-ai does not change a finished run's messages (the
        history keeps them as they are; a later run reads them through copies). Unless a
        tool returned an object rather than a plain value: the card that returned it may
        still change it, so that run is encoded now, as it was returned.

        A cut turn that kept nothing (``new`` empty: the model completed no step) is not a
        turn taken — ``AgentState.turns`` counts the turns the history holds — and a run
        that used nothing the framework knows of (its one request cut before the provider
        answered: no request counted, no token reported) publishes no usage, so a usage
        summary does not count it. Whatever usage a cut run did report is published."""
        run_id = next((m.run_id for m in new if getattr(m, "run_id", None)), "") or ""
        build = partial(LlmMessageEvent.from_messages, new, run_id=run_id, agent=self.config.name)
        if new and _returns_are_values(new):
            self.notify_event_later(build)
        elif new:
            self.notify_event(build())
        self._settle_absorbed()
        if new:
            self.state.turns += 1
        self._publish_usage(run_usage, run_id)

    def _publish_usage(self, run_usage: RunUsage, run_id: str = "") -> None:
        """Publish what a run used (``LlmUsageEvent``: a usage summary adds these up), and
        save the agent's lifetime usage. A run that failed or hit a limit after answered
        requests publishes theirs too: the provider billed them, and the tracker counted
        them toward the limits. One that used nothing publishes nothing.

        The usage is booked to the model that answered (``llm.usage_by_model``: a
        fallback's when the model in force failed), one event per model when several
        answered the run."""
        answers = self._answers.take()
        if run_usage.has_values():
            default = model_label(cast("Model", self._agent.model))
            for model, usage in usage_by_model(run_usage, answers, default):
                self.notify_event(LlmUsageEvent.from_usage(usage, run_id=run_id, model=model))
        self._save_usage()

    def _save_usage(self) -> None:
        total = self._usage.total
        self.state.lifetime_usage = {k: int(getattr(total, k, 0)) for k in _USAGE_FIELDS}
        self.state.notify_state_change()

    def _route(self, output: str | AgentReply, sender: ActorAddress | None) -> None:
        if isinstance(output, AgentReply):
            for item in output.messages:
                target = self._member(item.to, sender)
                if target is None:  # left the team since the output was validated
                    logger.warning("%s: %s is no longer a member", self.config.name, item.to)
                    continue
                self.send_or_record(target, self._message(item.content, item.type))
        elif self._hops_told and _is_agent(sender):  # told to report to the person instead
            # a response: the person's message is what it answers (ask, run -m take it so)
            self._reply(self._person(), output, "response")
        else:
            self._reply(sender, output)

    def _member(self, name: str, sender: ActorAddress | None) -> ActorAddress | None:
        wanted = address_name(name)
        if sender is not None and sender.name in (name, wanted):
            return sender
        if self.orchestrator is None:
            return None
        orchestrator = self.proxy_ask(self.orchestrator, Orchestrator, timeout=10)
        return orchestrator.get_team_member(wanted)

    def _member_names(self) -> list[str]:
        if self.orchestrator is None:
            return []
        team = self.proxy_ask(self.orchestrator, Orchestrator, timeout=10).get_team()
        return sorted(a.name for a in team if not a.name.startswith("#") and a != self.myAddress)

    async def _check_recipients(self, ctx: RunContext[None], output: str | AgentReply) -> Any:
        """The output validator: an ``AgentReply`` names members other than the agent
        itself (the model retries): a message to itself would be a turn of its own, which
        could write to itself again — a loop no member but the agent would ever see; nor a
        ``#`` tool actor, which has no handler for a message (a warning, nothing done).

        ``async`` so pydantic-ai calls it in the run's loop, on the agent's thread, where
        a sync validator would go through the executor (an extra hop per run for the text
        answers that need no check at all); the roster asks block that thread as a sync
        tool would."""
        if isinstance(output, AgentReply):
            recipients = [(m.to, self._member(m.to, self._turn_sender)) for m in output.messages]
            mine = [name for name, found in recipients if found == self.myAddress]
            if mine:
                raise ModelRetry(
                    f"{mine[0]} is you: a message to yourself would come back as a turn of "
                    f"its own, and could go round for ever. Do the work in this run, and "
                    f"address other members only."
                )
            tools = [n for n, found in recipients if found is not None and is_tool_actor(found)]
            if tools:
                raise ModelRetry(
                    f"{tools[0]} is one of the team's tools, not a member: it reads no "
                    f"messages. Call its tools instead, and address members only."
                )
            unknown = [name for name, found in recipients if found is None]
            if unknown:
                members = ", ".join(self._member_names()) or "nobody else yet"
                which = "Unknown recipient" if len(unknown) == 1 else "Unknown recipients"
                raise ModelRetry(
                    f"{which}: {', '.join(unknown)}. Current members: {members}. "
                    f"Address current members only; to add one, hire through the team tools "
                    f"first."
                )
            agents = [name for name, found in recipients if _is_agent(found)]
            if agents:
                self._hold_to_hop_limit(agents)
        elif self._turn_sender is not None and _is_agent(self._turn_sender) and not self._hops_told:
            self._hold_to_hop_limit([self._turn_sender.name])  # told: it goes to the person
        return output

    def _hold_to_hop_limit(self, agents: list[str]) -> None:
        """Refuse, in the run, a message to ``agents`` past the team's ``max_agent_hops``:
        agents answering one another would do so for ever, each answer a new turn, with no
        person in the loop. The model is told to stop and report to the person (a plain
        answer then goes to them: :meth:`_route`); the team's stream says why, once per run
        (``AgentHopLimitReached``, a warning a client shows). A person's message starts the
        count again."""
        limit = self._max_agent_hops()
        if limit is None or self._turn_hops + 1 <= limit:
            return
        who = ", ".join(agents)
        if not self._hops_told:
            self._hops_told = True
            self._report(
                AgentHopLimitReached(
                    content=f"{self.config.name} was stopped from writing to {who}: agents "
                    f"sent one another {counted(limit, 'message')} in a row since the person "
                    f"last wrote, the team's max_agent_hops; it reports to the person instead. "
                    f"Write to a member to let the agents go on.",
                    current_message=self._current_message,
                    limit=limit,
                    to=agents,
                )
            )
        person = self._person()
        instead = (
            f"answer {person.name} with where the work stands and what you need from them "
            f"(your plain answer now goes to {person.name})"
            if person is not None
            else "end your turn with a plain answer saying where the work stands: it stays "
            "on the team's log for whoever runs the team"
        )
        raise ModelRetry(
            f"Stop: do not write to {who}. The agents of this team have sent one another "
            f"{counted(limit, 'message')} in a row since the person last wrote, the most the "
            f"team allows (max_agent_hops: {limit}): no agent may write to another until a "
            f"person writes again. Instead, {instead}."
        )

    def _max_agent_hops(self) -> int | None:
        """The team's ``max_agent_hops`` (None: no bound), asked of the orchestrator once:
        a team's setting does not change while it runs."""
        if self._max_hops is None:
            if self.orchestrator is None:
                return None
            orchestrator = self.proxy_ask(self.orchestrator, Orchestrator, timeout=10)
            self._max_hops = (orchestrator.get_max_agent_hops(),)
        return self._max_hops[0]

    # -- compaction -------------------------------------------------------------------------------
    def _compact(self, *, force: bool) -> str | None:
        """Summarise the older part of the history (``force``: whatever its size), and say
        what was done; None when an interrupt cut the summary's model request short — the
        history is then as it was."""
        roster_entry = self._roster.active_config
        window = roster_entry.context_length
        if not self._history:
            return "Nothing to compact."
        if not force and (
            window is None
            or not needs_compaction(self._history, window, self.config.compaction.threshold)
        ):
            return "No compaction needed."
        keep_last = self.config.compaction.keep_last
        plan = plan_compaction(self._history, keep_last)
        if plan is None:
            return (
                f"Nothing to compact: the {len(self._history)} messages are the recent part "
                f"compaction keeps (keep_last {keep_last}, more to keep a tool call with its "
                f"result)."
            )
        before = len(self._history)
        try:
            with self._boundary.scope() as token:
                summary = self._summarize(self._history[: plan.cut], token=token)
        except RunCancelled:
            self._was_cut()
            return None
        self._replace_history(apply_summary(self._history, plan, summary))
        return f"Compacted {before} messages into {len(self._history)}."

    def _compact_before_turn(self, msg: Message) -> bool:
        """Compact the history if it is full enough; False when an interrupt cut the
        summary's model request short (the history is as it was).

        A summary that fails otherwise (its request refused or timed out, its output
        rejected, a usage limit reached) leaves the history as it was, and the turn goes on
        with it, a warning said: the history still fits (the threshold is a share of the
        window), and failing the turn for it would fail every turn after it alike — the
        agent would answer nothing until the summary came through."""
        try:
            return self._compact(force=False) is not None
        except Exception as exc:
            self._say_compaction_failed(exc, "before", "before this turn", msg)
            return True

    def _say_compaction_failed(
        self, exc: Exception, logged: str, said: str, current: Message | None
    ) -> None:
        """A summary failed (``logged``/``said``: where, for the log and for the team): one
        warning on each, naming the failure; the turn goes on with the whole history."""
        failure = describe_model_failure(exc, self._roster.active_config, self._roster)
        what = failure or f"{type(exc).__name__}: {exc}"
        logger.warning("%s: the compaction %s a turn failed: %s", self.config.name, logged, what)
        self._report(
            WarningMessage(
                content=f"{self.config.name}: the compaction {said} failed ({what}); the turn "
                f"goes on with the whole history",
                current_message=current,
            )
        )

    def _replace_history(self, messages: list[ModelMessage]) -> None:
        self._history = messages
        self.notify_event(ContextReplacedEvent.from_messages(messages, agent=self.config.name))

    def _summarizer(self, turn: ModelRequestParameters | None) -> Agent[None, Any]:
        """The agent that writes a summary on the agent's prefix: the model in force, cut by
        an interrupt, its request a turn's own — the same instructions and tool definitions,
        tool calls refused (``SummaryAsTurn``), so the provider's cache of the agent's
        prefix serves it — and accounted as a summary's (``PromptAccountingEvent`` of kind
        ``summary``). Its accounting comes after ``SummaryAsTurn``: a reply that calls a
        tool is accounted (it was billed) before it is refused.

        ``turn`` is the parameters of the request the summary shares a prefix with: within a
        run, its last request's (``LastTurnRequest``; see :meth:`_summary_within`). None —
        before a turn, on ``/compact`` (a resume's first, too) — is the next turn's: the
        agent is built from the turn's own sources (its tools, toolsets, output type and
        active toolsets, ``DynamicToolsets`` before ``SummaryAsTurn``), so pydantic-ai
        shapes its parameters as it shapes a turn's, whether or not a turn ran in this
        process."""
        capabilities: list[Any] = []
        if turn is None and self._toolsets is not None:
            capabilities.append(self._toolsets)
        capabilities.append(SummaryAsTurn(turn))
        if self._summary_accounting is not None:
            capabilities.append(self._summary_accounting)
        capabilities.append(self._answers)
        model = self._boundary.cuttable(cast("Model", self._agent.model))  # _build_model's
        if turn is not None:
            return Agent(
                model, output_type=str, instructions=self._system_prompt, capabilities=capabilities
            )
        return Agent(
            model,
            output_type=[str, AgentReply],
            instructions=self._system_prompt,
            tools=self._offered_tools,
            toolsets=self._run_toolsets or None,
            capabilities=capabilities,
        )

    def _bounded_summarizer(self) -> Agent[None, str]:
        """The agent that writes a summary the bounded way: the model in force, cut by an
        interrupt, its instructions ``SUMMARY_INSTRUCTIONS`` and no tools, its prompt the
        conversation as text (``llm.summary_prompt``, at most ``SUMMARY_PROMPT_CHARS``) — a
        request that fits a window the history itself no longer fits, and fewer tokens in
        all than one on the prefix (``summary_request: bounded``). Accounted as a summary on
        a prefix of its own."""
        accounting = self._bounded_accounting
        return Agent(
            self._boundary.cuttable(cast("Model", self._agent.model)),  # _build_model's
            instructions=SUMMARY_INSTRUCTIONS,
            capabilities=[*([accounting] if accounting is not None else []), self._answers],
        )

    def _prefix_fits(self, messages: list[ModelMessage]) -> bool:
        """Whether a summary's request on the prefix (``messages`` and the ask) may fit the
        window of the model in force: False only when the window is known and the estimate
        exceeds it."""
        window = self._roster.active_config.context_length
        return window is None or estimate_tokens(with_summary_ask(messages)) <= window

    async def _write_summary(
        self,
        messages: list[ModelMessage],
        *,
        turn: ModelRequestParameters | None,
        usage: RunUsage,
        usage_limits: UsageLimits | None,
        token: CancellationToken | None = None,
    ) -> str:
        """The summary of the history ``messages`` (up to a compaction's cut): asked on the
        agent's prefix (:meth:`_summarizer`, ``turn`` the parameters it shares), the
        provider's cache serving all of it but the ask — unless that request cannot fit the
        window. The history up to the cut can itself exceed it (a turn the model refused for
        its window compacts through here), so when the prefix is known not to fit
        (:meth:`_prefix_fits`), or the model refuses the request for its window
        (``ModelContextWindowExceededError``), the summary is written the bounded way
        instead, once (:meth:`_bounded_summarizer`); and always when the
        compaction config asks for it (``summary_request: bounded``). Any other failure, and
        the bounded request's own, is the caller's."""
        if self.config.compaction.summary_request == "prefix" and self._prefix_fits(messages):
            try:
                result = await self._summarizer(turn).run(
                    message_history=with_summary_ask(messages),
                    cancellation_token=token,
                    usage=usage,
                    usage_limits=usage_limits,
                )
                return str(result.output)
            except ModelContextWindowExceededError:
                logger.info(
                    "%s: the summary on the prefix exceeds the window; writing it bounded",
                    self.config.name,
                )
        bounded = await self._bounded_summarizer().run(
            summary_prompt(messages),
            cancellation_token=token,
            usage=usage,
            usage_limits=usage_limits,
        )
        return str(bounded.output)

    def _summarize(self, messages: list[ModelMessage], *, token: CancellationToken) -> str:
        """The summary of the history ``messages`` (up to the cut, as the history holds
        them), written by the model in force (:meth:`_write_summary`).

        Its request is the agent's like any other: its usage counts toward the agent's
        limits and lifetime usage and is published (``LlmUsageEvent``), so a usage summary
        adds it up, and it is accounted (a ``PromptAccountingEvent`` of kind ``summary``,
        which ``akgentic usage`` reports) — unless the provider never answered it (cut:
        nothing was used)."""
        self._complete_system_prompt()  # the next turn's prompt, which the summary shares
        if self.config.compaction.summary_request == "prefix":
            self._hold_toolsets()  # the next turn's toolsets: opened once, as a turn does
        run_usage = RunUsage()
        try:
            with self._usage.track(run_usage) as limits:
                return self._loop.run_until_complete(
                    self._write_summary(
                        messages, turn=None, usage=run_usage, usage_limits=limits, token=token
                    )
                )
        finally:
            self._publish_usage(run_usage)

    async def _summary_within(
        self,
        messages: list[ModelMessage],
        ctx: RunContext[Any],
        parameters: ModelRequestParameters,
    ) -> str:
        """The summary of ``messages`` (the run's history up to the cut, as its request
        shows it) for a compaction within a run (``CompactWithinRun``), written as
        :meth:`_write_summary` says — on the run's prefix unless it cannot fit the window:
        its last request's parameters, the ones the provider cached, or, when no request
        of the process was answered yet (its first refused for its window), those of the
        request being compacted (``parameters``).

        Its request is the run's: its usage is the run's (``ctx.usage``, held to the run's
        limits), so it counts toward the agent's limits and lifetime usage and is published
        with the turn's. An interrupt cuts it as it cuts the run's own requests: the run
        ends cut, its history as it was."""
        return await self._write_summary(
            messages,
            turn=self._last_turn.params or parameters,
            usage=ctx.usage,
            usage_limits=ctx.usage_limits,
        )

    def _summary_within_failed(self, exc: Exception, reason: str) -> None:
        """A summary within a run failed: the request goes on with the whole history."""
        where = f"within this turn ({reason})"
        self._say_compaction_failed(exc, "within", where, self._current_message)

    # -- cancellation and the mailbox (MailboxToolObserver) -------------------------------------
    @staticmethod
    def _create_actor_inbox() -> Any:
        """An inspectable inbox: the mailbox and cancellation read and take waiting
        messages out of order (``Akgent``'s default cannot be looked into)."""
        return _Inbox()

    def _inbox(self) -> queue.Queue[Any]:
        return cast("queue.Queue[Any]", self.actor_inbox)

    def _cancel_requested(self) -> bool:
        inbox = self._inbox()
        found: Message | None = None
        with inbox.mutex:
            for envelope in list(inbox.queue):
                msg = envelope.message
                if isinstance(msg, Message) and is_cancel(msg):
                    inbox.queue.remove(envelope)
                    found = msg
                    break
        if found is None:
            return False
        self.report_received(found.id)
        self.report_processed(found.id)
        self._cancelled_by = found
        if isinstance(found, CancelMessage) and found.interrupt:
            self._closed_by(found)
        return True

    def _closed_by(self, cancel: CancelMessage) -> None:
        """An interrupting ``cancel`` closes the agent to new turns; a fired one also makes
        what it cuts or declines answered (:meth:`_decline`), with the cancel's reason."""
        self._interrupted = True
        if cancel.fired:
            self._fired = cancel.reason or "fired"

    def _decline(self, msg: Message, sender: ActorAddress | None) -> None:
        """The turn on ``msg`` was cut, or is not taken: the agent is closed. The team is
        stopping: the turn is reported interrupted, for a resume to offer again. The agent
        was fired: no resume will, so the sender, who waits for an answer, is told."""
        if self._fired is None:
            self.notify_event(TurnInterrupted(message_id=msg.id, reason="the team is stopping"))
            return
        notice = f"{self.config.name} left the team ({self._fired}): your message was not handled."
        self._reply(sender, notice, "notification")

    def get_mailbox(self) -> list[Message]:
        """The messages waiting in this agent's inbox, oldest first (not removed)."""
        inbox = self._inbox()
        with inbox.mutex:
            return [e.message for e in inbox.queue if isinstance(e.message, Message)]

    def consume_mailbox(self, ids: Sequence[UUID]) -> list[Message]:
        """Take the waiting messages with these ids out of the inbox, oldest first."""
        wanted = set(ids)
        taken: list[Any] = []
        inbox = self._inbox()
        with inbox.mutex:
            keep = []
            for envelope in inbox.queue:
                msg = envelope.message
                if isinstance(msg, Message) and msg.id in wanted:
                    taken.append(envelope)
                else:
                    keep.append(envelope)
            inbox.queue.clear()
            inbox.queue.extend(keep)
        for envelope in taken:  # processed when the run that absorbed it is recorded
            self.report_received(envelope.message.id)
            # answering it too, the run's messages count from the longest chain it ends
            self._turn_hops = max(self._turn_hops, _hops_of(envelope.message, self._turn_hops))
        self._absorbed.extend(taken)
        return [envelope.message for envelope in taken]

    def _settle_absorbed(self) -> None:
        """The absorbed messages are processed once their run is on the team stream (a
        crash before that leaves them received-not-processed: reported as interrupted)."""
        for envelope in self._absorbed:
            self.report_processed(envelope.message.id)
        self._absorbed = []

    def _return_absorbed(self) -> None:
        """The run failed (a model request refused, a limit reached): its history is not
        kept, so neither is what it absorbed. The absorbed messages go back to the front
        of the inbox, in the order they came, to be taken as turns of their own next —
        never marked processed by a later run that never read them, their senders left
        without an answer."""
        if not self._absorbed:
            return
        inbox = self._inbox()
        with inbox.mutex:
            inbox.queue.extendleft(reversed(self._absorbed))
            inbox.not_empty.notify()
        self._absorbed = []

    # -- the team (TeamManagementToolObserver) ----------------------------------------------
    def on_hire(self, address: ActorAddress) -> None:
        """A member this agent hired through TeamTool has started."""
        logger.info("%s hired %s", self.config.name, address.name)

    def on_fire(self, address: ActorAddress) -> None:
        """Stop a member this agent fired through TeamTool, promptly, without waiting for it.

        A stop alone would come after the messages already queued for it, each taken as a
        turn first. An interrupting, fired ``CancelMessage`` goes first: it cuts the turn
        in progress at once and closes the member, which then declines what is queued,
        each sender told it was fired (:meth:`_decline`), before the stop is reached."""
        live = (
            address
            if isinstance(address, ActorAddressImpl)
            else self.system.get_address(address.agent_id)
        )
        if not isinstance(live, ActorAddressImpl):
            return
        cancel = CancelMessage(reason=f"fired by {self.config.name}", interrupt=True, fired=True)
        with contextlib.suppress(AddressError):  # it has stopped already
            self.send(live, cancel)
        live.request_stop()

    # -- the model roster (ModelSwitchToolObserver) -----------------------------------------
    def list_model_rows(self) -> list[ModelRow]:
        """The roster as serializable rows, the one in force flagged active."""
        return [ModelRow(**row.model_dump()) for row in self._roster.rows()]

    def switch_model(self, key: str) -> str:
        """Make ``key`` the model in force (ModelTool records it in ``ToolState``)."""
        self._roster.switch(key)
        self._agent.model = self._build_model()
        return f"Switched to {key}."

    def on_stop(self) -> None:
        loop = getattr(self, "_loop", None)
        held = getattr(self, "_held_toolsets", None)
        if held is not None and loop is not None and not loop.is_closed():
            try:  # close the toolsets' connections (an MCP server's process) before the loop
                loop.run_until_complete(held.aclose())
            except Exception as exc:
                logger.warning("%s: closing its toolsets failed: %r", self.config.name, exc)
        if loop is not None and not loop.is_closed():
            _close_loop(loop)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close the agent's loop as ``asyncio.run`` would: the tasks still pending on it (an
    async generator's ``aclose`` that a cut stream left scheduled) cancelled and awaited,
    the async generators shut down, then closed — asyncio logs no "Task was destroyed"."""
    try:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
