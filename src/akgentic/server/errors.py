"""Errors as the API answers them: a 4xx always says why, a 500 never shows a traceback.

Every error body is ``{"detail": "<what went wrong and what to do>"}`` (422s add the
field ``errors``; an error a client acts on adds a stable ``code``: ``team_not_found`` on
the 404 for an unknown team id; see ``akgentic.client.models.ErrorBody``). A team another
process runs is a 409; a placement that cannot act now (no worker has room, the team is
between two workers) a 503. An unexpected exception is logged with its traceback under
an error id and answered 500 with that id only. A ``detail`` is one line in the
project's words: a pydantic error as ``field.path: message``
(:func:`akgentic.core.excerpt.exception_words`, as the CLI says it), never its ``[type=…]``
or link, and a malformed team id in a path as the value it was. A request the HTTP
parser refuses before the app runs (a bad ``Content-Length``) is a JSON 400 as well:
:class:`JsonErrorsH11`, the protocol the server's uvicorn runs.
"""

from __future__ import annotations

import json
import logging
import secrets
import sys
from typing import Any

import h11
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from akgentic.client.models import TEAM_NOT_FOUND
from akgentic.core.excerpt import clip, excerpt, validator_words
from akgentic.storage import TeamNotFoundError
from akgentic.team import TeamRunningElsewhereError
from akgentic.team.placement import PlacementError

__all__ = [
    "BodyLimit",
    "CodedError",
    "Crashes",
    "JsonErrorsH11",
    "install_error_handlers",
]

logger = logging.getLogger("akgentic.server")


class CodedError(HTTPException):
    """An error answer whose body carries ``code`` beside ``detail``: for the errors a
    client tells apart by more than the status (the words of ``detail`` may change, the
    code does not)."""

    def __init__(self, status_code: int, detail: str, code: str) -> None:
        super().__init__(status_code, detail)
        self.code = code


class JsonErrorsH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11), whose answer to a request it cannot parse — a
    ``Content-Length`` that is not a whole number, or is negative, or two that disagree; a
    malformed request line or header — is JSON like every other error of the API (a
    ``detail`` saying what to send instead), not uvicorn's plain-text "Invalid HTTP
    request received.". Such a request never reaches the app, so no exception handler
    can answer it: this is the one place. The server runs with it (``http=`` of its
    uvicorn config), so h11 even where httptools is installed, whose parser answers in
    plain text from C code this cannot reach."""

    def send_400_response(self, msg: str) -> None:
        # uvicorn calls this in the ``except h11.RemoteProtocolError`` of its event loop:
        # that exception, in flight, says what was wrong (uvicorn's ``msg`` does not)
        error = sys.exc_info()[1]
        reason = str(error) if isinstance(error, h11.RemoteProtocolError) else msg
        body = json.dumps({"detail": unparsable_request(reason)}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event))
        self.transport.close()


def unparsable_request(reason: str) -> str:
    """The ``detail`` of a request the HTTP parser refused, ``reason`` being its words
    (h11's: ``bad Content-Length``, ``illegal request line: ...``)."""
    if "content-length" in reason.lower():
        return (
            f"the request's Content-Length cannot be read ({reason}): send it once, as the "
            f"body's size in bytes (a whole number, 0 or more), or send none with no body"
        )
    return (
        f"the request is not HTTP/1.1 this server can read ({clip(reason)}): send a "
        f"well-formed HTTP/1.1 request; the API is described at /docs"
    )


def _where(loc: Any) -> str:
    parts = [str(p) for p in loc if p != "body"] if isinstance(loc, list | tuple) else [str(loc)]
    return ".".join(parts) or "body"


_PATH_WORDS = {
    "team_id": "is not a team id (a UUID); list the teams with GET /teams",
    "name": (
        "is not a tool name (a lower-case letter, then up to 63 of a-z, 0-9, '_', '.', '-'); "
        "list the tools with GET /catalog/tools"
    ),
}
"""What a malformed value of a path parameter is said to be, and where the good ones are."""


def _path_problem(errors: list[dict[str, Any]]) -> str | None:
    """What a path with a malformed id or name says: the value (quoted, clipped), what it
    should be and where to find one. None when the path is fine."""
    for error in errors:
        loc = tuple(error.get("loc", ()))
        if len(loc) == 2 and loc[0] == "path" and loc[1] in _PATH_WORDS:
            return f"{excerpt(error.get('input'))} {_PATH_WORDS[str(loc[1])]}"
    return None


def _body_problem(request: Request, exc: RequestValidationError) -> str | None:
    """What is wrong with a body that is not JSON at all, said plainly: where the JSON
    breaks (line, column), or that it was not sent as JSON."""
    found = exc.errors()
    if len(found) != 1:
        return None
    error = found[0]
    loc = tuple(error.get("loc", ()))
    if error.get("type") == "json_invalid" and len(loc) == 2 and isinstance(loc[1], int):
        doc = exc.body if isinstance(exc.body, str) else ""
        line = doc.count("\n", 0, loc[1]) + 1
        column = loc[1] - (doc.rfind("\n", 0, loc[1]) + 1) + 1
        reason = str((error.get("ctx") or {}).get("error", "invalid JSON"))
        return (
            f"the request body is not valid JSON: {reason[:1].lower()}{reason[1:]} at line "
            f"{line}, column {column} (character {loc[1]})"
        )
    sent = request.headers.get("content-type", "")
    if loc == ("body",) and "json" not in sent.lower():
        how = f"as {sent.split(';')[0]}" if sent else "without a Content-Type"
        return (
            f"the request body was sent {how}: send it as a JSON object with "
            f"'Content-Type: application/json'"
        )
    return None


def _unreadable(exc: StarletteHTTPException) -> str | None:
    """Why FastAPI could not read a JSON body, when it answered only "There was an error
    parsing the body" (a 400): bytes that are not UTF-8, JSON nested deeper than the
    parser goes, or a number longer than Python converts (``sys.get_int_max_str_digits``).
    None for any other error."""
    cause = exc.__cause__
    if exc.status_code != 400:
        return None
    if isinstance(cause, UnicodeDecodeError):
        byte = cause.object[cause.start : cause.start + 1].hex()
        return (
            f"the request body is not UTF-8: byte 0x{byte} at offset {cause.start} cannot be "
            f"decoded; send the JSON encoded as UTF-8 (escape other characters as \\uXXXX)"
        )
    if isinstance(cause, RecursionError):
        return (
            "the request body is JSON nested too deeply to read (arrays and objects inside "
            "one another hundreds of levels deep); send the same data with less nesting"
        )
    if isinstance(cause, ValueError) and "int_max_str_digits" in str(cause):  # Python's words
        return (
            f"the request body holds a number of more than {sys.get_int_max_str_digits():,} "
            f"digits, longer than Python reads; send a shorter number, or it as a string"
        )
    return None


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {
                "loc": [str(p) for p in e.get("loc", ())],
                "msg": str(e.get("msg", "")),
                "type": str(e.get("type", "")),
            }
            for e in exc.errors()
        ]
        said = "; ".join(
            f"{_where(e['loc'])}: {validator_words(str(e['msg']))}" for e in errors[:5]
        )
        summary = (
            _path_problem(list(exc.errors()))  # no team to send the rest to: say this first
            or _body_problem(request, exc)
            or f"the request is not valid: {said or 'invalid'}"
        )
        return JSONResponse({"detail": summary, "errors": errors}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        unreadable = _unreadable(exc)
        if unreadable is not None:  # a 422 like any body that is not valid JSON
            error = {"loc": ["body"], "msg": unreadable, "type": "json_invalid"}
            return JSONResponse({"detail": unreadable, "errors": [error]}, status_code=422)
        detail = exc.detail
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no route {request.method} {request.url.path}; the API is described at /docs"
        elif exc.status_code == 405 and detail == "Method Not Allowed":
            detail = f"{request.method} is not allowed on {request.url.path}; see /docs"
        body: dict[str, Any] = {"detail": detail}
        if isinstance(exc, CodedError):
            body["code"] = exc.code
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(PlacementError)
    async def unavailable(request: Request, exc: PlacementError) -> JSONResponse:
        # no worker has room, or the team is between two workers: try again later
        return JSONResponse({"detail": str(exc)}, status_code=503)

    @app.exception_handler(TeamNotFoundError)
    async def gone(request: Request, exc: TeamNotFoundError) -> JSONResponse:
        # purged between the route's look and the manager's (another process, a racing
        # request): the 404 of any team the server does not have
        detail = f"{exc}; list the teams with GET /teams"
        return JSONResponse({"detail": detail, "code": TEAM_NOT_FOUND}, status_code=404)

    @app.exception_handler(TeamRunningElsewhereError)
    async def elsewhere(request: Request, exc: TeamRunningElsewhereError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        return _crashed(request, exc)


def _crashed(request: Request, exc: Exception) -> JSONResponse:
    """The 500 of an unexpected exception: logged once with its traceback under an error
    id, answered with that id only."""
    error_id = secrets.token_hex(4)
    logger.error("error %s on %s %s", error_id, request.method, request.url.path, exc_info=exc)
    return JSONResponse(
        {"detail": f"internal error {error_id}; the server's log has the details"},
        status_code=500,
    )


class Crashes:
    """Answers an unexpected exception with :func:`_crashed`'s 500 and ends it there.

    Starlette's handler for ``Exception`` answers from its outermost middleware and then
    raises the exception again for the server to log: uvicorn's "Exception in ASGI
    application" and the whole traceback, a second record of the problem printed whatever
    ``--debug`` says. Installed outermost of the app's middleware, this answers first; an
    exception after the answer began (a stream's) goes on to the server, which alone can
    end that response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def noted(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, noted)
        except Exception as exc:
            if started:
                raise
            await _crashed(Request(scope), exc)(scope, receive, send)


class BodyLimit:
    """413 for a request body over ``max_bytes``, by its Content-Length or as it streams."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> str:
        return (
            f"the request body is larger than {self.max_bytes} bytes, this server's limit "
            f"(akgentic serve --max-body)"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                response = JSONResponse({"detail": self._too_large()}, status_code=413)
                await response(scope, receive, send)
                return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, self._too_large())
            return message

        await self.app(scope, counted, send)
