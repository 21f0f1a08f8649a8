"""A tool card for the CLI tests: ``hang_step`` blocks while AKGENTIC_CLI_TEST_HANG is set in
the environment of the process running the team (so a test can interrupt or kill that
process in the middle of a turn); otherwise it returns at once.

``AKGENTIC_CLI_TEST_HANG=1`` blocks for ever; ``pool`` blocks for ever in a thread of a
``ThreadPoolExecutor`` (one the interpreter's exit would join); a path to a FIFO blocks
until the test opens that FIFO for writing and closes it (how a test lets the call return,
without a sleep).
``AKGENTIC_CLI_TEST_STOP_GRACE=SECONDS`` shortens the grace a stop from another process
(``akgentic teams stop``) gives the turns in progress, so that a test of such a stop
does not wait the default's 30s for a call that never returns;
``AKGENTIC_CLI_TEST_GRACE=SECONDS`` does the same for the grace of a session's own stop
(its Ctrl-C).
``AKGENTIC_CLI_TEST_HANG_SAY=1`` prints ``hang_step: inside`` once the call has begun:
the tool call's event comes before the call runs, and an interrupt in between cuts the
call before it starts (a test of a call that never returns waits for this line).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from akgentic.cli import chat
from akgentic.team import manager
from akgentic.tool.core import ToolCard

_NEVER = threading.Event()
if grace := os.environ.get("AKGENTIC_CLI_TEST_STOP_GRACE"):
    manager.STOP_GRACE = float(grace)
if grace := os.environ.get("AKGENTIC_CLI_TEST_GRACE"):
    chat.GRACE = float(grace)


class HangStep(ToolCard):
    """Offers ``hang_step(label)``; see the module docstring."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def hang_step(label: str) -> str:
            """Work on ``label``."""
            hang = os.environ.get("AKGENTIC_CLI_TEST_HANG")
            if os.environ.get("AKGENTIC_CLI_TEST_HANG_SAY"):
                print("hang_step: inside", flush=True)
            if hang and os.path.exists(hang) and stat.S_ISFIFO(os.stat(hang).st_mode):
                with open(hang) as fifo:  # returns once the test has opened and closed it
                    fifo.read()
            elif hang == "pool":
                ThreadPoolExecutor(1, thread_name_prefix="hang-pool").submit(_NEVER.wait).result()
            elif hang:
                _NEVER.wait()
            return f"worked on {label}"

        return [hang_step]
