"""Talking to a team — running here, or on a server — interactively, or one exchange.

Each line the person types goes into the team through the human proxy: to the entry
point (``runtime.send``; a ``/command`` is text too, which the entry point dispatches), or
to another member when the line starts with its name (``@Worker do this`` →
``runtime.send_to``). ``/quit`` (or ``/exit``), end of input or Ctrl-C at the prompt leave.
After each line the prompt waits until the exchange ends (see :mod:`akgentic.cli.watch`).

With ``message`` set, :func:`chat` sends that one message and waits for its answer (or a
quiet period, bounded by ``timeout``). Either way the team is then stopped gracefully;
the last lines say how much the models used, how to resume the team and — for one
exchange — ``answer: <the reply>``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from uuid import UUID

from rich.console import Console
from rich.text import Text

from akgentic.cli.describe import text_of
from akgentic.cli.errors import EXIT_ERROR, explain
from akgentic.cli.handle import TeamHandle, TeamKeeper
from akgentic.cli.live import LiveView
from akgentic.cli.output import error_console, short_id
from akgentic.cli.watch import Reply, Watch
from akgentic.core import AddressError
from akgentic.team import TeamRuntime
from akgentic.team.card import member_names

__all__ = ["ChatOptions", "chat", "intro", "send_line"]

QUIT = ("/quit", "/exit")
GRACE = 30.0
"""Seconds a graceful stop gives the turns in progress."""
_ADDRESSED = re.compile(r"^(@[\w.-]+)[:,]?\s+(\S.*)$", re.DOTALL)


@dataclass(frozen=True)
class ChatOptions:
    """How to talk: one ``message`` (else interactive), how long to wait, what to show."""

    message: str | None = None
    timeout: float = 600.0
    idle: float = 5.0
    verbose: bool = False
    stream: bool = True
    retry_interrupted: bool = False


def send_line(runtime: TeamHandle, line: str) -> tuple[UUID, str]:
    """Send one typed line; returns the accepted message's id and who should answer it."""
    addressed = _ADDRESSED.match(line)
    if addressed is not None:
        member, text = addressed.groups()
        return runtime.send_to(member, text), member
    return runtime.send(line), runtime.card.entry_point


def intro(console: Console, runtime: TeamHandle, verb: str) -> None:
    """``team research (104b23b9) started: @Manager (entry point), @Worker``."""
    card = runtime.card
    names = [a.name for a in runtime.members() if a.name.startswith("@") and a.name != card.human]
    shown = ", ".join(f"{n} (entry point)" if n == card.entry_point else n for n in names)
    console.print(
        Text(f"team {card.name} ({short_id(runtime.team_id)}) {verb}: {shown}", style="dim")
    )


def chat(
    manager: TeamKeeper,
    runtime: TeamHandle,
    options: ChatOptions,
    *,
    console: Console,
    from_seq: int,
    resume_hint: str,
) -> int:
    """Talk to ``runtime`` (see the module docstring), stop it, and return the exit code."""
    card = runtime.card
    known = set(member_names(card.members)) | {a.name for a in runtime.members()}
    view = LiveView(
        console,
        human=card.human,
        known=known | ({card.human} if card.human else set()),
        verbose=options.verbose,
        stream=options.stream,
    )
    watch = Watch(runtime, view, from_seq).start()
    reply: Reply | None = None
    try:
        if options.retry_interrupted and isinstance(runtime, TeamRuntime):
            retried = runtime.retry_interrupted()
            view.note(f"delivered {len(retried)} interrupted message(s) again")
        if options.message is not None:
            message_id, responder = send_line(runtime, options.message)
            reply = watch.wait_reply(message_id, responder, options.timeout, options.idle)
        else:
            _interactive(runtime, watch, view, options)
    finally:
        if watch.busy:
            view.note(
                f"stopping the team: waiting for the turns in progress (up to {GRACE:g}s; "
                f"Ctrl-C again to stop at once)"
            )
        _stop(manager, runtime, view)
        watch.close()
    if view.usage.requests:
        console.print(Text(f"usage: {view.usage}", style="dim"))
    console.print(
        Text(f"team {card.name} ({short_id(runtime.team_id)}) stopped; {resume_hint}", style="dim")
    )
    if reply is None:
        return 0
    return _answer(console, reply, options)


def _answer(console: Console, reply: Reply, options: ChatOptions) -> int:
    if reply.message is not None and reply.how != "timeout":
        console.print(Text(f"answer: {text_of(reply.message)}"))
        return 0
    if reply.how == "timeout":
        problem = f"no answer within {options.timeout:g}s (raise it with --timeout SECONDS)"
    elif reply.how == "stopped":
        problem = "the team stopped before answering"
    else:
        problem = f"the team went quiet for {options.idle:g}s without writing to the human"
    error_console().print(Text(f"error: {problem}", style="red"))
    return EXIT_ERROR


def _interactive(runtime: TeamHandle, watch: Watch, view: LiveView, options: ChatOptions) -> None:
    entry = runtime.card.entry_point
    tty = sys.stdin.isatty()
    view.note(
        f"Write to {entry} (`@Member text` writes to another member; /commands go to {entry}); "
        f"/quit or end of input leaves."
    )
    while True:
        try:
            line = input("you> " if tty else "").strip()
        except (EOFError, KeyboardInterrupt):
            if tty:
                print()
            return
        if not line:
            continue
        if line in QUIT:
            return
        try:
            message_id, responder = send_line(runtime, line)
        except AddressError as exc:
            view.note(f"error: {explain(exc)}", "red")
            continue
        try:
            reply = watch.wait_reply(message_id, responder, options.timeout, options.idle)
        except KeyboardInterrupt:
            view.note("no longer waiting (the team goes on); write again, or /quit")
            continue
        if reply.how == "stopped":
            view.note("the team stopped")
            return
        if reply.how == "timeout":
            view.note(f"no answer within {options.timeout:g}s; the team goes on", "yellow")


def _stop(manager: TeamKeeper, runtime: TeamHandle, view: LiveView) -> None:
    """Stop the team gracefully; a failure to do so is printed, not raised."""
    try:
        manager.stop_team(runtime.team_id, grace_timeout=GRACE)
    except Exception as exc:
        view.note(f"error: the team did not stop cleanly: {explain(exc)}", "red")
