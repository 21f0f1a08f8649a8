"""Compatibility façade only: the symbols that lived here moved.

Still shimmed (Stable tier) — they resolve with a DeprecationWarning on attribute
access, never at import, so code touching none of them is never warned:
``ToolStateEvent``, ``CommandArg``, ``CommandDescriptor``, ``CommandsAnnouncedEvent``
(now in ``akgentic.tool.core.event``). They stay because stored rows name this path.

Withdrawn — an ImportError naming the new home: the observers, whose supported
surface is the package root.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__: list[str] = []

_SHIMMED = {
    "ToolStateEvent": "akgentic.tool.core.event",
    "CommandArg": "akgentic.tool.core.event",
    "CommandDescriptor": "akgentic.tool.core.event",
    "CommandsAnnouncedEvent": "akgentic.tool.core.event",
}

_WITHDRAWN = {
    "ToolObserver": "akgentic.tool (root) or akgentic.tool.core.observer",
    "ActorToolObserver": "akgentic.tool (root) or akgentic.tool.core.observer",
    "TeamManagementToolObserver": "akgentic.tool (root) or akgentic.tool.team.observer",
}


def __getattr__(name: str) -> Any:
    home = _SHIMMED.get(name)
    if home is not None:
        warnings.warn(
            f"akgentic.tool.event.{name} moved to {home}; import it from there "
            f"(or from akgentic.tool)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)
    withdrawn = _WITHDRAWN.get(name)
    if withdrawn is not None:
        raise ImportError(
            f"akgentic.tool.event.{name} was withdrawn; import it from {withdrawn}",
            name=name,
        )
    raise AttributeError(f"module 'akgentic.tool.event' has no attribute {name!r}")
