"""examples/teams/glossary.yaml: a team whose tools come from an MCP server, via the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from akgentic.cli import app
from akgentic.storage import open_storage, sqlite_url

REPO = Path(__file__).resolve().parents[2]
GLOSSARY = REPO / "examples" / "teams" / "glossary.yaml"
AKGENTIC = Path(sys.executable).parent / "akgentic"
ACTOR = "an object with a mailbox that handles one message at a time"


SERVER = REPO / "examples" / "mcp" / "glossary_server.py"
WITHOUT_THE_VENV = os.pathsep.join(["/usr/bin", "/bin"])


@pytest.fixture(autouse=True)
def from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not from the repository, and without the venv on PATH: the mcp.json's paths are its
    own and its server runs on ``${AKGENTIC_PYTHON}``, so neither matters."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", WITHOUT_THE_VENV)


def run(tmp_path: Path, *args: str, **env: str | None) -> Result:
    storage = sqlite_url(tmp_path / "teams.db")
    environ = {"AKGENTIC_STORAGE": storage, "AKGENTIC_MODEL": None, **env}
    environ.setdefault("AKGENTIC_MCP_CONFIG", None)
    return CliRunner().invoke(app, ["run", str(GLOSSARY), *args], env=environ)


def stored_card(tmp_path: Path) -> str:
    storage = open_storage(sqlite_url(tmp_path / "teams.db"))
    try:
        [team] = storage.teams.list()
        return json.dumps(storage.teams.get(team.team_id).card)  # type: ignore[union-attr]
    finally:
        storage.close()


def test_the_glossary_team_answers_from_its_mcp_server(tmp_path: Path) -> None:
    result = run(tmp_path, "--message", "define actor")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "⚙ @Librarian → glossary__define(term=actor)" in lines
    assert lines[-1] == f"answer: [scripted] actor: {ACTOR}"


def test_the_console_script_from_any_folder_without_path(tmp_path: Path) -> None:
    """The README's line, run from elsewhere with nothing but the system's PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AKGENTIC_")}
    env.update(PATH=WITHOUT_THE_VENV, AKGENTIC_STORAGE=sqlite_url(tmp_path / "teams.db"))
    done = subprocess.run(
        [str(AKGENTIC), "run", str(GLOSSARY), "-m", "define actor"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"answer: [scripted] actor: {ACTOR}"
    assert done.stderr == ""


def write_config(tmp_path: Path, extra: str) -> Path:
    server = {
        "command": "${AKGENTIC_PYTHON}",
        "args": [str(SERVER)],
        "env": {"GLOSSARY_EXTRA": extra},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"glossary": server}}))
    return path


def test_mcp_config_replaces_the_cards_and_env_references_are_never_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_TEST_TERMS", "mcp=the model context protocol")
    config = write_config(tmp_path, "${AKGENTIC_TEST_TERMS}")
    result = run(tmp_path, "--message", "define mcp", "--mcp-config", str(config))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "answer: [scripted] mcp: the model context protocol"
    card = stored_card(tmp_path)
    assert "${AKGENTIC_TEST_TERMS}" in card and "model context protocol" not in card


def test_the_akgentic_mcp_config_variable_names_the_file_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path, "ray=a distributed engine")
    result = run(tmp_path, "--message", "define ray", AKGENTIC_MCP_CONFIG=str(config))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "answer: [scripted] ray: a distributed engine"


def test_a_server_that_cannot_start_is_one_line_and_the_team_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    missing = str(tmp_path / "no-such-server")
    path.write_text(json.dumps({"mcpServers": {"glossary": {"command": missing}}}))
    result = run(tmp_path, "--message", "hello", "--mcp-config", str(path))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stdout.splitlines() if "cannot start" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"! @Librarian MCP server 'glossary' ({missing}) cannot start:")
    assert result.stdout.splitlines()[-1].startswith("answer: [scripted] Ask me to")


def test_a_missing_mcp_config_file_is_a_usage_error(tmp_path: Path) -> None:
    result = run(tmp_path, "--message", "hi", "--mcp-config", str(tmp_path / "absent.json"))
    assert result.exit_code == 2
    words = " ".join(result.output.replace("│", " ").split())  # however the box wraps
    assert "--mcp-config" in words and "does not exist" in words
