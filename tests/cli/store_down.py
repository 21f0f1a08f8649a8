"""A store that refuses the event log's writes, for the CLI tests of a session whose
store goes down (``test_store_down``): :func:`refuse_writes` sets it up in a process, and
``python -m tests.cli.store_down ARGS...`` runs the ``akgentic`` console script with it,
for the tests that signal a real process (Ctrl-C). The team's status table still takes
writes: only the log is refused (a disk full for the log's file, a read-only log).

The child's stderr goes to its stdout, so that a test waits on the log's lines too;
``AKGENTIC_CLI_TEST_SAVE_WAIT`` and ``AKGENTIC_CLI_TEST_CLOSING_TRIES`` (seconds) set
how long a line waits to be saved (``chat.SAVE_WAIT``) and how long the stop tries to
commit its last records (``recorder.CLOSING_TRIES_FOR``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from akgentic.cli import chat
from akgentic.storage._sql import _Events
from akgentic.team import recorder

SetAttr = Callable[[object, str, Any], None]


def refuse_writes(set_attr: SetAttr, *, back_after: bool, reads: bool = False) -> None:
    """The store refuses every event-log write from the first line sent on: until the
    session gave up waiting for it to be saved (``back_after``), or for good; with
    ``reads``, the log's reads fail meanwhile too (a Postgres stopped: every query fails).
    ``set_attr`` patches (``monkeypatch.setattr`` in a test, ``setattr`` in a child)."""
    down = {"on": False}
    for name in ("append_packs", "append_encoded", *(("read",) if reads else ())):
        real = getattr(_Events, name)

        def refusing(self: _Events, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if down["on"]:
                raise OSError("database or disk is full (simulated)")
            return _real(self, *args, **kwargs)

        set_attr(_Events, name, refusing)
    sent = chat._send  # the session's send: it waits for the save, up to SAVE_WAIT

    def send_while_down(*args: Any, **kwargs: Any) -> Any:
        down["on"] = True
        try:
            return sent(*args, **kwargs)
        finally:
            down["on"] = not back_after

    set_attr(chat, "_send", send_while_down)


def main() -> None:
    os.dup2(1, 2)
    if wait := os.environ.get("AKGENTIC_CLI_TEST_SAVE_WAIT"):
        chat.SAVE_WAIT = float(wait)
    if tries := os.environ.get("AKGENTIC_CLI_TEST_CLOSING_TRIES"):
        recorder.CLOSING_TRIES_FOR = float(tries)
    refuse_writes(setattr, back_after=False)
    sys.argv = ["akgentic", *sys.argv[1:]]
    from akgentic.cli.entry import main as akgentic  # the console script's entry point

    akgentic()


if __name__ == "__main__":
    main()
