"""Compatibility façade only: the symbols that lived here moved.

Still shimmed (Stable tier) — they resolve with a DeprecationWarning on attribute
access, never at import, so code touching none of them is never warned:
``ToolStateEvent``, ``CommandArg``, ``CommandDescriptor``, ``CommandsAnnouncedEvent``
(now in ``akgentic.tool.core.event``). They stay because stored rows name this path.

Withdrawn — an ImportError naming the new home: the observers, whose supported
surface is the package root.
"""

from __future__ import annotations

from akgentic.tool._facade import facade_getattr

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


__getattr__ = facade_getattr(
    "akgentic.tool.event", _SHIMMED, _WITHDRAWN, " (or from akgentic.tool)"
)
