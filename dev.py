"""The project's everyday commands, on a machine that has only Python 3.11 and pip.

    python3 dev.py run     # the main job: an example team, offline, through the CLI
    python3 dev.py test    # the test suite (it ends with why tests were skipped)
    python3 dev.py docs    # regenerate docs/team-cards.md from the models

Each creates ``.venv`` and installs the project with its dev extra the first time (and
again whenever ``pyproject.toml`` changes), showing what pip is doing as it goes.
Arguments after ``test`` go to pytest (``python3 dev.py test -k orchestrator``);
arguments after ``run`` replace the default CLI call (``python3 dev.py run teams list``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import TextIO

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
    # one test process per core, each taking whole files (a module's fixtures set up once);
    # a test process that dies ends the run (a replaced one could leave the run waiting)
    "test": ["-m", "pytest", "-q", "-n", "auto", "--dist", "loadfile", "--max-worker-restart", "0"],
    "docs": ["-m", "akgentic.team.reference", "--write", str(ROOT / "docs" / "team-cards.md")],
}


def ensure_environment() -> None:
    """Create .venv and install the project unless it is already up to date."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted and PYTHON.exists():
        return
    if not PYTHON.exists():
        print("creating .venv ...", flush=True)
        venv.create(VENV, with_pip=True)
    print("installing akgentic[dev] into .venv (a few minutes the first time)", flush=True)
    code = pip_install(PYTHON, ["-e", f"{ROOT}[dev]"])
    if code != 0:
        raise SystemExit(code)
    STAMP.write_text(wanted)


_STEPS = (
    ("Obtaining ", "collecting"),
    ("Collecting ", "collecting"),
    ("Processing ", "collecting"),
    ("Requirement already satisfied: ", "checking"),
    ("Downloading ", "downloading"),
    ("Building wheel", "building"),
    ("Installing collected packages", "installing"),
)
_COUNTED = ("collecting", "checking")
_EVERY = 20
"""Without a terminal to redraw one line, a progress line every this many packages."""


def pip_install(python: Path, args: list[str], out: TextIO = sys.stdout) -> int:
    """``python -m pip install ARGS`` showing what pip is doing — the step, the package,
    how many so far — on one redrawn line in a terminal; in a log, a line when a step
    (collecting, downloading, building, installing) first comes, and every 20 packages
    — not a line per package, not minutes of silence. pip's own output is shown only
    when it fails. Returns pip's exit code."""
    start = time.monotonic()
    tty = out.isatty()
    command = [str(python), "-m", "pip", "install", "--progress-bar", "off", *args]
    pip = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    assert pip.stdout is not None
    seen: list[str] = []
    packages = 0
    steps_said: set[str] = set()  # a log says each step once (pip alternates them)
    shown = 0
    for raw in pip.stdout:
        line = raw.strip()
        seen.append(raw.rstrip())
        found = next(((p, name) for p, name in _STEPS if line.startswith(p)), None)
        if found is None:
            continue
        prefix, step = found
        rest = line[len(prefix) :]
        if step in _COUNTED:
            packages += 1
        if step == "installing":
            what = f"{len(rest.split(':', 1)[-1].split(','))} package(s)"
        elif step == "building":
            what = rest.split(":", 1)[-1].strip()
        else:
            what = rest.split(" ")[0].split("(")[0].split(";")[0]
        text = f"  {step} {what} ({packages} packages so far, {time.monotonic() - start:.0f}s)"
        if tty:
            out.write("\r" + text[:100].ljust(shown))
            shown = len(text[:100])
        elif step not in steps_said or (step in _COUNTED and packages % _EVERY == 0):
            out.write(text + "\n")
        steps_said.add(step)
        out.flush()
    code = pip.wait()
    if tty and shown:
        out.write("\n")
    if code != 0:
        tail = "\n".join(seen[-40:])
        out.write(f"{tail}\npip failed (exit code {code}): the lines above say why\n")
    else:
        out.write(f"  done in {time.monotonic() - start:.0f}s ({packages} packages)\n")
    out.flush()
    return code


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
