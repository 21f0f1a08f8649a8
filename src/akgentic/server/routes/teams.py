"""Teams: create from a card, list, get, rename, stop, resume, delete; their members."""

from __future__ import annotations

import json
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Body, Depends, HTTPException, Query, Request, Response

from akgentic.agent import AgentState
from akgentic.client.models import (
    TEAM_STOPPING,
    CreateTeam,
    MemberInfo,
    RenameTeam,
    ResumeTeam,
    TeamInfo,
    TeamPage,
)
from akgentic.core.excerpt import exception_words
from akgentic.server.cards import CardError, card_from_data, card_from_yaml
from akgentic.server.context import (
    DRAINING,
    ServerContext,
    accepting_work,
    context,
    deleted_team,
)
from akgentic.server.errors import CodedError
from akgentic.server.paging import cursor_of, listed_after, newest_first, parse_cursor
from akgentic.server.posted import PostedCardRefusedError
from akgentic.storage import CorruptRecordError, InvalidTransitionError, TeamStatus
from akgentic.team import TeamCard, TeamStoppingError, UnreadableLogError, give_mcp_servers

__all__ = ["router"]

router = APIRouter(prefix="/teams", tags=["teams"])

Ctx = Annotated[ServerContext, Depends(context)]
TEAM_ID = "The team's id."


def _card(ctx: ServerContext, body: CreateTeam) -> tuple[TeamCard, bool]:
    """The card to start from, and whether it was posted (else it is registered)."""
    try:
        if body.card_yaml is not None:
            return card_from_yaml(body.card_yaml, ctx.nameable_cards), True
        if isinstance(body.card, dict):
            return card_from_data(body.card, ctx.nameable_cards), True
    except CardError as exc:
        raise HTTPException(422, str(exc)) from None
    card = ctx.cards.get(str(body.card))
    if card is None:
        skipped = ctx.cards.skipped(str(body.card))
        if skipped is not None:
            raise HTTPException(422, skipped)
        known = ", ".join(c.name for c, _ in ctx.cards.items()) or "none (akgentic serve --cards)"
        raise HTTPException(422, f"no team card named {body.card!r}; known cards: {known}")
    return card, False


@router.post(
    "",
    status_code=201,
    responses={
        403: {"description": "A posted card reaching the server host (posted.py)."},
        **DRAINING,
    },
    dependencies=[Depends(accepting_work)],
)
def create_team(body: CreateTeam, ctx: Ctx) -> TeamInfo:
    """Start a team from a registered card (by name) or a posted one (JSON or YAML).

    A posted card may not start processes, read server files outside the cards folders
    or choose endpoints unless the server allows it (``akgentic serve --allow-posted``):
    403 naming the fields otherwise. Every agent gets the server's MCP servers
    (``akgentic serve --mcp-config``)."""
    card, posted = _card(ctx, body)
    try:
        ctx.posted.check(card, posted=posted, model=body.model)
    except PostedCardRefusedError as exc:
        raise HTTPException(403, str(exc)) from None
    if ctx.mcp_servers:
        card = card.model_copy(deep=True)
        give_mcp_servers(card, ctx.mcp_servers)
    try:
        runtime = ctx.manager.create_team(card, model=body.model)
    except (ValueError, ImportError) as exc:
        raise HTTPException(422, f"the team cannot start: {exception_words(exc)}") from None
    storage = ctx.manager.storage
    if body.name is not None:
        storage.teams.update(runtime.team_id, name=body.name)
    return ctx.info(ctx.record(runtime.team_id))


@router.get("")
def list_teams(
    ctx: Ctx,
    offset: Annotated[
        int, Query(ge=0, le=1_000_000, description="Teams to skip (after the cursor, if any).")
    ] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    status: Annotated[TeamStatus | None, Query(description="Only teams in this status.")] = None,
    include_deleted: bool = False,
    after: Annotated[
        str | None,
        Query(
            max_length=200,
            description="The 'next' of the page before: this page lists the teams after "
            "it. Unlike an offset, a team created or deleted meanwhile neither repeats an "
            "entry nor hides one.",
        ),
    ] = None,
) -> TeamPage:
    """A page of the teams, newest first (deleted ones only when asked). ``next`` is the
    cursor of the page's last team while more follow: pass it as ``after`` for the next
    page (see :mod:`akgentic.server.paging`). ``total`` counts every team listed, the
    pages before the cursor's too."""
    records = ctx.manager.list_teams(status)
    if status is None and not include_deleted:
        records = [r for r in records if r.status != TeamStatus.DELETED]
    records = newest_first(records)
    total = len(records)
    if after is not None:
        try:
            records = listed_after(records, parse_cursor(after))
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
    page = records[offset : offset + limit]
    more = offset + limit < len(records)
    return TeamPage(
        items=[ctx.info(r) for r in page],
        total=total,
        offset=offset,
        limit=limit,
        next=cursor_of(page[-1]) if page and more else None,
    )


@router.get("/{team_id}")
def get_team(team_id: UUID, ctx: Ctx) -> TeamInfo:
    """One team: its record, whether it runs here, its last sequence number, and the
    turns a resume would offer again (``interrupted``; read from its log when it does not
    run here)."""
    return ctx.info(ctx.record(team_id), read_log=True)


@router.get("/{team_id}/card")
def get_card(team_id: UUID, ctx: Ctx) -> dict[str, Any]:
    """The team card the team was created from, serialized (class markers included).

    A stored card that does not read (the store's record is damaged: the team is DAMAGED)
    is a 409 saying so, never an empty card a client would take for the team's."""
    record = ctx.record(team_id)
    if not record.card and record.error is not None:
        raise HTTPException(
            409,
            f"{record.error}; the record is kept as stored: restore the server's store from "
            f"a backup to read the card; its history still reads at "
            f"GET /teams/{team_id}/messages",
        )
    return record.card


@router.patch("/{team_id}")
def rename_team(team_id: UUID, body: RenameTeam, ctx: Ctx) -> TeamInfo:
    """Give the team another title: printable text (a control character is a 422). A
    DELETED team is a 409, as for the other verbs: it stays as it was deleted. The store
    refuses it in the rename's own transaction, so a DELETE overtaking this request is
    the same 409 (a purge the 404 of any team the server lacks), never a rename of the
    deleted team."""
    ctx.record(team_id)  # the 404 of an unknown team, and its cards' classes loaded
    try:
        renamed = ctx.manager.storage.teams.update(team_id, name=body.name)
    except InvalidTransitionError:
        raise deleted_team(team_id) from None
    return ctx.info(renamed)


@router.delete("/{team_id}", status_code=204)
def delete_team(
    team_id: UUID,
    ctx: Ctx,
    purge: Annotated[bool, Query(description="Remove its history too.")] = False,
) -> Response:
    """Stop the team if it runs and mark it DELETED (``purge`` removes its rows). Its
    event streams then send ``event: deleted`` and end (not ``stopped`` on the way), and
    the all-teams streams send ``event: deleted`` for it."""
    ctx.record(team_id)
    with ctx.live.deleting(team_id):
        ctx.manager.delete_team(team_id, purge=purge)
    ctx.rosters.forget(team_id)
    return Response(status_code=204)


async def no_body(team_id: UUID, request: Request) -> None:
    """Refuse a body ``POST /teams/{id}/stop`` would ignore: its options are query
    parameters, and a ``{"grace": 1}`` sent as JSON would stop the team with the default
    grace, unsaid. A blank body, ``{}`` or ``null`` gives nothing and is taken; anything
    else is the same 422, a body the parser cannot read too (bytes that are not JSON, or
    JSON nested deeper than it recurses: a ``RecursionError``, else a 500)."""
    sent = (await request.body()).strip()
    try:
        nothing = not sent or json.loads(sent) in (None, {})
    except (ValueError, RecursionError):
        nothing = False
    if not nothing:
        raise HTTPException(
            422,
            f"POST /teams/{team_id}/stop takes no body, nothing was stopped: give grace and "
            f"interrupt as query parameters (POST /teams/{team_id}/stop?grace=1&interrupt=true)",
        )


@router.post("/{team_id}/stop", dependencies=[Depends(no_body)])
def stop_team(
    team_id: UUID,
    ctx: Ctx,
    grace: Annotated[
        float, Query(ge=0, le=300, allow_inf_nan=False, description="Seconds turns get to end.")
    ] = 30,
    interrupt: Annotated[
        bool, Query(description="Cut the turns in progress at their next step first.")
    ] = False,
) -> TeamInfo:
    """Stop the team gracefully (STOPPED): turns in progress get ``grace`` seconds.

    ``interrupt`` (Ctrl-C of ``akgentic run --server``) cuts them at their next step
    instead: each is recorded as interrupted, for a resume to offer again."""
    record = ctx.record(team_id)
    if record.status == TeamStatus.DELETED:
        raise deleted_team(team_id)
    if interrupt:
        ctx.manager.interrupt_team(team_id, grace_timeout=grace)
    else:
        ctx.manager.stop_team(team_id, grace_timeout=grace)
    return ctx.info(ctx.record(team_id))


@router.post("/{team_id}/resume", responses=DRAINING, dependencies=[Depends(accepting_work)])
def resume_team(
    team_id: UUID, ctx: Ctx, body: Annotated[ResumeTeam | None, Body()] = None
) -> TeamInfo:
    """Rebuild a stopped (or crashed) team from its log and run it here.

    Turns a crash interrupted are listed in ``interrupted``; ``retry_interrupted``
    delivers them again (a turn may repeat its side effects) first, in their original
    order, before the messages queued behind them; ``dismiss_interrupted`` gives them up
    for good. On a team already running — resumed on another worker after its worker was
    lost, say — either settles the turns it lists as interrupted: retried, they come
    after what their recipients have taken on since, and ``out_of_order`` lists those that
    thereby lost their place (as it lists a resume's retry of a turn an earlier run left).
    A team being stopped (here or elsewhere) is resumed once its stop has finished; a stop
    that does not finish in time is a 409 saying so; not ``wait_for_stop``, a stop in
    progress is a 409 at once, code ``team_stopping``, nothing resumed: the client waits
    (``stopping`` of GET /teams/{id}), as its person may give up, and asks again — a stop
    that begins while it asks is never waited out in silence. ``first_seq`` in the answer is the seq
    of the resumed run's first record: the records that stop wrote while the resume waited
    come before it (on a team already running, it is that run's, from before the resume)."""
    options = body or ResumeTeam()
    if options.retry_interrupted and options.dismiss_interrupted:
        raise HTTPException(422, "give at most one of retry_interrupted and dismiss_interrupted")
    record = ctx.record(team_id)
    running = ctx.manager.get_team(team_id)
    settle = options.retry_interrupted or options.dismiss_interrupted
    if running is not None and ctx.manager.stopping(team_id):
        running = None  # stopping here: the resume waits for the stop, then resumes it
    if running is not None and not settle:
        raise HTTPException(409, f"team {team_id} is already running")
    if record.status == TeamStatus.DELETED:
        raise deleted_team(team_id)
    try:
        runtime = running or ctx.manager.resume_team(
            team_id,
            retry_interrupted=options.retry_interrupted,
            wait_for_stop=options.wait_for_stop,
        )
    except TeamStoppingError:
        raise CodedError(
            409,
            f"team {team_id} is stopping, nothing resumed: ask again once its stop has ended "
            f"(GET /teams/{team_id}: stopping is null)",
            TEAM_STOPPING,
        ) from None
    except CorruptRecordError as exc:
        raise _damaged_record(team_id, record.status is None and bool(record.card), exc) from None
    except UnreadableLogError as exc:
        raise HTTPException(
            409,
            f"team {team_id} cannot be resumed, nothing changed: its event log is unreadable: "
            f"{exc}; restore the server's store from a backup (GET /teams/{team_id}/events "
            "shows what still reads)",
        ) from None
    except ValueError as exc:
        if ctx.record(team_id).status == TeamStatus.DELETED:  # a DELETE got there first
            raise deleted_team(team_id) from None
        said = exception_words(exc)  # named already when the manager says why ("team … is running")
        named = said.startswith(f"team {team_id} ")
        detail = said if named else f"team {team_id} cannot be resumed: {said}"
        raise HTTPException(409, detail) from None

    if options.retry_interrupted and running is not None:  # a resume retried them already
        runtime.retry_interrupted()
    elif options.dismiss_interrupted:
        runtime.dismiss_interrupted()
    return ctx.info(ctx.record(team_id))


def _damaged_record(team_id: UUID, status_only: bool, exc: CorruptRecordError) -> HTTPException:
    """The 409 of a resume the store refused because the team's record does not read
    whole (``akgentic teams resume`` refuses it the same way): nothing changed, and the
    way on — a stop rewrites a status that alone does not read (``status_only``); any
    other damage (the card, the metadata, a time) needs the store's backup."""
    way = (
        f"stop it first (POST /teams/{team_id}/stop rewrites its status), then resume it"
        if status_only
        else "restore the server's store from a backup to resume it; its history still "
        f"reads at GET /teams/{team_id}/messages, and DELETE /teams/{team_id} removes it"
    )
    return HTTPException(409, f"team {team_id} cannot be resumed, nothing changed: {exc}; {way}")


@router.get("/{team_id}/members")
def members(team_id: UUID, ctx: Ctx) -> list[MemberInfo]:
    """The roster: each member's name, role, kind and model; for agents, their commands,
    whether they are in a turn now, and the tokens they used (their latest state).

    Read from the team's log and stored states, never by asking a member: it answers at
    once while members work. A team not running here lists the members of its last run
    (the person and tool actors included; a member fired is not), the ones a resume
    starts again."""
    ctx.record(team_id)
    storage = ctx.manager.storage
    runtime = ctx.manager.get_team(team_id)
    facts = ctx.rosters.read(storage, team_id)
    states = storage.states.load_states(team_id)
    saved = {
        agent_id: dict(state.state.lifetime_usage)
        for agent_id, state in states.items()
        if isinstance(state.state, AgentState)
    }

    def info(name: str, agent_id: UUID, role: str, kind: Any) -> MemberInfo:
        seen = facts.get(agent_id)
        return MemberInfo(
            name=name,
            role=role or (seen.role if seen else ""),
            agent_id=agent_id,
            kind=kind,
            model=seen.model if seen else None,
            commands=list(seen.commands) if seen else [],
            busy=runtime is not None and seen is not None and seen.busy,
            usage=seen.usage if seen and seen.usage else saved.get(agent_id, {}),
        )

    return [info(*member) for member in ctx.listed_members(team_id)]
