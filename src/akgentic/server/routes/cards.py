"""``GET /team-cards``: the cards a team can be created from by name."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from akgentic.client.models import CardInfo
from akgentic.server.cards import describe
from akgentic.server.context import ServerContext, context

__all__ = ["router"]

router = APIRouter(tags=["team cards"])


@router.get("/team-cards")
def list_cards(ctx: Annotated[ServerContext, Depends(context)]) -> list[CardInfo]:
    """The team cards this server knows by name (``akgentic serve --cards``)."""
    return [CardInfo(**describe(card), source=source) for card, source in ctx.cards.items()]
