"""Talking to a team — running here, or on a server — interactively, or one exchange.

Each line the person types goes into the team through the human proxy: to the entry
point (``runtime.send``; a ``/command`` is text too, which the entry point dispatches), or
to another member when the line starts with its name (``@Worker do this`` →
``runtime.send_to``). ``/quit`` (or ``/exit``) or end of input leave. After each line the
prompt waits until the exchange ends (see :mod:`akgentic.cli.watch`).

With ``message`` set, :func:`chat` sends that one message and waits for its answer (or a
quiet period, bounded by ``timeout``; when the timeout runs out with turns in progress,
they are cut as by a Ctrl-C — a model request in flight at once — listed as interrupted
and kept for ``--retry-interrupted``). Either way the team is then stopped gracefully;
the last lines say how much the models used, which messages wait for the next resume
(sent to a member that had stopped), how to resume the team and — for one exchange —
``answer: <the reply>``, or, when the exchange failed (a failed turn, an unknown or
failed ``/command``: its answer is marked ``AgentMessage.failed``, its turn cut by a
cancel from elsewhere — the page's interrupt button — which keeps nothing to retry, no
answer in time, the team stopped with the exchange's work left: an acknowledgment is no
answer), ``error: <why>`` on stderr and exit code 1.

Ctrl-C, wherever the session is (at the prompt, waiting for an answer, stopping):
the first one cancels the turns in progress at their next step boundary, waits for
them, stops the team, lists the interrupted turns and says how to resume (exit code
130); a second one exits at once (:mod:`akgentic.cli.interrupt`), saying how many
records a store that refuses writes had not taken, which are lost, and what to do.
SIGTERM and SIGHUP are taken as Ctrl-C (exit codes 143 and 129), and so is an output
whose reader went (a closed pipe, a hung-up terminal: exit code 141, what is left to
print goes nowhere).
The caller runs the session within :func:`interrupt.deferred`: the first Ctrl-C reaches
it only where it checks (its waits, each :data:`interrupt.SLICE`), never inside the
framework code the main thread runs, and the stops run :func:`interrupt.aside`. One
taken before the team is made (or restored) ends the command at the caller's safe
point, :func:`before_start`: nothing is made only to be stopped (``interrupted before the
team started: nothing was stored``); one taken during the team's start-up stops it the
same way as later. Either says that the message was not sent, as the session says of a
line typed while the team was working that it had not taken when it ended (Ctrl-C, a
signal, a stop from elsewhere): ``the message was not sent: <the line>``, never lost
without a word; a second Ctrl-C as the team starts says how to resume a team that may
be stored, and that message too. A team stopped from another terminal
(``akgentic teams stop``) ends the session: it says so and exits. A team on a server
that is deleted meanwhile (``akgentic teams delete --server``, the page, ``DELETE
/teams/{id}``) ends it too: one line says so, exit code 1. A store that refuses writes (a
disk full, a read-only file) does not end it: a line not saved within :data:`SAVE_WAIT`
is said (:data:`NOT_SAVED_YET`) and waited on as any other — the team works on it, its
records are kept in memory, and what it does shows once the store takes them (a Ctrl-C
while it waits to be saved is taken then). Should another process take the team over
meanwhile (its lease ran out while the store refused the renewals), each line not saved
by then is said (``the message was not saved: <the line>``): it went with the lease. A
stop that finally loses records (the store
still refusing them) says how many and what to do, and the session exits 1 (or with its
signal's code); the team is then left as after a crash, not marked STOPPED.
"""

from __future__ import annotations

import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn, cast
from uuid import UUID

import typer
from rich.console import Console

from akgentic.agent import CHAT_COMMANDS, AgentMessage
from akgentic.cli import interrupt, logs
from akgentic.cli.describe import one_line, sent_line, text_of
from akgentic.cli.errors import EXIT_ERROR, CliError, explain
from akgentic.cli.handle import TeamHandle, TeamKeeper
from akgentic.cli.keyboard import ENDED, Keyboard, typed_ahead
from akgentic.cli.live import LiveView
from akgentic.cli.output import (
    SafeText,
    error_console,
    member_name,
    out_console,
    printable,
    team_title,
    write_out,
)
from akgentic.cli.remote import interrupted_turns
from akgentic.cli.watch import Reply, Watch
from akgentic.client import AkgenticClient, CardInfo, RemoteTeam, ServerError, TeamDeletedError
from akgentic.core import AddressError, Message, SentMessage
from akgentic.core.words import counted, did_you_mean
from akgentic.storage import LeaseLostError
from akgentic.team import (
    HostedTeam,
    NotCommittedError,
    Suggestion,
    TeamCard,
    TeamManager,
    TeamRuntime,
)
from akgentic.team.card import member_names
from akgentic.team.recorder import LOSS_ADVICE

__all__ = [
    "MAYBE_CRASHED",
    "NONE_TO_DISMISS",
    "NONE_TO_RETRY",
    "NOT_RESUMED",
    "NOT_STARTED",
    "ChatOptions",
    "before_start",
    "chat",
    "check_addressee",
    "ended_at_once",
    "how_to_resume",
    "intro",
    "not_started",
    "quote",
    "retried_note",
    "send_line",
    "starting_at_once",
    "unstarted_at_once",
]

QUIT = tuple(f"/{name}" for name in CHAT_COMMANDS)
NONE_TO_RETRY = "no interrupted turn to deliver again"
NONE_TO_DISMISS = "no interrupted turn to dismiss"
"""What a resume with --retry-interrupted / --dismiss-interrupted says when the team has
no interrupted turn: the flag is answered, not ignored in silence."""


def retried_note(retried: int, out_of_order: dict[UUID, int]) -> str:
    """What a resume with --retry-interrupted says it did: how many turns it delivered
    again and, of those a resume could not redo in their place (the team had gone on
    without them: ``TeamRuntime.out_of_order``), how many and after how many newer
    messages — never a reordering the person is not told of."""
    said = f"delivered {counted(retried, 'interrupted message')} again"
    if not out_of_order:
        return said
    late = len(out_of_order)
    which = "" if late == retried else f", {late} of them"
    whose = "its recipient" if late == 1 else "their recipients"
    newer = counted(sum(out_of_order.values()), "newer message")
    return f"{said}{which} out of order: after {newer} {whose} had taken on since"


GRACE = 30.0
"""Seconds a graceful stop gives the turns in progress."""
SAVE_WAIT = 5.0
"""Seconds a line sent to a team running here waits to be saved before the session says
the store has not taken it yet (:data:`NOT_SAVED_YET`) and waits on for its answer."""
NOT_SAVED_YET = (
    "the message was delivered, but the store has not saved it yet: the team works on it, "
    "and what it does is kept in memory and saved once the store takes writes again (it "
    "shows here then); the session goes on"
)
_ADDRESSED = re.compile(r"^(@[\w.-]+)[:,]?\s+(\S.*)$", re.DOTALL)
_NAME_ONLY = re.compile(r"^(@[\w.-]+)[:,]?$")


def _name_only(line: str) -> str | None:
    """What to write instead when ``line`` is a member's name and nothing else: sent as
    it is, the entry point would get the text ``@Worker`` to answer."""
    alone = _NAME_ONLY.match(line)
    if alone is None:
        return None
    name = member_name(alone.group(1))
    return f"a message goes after the name: {name} <your message>, e.g. {name} what is next?"


@dataclass(frozen=True)
class ChatOptions:
    """How to talk: one ``message`` (else interactive), how long to wait, what to show."""

    message: str | None = None
    timeout: float = 600.0
    idle: float = 5.0
    verbose: bool = False
    stream: bool = True
    retry_interrupted: bool = False
    """The team was resumed with ``retry_interrupted``: its resume delivered the interrupted
    turns again (before the messages queued behind them); the session says how many and
    reads them before it stops the team."""


NOT_STARTED = "before the team started: nothing was stored"
NOT_RESUMED = "before the team was resumed: nothing was changed"
"""Where a Ctrl-C ended a session before its team ran (``run``; ``teams resume``, its
stored team as it was): said after ``interrupted`` (``interrupted by SIGTERM``)."""
MAYBE_CRASHED = "it may be stored as a team that crashed"
"""What a process ended at once as its team was starting, or being resumed, may leave: a
resume restores the team from its log."""


def before_start(where: str, options: ChatOptions) -> None:
    """A session's safe point before its team starts (or is resumed): a Ctrl-C taken so
    far (``interrupt.deferred``) ends the command here, as :func:`not_started` says."""
    try:
        interrupt.check()
    except KeyboardInterrupt:
        not_started(where, options)


def not_started(where: str, options: ChatOptions) -> NoReturn:
    """End a session that a Ctrl-C stopped before its team ran: one line, ``interrupted
    WHERE`` (:data:`NOT_STARTED`, :data:`NOT_RESUMED`), then what was not sent — the
    ``--message``, or the lines typed meanwhile (an interactive session's: taken from
    the input now, so none is left for the shell) — ``the message was not sent: <the
    line>``, as a session that ends later says it; exit code 128 + the signal's number
    (a closed output: nothing said, 141)."""
    if interrupt.cause() != signal.SIGPIPE:
        error_console().print(SafeText(f"{interrupt.interrupted_by()} {where}", style="yellow"))
    left = [options.message] if options.message is not None else _typed(typed_ahead())
    console = out_console()
    for line in left:
        console.print(SafeText(f"the message was not sent: {one_line(line)}", style="yellow"))
    raise typer.Exit(interrupt.exit_code())


def unstarted_at_once(where: str, options: ChatOptions) -> str:
    """What a second Ctrl-C says before the session's team runs (nothing of it is stored
    yet, or changed: ``where``), and the ``--message`` it leaves unsent."""
    return _with_unsent(printable(f"interrupted again: stopped at once {where}"), options.message)


def starting_at_once(doing: str, then: str, options: ChatOptions) -> str:
    """What a second Ctrl-C says while the session's team starts or is resumed: ``as
    DOING`` (``team NAME (ID) was starting (it may be stored as a team that crashed)``),
    ``then`` what to do (how to resume it); and the ``--message`` it leaves unsent."""
    return _with_unsent(
        printable(f"interrupted again: stopped at once as {doing}; {then}"), options.message
    )


def _with_unsent(words: str, message: str | None) -> str:
    """A second Ctrl-C's ``words``, and ``the message was not sent: <message>`` when a
    message is left unsent (written raw: made printable)."""
    if message is None:
        return words
    return f"{words}\n" + printable(f"the message was not sent: {one_line(message)}")


def check_addressee(card: TeamCard | CardInfo, line: str) -> None:
    """A :class:`CliError` when ``line`` is addressed to no member of ``card``'s team as it
    starts (a card, or a server's description of one): said before the team is created, so
    a misspelt name leaves no team behind."""
    name_only = _name_only(line)
    if name_only is not None:
        raise CliError(name_only)
    addressed = _ADDRESSED.match(line)
    member = addressed.group(1) if addressed is not None else None
    members = card.members if isinstance(card, CardInfo) else member_names(card.members)
    names = set(members) - {card.human}
    shown = ", ".join(member_name(n) for n in sorted(names))
    entry = member_name(card.entry_point)
    if member is not None and member == card.human:
        raise CliError(
            f"{member_name(member)} is the person writing, not a member: address one of "
            f"{shown}, or leave the name out to write to {entry}"
        )
    if member is not None and member not in names:
        near = did_you_mean(member, sorted(names))
        raise CliError(
            f"{member_name(member)} is not a member of this team "
            f"({near + ' ' if near else ''}members: {shown}): "
            f"address one of them, or leave the name out to write to {entry}"
        )


def send_line(runtime: TeamHandle, line: str) -> tuple[UUID, str]:
    """Send one typed line; returns the accepted message's id and who should answer it.
    A member's name alone is an :class:`AddressError` saying to write a message after it."""
    name_only = _name_only(line)
    if name_only is not None:
        raise AddressError(name_only)
    addressed = _ADDRESSED.match(line)
    if addressed is not None:
        member, text = addressed.groups()
        return runtime.send_to(member, text), member
    return runtime.send(line), runtime.card.entry_point


def _send(
    runtime: TeamHandle,
    line: str,
    view: LiveView,
    delivered: Callable[[], None] | None = None,
    unsaved: list[tuple[UUID, str]] | None = None,
) -> tuple[UUID, str]:
    """:func:`send_line`, ``delivered`` called once the line is delivered; a line not
    saved in time (the store refuses writes) is said (:data:`NOT_SAVED_YET`), kept in
    ``unsaved`` (the session's end says it if it never was: :func:`_never_saved`), and
    waited on as any other: its records are kept, and its answer shows once the store
    takes them.

    A team here waits for the save a slice at a time (its ``commit_timeout``, set by the
    session), the rest of :data:`SAVE_WAIT` here, checking for Ctrl-C: one then stops the
    team as anywhere else (the line is delivered: not said unsent)."""
    try:
        sent = send_line(runtime, line)
    except NotCommittedError as exc:
        if delivered is not None:
            delivered()
        waited = time.monotonic() + SAVE_WAIT - cast(TeamRuntime, runtime).commit_timeout
        while not cast(TeamRuntime, runtime).saved(exc.message_id, interrupt.SLICE):
            interrupt.check()
            if time.monotonic() >= waited:
                view.note(NOT_SAVED_YET, "yellow")
                if unsaved is not None:
                    unsaved.append((exc.message_id, line))
                break
        addressed = _ADDRESSED.match(line)
        return exc.message_id, addressed.group(1) if addressed else runtime.card.entry_point
    if delivered is not None:
        delivered()
    return sent


def intro(console: Console, runtime: TeamHandle, verb: str) -> None:
    """``team research (104b23b9) started: @Manager (entry point), @Worker``."""
    card = runtime.card
    names = [a.name for a in runtime.members() if a.name.startswith("@") and a.name != card.human]
    shown = ", ".join(
        f"{member_name(n)} (entry point)" if n == card.entry_point else member_name(n)
        for n in names
    )
    console.print(
        SafeText(f"{team_title(card.name, runtime.team_id)} {verb}: {shown}", style="dim")
    )


def chat(
    manager: TeamKeeper,
    runtime: TeamHandle,
    options: ChatOptions,
    *,
    console: Console,
    from_seq: int,
    resume: str | None,
) -> int:
    """Talk to ``runtime`` (see the module docstring), stop it, and return the exit code.
    ``resume`` is the command that resumes the team, None when nothing keeps it (a
    ``memory://`` storage): the last lines say so instead.

    A local caller wraps the team's start and this call in :func:`logs.stream_shown`: the
    live view prints the members' failures and warnings, once. A session whose team
    stopped with records its store still refused (lost, or maybe lost: the recorder's
    ``error:`` line says so, ``EventRecorder.end_saved``), or whose stop did not end in
    its wait (its records not all saved as the process ends: ``TeamRuntime.stop``'s
    line), exits 1, whatever it got."""
    code = _chat(manager, runtime, options, console, from_seq, resume)
    if code == 0 and isinstance(runtime, TeamRuntime) and runtime.recorder.end_saved is not True:
        return EXIT_ERROR
    return code


def _chat(
    manager: TeamKeeper,
    runtime: TeamHandle,
    options: ChatOptions,
    console: Console,
    from_seq: int,
    resume: str | None,
) -> int:
    card = runtime.card
    resume_hint = how_to_resume(resume)
    known = set(member_names(card.members)) | {a.name for a in runtime.members()}
    view = LiveView(
        console,
        human=card.human,
        known=known | ({card.human} if card.human else set()),
        verbose=options.verbose,
        stream=options.stream,
    )
    if isinstance(runtime, TeamRuntime):  # the rest of SAVE_WAIT is waited by _send
        runtime.commit_timeout = interrupt.SLICE
    keyboard = Keyboard() if options.message is None else None
    watch = Watch(runtime, view, from_seq, on_end=keyboard.end if keyboard else None).start()
    title = team_title(card.name, runtime.team_id)
    reply: Reply | None = None
    asked: tuple[UUID, str] | None = None  # the one exchange's message id and responder
    last: Reply | None = None  # the last exchange of an interactive session
    cut: list[Message] | None = None
    timed_out: list[Message] | None = None  # the turns cut when the timeout ran out
    deleted = False
    unsent = options.message
    refused: list[str] = []  # lines the team stopped before they could be sent
    unsaved: list[tuple[UUID, str]] = []  # lines delivered that the store had not saved

    def delivered() -> None:  # before its save is waited for: a Ctrl-C may come then
        nonlocal unsent
        unsent = None

    def at_once() -> str:  # what a second Ctrl-C cut, and the message it leaves unsent
        if isinstance(runtime, TeamRuntime):
            words = ended_at_once(resume_hint, [runtime])
        else:
            words = _at_once(TURNS_CUT, resume_hint)
        return _with_unsent(words, unsent)

    interrupt.at_once = at_once

    try:
        try:
            interrupt.check()  # one taken during the start-up stops the team like any other
            if options.retry_interrupted and isinstance(runtime, TeamRuntime):
                retried = runtime.retried  # by the resume: before the messages queued behind
                view.note(
                    retried_note(len(retried), runtime.out_of_order) if retried else NONE_TO_RETRY
                )
            if options.retry_interrupted:  # a stop waits for the retried turns: read them
                watch.catch_up(_last_seq(manager, runtime), options.timeout)
            if options.message is not None:
                asked = _send_unless_taken_over(runtime, options.message, view, delivered, unsaved)
                if asked is None:  # taken over as it was sent: not kept, whether delivered
                    unsent = options.message
                else:
                    reply = watch.wait_reply(*asked, options.timeout, options.idle)
            else:
                assert keyboard is not None
                last = _interactive(runtime, watch, view, options, keyboard, refused, unsaved)
            if watch.deleted:
                raise TeamDeletedError(runtime.team_id)
            if _taken_over(runtime, title) is not None:
                pass  # not this process's team any more: a stop would stop the new holder's
            elif (reason := _stop_reason(runtime, watch)) is not None:
                view.note(f"{title} stopped: {reason}", "yellow")
            elif reply is not None and reply.how == "timeout" and watch.busy(after=reply):
                timed_out = _cut_turns(
                    manager,
                    runtime,
                    view,
                    f"no answer within {options.timeout:g}s: cancelling the turns in progress "
                    f"at their next step and stopping the team (up to {GRACE:g}s)",
                )
            elif watch.busy(after=reply or last):
                view.note(
                    f"stopping the team: waiting for the turns in progress (up to {GRACE:g}s; "
                    f"Ctrl-C to cancel them)"
                )
            if (
                timed_out is None
                and _taken_over(runtime, title) is None
                and not _server_down(watch)
            ):
                _stop(manager, runtime, view)
        except TeamDeletedError:
            deleted = True  # nothing to stop: the server did
        except KeyboardInterrupt:
            if _lost(runtime) is None:  # else the team is another process's: not ours to stop
                cut = _interrupt(manager, runtime, view)
    finally:
        watch.close()
    left = [unsent] if unsent is not None else [*refused, *_typed_left(keyboard)]
    if view.usage.requests:
        console.print(SafeText(f"usage: {view.usage}", style="dim"))
    for line in left:
        console.print(SafeText(f"the message was not sent: {one_line(line)}", style="yellow"))
    taken = _taken_over(runtime, title)
    for line in _never_saved(runtime, unsaved) if taken is not None else []:
        console.print(
            SafeText(
                f"the message was not saved: {one_line(line)} (the team was taken over before "
                f"the store took it: send it again where the team runs now)",
                style="yellow",
            )
        )
    if taken is not None and cut is None:
        error_console().print(SafeText(f"error: {taken}", style="red"))
        logs.lease_loss_said()  # the recorder reports its dropped records as the team stops
        return EXIT_ERROR
    if not deleted:
        _say_waiting(console, watch.waiting())
    if deleted:
        error_console().print(SafeText(f"error: {title} was deleted on the server", style="red"))
        return EXIT_ERROR
    if cut is not None:
        _stopped(console, title, cut, resume, ended=_stop_ended(runtime))
        return interrupt.exit_code()
    if timed_out is None and watch.cut():  # the graceful stop's grace cut turns
        try:
            timed_out = _interrupted_turns(manager, runtime)
        except ServerError:  # its server is gone with it: the resume lists them
            if not _server_down(watch):
                raise
    _stopped(console, title, timed_out or [], resume, ended=_stop_ended(runtime))
    if reply is None or asked is None:
        return 0
    if reply.how == "timeout":  # an answer that came while the team stopped counts
        reply = watch.answered(*asked) or reply
    listed = (  # whether a turn of the exchange is kept for a retry (None: unknown)
        None
        if timed_out is None and watch.cut()
        else any(watch.caused(m.id, asked[0]) for m in timed_out or [])
    )
    reason = _stop_reason(runtime, watch)
    return _answer(console, reply, options, reason, view, resume_hint, listed=listed)


TURNS_CUT = "the turns in progress were cut"
CLOSING_CUT = "the turns had ended; the team's stop was saving its last records"
CLOSINGS_CUT = "the turns had ended; the teams' stops were saving their last records"
NOTHING_CUT = "no team was running here"
"""What a second Ctrl-C cut: the turns in progress, or — their members all stopped — the
teams' stops writing their last records; or nothing (a server whose teams run elsewhere,
or had all stopped)."""


def _at_once(cut: str, resume_hint: str) -> str:
    """The second Ctrl-C's line (written raw: made printable): what it ``cut``, how to
    resume."""
    return printable(f"interrupted again: stopped at once ({cut}); {resume_hint}")


def ended_at_once(resume_hint: str, runtimes: Sequence[TeamRuntime]) -> str:
    """What the second Ctrl-C prints: what it cut — the turns in progress, or, once every
    team's stop is past its regular members (all stopped: no turn is left to cut, the
    stop is at its tool actors and last records, ``ActorSystem.members_stopped``), that
    stop's last records, or nothing when no team runs here — and how to resume;
    then, for each team whose store still refuses records the process keeps, which ending
    now loses, one ``error:`` line: how many, and what to do (the line a stop that gives
    up on them logs). Called in the signal handler: it only reads."""
    ended = [r.system.members_stopped(r.team_id) for r in runtimes]
    if not runtimes:
        cut = NOTHING_CUT
    elif not all(ended):
        cut = TURNS_CUT
    else:
        cut = CLOSING_CUT if len(runtimes) == 1 else CLOSINGS_CUT
    lines = [_at_once(cut, resume_hint)]
    for runtime in runtimes:
        refused = runtime.recorder.refused()
        if refused:
            lines.append(
                printable(
                    f"error: team {runtime.team_id}: {counted(refused, 'record')} not saved: "
                    f"the store refused them, and they are lost as the process ends at once; "
                    f"{LOSS_ADVICE}"
                )
            )
    return "\n".join(lines)


def _interrupted_turns(manager: TeamKeeper, runtime: TeamHandle) -> list[Message]:
    """The turns the team's stop cut (a resume lists them as interrupted), here or on its
    server."""
    if isinstance(manager, TeamManager):
        return manager.interrupted_turns(runtime.team_id)
    assert isinstance(runtime, RemoteTeam)
    return interrupted_turns(runtime)


def _last_seq(manager: TeamKeeper, runtime: TeamHandle) -> int:
    """The seq of the last record of the team's log (here, or on its server)."""
    if isinstance(manager, TeamManager):
        return manager.storage.events.last_seq(runtime.team_id)
    assert isinstance(runtime, RemoteTeam)
    return runtime.refresh().last_seq


def _say_waiting(console: Console, waiting: list[SentMessage]) -> None:
    """The messages left for the next resume to deliver (sent to a member that had
    stopped), one line each."""
    if not waiting:
        return
    many = len(waiting) > 1
    said = f"{len(waiting)} message{'s wait' if many else ' waits'} for the next resume"
    console.print(SafeText(f"{said}, which delivers {'them' if many else 'it'}:", style="yellow"))
    for sent in waiting:
        console.print(SafeText(f"  {quote(sent.message)}", style="yellow"))


def _send_unless_taken_over(
    runtime: TeamHandle,
    line: str,
    view: LiveView,
    delivered: Callable[[], None],
    unsaved: list[tuple[UUID, str]],
) -> tuple[UUID, str] | None:
    """:func:`_send`; None when the send found the team's lease lost (another
    process took the team over as it was sent): the session then says so as for a loss
    found later (:func:`_taken_over`), not as a failed send."""
    try:
        return _send(runtime, line, view, delivered, unsaved)
    except AddressError:
        if _lost(runtime) is None:
            raise
        return None


def _never_saved(runtime: TeamHandle, unsaved: list[tuple[UUID, str]]) -> list[str]:
    """The lines delivered but not saved when said (:data:`NOT_SAVED_YET`) that never were:
    the lease was lost first, and what the team did with them went with it."""
    lines = []
    for message_id, line in unsaved:
        try:
            if cast(TeamRuntime, runtime).saved(message_id, 0):
                continue
        except AddressError:
            pass
        lines.append(line)
    return lines


def _taken_over(runtime: TeamHandle, title: str) -> str | None:
    """``team NAME (ID) was taken over by another process (pid N on host H); ...`` once
    this process lost the team's lease (a team running here); None otherwise. The
    session then says only that: the team and its log are the other process's."""
    lost = _lost(runtime)
    if lost is None:
        return None
    who = f" ({lost.lease.holder.describe()})" if lost.lease is not None else ""
    return f"{title} was taken over by another process{who}; this session stopped"


def _lost(runtime: TeamHandle) -> LeaseLostError | None:
    """The loss of the lease of a team running here (see ``TeamRuntime.lease_lost``)."""
    return runtime.lease_lost if isinstance(runtime, TeamRuntime) else None


STOPPED_ON_SERVER = "it was stopped on the server (akgentic teams stop --server, or its page)"
"""Why a team on a server stopped under the session, the server running on: only the
server knows who did it."""
SERVER_SHUTTING_DOWN = "the server is shutting down, and its teams stop with it"
"""Why it stopped when the server answers its health as draining."""
SERVER_GONE = "the server stopped answering (it shut down, or it cannot be reached)"
"""Why it stopped when the server no longer answers at all."""
STOPPED_ON_CLUSTER = "it was stopped on its cluster (akgentic teams stop, or its worker ended)"
"""Why a cluster-hosted team stopped under the session when its host no longer says."""


def server_stop_reason(client: AkgenticClient) -> str:
    """Why a team on the server at ``client`` stopped, the session having not stopped it:
    the server's own shutdown (its health says it is draining, or nothing answers), or
    else a stop asked of the server (:data:`STOPPED_ON_SERVER`)."""
    try:
        health = client.health()
    except ServerError as exc:  # an answer that is an error: the server is there
        return SERVER_GONE if exc.status == 0 else STOPPED_ON_SERVER
    return SERVER_SHUTTING_DOWN if health.status == "draining" else STOPPED_ON_SERVER


def _server_down(watch: Watch) -> bool:
    """Whether the team's server shut down under the session: it stopped the team itself,
    and a stop asked of it now could only fail."""
    return watch.stop_reason in (SERVER_SHUTTING_DOWN, SERVER_GONE)


def _stop_reason(runtime: TeamHandle, watch: Watch) -> str | None:
    """Why the team stopped when this session did not stop it (None: it did, or it runs):
    its runtime's reason here; once ``watch`` saw it stop (asked before the session stops
    it, or of an exchange the stop ended), :func:`server_stop_reason` on a server, and on
    a cluster its host's reason or :data:`STOPPED_ON_CLUSTER`. Kept once known, so that
    every line of the session gives the same reason."""
    if watch.stop_reason is not None:
        return watch.stop_reason
    reason: str | None
    if isinstance(runtime, TeamRuntime):
        reason = runtime.stop_reason  # set by whatever stopped it here
    elif not watch.team_stopped:
        return None
    elif isinstance(runtime, RemoteTeam):
        reason = server_stop_reason(runtime.client)
    else:  # on a cluster: its host may be gone with it
        reason = cast(HostedTeam, runtime).stop_reason or STOPPED_ON_CLUSTER
    watch.stop_reason = reason
    return reason


def _interrupt(manager: TeamKeeper, runtime: TeamHandle, view: LiveView) -> list[Message]:
    """The first Ctrl-C: cancel the turns at their next step, wait, stop the team (here,
    or on its server); the turns a resume would offer again."""
    view.answered()  # no prompt any more
    if sys.stdout.isatty():
        write_out("\n")  # off the prompt line (or the line being written) the ^C left
    return _cut_turns(manager, runtime, view, _interrupt_words(runtime))


def _interrupt_words(runtime: TeamHandle) -> str:
    """What the first Ctrl-C says it does. Once the team's stop is writing its last
    records (here: its members have all stopped) there is no turn left to cancel: it
    says the stop waits for them, and — when the store refuses them — how many, how much
    longer the stop tries, and that a second Ctrl-C loses them (whose line then says so,
    with what to do: :func:`ended_at_once`)."""
    by = interrupt.interrupted_by()
    recorder = runtime.recorder if isinstance(runtime, TeamRuntime) else None
    left = recorder.tries_left() if recorder is not None else None
    if recorder is None or left is None:
        return (
            f"{by}: cancelling the turns in progress at their next step and stopping the "
            f"team (up to {GRACE:g}s; Ctrl-C again to stop at once)"
        )
    refused = recorder.refused()
    if not refused:
        return (
            f"{by}: the turns have ended; the team's stop is saving its last records "
            f"(Ctrl-C again to stop at once)"
        )
    return (
        f"{by}: the turns have ended; the team's stop is saving its last "
        f"{counted(refused, 'record')}, which the store refuses: it tries for up to "
        f"{left:.0f}s more (Ctrl-C again to stop at once and lose them)"
    )


def _cut_turns(
    manager: TeamKeeper, runtime: TeamHandle, view: LiveView, saying: str
) -> list[Message]:
    """Cancel the turns at their next step (a model request in flight at once), say
    ``saying``, wait, stop the team (here, or on its server); the turns a resume would
    offer again. A team here is told first, so that what is said is already true: a turn
    that takes a step after the line is cut."""
    once = threading.Lock()  # said by the call's thread, or here if it fails first

    def say() -> None:
        if once.acquire(blocking=False):
            view.note(saying, "yellow")

    try:
        if isinstance(manager, TeamManager):
            team_id = runtime.team_id
            return interrupt.aside(
                lambda: manager.interrupt_team(team_id, grace_timeout=GRACE, cancelled=say)
            )
        assert isinstance(manager, AkgenticClient) and isinstance(runtime, RemoteTeam)
        client, remote = manager, runtime
        say()  # the server is told in the same request that waits for the stop
        return interrupt.aside(lambda: _interrupt_remote(client, remote))
    except KeyboardInterrupt:
        say()  # Ctrl-C again before the team was told: the first one is still said
        raise
    except Exception as exc:
        say()
        view.note(f"error: the team did not stop cleanly: {explain(exc)}", "red")
        return []


def _interrupt_remote(client: AkgenticClient, team: RemoteTeam) -> list[Message]:
    client.stop_team(team.team_id, GRACE, interrupt=True)
    return _interrupted_turns(client, team)


NOT_KEPT = "the team was not kept: an in-memory storage (memory://) ends with this process"
"""What replaces the resume hint when there is nothing to resume."""


def how_to_resume(resume: str | None) -> str:
    """``resume it with: COMMAND``, or :data:`NOT_KEPT`."""
    return f"resume it with: {resume}" if resume is not None else NOT_KEPT


RETRY_WORDS = "to resume it delivering them again (a turn may repeat its side effects):"
DISMISS_WORDS = "to resume it giving them up:"
"""What each resume command after a list of interrupted turns does, said on the line
before it: the command's own line is pasted into a shell as it is."""


def _list_interrupted(console: Console, said: str, cut: list[Message], resume: str | None) -> None:
    """``SAID; N interrupted turns:`` (``1 interrupted turn:``; ``said``: ``team … stopped``),
    one line each, and how to resume: each command on a line of its own (pasted into a
    shell as it is), what it does on the line before it."""
    turns = counted(len(cut), "interrupted turn")
    console.print(SafeText(f"{said}; {turns}:", style="yellow"))
    for message in cut:
        console.print(SafeText(f"  {quote(message)}", style="yellow"))
    if resume is None:
        console.print(SafeText(NOT_KEPT, style="dim"))
        return
    for words, flag in (
        (RETRY_WORDS, "--retry-interrupted"),
        (DISMISS_WORDS, "--dismiss-interrupted"),
    ):
        console.print(SafeText(words, style="dim"))
        console.print(SafeText(f"{resume} {flag}", style="dim"))


NOT_ENDED = (
    "did not finish stopping: its last records may not be saved (the error above says what to do)"
)
"""What the last lines say of a team whose stop did not end in its wait (its recorder
still at its last records as the session ends: ``TeamRuntime.stop``), instead of
``stopped``."""
NOT_ENDED_RESUME = (
    "a resume may first find it still stopping (for up to its stop's time); it then says "
    "whether the team stopped cleanly"
)
"""What a resume of such a team does, said after the command that resumes it."""


def _stop_ended(runtime: TeamHandle) -> bool:
    """Whether the team's stop ended (here: its recorder knows its outcome, ``end_saved``);
    a team on a server, whose stop is the server's, counts as ended."""
    return not isinstance(runtime, TeamRuntime) or runtime.recorder.end_saved is not None


def _stopped(
    console: Console, title: str, cut: list[Message], resume: str | None, *, ended: bool = True
) -> None:
    """The session's last lines: the team stopped, the turns its stop cut (after Ctrl-C, or
    a graceful stop whose grace ran out), and how to resume it (retrying them, or not). A
    stop that did not end (``ended`` False) is not said to have stopped: its last records
    may not be saved, and a resume may first find the team still stopping."""
    said = "stopped" if ended else NOT_ENDED
    style = "dim" if ended else "yellow"
    if cut:
        _list_interrupted(console, f"{title} {said}", cut, resume)
    else:
        console.print(SafeText(f"{title} {said}; {how_to_resume(resume)}", style=style))
    if not ended and resume is not None:
        console.print(SafeText(NOT_ENDED_RESUME, style="dim"))


def quote(message: Message) -> str:
    """``@Human → @Boss: please hang`` for an accepted message."""
    sent = SentMessage(message=message, recipient=message.recipient, sender=message.sender)
    return one_line(sent_line(sent))


def _answer(
    console: Console,
    reply: Reply,
    options: ChatOptions,
    reason: str | None,
    view: LiveView,
    resume_hint: str,
    *,
    listed: bool | None,
) -> int:
    """The ``answer:`` line (exit code 0), or the ``error:`` line on stderr (1) — left out
    when the live view printed that failure already on the terminal the person reads (a
    redirected output still gets it, for a script). A team that stopped while the
    exchange still had work left has not answered, whatever the person got meanwhile (an
    acknowledgment): the resume carries the work on; ``reason`` says why it stopped.

    ``--retry-interrupted`` is offered unless no turn of the exchange is ``listed`` as
    interrupted (among the turns the team's log has a resume offer again; None: they
    could not be read, its server gone). A turn a cancel cut while the team went on (the
    page's interrupt button, a ``/stop`` from another client) is not listed — nothing of
    it is kept to retry — so the line says it was cut, by whom, and how to ask again."""
    refused = isinstance(reply.message, AgentMessage) and reply.message.failed
    unanswered = reply.how in ("timeout", "failed", "cut") or reply.owed
    if reply.message is not None and not unanswered and not refused:
        console.print(SafeText(f"answer: {text_of(reply.message)}"))
        return 0
    if refused and reply.message is not None:  # an unknown or failed /command
        who = member_name(reply.sender) if reply.sender else "the team"
        problem = f"{who}: {one_line(text_of(reply.message), 1000)}"
    elif reply.how == "cut":
        problem = reply.failure or "its turn was cut before it answered"
        if reason:
            problem += f"; then the team stopped: {reason}"
        problem += _ask_again(resume_hint)
    elif reply.failure is not None:
        problem = reply.failure
    elif reply.how == "timeout":
        problem = f"no answer within {options.timeout:g}s (raise it with --timeout SECONDS)"
    elif reply.how == "stopped":
        why = f": {reason}" if reason else ""
        problem = f"the team stopped before answering{why}"
        if reply.owed == "cut" and listed is not False:
            problem += (
                f"; a turn the answer needs was cut: to get the answer, {resume_hint} "
                f"--retry-interrupted"
            )
        elif reply.owed == "cut":
            problem += "; a turn the answer needs was cut" + _ask_again(resume_hint)
        elif reply.owed == "waiting":
            problem += f"; the work on it waits: to get the answer, {resume_hint}"
    else:
        problem = f"the team went quiet for {options.idle:g}s without writing to the human"
    if not (console.is_terminal and view.shown(problem)):
        error_console().print(SafeText(f"error: {problem}", style="red"))
    return EXIT_ERROR


def _ask_again(resume_hint: str) -> str:
    """``; nothing of it is kept to retry: to ask again, resume it with: COMMAND -m
    MESSAGE`` (a team not kept: only that nothing is kept)."""
    if resume_hint == NOT_KEPT:
        return "; nothing of it is kept to retry"
    return f"; nothing of it is kept to retry: to ask again, {resume_hint} -m MESSAGE"


def _typed_left(keyboard: Keyboard | None) -> list[str]:
    """The lines typed that the session ending leaves unsent (typed while the team was
    working): what the person meant to say, not blank lines or a ``/quit``."""
    if keyboard is None:
        return []
    return _typed(keyboard.left())


def _typed(lines: list[str]) -> list[str]:
    """Of the lines typed, what the person meant to say: not blank lines or a ``/quit``."""
    return [line.strip() for line in lines if line.strip() and line.strip() not in QUIT]


def _interactive(
    runtime: TeamHandle,
    watch: Watch,
    view: LiveView,
    options: ChatOptions,
    keyboard: Keyboard,
    refused: list[str],
    unsaved: list[tuple[UUID, str]],
) -> Reply | None:
    """Lines typed to the team until the person leaves or the team stops; the last
    exchange's ending. A line the team stopped before taking goes into ``refused``, one
    delivered that the store had not saved in time into ``unsaved``."""
    entry = member_name(runtime.card.entry_point)
    reply: Reply | None = None
    tty = sys.stdin.isatty()
    view.note(
        f"Write to {entry} (`@Member text` writes to another member; /commands go to {entry}, "
        f"/help lists them); /quit or end of input leaves; Ctrl-C stops the team."
    )
    _suggest(view, runtime.card.suggestions)
    while True:
        typed = keyboard.line("you> " if tty else "", view.prompt)
        view.answered()
        if typed is ENDED:  # the team stopped under us (stopped from elsewhere, lease lost)
            if tty:
                write_out("\n")  # off the prompt line
            return reply
        if typed is None:
            if tty:
                write_out("\n")
            return reply
        assert isinstance(typed, str)
        line = typed.strip()
        if not line:
            continue
        if line in QUIT:
            return reply
        try:
            message_id, responder = _send(runtime, line, view, unsaved=unsaved)
        except AddressError as exc:
            if not runtime.is_running() or _lost(runtime) is not None:
                refused.append(line)
                return reply
            advice = f"; leave the name out to write to {entry}" if _ADDRESSED.match(line) else ""
            view.note(f"error: {explain(exc)}{advice}", "red")
            continue
        reply = watch.wait_reply(message_id, responder, options.timeout, options.idle)
        if reply.how == "stopped":
            return reply
        if reply.how == "failed" and not view.shown(reply.failure or ""):
            view.note(f"error: {reply.failure}", "red")
        elif reply.how == "timeout":
            view.note(f"no answer within {options.timeout:g}s; the team goes on", "yellow")
        elif reply.how == "cut":
            view.note(f"{reply.failure}; the team goes on", "yellow")


def _suggest(view: LiveView, suggestions: list[Suggestion]) -> None:
    """The card's suggestions: what to type, and what each shows."""
    if not suggestions:
        return
    view.note("Try:")
    width = max(len(s.message) for s in suggestions)
    for suggestion in suggestions:
        shows = f"   {suggestion.shows}" if suggestion.shows else ""
        view.note(f"  {suggestion.message:<{width}}{shows}")


def _stop(manager: TeamKeeper, runtime: TeamHandle, view: LiveView) -> None:
    """Stop the team gracefully; a failure to do so is printed, not raised. A Ctrl-C
    meanwhile is raised (the stop goes on: :func:`_interrupt` cancels its turns)."""
    team_id = runtime.team_id
    try:
        interrupt.aside(lambda: manager.stop_team(team_id, grace_timeout=GRACE))
    except Exception as exc:
        view.note(f"error: the team did not stop cleanly: {explain(exc)}", "red")
