"""``akgentic teams show | stop | resume | delete``: the teams of a storage (``list``:
:mod:`akgentic.cli.teams_list`).

TEAM is a team's id, a unique prefix of it, or its name when unique (see :mod:`store`).
``resume`` restores the team in this process (with ``--server``, on that server) and then
talks to it as ``run`` does.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Annotated

import typer
from rich.console import Console

from akgentic.agent import AgentConfig
from akgentic.cli import interrupt, logs
from akgentic.cli.chat import (
    MAYBE_CRASHED,
    NONE_TO_DISMISS,
    NONE_TO_RETRY,
    NOT_RESUMED,
    ChatOptions,
    before_start,
    chat,
    intro,
    not_started,
    quote,
    retried_note,
    starting_at_once,
    unstarted_at_once,
)
from akgentic.cli.describe import last_exchange, one_line, sent_line
from akgentic.cli.errors import CliError, reporting
from akgentic.cli.models import model_for_resume
from akgentic.cli.options import (
    BaseUrlOption,
    DebugOption,
    IdleOption,
    ImportOption,
    MessageOption,
    ModelOption,
    ServerOption,
    StorageOption,
    StreamOption,
    TeamArgument,
    TimeoutOption,
    TokenOption,
    VerboseOption,
    one_place,
)
from akgentic.cli.output import (
    ONE_LINE,
    SafeText,
    command_line,
    error_console,
    local_time,
    member_name,
    out_console,
    printable,
    short_id,
    symbols_for,
    team_name,
    team_title,
)
from akgentic.cli.remote import connected, find_remote_team, interrupted_turns, server_command
from akgentic.cli.run import team_command
from akgentic.cli.session import team_manager
from akgentic.cli.store import (
    DamagedCardError,
    find_team,
    import_modules,
    missing_imports,
    opened_storage,
    read_only,
    read_only_words,
    resume_imports,
    status_label,
    storage_option,
    store_name,
    stored_card,
)
from akgentic.cli.teams_list import runner, stale_reason
from akgentic.cli.teams_remote import (
    confirm_purge,
    delete_remote,
    show_remote,
    stop_remote,
)
from akgentic.client import TEAM_STOPPING, AkgenticClient, RemoteTeam, ServerError
from akgentic.core import Message, SentMessage
from akgentic.core.words import counted
from akgentic.llm import MissingApiKeyError, UnknownRegisteredModelError
from akgentic.storage import (
    Lease,
    StorageBundle,
    TeamRecord,
    TeamStatus,
    live_lease,
    saving_resource,
)
from akgentic.team import (
    STOP_GRACE,
    RestorePlan,
    ResumeError,
    StopWait,
    TeamCard,
    TeamRunningElsewhereError,
    TeamRuntime,
    TeamStillStoppingError,
    UnreadableLogError,
    plan_restore,
    still_stopping_words,
    team_resource,
    team_workspaces,
    unreadable_log,
)
from akgentic.team.card import walk
from akgentic.tool.mcp import MCPToolNameClashError

__all__ = ["delete_team", "resume_team", "show_team", "stop_team"]

ABOUT_CHARS = 400
"""The most characters ``teams show`` prints of a card's description (then ``… (N
characters)``, as other long fields)."""
LAST_ANSWERS = 5
"""The most answers a "last exchange" block shows (the latest ones); ``akgentic events``
lists them all."""


def _title(record: TeamRecord) -> str:
    return team_title(record.name, record.team_id)


def _status(record: TeamRecord) -> str:
    """``STOPPED``; ``DAMAGED (stored status: STOPPED)`` when the status reads but another
    field does not; ``DAMAGED``."""
    label = status_label(record)
    if label == "DAMAGED" and record.status is not None:
        return f"{label} (stored status: {record.status.value})"
    return label


def _lease(bundle: StorageBundle, record: TeamRecord) -> Lease | None:
    return bundle.leases.inspect(team_resource(record.team_id))


def _elsewhere(
    exc: TeamRunningElsewhereError, bundle: StorageBundle, record: TeamRecord, url: str, verb: str
) -> CliError:
    """A team another process runs: who, and that it need not be stopped over there — or,
    when it is marked STOPPED already, that it is stopping (its process waits for the turns
    in progress, then lets it go): ``verb`` it (resume, delete) once it has stopped.

    The status is read again: ``record`` was read before the attempt, and a STOPPED team
    that another process resumed meanwhile (it won the race for the lease) runs, it is
    not stopping."""
    if isinstance(exc, TeamStillStoppingError):  # the resume waited for it: it says so
        return CliError(str(exc))
    record = bundle.teams.get(record.team_id) or record
    if record.status == TeamStatus.STOPPED:
        return CliError(_stopping(bundle, record, exc.lease, verb))
    stop = team_command("stop", record.team_id, url)
    return CliError(f"{exc}; or from here: {stop}")


def _stopping(bundle: StorageBundle, record: TeamRecord, lease: Lease, verb: str | None) -> str:
    """A team marked STOPPED that the live process holding ``lease`` is still stopping:
    what its stop is at — the turns in progress, or (its saving marker live) the last
    records a store refuses — and what to do (``verb`` it once stopped; None: nothing
    more to do but free the store, when that is what holds it)."""
    try:
        saving = live_lease(bundle.leases, saving_resource(record.team_id))
    except Exception:  # unreadable: said as the turns it usually is
        saving = None
    if saving is not None:
        words = still_stopping_words(True, elsewhere=True, verb=verb)
        return f"{_title(record)} is stopping in another process ({lease.describe()}): {words}"
    then = "nothing more to do" if verb is None else f"{verb} it once it has stopped"
    return (
        f"{_title(record)} is stopping: the process running it ({lease.describe()}) "
        f"waits for the turns in progress (up to {STOP_GRACE:g}s); {then}"
    )


# -- show ----------------------------------------------------------------------------------
def show_team(
    team: TeamArgument,
    imports: ImportOption = None,
    storage: StorageOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Show a team: its record, who runs it, its card's members, its last seq, the person's
    last exchange and interrupted turns. With --server, that server's team."""
    with reporting(debug):
        server = one_place(server, storage)
    if server:
        with reporting(debug):
            show_remote(server, token, team)
        return
    with reporting(debug), opened_storage(storage, read_only=True) as (bundle, url):
        import_modules(imports)
        record = find_team(bundle, team, url)
        console = out_console()
        writable = not read_only(bundle)  # else: no write command to suggest
        try:
            card: TeamCard | None = stored_card(record)
        except DamagedCardError as exc:
            ways = _outdated if exc.outdated else _damaged
            card, problem = None, ways(record, url, str(exc), writable=writable)
        except CliError as exc:
            card, problem = None, str(exc)
        records = bundle.events.read(record.team_id)
        plan = plan_restore(records)
        lease = _lease(bundle, record)
        fields = [
            ("team", f"{team_name(record.name)} ({record.team_id})"),
            ("status", _status(record)),
            ("created", local_time(record.created_at)),
            ("updated", local_time(record.updated_at)),
            ("last seq", _last_seq(bundle.events.last_seq(record.team_id), plan)),
            ("run by", runner(lease) or "no process"),
        ]
        if card is not None and card.description:  # clipped: a card may hold megabytes
            fields.insert(1, ("about", one_line(card.description, ABOUT_CHARS)))
        if record.error is not None:
            fields.append(("damaged", record.error))
        for key, value in fields:
            console.print(SafeText(f"{key + ':':<10}{value}"))
        if card is None:
            console.print(SafeText(f"card:     {problem}", style="red"))
        else:
            _show_card(console, card)
        live = lease is not None and not stale_reason(lease)
        unreadable = unreadable_log(plan, card) if card is not None else None
        _show_log(console, plan, record, unreadable, card, url, live=live, writable=writable)
        if card is not None and card.human is not None:
            _show_exchange(console, last_exchange(records, card.human), "last exchange:")


def _last_seq(last: int, plan: RestorePlan) -> str:
    """The team's last seq as stored; in a log whose numbering is damaged (a damaged pack
    or a gap) it is a claim, and said so."""
    if any(row.through is not None for row in plan.corrupt):
        return f"{last} as stored, not vouched for: a run of numbers cannot be read (see below)"
    return str(last)


def _show_card(console: Console, card: TeamCard) -> None:
    console.print(SafeText(f"{'entry:':<10}{member_name(card.entry_point)}"))
    console.print(SafeText("members:"))
    depth: dict[str, int] = {}
    for name, spec, parent in walk(card.members):
        depth[name] = depth[parent] + 1 if parent is not None else 0
        config = spec.card.config
        details = [spec.card.role]
        if isinstance(config, AgentConfig):
            details.append(config.models.active_key)
            if config.tools:
                details.append("tools: " + ", ".join(type(t).__name__ for t in config.tools))
        line = printable("  ".join([member_name(name), *details]), keep=ONE_LINE)
        console.print(SafeText(f"  {'  ' * depth[name]}{line}"))
    if card.profiles:
        hires = ", ".join(
            f"{member_name(p.config.name or p.role)} ({member_name(p.role)})" for p in card.profiles
        )
        console.print(SafeText(f"{'profiles:':<10}{hires}"))


def _show_log(
    console: Console,
    plan: RestorePlan,
    record: TeamRecord,
    unreadable: str | None,
    card: TeamCard | None,
    url: str,
    *,
    live: bool,
    writable: bool,
) -> None:
    """What the log says: the members a resume brings back (a stopped team), or those
    running when the log was last written (a running team, here or crashed); for a log
    whose damage hides the team (``unreadable``: why), that a resume refuses it. ``live``:
    a live process holds the team; ``writable``: the store is not read-only here (see
    :func:`_show_turns`)."""
    if unreadable is not None:
        console.print(
            SafeText(f"log:      unreadable, a resume refuses it: {unreadable}", style="red")
        )
    else:
        _show_members(console, plan, record, resumable=card is not None)
        _show_turns(console, plan, record, url, live=live, writable=writable)
    for row in plan.corrupt:
        many = row.through not in (None, row.seq)
        seqs = f"seqs {row.seq}-{row.through}" if many else f"seq {row.seq}"
        console.print(SafeText(f"corrupt: event {seqs}: {row.reason}", style="red"))


def _show_members(
    console: Console, plan: RestorePlan, record: TeamRecord, *, resumable: bool
) -> None:
    """The members of a log a resume can restore (see :func:`_show_log`); not
    ``resumable`` (its card is refused), only who they were."""
    members = ", ".join(member_name(m.name) for m in plan.members) or "none"
    if record.status == TeamStatus.RUNNING:
        console.print(SafeText(f"running when last recorded: {members}"))
    elif record.status == TeamStatus.STOPPED and resumable:
        console.print(SafeText(f"a resume restores: {members}"))
    else:
        console.print(SafeText(f"members when it ended: {members}"))
    if plan.undelivered:
        console.print(
            SafeText(f"accepted, not yet received: {len(plan.undelivered)} (delivered on resume)")
        )


def _show_turns(
    console: Console,
    plan: RestorePlan,
    record: TeamRecord,
    url: str,
    *,
    live: bool,
    writable: bool,
) -> None:
    """The turns the log shows received and not finished. A team a live process holds
    (``live``: running, or stopping: marked STOPPED, its process waiting for them) is on
    those its members received since they last started (``plan.in_progress``): nothing to
    retry. The others were interrupted — any team's when no process holds it; a live
    team's from an earlier run (a resume that neither retried nor dismissed them) or cut
    by its stop — and the next resume offers them again."""
    in_progress = plan.in_progress if live else []
    on = {m.id for m in in_progress}
    interrupted = [m for m in plan.interrupted if m.id not in on]
    if in_progress:
        wait = f" (the stop waits for {_them(len(in_progress))}, up to {STOP_GRACE:g}s)"
        stopping = wait if record.status == TeamStatus.STOPPED else ""
        console.print(SafeText(f"turns in progress: {len(in_progress)}{stopping}"))
        for message in in_progress:
            console.print(SafeText(f"  {quote(message)}"))
    if not interrupted:
        if not in_progress:
            console.print(SafeText("interrupted turns: none"))
        return
    earlier = " (not in progress)" if live else ""
    console.print(SafeText(f"interrupted turns: {len(interrupted)}{earlier}", style="yellow"))
    for message in interrupted:
        console.print(SafeText(f"  {quote(message)}", style="yellow"))
    hint = _interrupted_hint(record, url, _them(len(interrupted)), live=live, writable=writable)
    console.print(SafeText(f"  {hint}", style="dim"))


def _interrupted_hint(
    record: TeamRecord, url: str, them: str, *, live: bool, writable: bool = True
) -> str:
    """What the person can do about a team's interrupted turns: a resume offers them, but
    a team a live process holds cannot be resumed (``teams resume`` is refused) until it
    has stopped, nor one of a store read-only here (not ``writable``), which a resume
    (or a stop) would write."""
    if not writable:
        return (
            f"a resume offers {them} again (--retry-interrupted delivers {them} again, "
            f"--dismiss-interrupted gives {them} up): "
            f"{read_only_words(url, 'resuming the team')}"
        )
    if not live:
        return (
            f"resume with --retry-interrupted to deliver {them} again "
            f"(a turn may repeat its side effects), or --dismiss-interrupted to give {them} up"
        )
    if record.status == TeamStatus.STOPPED:  # stopping: its process lets it go soon
        when = "once the team has stopped"
    else:
        when = f"once the team has stopped ({team_command('stop', record.team_id, url)})"
    return (
        f"the next resume offers {them} again, {when}: --retry-interrupted delivers {them} "
        f"again, --dismiss-interrupted gives {them} up"
    )


def _show_exchange(console: Console, exchange: list[SentMessage], heading: str) -> None:
    """The person's last message and its answers (see :func:`last_exchange`), one line
    each as the live view prints them, clipped; at most :data:`LAST_ANSWERS` answers.
    Nothing when nothing answered it."""
    if not exchange:
        return
    arrow = symbols_for(console).arrow
    asked, answers = exchange[0], exchange[1:]
    console.print(SafeText(heading))
    console.print(SafeText(f"  {one_line(sent_line(asked, arrow))}"))
    if len(answers) > LAST_ANSWERS:
        earlier = len(answers) - LAST_ANSWERS
        console.print(
            SafeText(
                f"  ... {counted(earlier, 'earlier answer')}: akgentic events lists "
                f"{_them(earlier)}",
                style="dim",
            )
        )
    for answer in answers[-LAST_ANSWERS:]:
        console.print(SafeText(f"  {one_line(sent_line(answer, arrow))}", style="bold"))


# -- stop ----------------------------------------------------------------------------------
def stop_team(
    team: TeamArgument,
    storage: StorageOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Stop a team: mark it STOPPED; the process running it (another terminal's `run`,
    or a server over the same store) notices within a second and stops it gracefully; a
    session exits then. With --server, that server stops its team gracefully."""
    with reporting(debug):
        server = one_place(server, storage)
    if server:
        with reporting(debug):
            stop_remote(server, token, team)
        return
    with reporting(debug), opened_storage(storage, create=False) as (bundle, url):
        record = find_team(bundle, team, url)
        console = out_console()
        if record.status == TeamStatus.DELETED:
            raise CliError(f"{_title(record)} was deleted; there is nothing to stop")
        lease = _lease(bundle, record)
        stale = stale_reason(lease) if lease is not None else ""
        if record.status == TeamStatus.STOPPED:
            if lease is not None and not stale:  # asked already: its process is on it
                console.print(SafeText(_stopping(bundle, record, lease, None)))
            else:
                console.print(SafeText(f"{_title(record)} is already stopped"))
            return
        with team_manager(bundle) as manager:
            manager.stop_team(record.team_id)
        if stale:  # a crash: nobody to stop; its log keeps what it was doing
            console.print(
                SafeText(f"{_title(record)} was not running ({stale}); it is now STOPPED")
            )
            console.print(
                SafeText(
                    f"{team_command('show', record.team_id, url)} shows the last exchange "
                    f"and lists any turn the crash interrupted; teams resume offers them again",
                    style="dim",
                )
            )
            return
        console.print(SafeText(f"{_title(record)} is now STOPPED"))
        if lease is not None:
            console.print(
                SafeText(
                    f"the process running it ({lease.describe()}) notices within a second "
                    f"or so and stops it gracefully: it waits for the turns in progress (up "
                    f"to {STOP_GRACE:g}s), then says so: a run or resume session exits, a "
                    f"server serves on",
                    style="dim",
                )
            )


# -- resume --------------------------------------------------------------------------------
def resume_team(
    team: TeamArgument,
    message: MessageOption = None,
    retry_interrupted: Annotated[
        bool,
        typer.Option("--retry-interrupted", help="Deliver again the messages a crash interrupted."),
    ] = False,
    dismiss_interrupted: Annotated[
        bool,
        typer.Option(
            "--dismiss-interrupted", help="Give up the turns a crash interrupted, for good."
        ),
    ] = False,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    imports: ImportOption = None,
    storage: StorageOption = None,
    timeout: TimeoutOption = 600.0,
    idle: IdleOption = 5.0,
    verbose: VerboseOption = False,
    stream: StreamOption = True,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Restore a team from its log in this process, then talk to it as 'run' does.

    A resume that fails leaves the stored team as it was and says what to fix; --model
    resumes every member on another model. A team another process runs is refused.
    With --server, that server resumes its team (on its card's models).
    """
    with reporting(debug), interrupt.deferred():
        options = ChatOptions(message, timeout, idle, verbose, stream, retry_interrupted)
        interrupt.at_once = unstarted_at_once(NOT_RESUMED, options)
        if retry_interrupted and dismiss_interrupted:
            raise CliError("choose one: --retry-interrupted or --dismiss-interrupted")
        if message is not None and not message.strip():
            raise CliError("--message needs some text")
        resume_on = model_for_resume(model, base_url)
        import_modules(imports)
        server = one_place(server, storage)
        if server:
            if _model(model) is not None or base_url:
                raise CliError(
                    "--model and --base-url do not apply with --server: a server resumes a "
                    "team on its card's models"
                )
            raise typer.Exit(
                _resume_remote(team, server, token, options, dismiss_interrupted, imports or [])
            )
        with opened_storage(storage, create=False) as (bundle, url):
            record = find_team(bundle, team, url)
            if record.status == TeamStatus.DELETED:
                raise CliError(_deleted(_title(record), record.team_id, storage_option(url)))
            if record.error is not None and (record.status is not None or not record.card):
                raise CliError(_damaged(record, url))  # a resume reads the record whole
            try:  # a card that does not decode: a clear error, first
                card = stored_card(record)
            except DamagedCardError as exc:
                if exc.outdated:
                    raise CliError(_outdated(record, url, str(exc))) from None
                raise CliError(_damaged(record, url, str(exc))) from None
            if record.status is None:  # unreadable: a stop rewrites it (the rest is kept)
                stop = team_command("stop", record.team_id, url)
                raise CliError(f"{record.error}; repair it with: {stop}, then resume it")
            modules = resume_imports(card.imports, imports)
            command = team_command("resume", record.team_id, url, modules)
            # crashed, stopping (waited for below) or running elsewhere (refused below)
            running = record.status == TeamStatus.RUNNING
            # what the person may never have seen: read before the resume writes to the log
            exchange = (
                last_exchange(bundle.events.read(record.team_id), card.human)
                if running and card.human is not None
                else []
            )
            # the session shows every event the resumed team writes: log lines it shows
            # are skipped
            with team_manager(bundle) as manager, logs.stream_shown():
                lease = _lease(bundle, record)
                console = out_console()
                waited: list[StopWait] = []  # a stop in progress the resume waited for

                def waiting(wait: StopWait) -> None:
                    waited.append(wait)
                    holder = wait.holder
                    line = _stop_wait_line(_title(record), holder.pid, holder.host, wait.up_to)
                    console.print(SafeText(line, style="dim"))

                manager.on_stop_wait = waiting
                manager.stop_wait_check = interrupt.check  # Ctrl-C ends the wait
                before_start(NOT_RESUMED, options)
                interrupt.at_once = starting_at_once(
                    f"{_title(record)} was being resumed ({MAYBE_CRASHED})",
                    f"resume it with: {command}",
                    options,
                )
                try:
                    runtime = manager.resume_team(
                        record.team_id, model=resume_on, retry_interrupted=retry_interrupted
                    )
                except KeyboardInterrupt:  # raised by the wait for a stop: nothing resumed
                    not_started(NOT_RESUMED, options)
                except UnreadableLogError as exc:
                    raise CliError(_unreadable(_title(record), exc, record, url)) from None
                except ResumeError as exc:
                    raise CliError(
                        _not_resumed(_title(record), exc, command, card.imports)
                    ) from None
                except TeamRunningElsewhereError as exc:
                    raise _elsewhere(exc, bundle, record, url, "resume") from None
                assert isinstance(runtime, TeamRuntime)  # this command's manager runs it here
                # from the resume's first record, not the log's end before it: the stop it
                # waited for wrote its last records meanwhile (the cancel of a grace that
                # ran out), and they are the past
                from_seq = runtime.first_seq
                crashed = running and not waited  # a stop waited for has ended, not crashed
                if crashed:
                    how = f" ({stale_reason(lease)})" if lease is not None else ""
                    error_console().print(
                        SafeText(
                            f"warning: {_title(record)} did not stop cleanly{how}: restored "
                            f"from its log",
                            style="yellow",
                        )
                    )
                intro(console, runtime, "resumed")
                _show_exchange(console, exchange, "last exchange before the crash:")
                if runtime.interrupted and dismiss_interrupted:
                    gone = runtime.dismiss_interrupted()
                    console.print(
                        SafeText(f"dismissed {counted(len(gone), 'interrupted turn')}", style="dim")
                    )
                elif dismiss_interrupted:
                    console.print(SafeText(NONE_TO_DISMISS, style="dim"))
                elif runtime.interrupted and not retry_interrupted:
                    _warn_interrupted(console, runtime.interrupted)
                code = chat(
                    manager,
                    runtime,
                    options,
                    console=console,
                    from_seq=from_seq,
                    resume=command,
                )
    raise typer.Exit(code)


def _stop_wait_line(title: str, pid: int, host: str, up_to: float) -> str:
    """What a resume says as it begins to wait for the team's stop in process ``pid`` on
    ``host`` (another, or a server) — up to ``up_to`` seconds, in silence otherwise."""
    return (
        f"{title} is stopping in process {pid} on host {host}: waiting for its stop (up to "
        f"{round(up_to, 1):g}s)"
    )


REMOTE_STOP_POLL = 0.2
"""Seconds between two looks of ``teams resume --server`` at a team the server says is
stopping (``TeamInfo.stopping``)."""


def _await_remote_stop(client: AkgenticClient, title: str, team: RemoteTeam) -> RemoteTeam:
    """``teams resume --server`` of a team that is stopping (``team.info.stopping``):
    say so as a local resume does, then look again until the stop has ended, and return
    the team as it is then. The wait is this command's, not the server's: Ctrl-C ends it
    at once (``interrupted``, nothing resumed — the resume was not asked yet); a stop
    still going on after the time it was given is one line saying so, as the server's
    resume would say after its own wait."""
    stop, began, deadline = None, 0.0, 0.0
    while (now_stopping := team.info.stopping) is not None:
        now = time.monotonic()
        if stop is None or (now_stopping.pid, now_stopping.host) != (stop.pid, stop.host):
            stop, began, deadline = now_stopping, now, now + now_stopping.up_to  # another stop
            line = _stop_wait_line(title, stop.pid, stop.host, stop.up_to)
            out_console().print(SafeText(line, style="dim"))
        elif now >= deadline:
            raise CliError(
                f"{title} is still stopping in process {stop.pid} on host {stop.host} after "
                f"{now - began:.0f}s of waiting: "
                f"{still_stopping_words(now_stopping.saving, elsewhere=True)}"
            )
        interrupt.pause(min(REMOTE_STOP_POLL, max(deadline - now, 0.0)))
        team = interrupt.aside(partial(client.get_team, team.team_id))
    return team


def _damaged(
    record: TeamRecord, url: str, problem: str | None = None, *, writable: bool = True
) -> str:
    """A resume refused for a record the store could not read whole (its card, metadata,
    a time; its status alone is repaired by a stop) or whose card is no valid team card
    (``problem``): what is damaged, and the ways on (``writable``: see
    :func:`_kept_ways`)."""
    return (
        f"{problem or record.error}; the record is kept as stored, and a resume needs it "
        f"whole: restore the store {store_name(url)} from a backup to resume the team; "
        f"{_kept_ways(record, url, writable=writable)}"
    )


def _deleted(title: str, team_id: object, where: list[str]) -> str:
    """A resume refused for a deleted team, and the ways on: a deleted team keeps its
    history (until ``teams delete --purge``), so its log still reads, and its card starts a
    new team. ``where``: the ``--storage``/``--server`` words the suggestions need."""
    events = command_line("events", short_id(team_id), *where)
    start = command_line("run", "TEAM.yaml", *where)
    return (
        f"{title} was deleted and cannot be resumed: start a new team from its card with: "
        f"{start}; its history still reads with: {events}"
    )


def _kept_ways(record: TeamRecord, url: str, *, writable: bool = True) -> str:
    """The ways on that a refused resume leaves: reading the history, removing the team —
    which a store read-only here (not ``writable``) refuses: said instead."""
    events = command_line("events", short_id(record.team_id), *storage_option(url))
    if not writable:
        removing = read_only_words(url, "resuming or removing the team")
        return f"its history still reads with: {events}; {removing}"
    delete = team_command("delete", record.team_id, url)
    return f"its history still reads with: {events}; remove the team with: {delete}"


def _outdated(record: TeamRecord, url: str, problem: str, *, writable: bool = True) -> str:
    """A resume refused for a card an earlier version stored and this one's checks refuse:
    a backup holds the same card, so the ways on are the version that stored it, or a new
    team from the card corrected (``writable``: see :func:`_kept_ways`)."""
    return (
        f"{problem}; the record is kept as stored: resume the team with the akgentic version "
        f"that stored it, or start a new team from its card corrected (akgentic run "
        f"TEAM.yaml); {_kept_ways(record, url, writable=writable)}"
    )


def _unreadable(title: str, exc: UnreadableLogError, record: TeamRecord, url: str) -> str:
    """A resume refused for a log whose damage hides the team: where the store is, and
    the ways on (a backup; ``akgentic events`` shows what still reads)."""
    store = store_name(url)
    events = command_line("events", short_id(record.team_id), *storage_option(url))
    return (
        f"{title} was not resumed, nothing changed: its event log is unreadable: {exc}; "
        f"restore the store {store} from a backup (see what still reads with: {events})"
    )


def _not_resumed(title: str, exc: ResumeError, command: str, imports: list[str]) -> str:
    """Why a resume failed and the ways on: fix it, or resume on another model (not
    offered when a member could not start for a cause that is not its model)."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(
        cause, MissingApiKeyError | UnknownRegisteredModelError
    ):
        cause = cause.__cause__
    named = exc.member or str(exc).split(": ", 1)[0]  # a model's failure: "@Name: ..."
    whose = f"{named}'s" if named.startswith("@") else "its"
    if isinstance(cause, UnknownRegisteredModelError):
        known = ", ".join(cause.known) or "none"
        again = command if imports else f"{command} --import MODULE"
        return (
            f"{title} was not resumed, nothing changed: {whose} model "
            f"'registered:{cause.name}' is registered by Python code, which has not run here "
            f"(registered: {known}): resume with the module that calls register_model: "
            f"{again} (importable from here: run it from the module's folder or put that "
            f"folder on PYTHONPATH), or on another model: {command} --model SPEC"
        )
    if isinstance(cause, MissingApiKeyError):
        return (
            f"{title} was not resumed, nothing changed: {whose} model {cause.model_key!r} needs "
            f"an API key in {cause.env_var}, which is not set here: export "
            f"{cause.env_var}=<your key> and resume again, or resume it on another model: "
            f"{command} --model SPEC (scripted:default runs offline)"
        )
    if isinstance(exc, MCPToolNameClashError):  # its line says what to do; no model helps
        return f"{title} was not resumed, nothing changed: {exc} To resume it: {command}"
    if exc.member is not None:
        return (
            f"{title} was not resumed, nothing changed: {exc}; fix that and resume again: {command}"
        )
    return (
        f"{title} was not resumed, nothing changed: {exc}; or resume it on another model: "
        f"{command} --model SPEC"
    )


def _resume_remote(
    team: str,
    url: str,
    token: str | None,
    options: ChatOptions,
    dismiss: bool,
    imports: list[str],
) -> int:
    """``teams resume --server``: the server rebuilds its team from its log; this session
    talks to it there, as ``run --server`` does (``imports``: its ``--import`` modules,
    which the next resume needs too).

    The turns said settled (or warned of) are those the server lists as interrupted
    (``TeamInfo.interrupted``), the ones its resume settles, quoted from its log: a team
    already running there is on turns the log alone cannot tell from interrupted ones.
    The session shows what happens from the resume on: from the resumed run's first record
    (``TeamInfo.first_seq``), nothing of a stop the server's resume waited for — whose cut
    turns, written after the first look, are among those the resume settled or offers."""
    with connected(url, token) as client:
        record = find_remote_team(client, team)
        if record.status == TeamStatus.DELETED:
            title = team_title(record.name, record.team_id)
            raise CliError(_deleted(title, record.team_id, ["--server", url]))
        stored = client.get_team(record.team_id)
        missing_imports(stored.info.card_name, stored.info.imports)  # before its log is read
        modules = resume_imports(stored.info.imports, imports)
        title = team_title(record.name, record.team_id)
        before_start(NOT_RESUMED, options)
        interrupt.at_once = starting_at_once(
            f"server {url} was resuming {title} (it may run there)",
            f"its teams: {command_line('teams', 'list', '--server', url)}",
            options,
        )
        while True:
            # a stop in progress: waited for here (said, and Ctrl-C ends it: nothing
            # resumed), the resume after — which the server refuses at once (not waiting
            # for it in silence) when a stop has begun since this look: waited for here
            # in turn
            try:
                stored = _await_remote_stop(client, title, stored)
            except KeyboardInterrupt:
                not_started(NOT_RESUMED, options)
            looked = stored.info.last_seq  # the log's end before the resume
            listed = set(stored.info.interrupted)
            cut = [m for m in interrupted_turns(stored) if m.id in listed] if listed else []
            try:
                runtime = client.resume_team(
                    record.team_id,
                    retry_interrupted=options.retry_interrupted,
                    dismiss_interrupted=dismiss,
                    wait_for_stop=False,
                )
            except ServerError as exc:
                if exc.code != TEAM_STOPPING:
                    raise
                try:
                    stored = interrupt.aside(partial(client.get_team, record.team_id))
                except KeyboardInterrupt:
                    not_started(NOT_RESUMED, options)
                continue
            break
        # the session shows the run the resume began, from its first record; a team
        # already running (its turns settled) began before this look
        began = runtime.info.first_seq
        from_seq = began if began is not None and began > looked else looked + 1
        if from_seq > looked + 1:
            # a stop in progress the resume waited for wrote its last records after this
            # look (the cancel of a grace that ran out, the turns it cut): they are the
            # past, and the turns the resume settled or offers are those of the log then
            cut = interrupted_turns(runtime, to_seq=from_seq - 1)
        console = out_console()
        intro(console, runtime, f"resumed on {url}")
        if cut and dismiss:
            console.print(
                SafeText(f"dismissed {counted(len(cut), 'interrupted turn')}", style="dim")
            )
        elif cut and options.retry_interrupted:
            ids = {m.id for m in cut}
            late = {i: n for i, n in runtime.info.out_of_order.items() if i in ids}
            console.print(SafeText(retried_note(len(cut), late), style="dim"))
        elif cut:
            _warn_interrupted(console, cut)
        elif dismiss:
            console.print(SafeText(NONE_TO_DISMISS, style="dim"))
        elif options.retry_interrupted:
            console.print(SafeText(NONE_TO_RETRY, style="dim"))
        return chat(
            client,
            runtime,
            options,
            console=console,
            from_seq=from_seq,
            resume=server_command(record.team_id, url, modules),
        )


def _model(option: str | None) -> str | None:
    return (option or "").strip() or None


def _warn_interrupted(console: Console, messages: list[Message]) -> None:
    were = "was" if len(messages) == 1 else "were"
    console.print(SafeText(f"{counted(len(messages), 'turn')} {were} interrupted:", style="yellow"))
    for message in messages:
        console.print(SafeText(f"  {quote(message)}", style="yellow"))
    them = _them(len(messages))
    console.print(
        SafeText(
            f"  rerun with --retry-interrupted to deliver {them} again, or "
            f"--dismiss-interrupted to give {them} up",
            style="dim",
        )
    )


def _them(count: int) -> str:
    """The pronoun for ``count`` things just counted: ``it`` for one, else ``them``."""
    return "it" if count == 1 else "them"


# -- delete --------------------------------------------------------------------------------
def delete_team(
    team: TeamArgument,
    purge: Annotated[
        bool,
        typer.Option(
            "--purge",
            help="Also remove its record, events, states, memory and its own workspace trees "
            "(workspaces/<user>/_team/<id>, with their .git and .index); trees named by "
            "workspace_id or metadata are shared with other teams and stay.",
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before purging.")] = False,
    storage: StorageOption = None,
    server: ServerOption = None,
    token: TokenOption = None,
    debug: DebugOption = False,
) -> None:
    """Mark a team DELETED (its history is kept), or remove it with --purge: its history
    and its own workspace trees. With --server, that server's team."""
    with reporting(debug):
        server = one_place(server, storage)
    if server:
        with reporting(debug):
            delete_remote(server, token, team, purge=purge, yes=yes)
        return
    with reporting(debug), opened_storage(storage, create=False) as (bundle, url):
        record = find_team(bundle, team, url)
        console = out_console()
        if record.status == TeamStatus.DELETED and not purge:
            console.print(SafeText(f"{_title(record)} is already deleted (--purge removes it)"))
            return
        if purge and not yes:
            confirm_purge(_title(record))
        trees = team_workspaces(record.team_id) if purge else []
        with team_manager(bundle) as manager:
            try:
                manager.delete_team(record.team_id, purge=purge)
            except TeamRunningElsewhereError as exc:
                raise _elsewhere(exc, bundle, record, url, "delete") from None
        if purge:
            gone = "its record and history"
            if trees:
                tree = "workspace tree" if len(trees) == 1 else "workspace trees"
                gone += f", and its {tree} " + ", ".join(str(cell.tree) for cell in trees)
            console.print(SafeText(f"{_title(record)} purged: {gone} are gone"))
        else:
            console.print(
                SafeText(f"{_title(record)} deleted; its history is kept (--purge removes it)")
            )
