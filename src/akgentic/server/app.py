"""create_app: the FastAPI application over a TeamManager.

The app owns no team: the manager (and its storage and actor system) belongs to whoever
built it — :func:`akgentic.server.serve` for ``akgentic serve``, a test, or your program.
Everything but ``/health``, ``/docs``, ``/openapi.json`` and the web page (``/``, which
holds no data) requires the token when the settings have one; without one, only requests
naming the server's own host are answered (``hosts.py``). CORS is off unless origins are
configured. Posted cards reach the host only as far as ``settings.allow_posted`` says
(``posted.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from starlette.datastructures import Headers
from starlette.responses import Response

from akgentic.server.auth import require_token
from akgentic.server.cards import CardRegistry
from akgentic.server.context import ServerContext
from akgentic.server.errors import BodyLimit, Crashes, install_error_handlers
from akgentic.server.feed import Hub
from akgentic.server.head import HeadAsGet
from akgentic.server.hosts import HostCheck, allowed_hosts
from akgentic.server.routes import (
    cards_router,
    catalog_router,
    conversation_router,
    events_router,
    health_router,
    teams_router,
)
from akgentic.server.settings import ServerSettings
from akgentic.server.web import install_page
from akgentic.team import TeamCard, TeamManager
from akgentic.tool.core.lookup import card_classes
from akgentic.tool.mcp import MCPTool

__all__ = ["create_app"]

DOCS_ASSETS = "/docs-assets"
"""Where the API documentation pages load Swagger UI and ReDoc from (no token, no CDN)."""

DESCRIPTION = """\
Teams of LLM agents over HTTP. Create a team from a card, post messages (fire and forget:
202), and follow what it does on its server-sent event stream, which resumes after a
dropped connection with `Last-Event-ID` and misses nothing. Send the server's token as
`Authorization: Bearer <token>` when it has one.
"""


CORS_METHODS = ["DELETE", "GET", "HEAD", "PATCH", "POST", "PUT"]
"""Every method the routes answer (the catalog's ``PUT`` too): what a page on an allowed
origin may send (``tests/server/test_api.py`` checks it against the OpenAPI paths)."""

CORS_HEADERS = ["Authorization", "Content-Type", "Last-Event-ID"]
"""The request headers a page on an allowed origin may send."""


class Cors(CORSMiddleware):
    """Starlette's CORS, its refused preflight said as every error of the API is: a JSON
    ``detail`` naming what was refused and what is allowed, not the plain text "Disallowed
    CORS origin" (a browser reads only the status; a person reading its network panel,
    or a client that is no browser, reads this)."""

    def preflight_response(self, request_headers: Headers) -> Response:
        answer = super().preflight_response(request_headers)
        if answer.status_code != 400:
            return answer
        refused = bytes(answer.body).decode().removeprefix("Disallowed CORS ")
        origin = request_headers.get("origin", "")
        detail = (
            f"this server refuses the cross-origin request ({refused} not allowed) from "
            f"{origin!r}: a page's origin is allowed with akgentic serve --cors-origin; its "
            f"methods may be {', '.join(CORS_METHODS)} and its headers "
            f"{', '.join(CORS_HEADERS)}"
        )
        kept = {
            k: v for k, v in answer.headers.items() if k not in ("content-length", "content-type")
        }
        return JSONResponse({"detail": detail}, status_code=400, headers=kept)


def create_app(
    manager: TeamManager,
    settings: ServerSettings | None = None,
    *,
    cards: CardRegistry | Iterable[TeamCard] = (),
) -> FastAPI:
    """The API over ``manager``; ``cards`` are the team cards clients may name.

    Raises ``MCPConfigError`` (a ValueError naming the file) when ``settings.mcp_config``
    cannot be used."""
    settings = settings or ServerSettings()
    registry = cards if isinstance(cards, CardRegistry) else CardRegistry()
    if not isinstance(cards, CardRegistry):
        for card in cards:
            registry.add(card)
    servers = MCPTool.from_config(settings.mcp_config) if settings.mcp_config else []
    ctx = ServerContext(
        manager=manager,
        cards=registry,
        settings=settings,
        mcp_servers=servers,
        started_cards=frozenset(card_classes().values()),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        ctx.hub = Hub(manager, asyncio.get_running_loop(), poll_interval=settings.poll_interval)
        try:
            yield
        finally:
            ctx.hub.close()

    app = FastAPIOffline(  # /docs and /redoc with their scripts served here, not a CDN
        title="akgentic",
        description=DESCRIPTION,
        version=_version(),
        lifespan=lifespan,
        static_url=DOCS_ASSETS,
    )
    app.state.context = ctx
    app.state.settings = settings
    install_error_handlers(app)
    secured = [Depends(require_token)]
    app.include_router(health_router)
    for router in (teams_router, conversation_router, events_router, cards_router):
        app.include_router(router, dependencies=secured)
    app.include_router(catalog_router, dependencies=secured)
    install_page(app)
    app.add_middleware(HeadAsGet, routes=app.router.routes)  # innermost: HEAD as GET (head.py)
    if settings.cors_origins:
        app.add_middleware(
            Cors,
            allow_origins=settings.cors_origins,
            allow_methods=CORS_METHODS,
            allow_headers=CORS_HEADERS,
        )
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    hosts = allowed_hosts(settings)
    if hosts is not None:
        app.add_middleware(HostCheck, allowed=hosts)
    app.add_middleware(Crashes)  # outermost: a 500 is logged once (errors.py)
    return app


def _version() -> str:
    from akgentic.server.routes.health import _version as version

    return version()
