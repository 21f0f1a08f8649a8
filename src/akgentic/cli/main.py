"""The console script ``akgentic`` (and ``python -m akgentic.cli``).

- ``akgentic run TEAM.yaml [--message TEXT] [--model SPEC]`` — see :mod:`akgentic.cli.run`;
- ``akgentic teams list|show|stop|resume|delete`` — see :mod:`akgentic.cli.teams`;
- ``akgentic events TEAM [--follow] [--from N]`` — see :mod:`akgentic.cli.events`.

This module is small on purpose: Ctrl-C is taken over (:mod:`akgentic.cli.interrupt`)
before the framework is imported, so an interrupt during the start-up imports ends the
command with ``interrupted`` and exit code 130, never a traceback.
"""

from __future__ import annotations

import logging
import os
import sys

from akgentic.cli import interrupt

__all__ = ["main"]


def main() -> None:
    """The console script: modules in the current directory are importable (as with
    ``python -m``: a team card's ``imports`` and ``--import`` may name them), the
    framework's warnings go to stderr, then the command runs."""
    interrupt.install()
    try:
        from akgentic.cli.application import app
    except KeyboardInterrupt:
        interrupt.report_and_exit()
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()
