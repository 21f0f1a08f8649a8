"""akgentic.cli: the ``akgentic`` command — run teams in a terminal, inspect and manage them.

``akgentic run TEAM.yaml`` talks to a team (interactively, or one exchange with
``--message``); ``akgentic teams ...`` lists, shows, stops, resumes and deletes the teams of
a storage; ``akgentic events TEAM`` prints a team's event log. See README.md beside this file.
"""

from akgentic.cli.main import app, main

__all__ = ["app", "main"]
