"""docs/testing.md's YAML team (a module of its own registering the model) runs through
the installed ``akgentic`` and refuses a resume that has not registered the model again,
in one line naming the command that does (``--import``; tests/cli cover that it imports).
The page's code as a reader copies it is run by tests/tooling/test_docs.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from ..tooling.test_docs import code_blocks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def test_the_yaml_team_runs_and_a_resume_without_its_module_says_to_import(tmp_path: Path) -> None:
    files = {block.file: block.code for block in code_blocks(GUIDE)}
    for name in ("fake_models.py", "team.yaml"):
        (tmp_path / name).write_text(files[name])
    env = {**os.environ, "AKGENTIC_STORAGE": f"sqlite:///{tmp_path / 'guide.db'}"}
    akgentic = Path(sys.executable).parent / "akgentic"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(akgentic), *args]
        return subprocess.run(
            command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env
        )

    run = cli("run", "team.yaml", "-m", "hello")
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip().endswith("answer: Analyst here, answering offline.")
    hint = re.search(r"resume it with: akgentic (.*)", run.stdout)
    assert hint is not None and hint[1].endswith("--import fake_models")
    resume = shlex.split(hint[1])

    without = cli(*(a for a in resume if a not in ("--import", "fake_models")), "-m", "again")
    assert without.returncode == 1
    error = without.stderr.strip()
    assert "\n" not in error and "nothing changed" in error
    assert "@Analyst's model 'registered:my-scripted'" in error and "(registered: none)" in error
    again = f"{' '.join(resume)} (importable from here: "  # with --import fake_models
    assert again in error and ", or on another model" in error
