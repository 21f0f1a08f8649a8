"""akgentic.cli: the ``akgentic`` command — run teams in a terminal, inspect and manage them.

``akgentic run TEAM.yaml`` talks to a team (interactively, or one exchange with
``--message``); ``akgentic teams ...`` lists, shows, stops, resumes and deletes the teams of
a storage; ``akgentic events TEAM`` prints a team's event log. See README.md beside this file.

``app`` (the typer application) is imported on first use: importing this package, and
the console script's entry point, stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from akgentic.cli.main import main

if TYPE_CHECKING:
    from akgentic.cli.application import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":
        from akgentic.cli.application import app

        return app
    raise AttributeError(f"module 'akgentic.cli' has no attribute {name!r}")
