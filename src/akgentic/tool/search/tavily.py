"""The one place SearchTool talks to Tavily: a client per call, every failure translated.

Providers never raise out of a tool: a missing or refused key, a spent quota, a rate limit,
a network failure, a timeout, a server error, or an answer that is no result (a success
status other than 200, a body that is not a JSON object) becomes
:class:`SearchUnavailableError`, which the tool answers as ``search is unavailable: <why>``.
The one exception is a 400 — the model's own arguments were refused — which is a
``RetriableError`` saying what to fix.

The client is ``tavily-python`` (the ``search`` extra). The caller hands the key in (the
card resolves it at each call: the catalog's credential, else its environment variable);
without one no request is sent (the client's keyless mode is never used).

:func:`read_usage` is the probe's request: ``GET /usage`` (the key's and the account's
credit counters). Tavily's credits page prices search, extract, crawl, map and research,
and lists no cost for ``/usage`` — it is the one request that checks the key without
spending a credit. ``tavily-python`` has no method for it, so it goes through the client's
own session, with the client's headers, and its error statuses are answered as the
client's methods answer theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from akgentic.core.excerpt import clip
from akgentic.tool.errors import RetriableError

__all__ = ["DEFAULT_BASE_URL", "SearchUnavailableError", "call_tavily", "read_usage"]

DEFAULT_BASE_URL = "https://api.tavily.com"


class SearchUnavailableError(Exception):
    """Search cannot be done now; the message says why, for the model."""


class _NoResultError(Exception):
    """An answer that is no result: a success status other than 200, or a 200 whose body
    is not a JSON object. Raised from the session's response hook, before the client reads
    the body (``tavily-python`` would fail on it with an ``AttributeError``, or a
    ``TypeError`` for a status it does not expect)."""


def _no_result(response: Any, *args: Any, **kwargs: Any) -> Any:
    """The session's response hook: raise :class:`_NoResultError` for an answer that is
    no result (see there); an error status is left to the client, which names it, and a
    redirect to the session, which follows it (the hook then sees where it led)."""
    status = response.status_code
    if status >= 400 or response.is_redirect:
        return response
    if status != 200:
        raise _NoResultError(f"it answered {status}, not a result")
    try:
        body = response.json()
    except ValueError:
        raise _NoResultError(
            f"its answer is not JSON ({clip(' '.join(response.text.split()) or 'an empty body')})"
        ) from None
    if not isinstance(body, dict):
        raise _NoResultError(f"its answer is not a JSON object but {_json_kind(body)}")
    return response


def _json_kind(value: Any) -> str:
    """What a JSON value that is not an object is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "a number"


def call_tavily(
    action: Callable[[Any], dict[str, Any]], *, key: str, key_label: str, base_url: str | None
) -> dict[str, Any]:
    """Run ``action(client)`` on a fresh ``TavilyClient`` holding ``key``; translate every
    failure. ``key_label`` says where the key came from, for a refusal ("the API key in
    TAVILY_API_KEY").

    Raises :class:`SearchUnavailableError` or, for a 400, ``RetriableError``.
    """
    try:
        import requests
        from tavily import TavilyClient, errors  # type: ignore[import-untyped]
    except ImportError:
        raise SearchUnavailableError(
            "the search extra is not installed (pip install 'akgentic[search]')"
        ) from None
    where = base_url or DEFAULT_BASE_URL
    client = TavilyClient(api_key=key, api_base_url=where)
    client.session.hooks["response"].append(_no_result)
    try:
        return action(client)
    except _NoResultError as exc:
        reason = f"Tavily at {where}: {exc}"
    except errors.BadRequestError as exc:
        raise RetriableError(
            f"Tavily refused these arguments (400): {_detail(exc)}. Correct them and call again."
        ) from None
    except errors.InvalidAPIKeyError as exc:
        reason = f"Tavily refused {key_label} (401{_suffix(exc)})"
    except errors.UsageLimitExceededError as exc:
        reason = f"Tavily's rate limit is reached (429{_suffix(exc)})"
    except errors.ForbiddenError as exc:  # 403, and 432/433: the plan's or PAYG limit
        reason = f"Tavily refused this account's request{_suffix(exc)}"
    except errors.TimeoutError as exc:
        reason = f"Tavily did not answer in time ({exc})"
    except requests.Timeout:
        reason = f"Tavily at {where} did not answer in time"
    except requests.HTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "an error"
        reason = f"Tavily answered {status}{_suffix(exc)}"
    except requests.RequestException as exc:
        reason = f"cannot reach {where}: {_first_line(exc)}"
    finally:
        client.close()
    raise SearchUnavailableError(reason)


def read_usage(client: Any, timeout: float) -> dict[str, Any]:
    """``GET /usage`` through ``client``'s session within ``timeout`` (see the module
    docstring); an error status raises the client's own error for it."""
    from tavily import errors

    response = client.session.get(f"{client.base_url}/usage", timeout=timeout)
    if response.ok:
        body = response.json()
        return body if isinstance(body, dict) else {}
    try:
        detail = str(response.json().get("detail", {}).get("error") or "")
    except (ValueError, AttributeError):
        detail = ""
    status = response.status_code
    if status == 400:
        raise errors.BadRequestError(detail)
    if status == 401:
        raise errors.InvalidAPIKeyError(detail)
    if status == 429:
        raise errors.UsageLimitExceededError(detail)
    if status in (403, 432, 433):
        raise errors.ForbiddenError(detail)
    response.raise_for_status()
    return {}


def _detail(exc: BaseException) -> str:
    return _first_line(exc) or "no reason given"


def _suffix(exc: BaseException) -> str:
    text = _first_line(exc)
    return f": {text}" if text else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
