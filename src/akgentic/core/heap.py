"""freeze_import_heap(): the collector's full passes walk what the teams made, not the imports.

CPython's garbage collector runs a *full* pass whenever the objects that survived its
younger passes grow by a quarter, and a full pass walks every container object alive.
Importing the framework leaves about 130,000 of them (modules, classes, pydantic's
schemas and validators) that live as long as the process, so each full pass in a running
team spends most of its time re-walking them: a pause of tens of milliseconds
(``bench/gc_pause.py``), landing on whichever thread allocated last: the middle of an
agent's turn, a server's response.

Freezing them (``gc.freeze``) moves them to a generation the collector never walks; the
objects the teams create afterwards are collected as before. The cost is that a frozen
object that later becomes garbage in a reference cycle is never reclaimed, which is why
the freeze is taken once, when what is alive is what the process imported: the CLI does
it after its imports, before the command runs. A program that embeds akgentic calls it at
the same point of its own start-up, if it wants it.

Only the young generations are collected first (≈ 2 ms): after the CLI's imports a full
pass finds some 20 more garbage objects and costs ≈ 80 ms, a start-up delay on every
command for nothing.
"""

from __future__ import annotations

import gc
import threading

__all__ = ["freeze_import_heap"]

_lock = threading.Lock()
_frozen = False


def freeze_import_heap() -> int:
    """Collect the young generations, then freeze every object alive; the number frozen.
    Once per process: a later call freezes nothing and returns 0 (what is alive then is a
    team's, not the imports', and must stay collectable)."""
    global _frozen
    with _lock:
        if _frozen:
            return 0
        _frozen = True
        gc.collect(1)
        before = gc.get_freeze_count()
        gc.freeze()
        return gc.get_freeze_count() - before
