"""Talking to a team and reading what it did: messages, commands, interrupt, history,
tool state, prompt usage."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Response

from akgentic.agent.accounting import UsageReport
from akgentic.client.models import (
    NO_TOOL_ACTOR,
    TOOL_STATE_UNREADABLE,
    Accepted,
    HistoryPage,
    Interrupted,
    PostCommand,
    PostMessage,
    ToolStateView,
)
from akgentic.core import AddressError, Message, SentMessage, address_name
from akgentic.core.serialization import serialize
from akgentic.server.context import DRAINING, ServerContext, accepting_work, context
from akgentic.server.errors import CodedError
from akgentic.server.protocol import encode_record
from akgentic.storage import MAX_SEQ
from akgentic.team import (
    HostedTeam,
    UnknownToolError,
    UnreadableToolStateError,
    read_history,
    team_usage,
    tool_state,
)

__all__ = ["router"]

router = APIRouter(prefix="/teams/{team_id}", tags=["conversation"])

Ctx = Annotated[ServerContext, Depends(context)]
SCAN = 500


def _accepted(runtime: HostedTeam, message_id: UUID, to: str) -> Accepted:
    return Accepted(message_id=message_id, seq=runtime.committed_seq(message_id), to=to)


def _asked(runtime: HostedTeam, message_id: UUID) -> Message:
    """The message ``message_id`` a member sent the person, searched from the log's end."""
    storage, human = runtime.storage, runtime.card.human
    upper = storage.events.last_seq(runtime.team_id)
    while upper >= 1:
        lower = max(1, upper - SCAN + 1)
        for record in reversed(storage.events.read(runtime.team_id, lower, upper)):
            sent = record.message
            if isinstance(sent, SentMessage) and sent.message.id == message_id:
                if sent.recipient is None or sent.recipient.name != human:
                    raise HTTPException(422, f"message {message_id} was not sent to {human}")
                return sent.message
        upper = lower - 1
    raise HTTPException(422, f"reply_to: no message {message_id} in this team's history")


@router.post(
    "/messages", status_code=202, responses=DRAINING, dependencies=[Depends(accepting_work)]
)
def post_message(team_id: UUID, body: PostMessage, ctx: Ctx) -> Accepted:
    """The person's words, to the entry point, to ``to``, or in answer to ``reply_to``.

    Fire and forget: 202 once the message is committed to the team's log; what the team
    does comes on the events stream. The answer's ``to`` is the member it went to, by its
    address name (``Worker`` is answered as ``@Worker``). Content with no text (empty, or
    whitespace only) is a 422, as is an address that is no member; a team that stops
    (or is deleted) while the message is on its way is a 409: nothing was sent."""
    runtime = ctx.runtime(team_id)
    try:
        if body.reply_to is not None:
            asked = _asked(runtime, body.reply_to)
            to = asked.sender.name if asked.sender else runtime.card.entry_point
            return _accepted(runtime, runtime.process_human_input(body.content, asked), to)
        if body.to is not None:
            to = address_name(body.to)  # 'Worker' is @Worker: answer with the name used
            return _accepted(runtime, runtime.send_to(to, body.content), to)
        return _accepted(runtime, runtime.send(body.content), runtime.card.entry_point)
    except AddressError as exc:
        raise ctx.undelivered(team_id, runtime, exc) from None


@router.post(
    "/commands", status_code=202, responses=DRAINING, dependencies=[Depends(accepting_work)]
)
def post_command(team_id: UUID, body: PostCommand, ctx: Ctx) -> Accepted:
    """A ``/command`` for the entry point (or ``to``); its answer comes as a message to the
    person on the events stream (its ``parentId`` is this ``message_id``), with
    ``failed`` true when the command is unknown or failed. The answer's ``to`` is the
    member's address name."""
    runtime = ctx.runtime(team_id)
    to = address_name(body.to) if body.to else runtime.card.entry_point
    try:
        return _accepted(runtime, runtime.send_to(to, body.command.strip()), to)
    except AddressError as exc:
        raise ctx.undelivered(team_id, runtime, exc) from None


@router.post("/interrupt", status_code=202)
def interrupt(team_id: UUID, ctx: Ctx) -> Interrupted:
    """Cancel the turns in progress: each stops at its next step boundary, and the stream
    shows ``Interrupted`` then ``End`` for it."""
    return Interrupted(members=ctx.runtime(team_id).interrupt())


@router.get("/messages", response_model=HistoryPage)
def history(
    team_id: UUID,
    ctx: Ctx,
    after: Annotated[
        int, Query(ge=0, le=MAX_SEQ, description="Records past this sequence number.")
    ] = 0,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> Response:
    """A page of the team's history: its event log, as the events stream sends it."""
    ctx.record(team_id)
    storage = ctx.manager.storage
    records = read_history(storage, team_id, after, offset, limit)
    items = ",".join(encode_record(record)[1] for record in records)
    last = storage.events.last_seq(team_id)
    return Response(f'{{"items":[{items}],"last_seq":{last}}}', media_type="application/json")


@router.get("/state/{tool_id}")
def state(
    team_id: UUID,
    tool_id: Annotated[str, Path(description="The tool actor, e.g. '#PlanningTool'.")],
    ctx: Ctx,
) -> ToolStateView:
    """A tool actor's state, rebuilt by replaying the team's log (``tool_state``).

    A tool actor of the team that has published nothing yet answers the state it starts
    from (``initial_state``: an empty plan, an empty graph; ``None`` for a tool this
    package does not ship) with ``last_delta`` 0, so a client folds the stream's deltas
    onto it from the first: a fresh team's tools are no 404. A tool the team does not
    have (its roster, ``GET .../members``, lists no such tool actor) is a 404 with the
    code ``no_tool_actor``, naming those it has — ``TeamRuntime.tool_state``'s
    ``UnknownToolError``, word for word. A tool whose logged state this server cannot
    rebuild (no reducer, no snapshot that decodes here) is a 422 with the code
    ``tool_state_unreadable`` saying what to import: its ``UnreadableToolStateError``."""
    ctx.record(team_id)
    name = tool_id if tool_id.startswith("#") else f"#{tool_id}"
    try:
        replayed = tool_state(
            ctx.manager.storage,
            team_id,
            name,
            lambda: [m.name for m in ctx.listed_members(team_id) if m.kind == "tool"],
        )
    except UnknownToolError as exc:
        raise CodedError(404, str(exc), NO_TOOL_ACTOR) from exc
    except UnreadableToolStateError as exc:
        raise CodedError(422, str(exc), TOOL_STATE_UNREADABLE) from exc
    found = replayed.states.get(name)
    return ToolStateView(
        tool_id=name,
        state=serialize(found) if found is not None else None,
        last_delta=replayed.last_seq[name],
        gaps=[{"expected": g.expected, "got": g.got, "at_seq": g.at_seq} for g in replayed.gaps],
    )


@router.get("/usage")
def usage(team_id: UUID, ctx: Ctx) -> UsageReport:
    """The team's prompt economy, from its log: input tokens per member and per card, the
    share the modelled prefix cache served, the parts that broke it most, and the
    provider's own totals (``akgentic usage TEAM --json`` prints the same)."""
    record = ctx.record(team_id)
    return team_usage(ctx.manager.storage, team_id, record.name)
