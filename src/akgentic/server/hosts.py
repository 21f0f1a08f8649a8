"""The ``Host`` check: a server without a token answers only to its own names.

A server without a token trusts whoever can reach its socket — on loopback, the people on
this machine. A web page they open elsewhere can reach it too, through DNS rebinding: the
page's own host name is re-pointed at 127.0.0.1, and the browser sends its requests, with
that name in ``Host``, to the server. So a server without a token refuses (400) every
request whose ``Host`` is not the address it listens on, ``localhost``, ``127.0.0.1``,
``::1``, or a name the operator added (``akgentic serve --allowed-host NAME``,
:attr:`ServerSettings.allowed_hosts`). With a token, a rebound page has no token to send,
and any ``Host`` is answered unless names were added, which are then checked as well.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from akgentic.server.settings import ServerSettings

__all__ = ["HostCheck", "allowed_hosts", "host_name"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(header: str) -> str:
    """The name in a ``Host`` header, without its port, brackets, case or final dot."""
    value = header.strip().lower()
    if value.startswith("["):  # [::1]:8080
        return value[1:].partition("]")[0]
    if value.count(":") == 1:  # name:port (an IPv6 address without brackets has more)
        value = value.partition(":")[0]
    return value.rstrip(".")


def allowed_hosts(settings: ServerSettings) -> frozenset[str] | None:
    """The names ``Host`` may carry, or None when it is not checked (a token, and no
    names added)."""
    if settings.token is not None and not settings.allowed_hosts:
        return None
    names = [settings.host, *LOOPBACK_NAMES, *settings.allowed_hosts]
    return frozenset(host_name(n) for n in names)


class HostCheck:
    """400 for a request whose ``Host`` is not one of ``allowed``; see the module docstring."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope.get("headers", ()) if k == b"host"), b"")
        name = host_name(header.decode("latin-1"))
        if name in self.allowed:
            await self.app(scope, receive, send)
            return
        shown = ", ".join(sorted(f"[{n}]" if ":" in n else n for n in self.allowed))
        said = f"Host {name!r}" if name else "a request without a Host header"
        response = JSONResponse(
            {
                "detail": f"{said} is not a name this server answers to ({shown}): use one "
                f"of those, or add it with akgentic serve --allowed-host NAME"
            },
            status_code=400,
        )
        await response(scope, receive, send)
