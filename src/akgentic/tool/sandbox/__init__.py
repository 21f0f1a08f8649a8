"""The exec backend ``WorkspaceTool.workspace_exec`` runs on (filled in by its own issue).

``ExecTool`` is refused by name: the card was removed, not moved.
"""

from typing import Any

__all__: list[str] = []


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
