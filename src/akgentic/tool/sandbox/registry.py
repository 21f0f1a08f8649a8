"""SANDBOX_BACKEND: the one setting that decides where ``workspace_exec`` runs commands.

It is the module attribute :data:`SANDBOX_BACKEND` when a deployment assigns one (a
backend name, a :class:`SandboxBackend` class or instance — your own backend goes here),
else the environment variable ``AKGENTIC_SANDBOX_BACKEND``, else ``"auto"``:

=============  ===========================================================================
value          meaning
=============  ===========================================================================
``auto``       bubblewrap where it works, else Docker where an engine answers, else none
``bubblewrap`` bubblewrap only (Linux; no daemon)
``docker``     Docker only (the ``docker`` extra and an engine)
``none``       exec switched off
=============  ===========================================================================

There is no fall-back to the host: when nothing can run, :func:`resolve_backend` answers
None with the reason, and ``workspace_exec`` says that exec is unavailable and why.
Backend objects are made once per process and name (their availability probe runs once).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from akgentic.tool.sandbox.backend import SandboxBackend
from akgentic.tool.sandbox.bubblewrap import BubblewrapBackend
from akgentic.tool.sandbox.docker import DockerBackend

__all__ = [
    "BACKENDS",
    "SANDBOX_BACKEND",
    "SANDBOX_BACKEND_ENV",
    "backend_setting",
    "reset_backends",
    "resolve_backend",
]

SANDBOX_BACKEND_ENV = "AKGENTIC_SANDBOX_BACKEND"

SANDBOX_BACKEND: str | type[SandboxBackend] | SandboxBackend | None = None
"""Assign a name, a backend class or a backend instance to override the environment."""

BACKENDS: dict[str, Callable[[], SandboxBackend]] = {
    "bubblewrap": BubblewrapBackend,
    "docker": DockerBackend,
}
"""The built-in backends, by the name the setting uses."""

_instances: dict[str, SandboxBackend] = {}
_lock = threading.Lock()


def backend_setting() -> str | type[SandboxBackend] | SandboxBackend:
    """The setting in force: :data:`SANDBOX_BACKEND`, else the environment, else ``auto``."""
    if SANDBOX_BACKEND is not None:
        return SANDBOX_BACKEND
    return os.environ.get(SANDBOX_BACKEND_ENV, "").strip().lower() or "auto"


def _instance(name: str) -> SandboxBackend:
    with _lock:
        found = _instances.get(name)
        if found is None:
            found = _instances[name] = BACKENDS[name]()
        return found


def resolve_backend() -> tuple[SandboxBackend | None, str]:
    """``(backend, "")`` when commands can run, else ``(None, why not)``."""
    setting = backend_setting()
    if isinstance(setting, type):
        backend: SandboxBackend = setting()
        reason = backend.unavailable_reason()
        return (None, reason) if reason else (backend, "")
    if not isinstance(setting, str):
        reason = setting.unavailable_reason()
        return (None, reason) if reason else (setting, "")
    if setting == "none":
        return None, f"exec is switched off on this deployment ({SANDBOX_BACKEND_ENV}=none)"
    if setting == "auto":
        reasons = []
        for name in BACKENDS:
            backend = _instance(name)
            reason = backend.unavailable_reason()
            if reason is None:
                return backend, ""
            reasons.append(f"{name}: {reason}")
        return None, "no sandbox backend is available — " + "; ".join(reasons)
    if setting not in BACKENDS:
        known = ", ".join(["auto", *BACKENDS, "none"])
        return None, f"{SANDBOX_BACKEND_ENV}={setting!r} names no backend; use one of {known}"
    backend = _instance(setting)
    reason = backend.unavailable_reason()
    return (None, f"{setting}: {reason}") if reason else (backend, "")


def reset_backends() -> None:
    """Forget the backend objects (and their probes): the next resolve makes new ones."""
    with _lock:
        _instances.clear()
