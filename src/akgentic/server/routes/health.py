"""``GET /health``: the one route that never needs the token."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

from fastapi import APIRouter, Depends

from akgentic.client.models import Health
from akgentic.server.context import ServerContext, context

__all__ = ["router"]

router = APIRouter(tags=["health"])


def _version() -> str:
    try:
        return version("akgentic")
    except PackageNotFoundError:
        return "unknown"


@router.get("/health")
def health(ctx: Annotated[ServerContext, Depends(context)]) -> Health:
    """The server is up; how many teams run in it."""
    return Health(version=_version(), teams_running=len(ctx.manager.running()))
