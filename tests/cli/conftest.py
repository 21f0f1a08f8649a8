"""Fixtures of the CLI tests: a temporary SQLite storage and ways to run ``akgentic``.

``cli(...)`` runs the command in this process (typer's ``CliRunner``); ``spawn(...)``
starts it as a real subprocess (the installed console script). Nothing here sleeps: tests
wait on output lines, with a bound.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from akgentic.cli import app, logs
from akgentic.storage import sqlite_url

REPO = Path(__file__).resolve().parents[2]
RESEARCH = REPO / "examples" / "teams" / "research.yaml"
HANG = Path(__file__).resolve().parent / "data" / "hang.yaml"
HANG_UNCUT = HANG.with_name("hang_uncut.yaml")
"""hang.yaml with ``tool_timeout: null``: @Boss's tool call runs on its own thread, where
no interrupt can cut it (a stop leaves it behind once the grace runs out)."""
AKGENTIC = Path(sys.executable).parent / "akgentic"

Invoke = Callable[..., Result]


@pytest.fixture
def storage_url(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "cli.db")


@pytest.fixture
def cli(storage_url: str) -> Invoke:
    """Run ``akgentic ARGS...`` in-process against the test storage."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        env = {"AKGENTIC_STORAGE": storage_url, "AKGENTIC_MODEL": None}
        return runner.invoke(app, list(args), input=input, env=env)

    return invoke


@pytest.fixture
def stderr() -> Iterator[io.StringIO]:
    """What the CLI's log handler writes, as ``akgentic`` (the console script) configures
    it: its ``warning:``/``error:``/``note:`` lines (in-process runs do not configure it)."""
    root, framework = logging.getLogger(), logging.getLogger("akgentic")
    levels = root.level, framework.level
    buffer = io.StringIO()
    before = logs._HANDLER.setStream(buffer)
    logs.configure()
    try:
        yield buffer
    finally:
        root.removeHandler(logs._HANDLER)
        root.setLevel(levels[0])
        framework.setLevel(levels[1])
        logs._HANDLER.setStream(before)


def assert_in_order(text: str, expected: list[str]) -> None:
    """Each of ``expected`` is a whole line of ``text``, in this order (others may be between)."""
    lines = text.splitlines()
    at = 0
    for line in expected:
        assert line in lines[at:], f"{line!r} missing after line {at} of:\n{text}"
        at = lines.index(line, at) + 1


def assert_resume_hints(lines: list[str], command: str) -> None:
    """``lines`` are the two ways to resume a team whose stop cut turns: what each does,
    then the command (``command`` and its flag) on a line of its own, pasted as it is."""
    assert lines[0] == "to resume it delivering them again (a turn may repeat its side effects):"
    assert lines[1].startswith(command) and lines[1].endswith(" --retry-interrupted"), lines
    assert lines[2] == "to resume it giving them up:"
    assert lines[3] == lines[1].removesuffix("--retry-interrupted") + "--dismiss-interrupted"


def child_env(
    storage_url: str | None = None, *, repo_on_path: bool = True, **extra: str
) -> dict[str, str]:
    """The environment of a subprocess: no AKGENTIC_* leaking in, the repo importable
    (through PYTHONPATH, unless ``repo_on_path`` is False)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("AKGENTIC_") and (repo_on_path or k != "PYTHONPATH")
    }
    if repo_on_path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONFAULTHANDLER"] = "1"  # a hung child can be asked where (Child.dump_threads)
    if storage_url is not None:
        env["AKGENTIC_STORAGE"] = storage_url
    env.update(extra)
    return env


def run_child(
    argv: list[str], *, env: dict[str, str], input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a subprocess to its end (bounded) and capture its text output."""
    return subprocess.run(
        argv, input=input, env=env, cwd=cwd, capture_output=True, text=True, timeout=90
    )


def signals_at_their_defaults() -> None:
    """A spawned command's ``preexec_fn``: SIGTERM and SIGHUP start at their defaults.

    The CLI keeps a signal the process was started ignoring ignored (``nohup``), and a
    child inherits what is ignored: a suite started under ``nohup`` would hand every child
    an ignored SIGHUP, and the tests that send one would wait for nothing."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


class Child:
    """A running subprocess whose stdout lines are read by a thread."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=signals_at_their_defaults,
        )
        self.lines: list[str] = []
        self.errors: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr = threading.Thread(target=self._read_errors, daemon=True)
        self._stderr.start()

    def _read_errors(self) -> None:
        assert self.proc.stderr is not None
        self.errors.extend(self.proc.stderr)

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        """Wait for the process to end; its exit code and everything it wrote on stderr."""
        code = self.proc.wait(timeout=timeout)
        self._stderr.join(timeout)
        return code, "".join(self.errors)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def write(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, needle: str, timeout: float = 60.0) -> str:
        """The first line (from now on) containing ``needle``; fails after ``timeout``."""
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(
                    f"no line with {needle!r} within {timeout}s; got: {self.lines}; "
                    f"where it hangs: {self.dump_threads()}"
                )
            if line is None:
                pytest.fail(f"output ended without {needle!r}; got: {self.lines}")
            self.lines.append(line)
            if needle in line:
                return line

    def output(self, timeout: float = 60.0) -> str:
        """Everything it wrote on stdout, once its output has ended (fails after
        ``timeout``)."""
        while True:
            try:
                line = self._queue.get(timeout=timeout)
            except queue.Empty:
                pytest.fail(f"its output did not end within {timeout}s; got: {self.lines}")
            if line is None:
                self._queue.put(None)  # ended: a later call returns at once
                return "\n".join(self.lines)
            self.lines.append(line)

    def dump_threads(self) -> str:
        """A hung child's threads, as faulthandler prints them on SIGABRT (the child runs
        with PYTHONFAULTHANDLER=1), and whatever else it wrote on stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGABRT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=30)
        self._stderr.join(30)
        return "".join(self.errors)[-6000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def spawn() -> Iterator[Callable[[list[str], dict[str, str]], Child]]:
    """Start subprocesses that are killed at the end of the test if still running."""
    children: list[Child] = []

    def start(argv: list[str], env: dict[str, str]) -> Child:
        child = Child(argv, env)
        children.append(child)
        return child

    yield start
    for child in children:
        child.stop()
