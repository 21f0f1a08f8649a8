"""One of two modules that define a card of the same class name (tests/tool/test_lookup.py)."""

from __future__ import annotations

from akgentic.tool import ToolCard


class LookupTwinCard(ToolCard):
    """Shares its class name with the card of the other module beside this one."""
