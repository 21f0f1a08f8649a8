"""A team's own workspace trees: the ones a purge removes.

A ``WorkspaceTool`` of kind ``_team`` (the default) works in
``<workspaces root>/<scope>/_team/<team_id>``, beside its journal (``<team_id>.git``) and
its metadata (``<team_id>.index``) — one such cell per scope (a user, ``_shared``) the
team used. They belong to that team alone, so purging the team removes them. Trees named
by ``workspace_id`` (``_id``) or by the team's metadata (``_meta``) are shared by the teams
that name them and are never removed here.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from uuid import UUID

from akgentic.tool.workspace.workspace import KIND_TEAM, WorkspacePath, workspaces_root

__all__ = ["remove_team_workspaces", "team_workspaces"]


def team_workspaces(team_id: UUID, root: Path | None = None) -> list[WorkspacePath]:
    """The team's own cells under ``root`` (default: the workspaces root) that exist."""
    base = (root if root is not None else workspaces_root()).resolve()
    if not base.is_dir():
        return []
    found = []
    for scope in sorted(p.name for p in base.iterdir() if p.is_dir()):
        cell = WorkspacePath(root=str(base), scope=scope, kind=KIND_TEAM, leaf=str(team_id))
        if any(p.exists() for p in (cell.tree, cell.git_dir, cell.index_dir)):
            found.append(cell)
    return found


def remove_team_workspaces(team_id: UUID, root: Path | None = None) -> list[WorkspacePath]:
    """Remove the team's own cells — each tree with its journal and metadata; the ones
    removed. Call it once the team is stopped: nothing may be writing there."""
    cells = team_workspaces(team_id, root)
    for cell in cells:
        for path in (cell.tree, cell.git_dir, cell.index_dir):
            shutil.rmtree(path, ignore_errors=True)
    return cells
