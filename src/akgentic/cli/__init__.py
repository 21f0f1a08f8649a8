"""akgentic.cli: the ``akgentic`` command — run teams in a terminal, inspect and manage them.

``akgentic run TEAM.yaml`` talks to a team (interactively, or one exchange with
``--message``); ``akgentic teams ...`` lists, shows, stops, resumes and deletes the teams of
a storage; ``akgentic events TEAM`` prints a team's event log. See README.md beside this file.

``app`` and ``main`` are imported on first use: importing this package — which the console
script's entry (:mod:`akgentic.cli.entry`) does before it takes over Ctrl-C — stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from akgentic.cli.main import app, main

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module("akgentic.cli.main")
        globals().update(app=module.app, main=module.main)  # not the submodule: its names
        return globals()[name]
    raise AttributeError(f"module 'akgentic.cli' has no attribute {name!r}")
