"""Every example runs as a user would run it, and says what it did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_relay_team_delegates_tallies_and_stops_in_order() -> None:
    out = run_example("relay_team.py", "one two. three. four five six.")
    assert "result: One two. Three. Four five six." in out
    assert "words per writer (#WordCount): {'@Writer-1': 5, '@Writer-2': 1}" in out
    lines = out.splitlines()
    stopped = [line.split()[0] for line in lines if line.endswith(" stopped")]
    assert stopped[-2:] == ["#WordCount", "@Orchestrator"]
    assert {"@Human", "@Editor", "@Writer-1", "@Writer-2"} == set(stopped[:-2])
    assert lines.index("  -- team stopped --") > lines.index("  -- graceful stop requested --")


def test_the_readme_snippet_runs() -> None:
    readme = (EXAMPLES.parent / "README.md").read_text()
    snippet = readme.split("```python", 1)[1].split("```", 1)[0]
    result = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "HELLO"
    assert "@Shout" in result.stdout
