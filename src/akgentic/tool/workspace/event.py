"""What ``#Workspace-…`` tells the team stream, so a client shows work as it happens.

- :class:`WorkspaceChangeEvent` — one per file an accepted mutation (or a command) changed,
  emitted before the mutation's answer returns (emit before return).
- :class:`ExecStartedEvent` — the moment a command actually starts in the sandbox.
- :class:`ExecFinishedEvent` — its outcome (exit code, duration, files it changed), or why
  it never ran.

These are notifications of work done, not deltas of actor state: the tree is the state,
and it is on disk. A client that joins late reads the tree, not a replay.
"""

from __future__ import annotations

from pydantic import Field

from akgentic.core.serialization import SerializableModel

__all__ = ["ExecFinishedEvent", "ExecStartedEvent", "WorkspaceChangeEvent"]


class WorkspaceChangeEvent(SerializableModel):
    """A file changed: ``action`` is created / modified / deleted / directory."""

    workspace: str
    agent: str
    op: str
    path: str
    action: str
    added: int = 0
    removed: int = 0
    commit: str | None = None


class ExecStartedEvent(SerializableModel):
    """A command started in the sandbox."""

    workspace: str
    agent: str
    run_id: str
    command: str
    backend: str


class ExecFinishedEvent(SerializableModel):
    """A command ended (``exit_code``), or never ran (``error``)."""

    workspace: str
    agent: str
    run_id: str
    command: str
    exit_code: int | None = None
    duration_seconds: float = 0.0
    timed_out: bool = False
    error: str | None = None
    changed: list[str] = Field(default_factory=list)
