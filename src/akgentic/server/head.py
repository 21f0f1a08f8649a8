"""``HEAD`` wherever ``GET`` is answered: the same status and headers, no body.

FastAPI's routes answer only the methods they declare, so a ``HEAD`` of a read route
(``curl -I``, a link checker, a probe) was a 405 while its ``GET`` answered. One
middleware answers them all, every route the same way, rather than a second decorator
on each: a ``HEAD`` no route takes itself is run as the ``GET`` of its path, and the
answer ends as soon as its headers are sent. An event stream's ``HEAD`` thus answers at
once with the stream's headers instead of waiting for its first event, and the stream
it began is cancelled as a client's disconnect cancels it. A path no ``GET`` answers
keeps the 404 or 405 of the ``HEAD`` itself.
"""

from __future__ import annotations

import anyio
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HeadAsGet"]


class HeadAsGet:
    """Answers ``HEAD`` as the ``GET`` of the same path, without the body (see the module)."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes

    def _taken(self, scope: Scope, method: str) -> bool:
        asked = {**scope, "method": method}
        return any(route.matches(asked)[0] is Match.FULL for route in self.routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "HEAD"
            or self._taken(scope, "HEAD")
            or not self._taken(scope, "GET")
        ):
            await self.app(scope, receive, send)
            return
        ended = False

        with anyio.CancelScope() as answered:

            async def headers_only(message: Message) -> None:
                nonlocal ended
                if ended:
                    return  # the body of the GET: a HEAD answer has none
                await send(message)
                if message["type"] == "http.response.start":
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    ended = True
                    answered.cancel()  # a stream would go on until its first event

            await self.app({**scope, "method": "GET"}, receive, headers_only)
