"""ToolsetRegistry: which toolsets are active in one conversation, and until when.

The rules (seed 000):

- **Per conversation.** One registry per agent context; two agents never share one.
- **10 minutes from the last use.** ``enable`` sets the deadline to now + timeout; a
  re-enable and every use of one of the set's tools (:meth:`use`) push it again.
- **Lazy cleanup.** No timers: every read (:meth:`active`, :meth:`is_active`, and the
  calls that answer the model) drops the sets whose deadline has passed, first.
- **Not persisted.** A restored agent, or a cleared conversation, starts with a fresh
  registry (:meth:`reset`): a set that was active before a restart is not active after it.
- **An injected clock** (seconds, monotonic by default) makes all of it testable.

The answers to ``enable_toolset`` / ``disable_toolset`` are the response table in
``wording``: idempotent and forgiving; only a blank name is an error.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from akgentic.tool.errors import RetriableError
from akgentic.tool.toolsets import wording

__all__ = ["TOOLSET_TIMEOUT", "Clock", "ToolsetRegistry"]

Clock = Callable[[], float]
"""Seconds, from any origin; only differences are read."""

TOOLSET_TIMEOUT = 600.0
"""Ten minutes, in seconds: how long a set stays active after its last use."""


class ToolsetRegistry:
    """Active toolsets of one conversation; see the module docstring."""

    def __init__(
        self,
        names: Iterable[str],
        *,
        clock: Clock = time.monotonic,
        timeout: float = TOOLSET_TIMEOUT,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"a toolset timeout must be positive, got {timeout}")
        self.names: tuple[str, ...] = tuple(names)
        self.timeout = timeout
        self._clock = clock
        self._deadlines: dict[str, float] = {}
        self._lock = threading.Lock()

    # -- reads (each one cleans up first) ---------------------------------------------
    def _cleanup(self, now: float) -> None:
        for name in [n for n, deadline in self._deadlines.items() if now >= deadline]:
            del self._deadlines[name]

    def active(self) -> frozenset[str]:
        """The sets active now."""
        with self._lock:
            self._cleanup(self._clock())
            return frozenset(self._deadlines)

    def is_active(self, name: str) -> bool:
        return name in self.active()

    # -- the model's two tools ----------------------------------------------------------
    def enable(self, name: str) -> str:
        """Activate ``name`` (or extend it); the answer from the response table."""
        key = self._checked(name, wording.ENABLE_TOOL)
        if key not in self.names:
            return wording.unknown(key, self.names)
        with self._lock:
            now = self._clock()
            self._cleanup(now)
            was_active = key in self._deadlines
            self._deadlines[key] = now + self.timeout
        return wording.already_active(key) if was_active else wording.activated(key)

    def disable(self, name: str) -> str:
        """Deactivate ``name``; disabling an inactive set is not an error."""
        key = self._checked(name, wording.DISABLE_TOOL)
        if key not in self.names:
            return wording.unknown(key, self.names)
        with self._lock:
            self._cleanup(self._clock())
            was_active = self._deadlines.pop(key, None) is not None
        return wording.deactivated(key) if was_active else wording.not_active(key)

    # -- the runtime -------------------------------------------------------------------------
    def use(self, name: str) -> bool:
        """One of the set's tools is being called: activate it or extend it.

        True when the set was not active (the call auto-activated it). An unknown name is
        ignored (False): only the sets this registry knows are ever active.
        """
        if name not in self.names:
            return False
        with self._lock:
            now = self._clock()
            self._cleanup(now)
            was_active = name in self._deadlines
            self._deadlines[name] = now + self.timeout
        return not was_active

    def reset(self) -> None:
        """Forget every activation: a new conversation starts with none."""
        with self._lock:
            self._deadlines.clear()

    def _checked(self, name: str, tool: str) -> str:
        key = name.strip() if isinstance(name, str) else ""
        if not key:
            raise RetriableError(wording.blank_name(tool, self.names))
        return key
