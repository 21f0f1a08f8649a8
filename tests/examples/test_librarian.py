"""The librarian example runs from the CLI as a user runs it: a skill from the folder beside
the YAML, a toolset enabled on demand, its tool called, offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from akgentic.storage import sqlite_url

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "teams" / "librarian.yaml"


def test_the_librarian_enables_its_task_board_and_plans(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "akgentic.cli",
            "run",
            str(EXAMPLE),
            "--message",
            "plan the archive move",
            "--storage",
            sqlite_url(tmp_path / "team.db"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,  # the skills folder is found beside the YAML, not in the working folder
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "use_skill(name=plan-work)" in out
    assert "enable_toolset(name=tasks)" in out
    assert "tasks_update_planning(" in out
    assert "answer: [scripted] Planned the archive move in two tasks on the board." in out
