"""The console script ``akgentic`` (and ``python -m akgentic.cli``): Ctrl-C first.

This module is small on purpose: Ctrl-C is taken over (:mod:`akgentic.cli.interrupt`)
before the framework is imported (:mod:`akgentic.cli.main`, which takes a while), so an
interrupt during the start-up imports ends the command with ``interrupted`` and exit
code 130, never a traceback.
"""

from __future__ import annotations

from akgentic.cli import interrupt

__all__ = ["main"]


def main() -> None:
    """Take over Ctrl-C, import the command, run it (see :func:`akgentic.cli.main.main`)."""
    interrupt.install()
    try:
        from akgentic.cli.main import main as run_command
    except KeyboardInterrupt:
        interrupt.report_and_exit()
    run_command()
