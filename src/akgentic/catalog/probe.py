"""``probe()``: does a configured tool's outside service answer? Run it, bound it, keep it.

:func:`run_probe` calls a type's ``probe(timeout)`` on an instance built from its config
with its credential bound, and turns the outcome into a :class:`ProbeResult`: ``active``
with the probe's one-line detail, or ``error`` with the reason. It never raises for the
probe's sake. The probe runs in a thread of its own and is given up ``grace`` seconds
after its timeout (a thread cannot be cancelled; a probe that ignores its timeout is
reported, not waited for). The secret is scrubbed from every detail.

:func:`http_check` is the light ping the shipped types share: one GET, the timeout handed
to the client, 2xx is an answer, 401/403 is a refused credential, anything else says
what happened.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict

from akgentic.storage.records import utc_now

__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "HttpAnswer",
    "ProbeFailedError",
    "ProbeResult",
    "http_check",
    "run_probe",
]

DEFAULT_PROBE_TIMEOUT = 10.0
_DETAIL_LIMIT = 500


class ProbeFailedError(Exception):
    """A probe's answer: the service did not answer as it should (the message says how)."""


class ProbeResult(BaseModel):
    """The outcome of one probe: ``active`` or ``error``, a one-line detail, when."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    status: Literal["active", "error"]
    detail: str
    checked_at: datetime


def _spellings(secret: str) -> set[str]:
    """How an error message may quote ``secret``: as it is, without its surrounding
    blanks, and escaped as Python writes a str or bytes (httpx's ``Illegal header value
    b'...'`` doubles a backslash and writes a tab as ``\\t``), as JSON, or URL-quoted."""
    return {
        secret,
        secret.strip(),
        repr(secret)[1:-1],
        repr(secret.encode("utf-8", "surrogatepass"))[2:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
    }


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    spellings = {s for secret in secrets if secret for s in _spellings(secret)}
    for spelling in sorted(spellings - {""}, key=len, reverse=True):  # longest first
        text = text.replace(spelling, "***")
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def run_probe(
    probe: Callable[[float], Any],
    timeout: float = DEFAULT_PROBE_TIMEOUT,
    *,
    secrets: tuple[str, ...] = (),
    grace: float = 2.0,
) -> ProbeResult:
    """Run ``probe(timeout)`` and report; see the module docstring."""
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def call() -> None:
        try:
            outcome["detail"] = probe(timeout)
        except BaseException as exc:
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=call, name="akgentic-catalog-probe", daemon=True).start()
    if not done.wait(timeout + grace):
        detail = f"the probe did not finish within {timeout:g} s"
        return ProbeResult(status="error", detail=detail, checked_at=utc_now())
    error = outcome.get("error")
    if error is not None:
        reason = str(error)
        if not isinstance(error, ProbeFailedError):
            reason = f"{type(error).__name__}: {reason}"
        return ProbeResult(status="error", detail=_scrub(reason, secrets), checked_at=utc_now())
    detail = str(outcome.get("detail") or "answered")
    return ProbeResult(status="active", detail=_scrub(detail, secrets), checked_at=utc_now())


def _shown(url: str) -> str:
    """``url`` without credentials or query (what a detail may say about where it went)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True, slots=True)
class HttpAnswer:
    """A 2xx answer: its decoded JSON ``body`` (None if not JSON) and a one-line
    ``summary`` a probe may return as its detail."""

    body: Any
    summary: str


def http_check(
    url: str,
    *,
    timeout: float,
    headers: Mapping[str, str] | None = None,
    what: str = "the service",
) -> HttpAnswer:
    """GET ``url`` within ``timeout``; the :class:`HttpAnswer` on a 2xx answer.

    Raises :class:`ProbeFailedError`: unreachable (the reason), credential refused (401/403),
    or any other status.
    """
    import httpx

    shown = _shown(url)
    started = time.monotonic()
    try:
        response = httpx.get(url, headers=dict(headers or {}), timeout=timeout)
    except httpx.TimeoutException:
        raise ProbeFailedError(f"{what} at {shown} did not answer within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        raise ProbeFailedError(f"{what} at {shown} is unreachable: {reason}") from None
    took = (time.monotonic() - started) * 1000
    if response.status_code in (401, 403):
        raise ProbeFailedError(
            f"{what} at {shown} refused the credential (HTTP {response.status_code}): "
            f"set a valid one"
        )
    if not response.is_success:
        raise ProbeFailedError(f"{what} at {shown} answered HTTP {response.status_code}")
    try:
        body = response.json()
    except ValueError:
        body = None
    return HttpAnswer(body, f"{what} answered HTTP {response.status_code} in {took:.0f} ms")
