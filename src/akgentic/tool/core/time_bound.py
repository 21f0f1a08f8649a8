"""A tool call's bound in time: past it the model reads that the tool took too long, and
the turn goes on.

A tool that blocks for ever (a service that never answers, a lock never released) would
otherwise hold the agent's turn for ever: only a team stop's grace would end it. The
factory (``ToolFactory(tool_timeout=...)``; an agent's ``AgentConfig.tool_timeout``) holds
every function tool to the bound:

- an **async** tool is awaited under ``asyncio.timeout``: past the bound it is cancelled
  (its ``finally`` blocks run) and :class:`ToolTimeoutError` is raised;
- a **sync** tool runs on a daemon thread (pooled: reused once a call has ended) while
  the calling thread (the agent's) waits for it, at most the bound. That thread acts for
  the caller's actor (:func:`akgentic.core.acting_for`: an ask of itself is still a
  ``DeadlockError``, a send still carries the message being handled) and sees the
  caller's context variables.
  **A thread cannot be killed**: past the bound the call is abandoned, not stopped — it
  runs on in the background, its result and its exception dropped, and whatever it does
  then happens beside the agent's next steps. Its thread is a daemon: it never holds up a
  team's stop nor the process's exit.

Either way the model reads :class:`ToolTimeoutError` (a ``RetriableError``), and a warning
naming the tool and the bound is logged. ``None`` (no bound) calls the tool as it is, on
the caller's thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from akgentic.core import acting_for, current_actor
from akgentic.tool.errors import RetriableError

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "ToolTimeoutError",
    "await_within",
    "call_within",
    "tool_timeout_of",
]

logger = logging.getLogger("akgentic.tool")

T = TypeVar("T")

DEFAULT_TOOL_TIMEOUT = 300.0
"""Seconds a tool call may take by default (``AgentConfig.tool_timeout``): generous, as
a tool that waits on a person's build or a long query is not stuck — a bound, not a
budget."""


def tool_timeout_of(observer: object) -> float | None:
    """The bound ``observer`` holds its tools to (``BaseAgent.tool_timeout``), for a card
    that wires cards of its own (a ToolsetCard's members); None when it holds none."""
    seconds = getattr(observer, "tool_timeout", None)
    return float(seconds) if isinstance(seconds, int | float) else None


class _Worker:
    """A daemon thread that runs one call at a time, back in the idle pool once its call
    has ended (an abandoned call keeps it out until then). Reused, for a thread started
    per call costs more than many a tool does."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="akgentic-tool", daemon=True).start()

    def _serve(self) -> None:
        while True:
            self.jobs.get()()
            with _POOL_LOCK:
                if len(_IDLE) >= _MAX_IDLE:
                    return
                _IDLE.append(self)


_IDLE: list[_Worker] = []
_POOL_LOCK = threading.Lock()
_MAX_IDLE = 16
"""Idle workers kept for reuse; one more ends when its call does."""


def _worker() -> _Worker:
    with _POOL_LOCK:
        if _IDLE:
            return _IDLE.pop()
    return _Worker()


class ToolTimeoutError(RetriableError):
    """A tool call that did not finish within its bound: the turn goes on without it."""

    def __init__(self, name: str, seconds: float, *, abandoned: bool) -> None:
        outcome = (
            "it may still finish in the background: check what it was to do before calling it again"
            if abandoned
            else "it was stopped"
        )
        super().__init__(
            f"{name} took longer than {seconds:g}s ({outcome}); ask for less at a time, or "
            f"go on another way"
        )


async def await_within(seconds: float | None, name: str, call: Awaitable[T]) -> T:
    """``await call``, cancelled past ``seconds`` (None: no bound) as :class:`ToolTimeoutError`.
    A ``TimeoutError`` the call raises itself is its own, and passes as it is."""
    if seconds is None:
        return await call
    try:
        async with asyncio.timeout(seconds) as bound:
            return await call
    except TimeoutError:
        if not bound.expired():
            raise
    logger.warning("%s took longer than %gs: cancelled, the model was told", name, seconds)
    raise ToolTimeoutError(name, seconds, abandoned=False)


def call_within(seconds: float | None, name: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a pooled daemon thread acting for the caller's actor, waited for at most
    ``seconds`` (None: called here, unbounded); past it :class:`ToolTimeoutError`, the thread
    left running (see the module docstring). What ``fn`` raises is raised here."""
    if seconds is None:
        return fn(*args)
    outcome: list[Any] = []
    done = threading.Event()
    actor = current_actor()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            with acting_for(actor):
                outcome.append((True, context.run(fn, *args)))
        except BaseException as exc:  # handed to the waiting caller, as an inline call would
            outcome.append((False, exc))
        finally:
            done.set()

    _worker().jobs.put(run)
    if not done.wait(seconds):
        logger.warning(
            "%s took longer than %gs: the model was told; its thread runs on in the "
            "background (a thread cannot be killed), its result dropped",
            name,
            seconds,
        )
        raise ToolTimeoutError(name, seconds, abandoned=True)
    [(returned, value)] = outcome
    if returned:
        return value  # type: ignore[no-any-return]
    raise value
