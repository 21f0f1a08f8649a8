"""The one place SearchTool talks to Tavily: a client per call, every failure translated.

Providers never raise out of a tool: a missing or refused key, a spent quota, a rate limit,
a network failure, a timeout or a server error becomes :class:`SearchUnavailableError`, which
the tool answers as ``search is unavailable: <why>``. The one exception is a 400 — the
model's own arguments were refused — which is a ``RetriableError`` saying what to fix.

The client is ``tavily-python`` (the ``search`` extra). The key is read from the
environment at each call, never stored in a card; without it no request is sent (the
client's keyless mode is never used).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from akgentic.tool.errors import RetriableError

__all__ = ["DEFAULT_BASE_URL", "SearchUnavailableError", "call_tavily"]

DEFAULT_BASE_URL = "https://api.tavily.com"


class SearchUnavailableError(Exception):
    """Search cannot be done now; the message says why, for the model."""


def call_tavily(
    action: Callable[[Any], dict[str, Any]], *, key_env: str, base_url: str | None
) -> dict[str, Any]:
    """Run ``action(client)`` on a fresh ``TavilyClient``; translate every failure.

    Raises :class:`SearchUnavailableError` or, for a 400, ``RetriableError``.
    """
    key = os.environ.get(key_env, "").strip()
    if not key:
        raise SearchUnavailableError(
            f"{key_env} is not set (export a Tavily API key to enable web search)"
        )
    try:
        import requests
        from tavily import TavilyClient, errors  # type: ignore[import-untyped]
    except ImportError:
        raise SearchUnavailableError(
            "the search extra is not installed (pip install 'akgentic[search]')"
        ) from None
    where = base_url or DEFAULT_BASE_URL
    client = TavilyClient(api_key=key, api_base_url=where)
    try:
        return action(client)
    except errors.BadRequestError as exc:
        raise RetriableError(
            f"Tavily refused these arguments (400): {_detail(exc)}. Correct them and call again."
        ) from None
    except errors.InvalidAPIKeyError as exc:
        reason = f"Tavily refused the API key in {key_env} (401{_suffix(exc)})"
    except errors.UsageLimitExceededError as exc:
        reason = f"Tavily's rate limit is reached (429{_suffix(exc)})"
    except errors.ForbiddenError as exc:  # 403, and 432/433: the plan's or PAYG limit
        reason = f"Tavily refused this account's request{_suffix(exc)}"
    except errors.TimeoutError as exc:
        reason = f"Tavily did not answer in time ({exc})"
    except requests.HTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "an error"
        reason = f"Tavily answered {status}{_suffix(exc)}"
    except requests.RequestException as exc:
        reason = f"cannot reach {where}: {_first_line(exc)}"
    finally:
        client.close()
    raise SearchUnavailableError(reason)


def _detail(exc: BaseException) -> str:
    return _first_line(exc) or "no reason given"


def _suffix(exc: BaseException) -> str:
    text = _first_line(exc)
    return f": {text}" if text else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
