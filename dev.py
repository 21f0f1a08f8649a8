"""The project's two everyday commands, on a machine that has only Python 3.11 and pip.

    python3 dev.py run     # the main job: an example team, offline, through the CLI
    python3 dev.py test    # the test suite

Both create ``.venv`` and install the project with its dev extra the first time (and
again whenever ``pyproject.toml`` changes). Arguments after ``test`` go to pytest
(``python3 dev.py test -k orchestrator``); arguments after ``run`` replace the default
CLI call (``python3 dev.py run teams list``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
STAMP = VENV / ".akgentic-installed"

MAIN_JOB = [
    "run",
    "examples/teams/research.yaml",
    "--message",
    "What makes an actor-based agent framework worth using?",
]

COMMANDS = {
    "run": ["-m", "akgentic.cli"],
    "test": ["-m", "pytest", "-q"],
}


def ensure_environment() -> None:
    """Create .venv and install the project unless it is already up to date."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted and PYTHON.exists():
        return
    if not PYTHON.exists():
        print("creating .venv ...", flush=True)
        venv.create(VENV, with_pip=True)
    print("installing akgentic[dev] into .venv ...", flush=True)
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "-e", f"{ROOT}[dev]"],
        check=True,
    )
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] not in COMMANDS:
        print(__doc__)
        return 2
    ensure_environment()
    extra = argv[1:] or (MAIN_JOB if argv[0] == "run" else [])
    command = [str(PYTHON), *COMMANDS[argv[0]], *extra]
    child = subprocess.Popen(command, cwd=ROOT)
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:  # the child has the same Ctrl-C and handles it itself
            continue


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # while .venv is being made: no traceback
        print("interrupted", file=sys.stderr)
        sys.exit(130)
