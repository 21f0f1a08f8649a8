"""The contract every exec backend meets, the allowlist, and the Popen dance done once.

``WorkspaceTool.workspace_exec`` hands a command to a :class:`SandboxBackend` and gets an
:class:`ExecResult` back. The rules a backend keeps, whatever it is built on:

- **A command never runs unsandboxed.** A backend that cannot isolate says so through
  :meth:`SandboxBackend.unavailable_reason`; there is no fall-back to the host.
- **Only the tree is writable.** The tree is mounted read-write at ``/workspace`` (the
  working directory); the rest of the filesystem is read-only system directories or
  absent — the host's home is never mounted.
- **No network** unless :attr:`ExecLimits.network` says so.
- **Bounded**: wall time (:attr:`ExecLimits.timeout_seconds` — a command killed at its
  budget reports ``exit_code`` :data:`TIMEOUT_EXIT_CODE`, 124, as coreutils' ``timeout``
  does), memory (:attr:`ExecLimits.memory_mb`) and process count
  (:attr:`ExecLimits.max_processes`); output past :attr:`ExecLimits.max_output_chars` is
  cut in the middle with a note saying how much was left out.
- **The allowlist is checked before anything starts** (:func:`validate_command`): every
  program of a pipeline must be on it. It is a guard against mistakes and a statement of
  intent, not the isolation — the sandbox is.
- **A cold start is not a run.** :meth:`SandboxBackend.prepare` (a container image to
  build, say) is waited on under its own budget before the run's clock starts;
  :meth:`SandboxBackend.run` calls ``started`` the moment the command actually starts, so
  the caller can re-base its deadline there; a ``started`` that raises has the command
  killed before the error goes on (no run goes on that its caller cannot see).

:class:`ProcessBackend` is the Popen dance — a new session, a bounded reader of the
combined output, the wait, the kill of the whole group at the budget — written once for
every backend that runs a local launcher (bubblewrap today).
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

from pydantic import ConfigDict, Field

from akgentic.core import excerpt
from akgentic.core.serialization import SerializableModel
from akgentic.core.words import counted

__all__ = [
    "ALLOWED_COMMANDS",
    "MAX_COMMAND_CHARS",
    "SANDBOX_WORKDIR",
    "TIMEOUT_EXIT_CODE",
    "BoundedOutput",
    "CommandRefusedError",
    "ExecLimits",
    "ExecResult",
    "Kill",
    "ProcessBackend",
    "SandboxBackend",
    "SandboxNotReadyError",
    "SandboxUnavailableError",
    "Started",
    "sandbox_environment",
    "validate_command",
]

TIMEOUT_EXIT_CODE = 124
"""The exit code of a command killed at its wall-time budget (coreutils ``timeout``'s)."""

MAX_COMMAND_CHARS = 20_000
"""The longest command line :func:`validate_command` reads: a longer one is refused before
it is parsed (a shell parse in Python takes seconds per 100 KB); a long script goes in a
file (``workspace_write``) that the command runs."""

SANDBOX_WORKDIR = "/workspace"
"""Where the tree is mounted inside every sandbox, and the command's working directory."""

ALLOWED_COMMANDS: frozenset[str] = frozenset(
    {
        # interpreters and test runners
        "python",
        "python3",
        "pytest",
        "make",
        "git",
        # reading and searching
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "egrep",
        "fgrep",
        "find",
        "sed",
        "awk",
        "sort",
        "uniq",
        "cut",
        "tr",
        "diff",
        "cmp",
        "file",
        "stat",
        "du",
        "tree",
        # writing inside the tree
        "mkdir",
        "rmdir",
        "rm",
        "cp",
        "mv",
        "touch",
        "tar",
        "gzip",
        "gunzip",
        "zip",
        "unzip",
        # plumbing
        "echo",
        "printf",
        "pwd",
        "true",
        "false",
        "test",
        "sleep",
        "date",
        "basename",
        "dirname",
        "seq",
    }
)
"""The programs ``workspace_exec`` may start by default. A card narrows or widens it with
``WorkspaceExec(allowed_commands=[...])``. It states intent and catches mistakes; it is not
the isolation (the sandbox is): an interpreter on it, or a tool that starts programs
(``find -exec``, ``awk``'s ``system``, ``git``'s aliases), can start any program. Shells,
and launchers whose only work is to start another program (``env``, ``xargs``,
``nohup``), are left off."""

_OPERATORS = frozenset({"|", "||", "&&", ";"})
_REFUSED_TOKENS = {
    "&": "running in the background",
    "$(": "command substitution",
    "`": "command substitution",
    "<(": "process substitution",
    ">(": "process substitution",
}


class CommandRefusedError(ValueError):
    """A command line the allowlist (or the parser) refuses; the message says what to do."""


class SandboxUnavailableError(RuntimeError):
    """No sandbox can run here; the message says why and what would enable one."""


class SandboxNotReadyError(RuntimeError):
    """The backend did not become ready (cold start) within its own budget."""


class ExecLimits(SerializableModel):
    """What one run may use. Every field is enforced by every backend."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    timeout_seconds: float = Field(default=60.0, gt=0, le=3600)
    memory_mb: int = Field(default=1024, ge=32, le=65536)
    max_processes: int = Field(default=64, ge=4, le=4096)
    max_output_chars: int = Field(default=30_000, ge=1_000, le=1_000_000)
    network: bool = False


class ExecResult(SerializableModel):
    """The outcome of one run, as the backend saw it.

    ``output`` is stdout and stderr interleaved as written, already cut to the cap;
    ``truncated_chars`` says how much the cut left out. ``timed_out`` is True exactly when
    the command was killed at its wall-time budget, and ``exit_code`` is then 124.
    """

    exit_code: int
    output: str = ""
    duration_seconds: float = 0.0
    timed_out: bool = False
    truncated_chars: int = 0
    backend: str = ""


Kill = Callable[[], None]
"""Kills the run in progress (idempotent, safe from any thread)."""

Started = Callable[[Kill], None]
"""Called once, the moment the command actually starts, with a way to kill it."""


@runtime_checkable
class SandboxBackend(Protocol):
    """Runs one command over one tree, isolated and bounded; see the module docstring."""

    name: str

    def unavailable_reason(self) -> str | None:
        """None when commands can run here; otherwise why not and how to enable it."""
        ...

    def prepare(self, timeout: float) -> None:
        """Get ready to run (the cold start), within ``timeout`` seconds.

        Raises :class:`SandboxNotReadyError` past the budget and :class:`SandboxUnavailableError`
        when it cannot ever be ready. Idempotent and cheap once ready.
        """
        ...

    def run(
        self,
        tree: Path,
        command: str,
        limits: ExecLimits,
        started: Started | None = None,
    ) -> ExecResult:
        """Run ``command`` (already validated) with ``tree`` as ``/workspace``."""
        ...


def validate_command(command: str, allowed: Collection[str] = ALLOWED_COMMANDS) -> list[str]:
    """The programs ``command`` starts, in order (:class:`CommandRefusedError` if one is refused).

    The line may chain programs with ``|``, ``&&``, ``||`` and ``;`` and redirect with
    ``<``/``>`` (inside the sandbox, only the tree is writable). Background jobs and
    command or process substitution are refused: they would start programs the check
    never saw. ``VAR=value`` prefixes are allowed; a path to a program is judged by its
    base name. A refusal quotes only an excerpt of what the line holds, and names the whole
    allowlist: it is how the model learns what it may run.
    """
    if not command.strip():
        raise CommandRefusedError("the command is empty: give a command line such as 'ls -la'")
    if len(command) > MAX_COMMAND_CHARS:
        raise CommandRefusedError(
            f"the command line is {len(command):,} characters, over the {MAX_COMMAND_CHARS:,} "
            f"this workspace reads: write a long script to a file and run that file"
        )
    if "\x00" in command:
        raise CommandRefusedError("the command contains a NUL byte; remove it")
    for token, what in _REFUSED_TOKENS.items():
        if token == "&":
            continue
        if token in command:
            raise CommandRefusedError(
                f"{what} ({token!r}) is not allowed: run each program as its own step"
            )
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise CommandRefusedError(
            f"the command line cannot be parsed ({exc}); check its quotes"
        ) from None
    programs: list[str] = []
    expect_program = True
    for token in tokens:
        if token in _OPERATORS:
            if expect_program:
                raise CommandRefusedError(f"{token!r} has no program before it: {excerpt(command)}")
            expect_program = True
            continue
        if token.startswith("&") or token == "|&":
            raise CommandRefusedError(
                "running in the background ('&') is not allowed: the run ends when its command ends"
            )
        if set(token) <= set("<>|&;()"):
            if token in ("(", ")"):
                raise CommandRefusedError(
                    "subshells '( … )' are not allowed: chain programs instead"
                )
            continue  # a redirection operator; its target is the next word
        if not expect_program:
            continue
        if "=" in token and not token.startswith("=") and token.split("=", 1)[0].isidentifier():
            continue  # VAR=value before the program
        program = token.rsplit("/", 1)[-1]
        if program not in allowed:
            listing = ", ".join(sorted(allowed))
            raise CommandRefusedError(
                f"{excerpt(program)} is not on this workspace's command allowlist. "
                f"Allowed: {listing}."
            )
        programs.append(program)
        expect_program = False
    if expect_program:
        raise CommandRefusedError(f"the command ends with an operator: {excerpt(command)}")
    return programs


def sandbox_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a sandboxed command sees: a fixed, minimal one — never the host's."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra or {})
    return env


_CONTINUATION = bytes(range(0x80, 0xC0))
"""UTF-8 continuation bytes: a byte string's characters are its bytes less these."""


def _characters(data: bytes | bytearray) -> int:
    """How many UTF-8 characters ``data`` holds (its lead bytes), at C speed."""
    return len(data.translate(None, _CONTINUATION))


class BoundedOutput:
    """Keeps the head and the tail of a stream up to ``cap`` characters, counts the rest.

    Memory stays bounded whatever the command prints: the middle is discarded as it
    arrives, never buffered — counted in characters as it goes, so the note says how
    many characters were left out, not how many bytes.
    """

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._head_cap = cap * 2 // 5
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            room = self._head_cap * 4 - len(self._head)  # bytes: up to 4 per character
            if room > 0:
                self._head.extend(chunk[:room])
                chunk = chunk[room:]
            if not chunk:
                return
            self._tail.extend(chunk)
            excess = len(self._tail) - self._tail_cap * 4
            if excess > 0:
                self._dropped += _characters(self._tail[:excess])
                del self._tail[:excess]

    def text(self) -> tuple[str, int]:
        """The kept text and how many characters were left out."""
        with self._lock:
            head = self._head.decode("utf-8", errors="replace")
            kept = bytes(self._tail)
            dropped = self._dropped
        if dropped:  # the tail may start inside a character whose lead byte was dropped
            kept = kept.lstrip(_CONTINUATION)
        tail = kept.decode("utf-8", errors="replace")
        if not dropped and len(head) + len(tail) <= self.cap:
            return head + tail, 0
        kept_head, rest = head[: self._head_cap], head[self._head_cap :] + tail
        kept_tail = rest[-self._tail_cap :] if len(rest) > self._tail_cap else rest
        omitted = len(rest) - len(kept_tail) + dropped
        if not omitted:
            return kept_head + kept_tail, 0
        note = f"\n[… {counted(omitted, 'character')} of output omitted …]\n"
        return kept_head + note + kept_tail, omitted


class ProcessBackend:
    """The Popen dance, once: subclasses say how to launch; this runs, bounds and reaps.

    A subclass implements :meth:`argv` (the launcher's command line) and may override
    :meth:`setup` / :meth:`teardown` (per-run resources such as a cgroup). The launcher
    starts in a new session, its combined output is read by a thread into a
    :class:`BoundedOutput`, and at the budget the whole process group is killed and the
    result says ``exit_code`` 124.
    """

    name: str = "process"

    reap_timeout: ClassVar[float] = 5.0
    """Seconds to wait for the output pipe to close after the launcher ended."""

    def argv(self, tree: Path, command: str, limits: ExecLimits, run_id: str) -> list[str]:
        raise NotImplementedError(f"{type(self).__name__} must implement argv()")

    def setup(self, run_id: str, limits: ExecLimits) -> None:
        """Per-run resources, before the launch (default: none)."""

    def teardown(self, run_id: str) -> None:
        """Release per-run resources and kill anything left (default: nothing)."""

    def unavailable_reason(self) -> str | None:
        return None

    def prepare(self, timeout: float) -> None:
        """A local launcher has no cold start."""

    def run(
        self,
        tree: Path,
        command: str,
        limits: ExecLimits,
        started: Started | None = None,
    ) -> ExecResult:
        run_id = f"{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
        self.setup(run_id, limits)
        try:
            return self._run(self.argv(tree, command, limits, run_id), limits, started)
        finally:
            self.teardown(run_id)

    def _run(self, argv: Sequence[str], limits: ExecLimits, started: Started | None) -> ExecResult:
        output = BoundedOutput(limits.max_output_chars)
        begin = time.monotonic()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env=sandbox_environment(),
        )
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            _kill_group(proc)

        reader = threading.Thread(
            target=_pump, args=(proc, output), name=f"exec-output-{proc.pid}", daemon=True
        )
        reader.start()
        if started is not None:
            try:
                started(kill)
            except BaseException:  # the caller cannot see the run: it must not go on unseen
                _kill_group(proc)
                proc.wait()
                reader.join(self.reap_timeout)
                raise
        timed_out = not _wait(proc, limits.timeout_seconds)
        if timed_out:
            _kill_group(proc)
            proc.wait()
            code = TIMEOUT_EXIT_CODE
        else:
            code = proc.wait()
        reader.join(self.reap_timeout)
        duration = time.monotonic() - begin
        if code < 0:
            code = 128 - code  # killed by a signal: the shell's convention
        if killed.is_set() and not timed_out:
            code = code if code else 137
        text, omitted = output.text()
        return ExecResult(
            exit_code=code,
            output=text,
            duration_seconds=round(duration, 3),
            timed_out=timed_out,
            truncated_chars=omitted,
            backend=self.name,
        )


def _pump(proc: subprocess.Popen[bytes], output: BoundedOutput) -> None:
    stream = proc.stdout
    if stream is None:
        return
    fd = stream.fileno()
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            output.feed(chunk)
    except OSError:
        pass
    finally:
        stream.close()


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether ``proc`` ended within ``timeout`` seconds.

    Sleeps in the kernel on a pidfd where there is one (``Popen.wait(timeout)`` polls with
    sleeps of up to 50 ms, which would be most of a short command's latency).
    """
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(pidfd)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
