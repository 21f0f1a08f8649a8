"""Server-sent events: one team's log from any point, and every team's live records."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import StreamingResponse

from akgentic.client.models import ErrorBody
from akgentic.server.context import ServerContext, context
from akgentic.server.sse import all_teams_stream, parse_last_event_id, team_stream
from akgentic.storage import MAX_SEQ

__all__ = ["router"]

router = APIRouter(tags=["events"])

Ctx = Annotated[ServerContext, Depends(context)]
_SSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "An SSE stream."}
}
_TEAM_SSE: dict[int | str, dict[str, Any]] = {
    **_SSE,
    404: {"model": ErrorBody, "description": "No such team (code 'team_not_found')."},
}
_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


@router.get("/teams/{team_id}/events", response_class=StreamingResponse, responses=_TEAM_SSE)
async def team_events(
    team_id: UUID,
    ctx: Ctx,
    from_seq: Annotated[
        int, Query(ge=1, le=MAX_SEQ, description="The first sequence number to send.")
    ] = 1,
    last_event_id: Annotated[str | None, Header(description="Resume after this id.")] = None,
    heartbeat: Annotated[
        float | None,
        Query(
            ge=0.2, le=300, allow_inf_nan=False, description="Seconds between keep-alive comments."
        ),
    ] = None,
) -> StreamingResponse:
    """The team's log from ``from_seq`` (or past ``Last-Event-ID``) on, then live: no gap
    and no duplicate. ``event: stopped`` says the team is not running (here, or in another
    process holding its lease) and all is sent; the stream stays open. ``event: deleted``
    says the team is DELETED (or purged) and all is sent: the stream ends after it. A
    comment line comes every heartbeat. A team purged (or never created) is a 404 with
    the code ``team_not_found``, which a reconnecting client reads as deleted."""
    await asyncio.to_thread(ctx.record, team_id)  # a store read: never on the event loop
    resume = parse_last_event_id(last_event_id)
    start = resume + 1 if resume is not None else from_seq
    stream = team_stream(ctx.live, team_id, start, heartbeat or ctx.settings.heartbeat)
    return StreamingResponse(stream, media_type="text/event-stream", headers=_HEADERS)


@router.get("/events", response_class=StreamingResponse, responses=_SSE)
async def all_events(
    ctx: Ctx,
    heartbeat: Annotated[
        float | None,
        Query(
            ge=0.2, le=300, allow_inf_nan=False, description="Seconds between keep-alive comments."
        ),
    ] = None,
) -> StreamingResponse:
    """Every record of every team running here, from now on (ids ``<team>:<seq>``), with
    ``event: stopped`` when one stops and ``event: deleted`` for each team this server
    deletes; to miss nothing after a reconnect, follow a team's own stream. A comment
    line comes every heartbeat (``heartbeat``, as for a team's stream; else the
    server's)."""
    stream = all_teams_stream(ctx.live, heartbeat or ctx.settings.heartbeat)
    return StreamingResponse(stream, media_type="text/event-stream", headers=_HEADERS)
