"""Serving the page: ``GET /`` is ``index.html``, ``/web/...`` its modules and styles.

The page holds no data and no secret, so it is served without the token; everything it
shows comes from the API, which asks the page for the token. Its Content-Security-Policy
lets it load and call its own origin only: the page makes no request elsewhere, and a
message that carries markup cannot run as script.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["STATIC", "install_page"]

STATIC = Path(__file__).resolve().parent / "static"

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",  # revalidate: a new version of the server is picked up
}


class _Assets(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(HEADERS)
        return response


def install_page(app: FastAPI) -> None:
    """Serve the page on ``app``: ``/`` and ``/web/...``, outside the API's token."""

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=HEADERS)

    app.mount("/web", _Assets(directory=STATIC), name="web")
