"""The bearer token: every route but ``/health`` and the docs requires it when one is set."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

__all__ = ["require_token"]

_bearer = HTTPBearer(auto_error=False, description="The server's token (--token).")


def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """401 unless the request carries ``Authorization: Bearer <the server's token>``."""
    token: str | None = request.app.state.settings.token
    if token is None:
        return
    if credentials is None:
        raise HTTPException(
            401,
            "this server requires a token: send 'Authorization: Bearer <token>'",
            headers={"WWW-Authenticate": "Bearer"},
        )
    if not secrets.compare_digest(credentials.credentials.encode(), token.encode()):
        raise HTTPException(
            401, "the bearer token is not this server's", headers={"WWW-Authenticate": "Bearer"}
        )
