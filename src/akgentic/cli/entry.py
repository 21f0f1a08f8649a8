"""The console script ``akgentic`` (and ``python -m akgentic.cli``): Ctrl-C first.

This module is small on purpose: Ctrl-C is taken over (:mod:`akgentic.cli.interrupt`)
before anything else is imported, so an interrupt during the start-up — the imports, the
parsing of the command line, until the command's body begins — ends the process there
with one line, ``interrupted before the command started: nothing was done``, and exit
code 130, never a traceback, never in silence. The command's own
module — the framework, which takes a while — is imported when the command is resolved
(:mod:`akgentic.cli.lazy`); then, before it runs, the heap is frozen
(:func:`akgentic.core.freeze_import_heap`): the collector's full passes in a session or a
server walk what its teams made, not the ≈ 130,000 objects of the imports.
"""

from __future__ import annotations

from akgentic.cli import interrupt

__all__ = ["main"]


def main() -> None:
    """Take over Ctrl-C, import the command line, run the command: its imports done, the
    heap is frozen (see :func:`akgentic.cli.main.main`)."""
    interrupt.install(starting=True)  # a Ctrl-C until the command's body: said, exit at once
    try:
        from akgentic.cli.lazy import after_imports
        from akgentic.cli.main import main as run_command
    except KeyboardInterrupt:
        interrupt.report_and_exit()
    after_imports(_freeze_import_heap)
    run_command()


def _freeze_import_heap() -> None:
    from akgentic.core import freeze_import_heap

    freeze_import_heap()
