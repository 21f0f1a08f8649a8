"""A tool card for the CLI tests: ``hang_step`` never returns while AKGENTIC_CLI_TEST_HANG is
set in the environment of the process running the team (so a test can kill that process
in the middle of a turn); otherwise it returns at once."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from akgentic.tool.core import ToolCard

_NEVER = threading.Event()


class HangStep(ToolCard):
    """Offers ``hang_step(label)``; see the module docstring."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def hang_step(label: str) -> str:
            """Work on ``label``."""
            if os.environ.get("AKGENTIC_CLI_TEST_HANG"):
                _NEVER.wait()
            return f"worked on {label}"

        return [hang_step]
