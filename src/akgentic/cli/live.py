"""The live view: a running team's events printed as they happen.

- Messages: ``@A → @B (type): content`` (messages to the person in bold; the answer to
  an unknown or failed ``/command`` in red). Every message but those to the person — the
  person's own echoed, the members' to one another — is clipped at :data:`LINE_CHARS`
  (``… (1,048,576 characters)``): a 1 MB paste a member passes on shows as one short line
  each time; the team got it whole, and ``verbose`` shows it whole. What the person is
  sent (the answer) is printed whole.
- Streamed text: ``@Worker ✎ `` then the deltas as they arrive, on one line per stretch.
  An answer cut off and asked again (``LlmAnswerRestartedEvent``) has its text taken back:
  on a terminal, while its stretch is the last thing printed, the stretch's rows are
  erased and what stays of it (text of the run's before this answer) printed again, so the
  view ends showing the whole answer only; elsewhere (a pipe, a log, another line printed
  since) printed text stays and a line says it was cut off, the new answer after it.
- Tool use, dim: ``⚙ @Worker → use_skill(name=three-points)``, ``✓ @Worker use_skill
  returned``; tool state, dim: ``◆ #PlanningTool state changed (PlanDelta #3)``.
- Workspace work as it happens: ``◆ @Coder modified slug.py (+1 -1)`` per file changed,
  ``$ @Coder python3 -m unittest`` when a command starts in the sandbox, then
  ``✓ @Coder's python3 -m unittest ended: exit 0 (0.15s)`` (``✗`` in yellow when it failed).
- Errors in red, warnings in yellow; members hired along the way: ``+ @Reviewer joined``.
- With ``verbose``: everything else (receipts, state snapshots, usage, commands...).

:class:`LiveView` is fed by one thread (:meth:`render`) while another may print notes
(:meth:`note`); a lock keeps lines whole. It also totals the tokens the team used. Every
line is a :class:`~akgentic.cli.output.SafeText`: its control characters are shown
escaped (:func:`~akgentic.cli.output.printable`), whatever console it is given.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control
from rich.segment import ControlCode, ControlType

from akgentic.agent import AgentMessage
from akgentic.cli import logs
from akgentic.cli.describe import (
    Describer,
    call_text,
    change_text,
    exec_finished_text,
    name_of,
    one_line,
    sent_line,
    text_of,
    to_person,
    usage_text,
)
from akgentic.cli.output import SafeText, member_name, printable, symbols_for
from akgentic.core import (
    ErrorMessage,
    EventMessage,
    Message,
    SentMessage,
    StartMessage,
    StopMessage,
    TeamStoppingEvent,
    WarningMessage,
)
from akgentic.llm import (
    LlmAnswerRestartedEvent,
    LlmTextDeltaEvent,
    LlmUsageEvent,
    ToolCallEvent,
    ToolReturnEvent,
)
from akgentic.storage import EventRecord
from akgentic.tool.core import ToolStateEvent
from akgentic.tool.mcp import MCPServerUnavailable
from akgentic.tool.skill import SkillsSkippedEvent
from akgentic.tool.workspace import ExecFinishedEvent, ExecStartedEvent, WorkspaceChangeEvent

__all__ = ["LINE_CHARS", "LiveView", "Usage"]

LINE_CHARS = 500
"""The longest message body the live view prints, in characters, but for the messages to
the person (see the module docstring): the person's line (a 1 MB paste, say) is sent
whole, and shown — echoed, or passed on by a member — as its first 499 characters,
``… (1,048,576 characters)``."""


@dataclass
class Usage:
    """Tokens and model requests added up from ``LlmUsageEvent``s."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, event: LlmUsageEvent) -> None:
        self.requests += event.requests
        self.input_tokens += event.input_tokens
        self.output_tokens += event.output_tokens

    def __str__(self) -> str:
        return usage_text(self.requests, self.input_tokens, self.output_tokens)


class LiveView:
    """Prints event records as they happen; see the module docstring."""

    def __init__(
        self,
        console: Console,
        *,
        human: str | None,
        known: set[str],
        verbose: bool = False,
        stream: bool = True,
    ) -> None:
        self.console = console
        self.human = human
        self.known = set(known)
        self.verbose = verbose
        self.stream = stream
        self.usage = Usage()
        self.marks = symbols_for(console)
        self._describer = Describer(self.marks.arrow)
        self._lock = threading.RLock()
        self._open: str | None = None  # whose streamed line is open
        self._shown: list[tuple[str, str]] = []  # its deltas: (text, as printed)
        self._stopping = False
        self._prompt: str | None = None  # the prompt waiting for the person, if any
        self._prompt_shown = False  # ...and whether it is on the current line
        self._errors: list[str] = []  # ``@Member: text`` of each error line printed

    # -- for callers -------------------------------------------------------------------------
    def render(self, record: EventRecord) -> None:
        """Print what ``record`` shows (often nothing: most records are bookkeeping)."""
        with self._lock:
            message = record.message
            if message is None:
                self._line(
                    f"{self.marks.failed} event {record.seq} could not be read: {record.error}",
                    "red",
                )
                return
            self._render(message)

    def note(self, text: str, style: str = "dim") -> None:
        """Print a line of the CLI's own (a hint, a warning) between the team's lines."""
        with self._lock:
            self._line(text, style)

    def finish(self) -> None:
        """End a streamed line that is still open."""
        with self._lock:
            self._close()

    def prompt(self, text: str) -> None:
        """Show ``text`` (``you> ``) for the person to type after. Until :meth:`answered`,
        a line printed meanwhile goes on a line of its own, and the prompt follows it
        again."""
        with self._lock:
            self._close()
            self._prompt = text
            self._show_prompt()

    def answered(self) -> None:
        """The person ended their line (their Enter left the prompt's line)."""
        with self._lock:
            self._prompt, self._prompt_shown = None, False

    def _show_prompt(self) -> None:
        if self._prompt and not self._prompt_shown:
            self.console.print(SafeText(self._prompt), end="")
            self.console.file.flush()
            self._prompt_shown = True

    def _leave_prompt(self) -> None:
        if self._prompt_shown:
            self.console.print()  # off the prompt's line
            self._prompt_shown = False

    def shown(self, failure: str) -> bool:
        """Whether ``failure`` (``@Member: why``, an exchange's ending) was printed already
        as that member's error line (``✗ @Member error: ...why...``): said once, not again."""
        who, _, why = failure.partition(": ")
        return bool(why) and any(
            line.startswith(f"{who}: ") and why in line for line in self._errors
        )

    # -- rendering -----------------------------------------------------------------------------
    def _render(self, message: Message) -> None:
        m = self.marks
        sender = name_of(message.sender)  # as it is, to compare; ``who`` as printed
        who = member_name(sender)
        if isinstance(message, SentMessage):
            self._describer.remember(message)
            to_human = to_person(message, self.human)
            failed = isinstance(message.message, AgentMessage) and message.message.failed
            style = "red" if failed else "bold" if to_human else ""
            whole = to_human or self.verbose
            self._line(sent_line(message, m.arrow, None if whole else LINE_CHARS), style)
        elif isinstance(message, EventMessage):
            self._event(who, message)
        elif isinstance(message, ErrorMessage):
            self._errors.append(f"{who}: {text_of(message)}")
            self._line(f"{m.failed} {who} error: {text_of(message)}", "red")
            if message.traceback and logs.tracebacks_shown():  # --debug, as for any error
                self._line(message.traceback.rstrip(), "dim red")
        elif isinstance(message, WarningMessage):
            self._line(f"{m.warning} {who} warning: {text_of(message)}", "yellow")
        elif isinstance(message, StartMessage) and self._is_news(sender):
            self.known.add(sender)
            self._line(f"{m.joined} {who} joined", "dim")
        elif isinstance(message, StopMessage) and self._is_news(sender, leaving=True):
            self._line(f"{m.left} {who} left", "dim")
        elif self.verbose:
            self._line(self._describer.summary(message), "dim")

    def _is_news(self, name: str, *, leaving: bool = False) -> bool:
        """A member joining or leaving mid-conversation (not at start-up or team stop)."""
        if self.verbose:
            return True
        if self._stopping or not name.startswith("@"):
            return False
        return (name in self.known) if leaving else (name not in self.known)

    def _event(self, who: str, message: EventMessage) -> None:
        m, event = self.marks, message.event
        if isinstance(event, LlmTextDeltaEvent):
            if self.stream:
                self._delta(who, event.delta)
        elif isinstance(event, LlmAnswerRestartedEvent):
            if self.stream:
                self._restart(who, event.chars)
        elif isinstance(event, ToolCallEvent):
            self._line(f"{m.tool} {who} {m.arrow} {call_text(event)}", "dim")
        elif isinstance(event, ToolReturnEvent):
            if event.success:
                self._line(f"{m.ok} {who} {event.tool_name} returned", "dim")
            else:
                self._line(f"{m.failed} {who} {event.tool_name} {event.outcome}", "yellow")
        elif isinstance(event, MCPServerUnavailable):
            self._line(f"{m.warning} {who} {event.message}", "yellow")
        elif isinstance(event, SkillsSkippedEvent):
            for skipped in event.errors:
                self._line(
                    f"{m.warning} {who} skill {skipped.path} skipped: {skipped.reason}", "yellow"
                )
        elif isinstance(event, ToolStateEvent):
            payload = type(event.payload).__name__
            self._line(
                f"{m.state} {member_name(event.tool_id)} state changed ({payload} #{event.seq})",
                "dim",
            )
        elif isinstance(event, WorkspaceChangeEvent):
            self._line(f"{m.state} {change_text(event)}", "")
        elif isinstance(event, ExecStartedEvent):
            self._line(f"$ {member_name(event.agent)} {one_line(event.command, 200)}", "bold")
        elif isinstance(event, ExecFinishedEvent):
            ok = event.error is None and event.exit_code == 0
            mark = m.ok if ok else m.failed
            self._line(f"{mark} {exec_finished_text(event)}", "" if ok else "yellow")
        else:
            if isinstance(event, LlmUsageEvent):
                self.usage.add(event)
            elif isinstance(event, TeamStoppingEvent):
                self._stopping = True
            if self.verbose:
                self._line(self._describer.summary(message), "dim")

    # -- printing ------------------------------------------------------------------------------
    def _head(self, who: str) -> str:
        return f"{who} {self.marks.writing} "

    def _delta(self, who: str, delta: str) -> None:
        if self._open != who:
            self._close()
            self._leave_prompt()
            self.console.print(SafeText(self._head(who), style="dim"), end="")
            self._open = who
        printed = printable(delta.replace("\n", "\n  "))
        self._shown.append((delta, printed))
        self.console.print(SafeText(printed, style="dim"), end="")

    def _restart(self, who: str, chars: int) -> None:
        """``who``'s last ``chars`` characters of text were no answer (module docstring)."""
        console = self.console
        if self._open != who or not console.is_terminal or console.is_dumb_terminal:
            self._line(
                f"{self.marks.warning} {who}'s answer above was cut off: it starts again",
                "yellow",
            )
            return
        kept, left = [text for text, _ in self._shown], chars
        while kept and left > 0:
            text = kept.pop()
            if len(text) > left:
                kept.append(text[: len(text) - left])
            left -= len(text)
        self._erase(self._head(who) + "".join(printed for _, printed in self._shown))
        self._open, self._shown = None, []
        for text in kept:
            self._delta(who, text)

    def _erase(self, shown: str) -> None:
        """Take ``shown`` (the open stretch, the cursor at its end) off the terminal: each
        row it took, the terminal wrapping its lines at the console's width, is cleared,
        and the cursor left at the start of its first."""
        width = max(self.console.width, 1)
        rows = sum(max(1, -(-cell_len(line.expandtabs()) // width)) for line in shown.split("\n"))
        clear = (ControlType.ERASE_IN_LINE, 2)
        codes: list[ControlCode] = [(ControlType.CARRIAGE_RETURN,), clear]
        codes += [(ControlType.CURSOR_UP, 1), clear] * (rows - 1)
        # through print, as every line: a terminal that hung up is output_lost, not an OSError
        self.console.print(Control(*codes), end="")

    def _close(self) -> None:
        if self._open is not None:
            self.console.print()
            self._open = None
        self._shown = []

    def _line(self, text: str, style: str) -> None:
        self._close()
        self._leave_prompt()
        self.console.print(SafeText(text.replace("\n", "\n  "), style=style))
        self._show_prompt()
