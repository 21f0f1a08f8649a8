"""docs/testing.md works as it says: its Python example answers with the FunctionModel's
text, and its YAML team (a module of its own registering the model) runs through
``akgentic run`` and refuses a resume that has not registered the model again, in one
line naming the command that does (``--import``; tests/cli cover that it imports)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from akgentic.llm import registered_models

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), re.S)


def test_the_python_example_answers_with_the_function_models_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = blocks("python")[0]
    exec(compile(example, str(GUIDE), "exec"), {"__name__": "guide"})
    assert capsys.readouterr().out == "Three points, scripted.\n"
    assert "fake-llm" not in registered_models()  # the with block ended it


def test_the_yaml_team_runs_and_a_resume_without_its_module_says_to_import(tmp_path: Path) -> None:
    files = {body.splitlines()[0].lstrip("# "): body for body in blocks("python") + blocks("yaml")}
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
