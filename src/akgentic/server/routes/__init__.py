"""The API's routes, one module per resource (see the server's README for the table)."""

from akgentic.server.routes.cards import router as cards_router
from akgentic.server.routes.catalog import router as catalog_router
from akgentic.server.routes.conversation import router as conversation_router
from akgentic.server.routes.events import router as events_router
from akgentic.server.routes.health import router as health_router
from akgentic.server.routes.teams import router as teams_router

__all__ = [
    "cards_router",
    "catalog_router",
    "conversation_router",
    "events_router",
    "health_router",
    "teams_router",
]
