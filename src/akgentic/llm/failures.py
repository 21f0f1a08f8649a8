"""What a failed model request means, in one line that names the endpoint and what to do.

A model request that fails reaches the agent as one of pydantic-ai's ``ModelAPIError``
categories, whose own words ("Connection error.") name neither the server that was tried
nor what to change. :func:`describe_model_failure` turns one into a sentence a person can
act on: the model, the URL the request went to (read from the HTTP client's request in
the exception's causes, so it is the one really tried), what happened, and the setting
to check — a refused key names the variable it was read from, or says that none was
sent. An endpoint of the user's choosing whose answer is no chat completion at all (a
web page: ``--base-url`` pointing at a site, not at its API) is said as such, naming the
URL. A body that is not JSON (a proxy's page, an answer cut short) says to check that
the base URL reaches the model's API; a model whose tool calls' arguments kept not
parsing (:func:`invalid_json`) says to use a model that supports tool calls. A stream cut
off before its finish reason says to send again, check what is in between, or fall back
(and, for a server of OpenAI's API, to set ``sends_finish_reason: false`` if it never sends
one).
Anything that is not a model request failure gives ``None``.
"""

from __future__ import annotations

import errno
import json
import re
import socket
from collections.abc import Iterator

from pydantic import ValidationError
from pydantic_ai.exceptions import (
    FallbackExceptionGroup,
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import INVALID_JSON_KEY

from akgentic.core.excerpt import clip
from akgentic.llm.config import (
    BASE_URL_ENV,
    BASE_URL_PROVIDERS,
    OPENAI_API_PROVIDERS,
    ModelConfig,
    ModelRoster,
)
from akgentic.llm.providers import api_key_env
from akgentic.llm.streamed import ResponseCutOffError

__all__ = ["describe_model_failure", "invalid_json"]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes (``__cause__``, else ``__context__``), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _tried_url(exc: BaseException) -> str | None:
    """The URL of the HTTP request that failed, when a cause carries it."""
    for link in _chain(exc):
        try:
            request = getattr(link, "request", None)
        except Exception:  # httpx raises when an exception was made without a request
            continue
        url = getattr(request, "url", None)
        if url is not None and getattr(url, "host", None):
            return str(url)
    return None


def _transport_reason(exc: BaseException) -> str:
    """What the transport said, in a few words: refused, unknown host, timed out..."""
    if isinstance(exc, ModelTimeoutError):
        return "timed out"
    for link in _chain(exc):
        if isinstance(link, ConnectionRefusedError) or (
            isinstance(link, OSError) and link.errno == errno.ECONNREFUSED
        ):
            return "connection refused"
        if isinstance(link, socket.gaierror):
            return "unknown host"
        if isinstance(link, TimeoutError):
            return "timed out"
    deepest = list(_chain(exc))[-1]
    return str(deepest).strip() or type(deepest).__name__


_NOT_AN_API = (
    "Invalid response from",  # a plain request answered with no JSON (a web page)
    "Streamed response ended without content or tool calls",  # a stream with no event
)
"""How pydantic-ai's OpenAI model says that the answer was no chat completion at all."""


def invalid_json(exc: BaseException) -> str | None:
    """What the parser said of arguments (or a body) that are not JSON, when ``exc`` or one
    of its causes is that failure: a pydantic ``json_invalid`` error, arguments pydantic-ai
    kept as it got them (``{"INVALID_JSON": raw}``), or a JSON decode error; None
    otherwise."""
    for link in _chain(exc):
        if isinstance(link, ValidationError):
            for error in link.errors():
                if error["type"] == "json_invalid":
                    return str(error["msg"])
                raw = error.get("input")
                if isinstance(raw, dict) and INVALID_JSON_KEY in raw:  # kept as sent
                    return f"Invalid JSON: {clip(str(raw[INVALID_JSON_KEY]), 80)}"
        if isinstance(link, json.JSONDecodeError):
            return f"{link.msg}: line {link.lineno} column {link.colno}"
    return None


_NO_TOOLS = re.compile(
    r"does not support (tools|tool calls|function calling)|"
    r"(tools?|tool calls|function calling) (is |are )?not supported",
    re.IGNORECASE,
)
"""How a server (Ollama, vLLM without a tool parser...) refuses a request that offers tools
to a model that cannot call them."""

_TOOL = re.compile(r"Tool '([^']+)' exceeded max retries")
"""How pydantic-ai says a tool's call failed every retry it had."""


def _tool_args_not_json(exc: UnexpectedModelBehavior, name: str | None) -> str | None:
    """The line for a model whose tool calls' arguments kept not parsing; None when
    ``exc`` is not that."""
    tool = _TOOL.search(exc.message)
    detail = invalid_json(exc)
    if tool is None or detail is None:
        return None
    who = f"model {name!r}" if name else "the model"
    return (
        f"{who} sent arguments for tool {tool.group(1)!r} that are not valid JSON, each time "
        f"it was asked again ({detail}): it may not support tool calls (or its server does "
        f"not parse them); switch to a model that supports tool calls (/switch_model, or "
        f"--model provider:model)"
    )


def _not_an_api(exc: UnexpectedModelBehavior, config: ModelConfig | None) -> str | None:
    """The line for an endpoint of the user's choosing that answered with something other
    than an OpenAI-compatible chat completion; None for any other unexpected behaviour (a
    model that keeps failing its output's checks is the model's, not the URL's)."""
    if config is None or not (config.base_url or config.provider in BASE_URL_PROVIDERS):
        return None
    if not exc.message.startswith(_NOT_AN_API):
        return None
    url = config.base_url or f"the URL in {BASE_URL_ENV}"
    return (
        f"model {config.key!r} at {url} did not answer as an OpenAI-compatible API "
        f"({exc.message}): is {url} an OpenAI-compatible API (not a web page)? Its base URL "
        f"usually ends in /v1 (akgentic run --base-url URL, or {BASE_URL_ENV})"
    )


_CUT_OFF = "Streamed response ended without"
"""How pydantic-ai's OpenAI model says a stream ended before its finish reason (it is built
to say so: ``providers.FINISHED_STREAMS``), when nothing asked it again (``run_stream``)."""


def _never_finishes(exc: ModelConnectionError, config: ModelConfig | None) -> str:
    """The way out for a server of OpenAI's API that never sends a finish reason (every
    streamed answer of it reads as cut): said for such a model, or one not known but
    whose stream pydantic-ai's OpenAI model found unfinished."""
    openai = (
        config.provider in OPENAI_API_PROVIDERS
        if config
        else not isinstance(exc, ResponseCutOffError)
    )
    if not openai:
        return ""
    return (
        "; if its server never sends a finish reason (some proxies and small local servers "
        "do not), set sends_finish_reason: false on the model"
    )


_DETAIL_CHARS = 300
"""The most of a server's own words a failure's line quotes (an error body may be a page)."""


def _web_page(body: object) -> bool:
    """Whether an error's body is an HTML page (a web server's, not an API's JSON)."""
    if isinstance(body, bytes):
        body = body[:200].decode("utf-8", "replace")
    if not isinstance(body, str):
        return False
    start = body.lstrip()[:100].lower()
    return start.startswith(("<!doctype html", "<html")) or "<html" in start


def _refused_key(config: ModelConfig | None, detail: str) -> str:
    """What to say of a refused key: the variable it came from, or that none was sent."""
    variable = api_key_env(config) if config is not None else None
    if variable is not None:
        return f"refused the key in {variable} ({detail}): check the key"
    if config is not None:
        return (
            f"wants an API key ({detail}) and none was sent: set `api_key_env` on the model "
            f"to the environment variable holding it"
        )
    return f"refused its API key ({detail}): check the key"


def _window_advice(config: ModelConfig | None) -> str:
    """What lets the agent compact before the window fills, for the model in force."""
    known = config.context_length if config is not None else None
    if known is None:
        return (
            "set the model's context_length to its window so the agent compacts before it "
            "fills (compaction.enabled)"
        )
    return (
        f"check the model's context_length ({known}) is not larger than its real window; the "
        f"agent compacts at compaction.threshold of it (compaction.enabled)"
    )


def _every_model_failed(
    group: FallbackExceptionGroup, config: ModelConfig | None, roster: ModelRoster | None
) -> str:
    """The line for a model whose fallbacks all failed too: each model's own failure, in the
    order they were tried, so the person fixes the one they meant to use (or any)."""
    configs: list[ModelConfig | None] = [config]
    known = roster.keys() if roster is not None else []
    if config is not None:
        configs += [
            roster.get(key) if roster and key in known else None for key in config.fallback_models
        ]
    lines = []
    for index, failure in enumerate(group.exceptions):
        tried = configs[index] if index < len(configs) else None
        line = describe_model_failure(failure, tried)
        lines.append(f"({index + 1}) {line or f'{type(failure).__name__}: {failure}'}")
    return f"all {len(group.exceptions)} models failed, tried in order: {'; '.join(lines)}"


def describe_model_failure(
    exc: BaseException, config: ModelConfig | None = None, roster: ModelRoster | None = None
) -> str | None:
    """One line saying what went wrong with a model request and what to do; ``None`` when
    ``exc`` is not a failed model request. ``config`` (the model in force) names the key's
    variable and the endpoint when the exception does not carry the URL; ``roster`` (the
    one ``config`` is in) does so for its ``fallback_models`` when they all failed too."""
    if isinstance(exc, FallbackExceptionGroup):
        return _every_model_failed(exc, config, roster)
    if isinstance(exc, UnexpectedModelBehavior):
        return _tool_args_not_json(exc, config.key if config else None) or _not_an_api(exc, config)
    if not isinstance(exc, ModelAPIError):
        return None
    name = config.key if config is not None else exc.model_name
    url = _tried_url(exc) or (config.base_url if config is not None else None)
    at = f" at {url}" if url else ""
    if isinstance(exc, ResponseCutOffError) or (
        isinstance(exc, ModelConnectionError) and exc.message.startswith(_CUT_OFF)
    ):
        return (
            f"model {name!r}{at} cut its answer off before finishing it ({exc.message}): "
            f"send the message again; if it keeps happening, check the server or a proxy in "
            f"between (one that closes streamed responses early), or set fallback_models to "
            f"a model to try next{_never_finishes(exc, config)}"
        )
    # a body (or a streamed event) the client could not decode; an HTTP error's own body
    # that is not JSON is said by its status below
    not_json = None if isinstance(exc, ModelHTTPError) else invalid_json(exc)
    if not_json is not None:
        return (
            f"model {name!r}{at} answered with a body that is not valid JSON ({not_json}): "
            f"something other than the model's API may have answered (a proxy, a login or "
            f"error page) or cut the answer short; check that the base_url reaches the "
            f"model's API (akgentic run --base-url URL, or {BASE_URL_ENV}) and send the "
            f"message again"
        )
    if isinstance(exc, ModelConnectionError):
        return (
            f"cannot reach model {name!r}{at} ({_transport_reason(exc)}): is its server "
            f"running there? Check the model's base_url (akgentic run --base-url URL, or "
            f"OPENAI_BASE_URL)"
        )
    status = f"HTTP {exc.status_code}: " if isinstance(exc, ModelHTTPError) else ""
    if status and _web_page(exc.body) and url:
        base = config.base_url if config is not None and config.base_url else url
        return (
            f"model {name!r}{at} answered {status.rstrip(': ')} with a web page, not an API: "
            f"is {base} an OpenAI-compatible API? Its base URL usually ends in /v1 "
            f"(akgentic run --base-url URL, or {BASE_URL_ENV})"
        )
    detail = clip(" ".join(f"{status}{exc.message}".split()), _DETAIL_CHARS)
    if status and _NO_TOOLS.search(exc.message):
        return (
            f"model {name!r}{at} refused the request's tools ({detail}): it does not support "
            f"tool calls; switch to a model that supports tool calls (/switch_model, or "
            f"--model provider:model)"
        )
    if isinstance(exc, ModelAuthenticationError):
        return f"model {name!r}{at} {_refused_key(config, detail)}"
    if isinstance(exc, ModelNotFoundError):
        return (
            f"the server{at} does not serve model {name!r} ({detail}): check the model "
            f"name (--model provider:model)"
        )
    if isinstance(exc, ModelContextWindowExceededError):
        return (
            f"model {name!r}{at} refused the request: it exceeds the model's context window "
            f"({detail}): /compact or /clear the conversation, and {_window_advice(config)}"
        )
    if isinstance(exc, ModelRateLimitError):
        wait = f"{exc.retry_after:g}s" if exc.retry_after is not None else "a while"
        return (
            f"model {name!r}{at} is rate limited ({detail}): wait {wait} and send the "
            f"message again, or set fallback_models to a model to try next"
        )
    if isinstance(exc, ModelQuotaExceededError):
        return (
            f"model {name!r}{at} refused the request: the account's quota or credits are "
            f"used up ({detail}): waiting will not help; top up the account or switch to "
            f"another model (/switch_model, or --model on resume)"
        )
    if isinstance(exc, ModelServerError | ModelUnavailableError):
        return (
            f"model {name!r}{at} failed on the server's side ({detail}): send the message "
            f"again later, or set fallback_models to a model to try next"
        )
    return f"model {name!r}{at} failed: {detail}"
