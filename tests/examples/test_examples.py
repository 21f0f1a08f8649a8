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


def readme_snippets() -> list[str]:
    readme = (EXAMPLES.parent / "README.md").read_text()
    return [block.split("```", 1)[0] for block in readme.split("```python")[1:]]


def test_the_readme_team_snippet_runs(tmp_path: Path) -> None:
    snippet = readme_snippets()[0]
    result = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("StartMessage") and any("SentMessage" in line for line in lines)
    assert (tmp_path / "team.db").is_file()


def test_the_readme_actor_snippet_runs() -> None:
    snippet = readme_snippets()[1]
    result = subprocess.run(
        [sys.executable, "-c", snippet], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "HELLO"
    assert "@Shout" in result.stdout


def test_manager_worker_runs_offline_on_the_scripted_model() -> None:
    out = run_example("manager_worker.py", "why actors?")
    assert "@Human -> @Manager [UserMessage]: why actors?" in out
    assert (
        "@Manager -> @Worker [request]: Please look into this and report back: why actors?" in out
    )
    assert "@Worker -> @Manager [response]: [scripted] Three points on why actors?" in out
    assert "(noted: 2 words)" in out
    assert out.rstrip().splitlines()[-1].startswith("@Manager -> @Human [response]: Here is what")


def test_manager_worker_runs_on_an_openai_compatible_endpoint() -> None:
    import os

    from .openai_compatible import serve

    with serve() as (url, requests):
        env = {
            **os.environ,
            "AKGENTIC_MODEL": "openai-compatible:local-model",
            "AKGENTIC_BASE_URL": url,
        }
        result = subprocess.run(
            [sys.executable, str(EXAMPLES / "manager_worker.py"), "why actors?"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "@Manager -> @Worker [request]: Please research this for me." in out
    assert "@Worker -> @Manager [response]: Findings:" in out
    assert "@Manager -> @Human [response]: Relayed:" in out
    assert {r["model"] for r in requests} == {"local-model"}
    assert any(r.get("stream") for r in requests)  # the default streams its steps
