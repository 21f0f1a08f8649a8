"""The console script ``akgentic`` (and ``python -m akgentic.cli``): Ctrl-C first.

This module is small on purpose: Ctrl-C is taken over (:mod:`akgentic.cli.interrupt`)
before the framework is imported (:mod:`akgentic.cli.main`, which takes a while), so an
interrupt during the start-up imports ends the command with ``interrupted`` and exit
code 130, never a traceback. Once imported, the heap is frozen
(:func:`akgentic.core.freeze_import_heap`): the collector's full passes in a session or a
server then walk what its teams made, not the ≈ 130,000 objects of the imports.
"""

from __future__ import annotations

from akgentic.cli import interrupt

__all__ = ["main"]


def main() -> None:
    """Take over Ctrl-C, import the command, freeze what the imports left, run the command
    (see :func:`akgentic.cli.main.main`)."""
    interrupt.install()
    try:
        from akgentic.cli.main import main as run_command
        from akgentic.core import freeze_import_heap

        freeze_import_heap()
    except KeyboardInterrupt:
        interrupt.report_and_exit()
    run_command()
