"""``#Workspace-<scope>/<kind>/<leaf>``: the tree's dispatch — exec's worker, the index pipeline."""

from akgentic.tool.workspace.actor.actor import WorkspaceActor
from akgentic.tool.workspace.actor.indexer import IndexJob, IndexWorker
from akgentic.tool.workspace.actor.runner import ExecRunner, LeaseHandle

__all__ = ["ExecRunner", "IndexJob", "IndexWorker", "LeaseHandle", "WorkspaceActor"]
