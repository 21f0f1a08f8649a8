"""The exec backend ``WorkspaceTool.workspace_exec`` runs on — not a card.

One :class:`SandboxBackend` protocol, two backends (:class:`BubblewrapBackend`, the
default where ``bwrap`` works; :class:`DockerBackend`, through the ``docker`` SDK), one
setting (:data:`~akgentic.tool.sandbox.registry.SANDBOX_BACKEND` /
``AKGENTIC_SANDBOX_BACKEND``), one allowlist (:data:`ALLOWED_COMMANDS`,
:func:`validate_command`). A command never runs unsandboxed. See ``README.md`` beside
this file.

The dependency points one way: ``workspace`` imports ``sandbox``, never the reverse.

``ExecTool`` is refused by name: the card was removed, not moved — its capability is
``WorkspaceTool(workspace_exec=...)`` from ``akgentic.tool``.
"""

from typing import Any

from akgentic.tool.sandbox.backend import (
    ALLOWED_COMMANDS,
    SANDBOX_WORKDIR,
    TIMEOUT_EXIT_CODE,
    BoundedOutput,
    CommandRefusedError,
    ExecLimits,
    ExecResult,
    ProcessBackend,
    SandboxBackend,
    SandboxNotReadyError,
    SandboxUnavailableError,
    validate_command,
)
from akgentic.tool.sandbox.bubblewrap import BubblewrapBackend
from akgentic.tool.sandbox.docker import DockerBackend
from akgentic.tool.sandbox.registry import (
    SANDBOX_BACKEND_ENV,
    backend_setting,
    reset_backends,
    resolve_backend,
)

__all__ = [
    "ALLOWED_COMMANDS",
    "SANDBOX_BACKEND_ENV",
    "SANDBOX_WORKDIR",
    "TIMEOUT_EXIT_CODE",
    "BoundedOutput",
    "BubblewrapBackend",
    "CommandRefusedError",
    "DockerBackend",
    "ExecLimits",
    "ExecResult",
    "ProcessBackend",
    "SandboxBackend",
    "SandboxNotReadyError",
    "SandboxUnavailableError",
    "backend_setting",
    "reset_backends",
    "resolve_backend",
    "validate_command",
]


def __getattr__(name: str) -> Any:
    if name == "ExecTool":
        raise ImportError(
            "akgentic.tool.sandbox.ExecTool was removed, not moved: use "
            "WorkspaceTool(workspace_exec=...) from akgentic.tool. When migrating a "
            "stored row, turn every other WorkspaceTool capability off explicitly — "
            "they default to True.",
            name=name,
        )
    raise AttributeError(f"module 'akgentic.tool.sandbox' has no attribute {name!r}")
