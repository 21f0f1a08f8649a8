"""``GET /health``: the one route that never needs the token."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from akgentic.client.models import Health
from akgentic.server.context import ServerContext, context

__all__ = ["router"]

router = APIRouter(tags=["health"])


def _version() -> str:
    try:
        return version("akgentic")
    except PackageNotFoundError:
        return "unknown"


@router.get(
    "/health",
    response_model=Health,
    responses={503: {"model": Health, "description": "Draining: the server is stopping."}},
)
def health(ctx: Annotated[ServerContext, Depends(context)]) -> Health | JSONResponse:
    """The server is up (200, ``ok``); how many teams run in it. While it stops (``akgentic
    serve``'s first Ctrl-C or SIGTERM) 503 ``draining``, the same body: it stops its teams,
    refuses new work and still answers reads, then exits. ``HEAD`` answers the same status
    without the body: a load balancer's or an orchestrator's probe may use either."""
    body = Health(version=_version(), teams_running=len(ctx.manager.running()))
    if ctx.draining:
        body.status = "draining"
        return JSONResponse(body.model_dump(mode="json"), status_code=503)
    return body
