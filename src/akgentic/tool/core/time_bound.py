"""A tool call's bound in time: past it the model reads that the tool took too long, and
the turn goes on.

A tool that blocks for ever (a service that never answers, a lock never released) would
otherwise hold the agent's turn for ever: only a team stop's grace would end it. The
factory (``ToolFactory(tool_timeout=...)``; an agent's ``AgentConfig.tool_timeout``) holds
every function tool to the bound:

- an **async** tool is awaited under ``asyncio.timeout``: past the bound it is cancelled
  (its ``finally`` blocks run) and :class:`ToolTimeoutError` is raised;
- a **sync** tool runs on a daemon thread (pooled: reused once a call has ended) while
  the caller awaits it, at most the bound — its event loop stays free meanwhile, so the
  await can also be cancelled (an agent's turn interrupted). That thread acts for the
  caller's actor (:func:`akgentic.core.acting_for`: an ask of itself is still a
  ``DeadlockError``, a send still carries the message being handled) and sees the
  caller's context variables.
  **A thread cannot be killed**: past the bound, or cancelled, the call is abandoned, not
  stopped — it runs on in the background, its result and its exception dropped, and
  whatever it does then happens beside the agent's next steps. Its thread is a daemon: it
  never holds up a team's stop nor the process's exit. What the call started that can be
  stopped (a subprocess) it stops on a cancel through :func:`on_cancel`.

Past the bound the model reads :class:`ToolTimeoutError` (a ``RetriableError``), and a
warning naming the tool and the bound is logged; a cancel is the caller's and propagates
as ``CancelledError``. ``None`` (no bound) calls a sync tool as it is, on the caller's
thread, where nothing can cut it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from akgentic.core import acting_for, current_actor
from akgentic.tool.errors import RetriableError

__all__ = [
    "DEFAULT_TOOL_TIMEOUT",
    "ToolTimeoutError",
    "await_within",
    "mark_runs_alone",
    "on_cancel",
    "run_within",
    "runs_alone",
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


class _Cancel:
    """One sync call's cancel: the hooks :func:`on_cancel` registered, fired once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooks: list[Callable[[], None]] = []
        self.fired = False

    def add(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if not self.fired:
                self._hooks.append(hook)
                return
        _call_hook(hook)  # the call was cancelled before it got here: stop it now

    def discard(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if hook in self._hooks:
                self._hooks.remove(hook)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            _call_hook(hook)


def _call_hook(hook: Callable[[], None]) -> None:
    try:
        hook()
    except Exception:  # a hook that fails must not turn the cancel into another error
        logger.exception("a tool's cancel hook failed")


_CANCEL: contextvars.ContextVar[_Cancel | None] = contextvars.ContextVar(
    "akgentic_tool_cancel", default=None
)


@contextmanager
def on_cancel(hook: Callable[[], None]) -> Iterator[None]:
    """While inside: ``hook`` is called if the sync tool call this code runs in is cancelled
    (its agent's turn interrupted) — its thread cannot be, so what it started that can be
    stopped (a subprocess) is stopped by the hook. Called at most once, on the cancelling
    thread (the agent's): it must not block — tell, never ask. A call already cancelled
    calls it at once. Outside a call :func:`run_within` runs, nothing can cancel: a no-op."""
    cancel = _CANCEL.get()
    if cancel is None:
        yield
        return
    cancel.add(hook)
    try:
        yield
    finally:
        cancel.discard(hook)


async def run_within(seconds: float, name: str, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a pooled daemon thread acting for the caller's actor, awaited at most
    ``seconds``; past it :class:`ToolTimeoutError`. Past the bound or cancelled, the call is
    abandoned (see the module docstring): its thread runs on, its outcome never reaches the
    caller; a cancel fires its :func:`on_cancel` hooks. What ``fn`` raises is raised here."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()
    cancel = _Cancel()
    actor = current_actor()
    context = contextvars.copy_context()
    context.run(_CANCEL.set, cancel)

    def run() -> None:
        try:
            with acting_for(actor):
                value = context.run(fn, *args)
        except BaseException as exc:  # handed to the awaiting caller, as an inline call would
            future.set_exception(exc)
        else:
            future.set_result(value)

    future.set_running_or_notify_cancel()  # it runs even if abandoned before its thread starts
    _worker().jobs.put(run)
    try:
        async with asyncio.timeout(seconds) as bound:
            return await asyncio.wrap_future(future)
    except TimeoutError:
        if not bound.expired():
            raise
    except asyncio.CancelledError:
        cancel.fire()
        raise
    logger.warning(
        "%s took longer than %gs: the model was told; its thread runs on in the "
        "background (a thread cannot be killed), its result dropped",
        name,
        seconds,
    )
    raise ToolTimeoutError(name, seconds, abandoned=True)


_RUNS_ALONE = "__akgentic_runs_alone__"


def mark_runs_alone(wrapper: Callable[..., Any]) -> None:
    """Mark a bounded sync tool's wrapper: its calls are awaited on threads acting for the
    agent, and two at once would be two threads acting for it, so each runs alone."""
    setattr(wrapper, _RUNS_ALONE, True)


def runs_alone(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` must run as a barrier among one response's tool calls (pydantic-ai's
    per-tool ``sequential``): a bounded sync tool. Async tools keep running side by side."""
    return getattr(fn, _RUNS_ALONE, False) is True
