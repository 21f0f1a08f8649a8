"""A stdio server's own processes end with it, however its connection ends: a clean close,
the server exiting on its own, the client's grace running out, the holder killed. The test
server starts a ``sleep`` of its own (``$MCP_CHILD_PID_FILE``); before the launcher
(``launcher.py``, through ``stdio.py``) that process outlived all of these but the grace.
Then the launcher itself, and the check of a command before the spawn."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from fastmcp.client.transports import StdioTransport
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.mcp import MCPToolset

from akgentic.tool.mcp import MCPProbeError, MCPStdioConnectionConfig, MCPTool
from akgentic.tool.mcp import stdio as stdio_module
from akgentic.tool.mcp.stdio import (
    LAUNCHER,
    ProcessTreeTransport,
    spawn_error,
    stdio_transport,
    tree_supported,
)
from akgentic.tool.mcp.toolset import build_server_toolset
from tests.processes import a_dead_pid, killed_at_ready, wait_until

from .conftest import pid_alive, stdio

linux_tree = pytest.mark.skipif(
    not tree_supported(), reason="a server's process tree is ended with it on Linux 5.3+ only"
)

BOUND = 30.0
"""Seconds a process has to be gone (the grace test's server takes the client's 2 s)."""


def session(leader: int) -> list[int]:
    """The live processes of the session ``leader`` leads. The ``mcp`` client starts a stdio
    server in a session of its own: its session holds the server, what it started, and the
    launcher's watchdog."""
    found = []
    for entry in Path("/proc").iterdir():
        try:  # "pid (comm) state ppid pgrp session ...", comm may hold anything but ")"
            state, _, _, sid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:4]
        except (OSError, IndexError, ValueError):
            continue  # not a process, or gone
        if int(sid) == leader and state != "Z":
            found.append(int(entry.name))
    return found


class Tree:
    """The pid files of one test's server and of the process it starts; whatever is left of
    the server's session is killed when the test ends, passed or failed."""

    def __init__(self, folder: Path) -> None:
        self.server_file = folder / "server.pid"
        self.child_file = folder / "child.pid"

    @property
    def env(self) -> dict[str, str]:
        return {"MCP_PID_FILE": str(self.server_file), "MCP_CHILD_PID_FILE": str(self.child_file)}

    def pids(self) -> tuple[int, int]:
        return int(self.server_file.read_text()), int(self.child_file.read_text())

    def wait_all_ended(self) -> None:
        """Until the server's child, then every process of its session, is gone (bounded)."""
        server, child = self.pids()
        wait_until(lambda: not pid_alive(child), BOUND, f"the server's child {child} ends")
        wait_until(lambda: not session(server), BOUND, "the server and the watchdog end")

    def kill_leftovers(self) -> None:
        if self.server_file.exists():
            for pid in session(int(self.server_file.read_text())):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Tree]:
    tree = Tree(tmp_path)
    try:
        yield tree
    finally:
        tree.kill_leftovers()


@linux_tree
def test_a_clean_close_ends_the_processes_the_server_started(tree: Tree) -> None:
    card = MCPTool(name="calc", connection=stdio(stdio_env=tree.env))
    assert card.probe(timeout=20).startswith("MCP server 'calc' serves 7 tools")
    tree.wait_all_ended()


@linux_tree
def test_a_server_that_exits_on_its_own_takes_its_processes_with_it(tree: Tree) -> None:
    async def crash_and_wait() -> None:
        toolset = build_server_toolset("calc", stdio(stdio_env=tree.env), "calc")
        async with toolset:
            client = toolset.client
            assert isinstance(client, MCPToolset) and toolset.is_open
            with pytest.raises(ModelRetry, match="closed"):  # the server exits mid-call
                await client.direct_call_tool("crash", {})
            # Still open on our side: what ends the child is the server's exit, not a close.
            await anyio.to_thread.run_sync(tree.wait_all_ended)

    anyio.run(crash_and_wait)


@linux_tree
def test_a_server_past_the_client_s_grace_is_ended_with_its_processes(tree: Tree) -> None:
    """The ``mcp`` client kills the server's process group 2 s after closing its stdin:
    the process the server started is in that group still."""
    card = MCPTool(name="calc", connection=stdio(stdio_env={**tree.env, "MCP_LINGER": "1"}))
    card.probe(timeout=20)
    tree.wait_all_ended()


@linux_tree
def test_the_processes_end_when_the_holder_of_the_connection_is_killed(tree: Tree) -> None:
    said = killed_at_ready("tests.tool.mcp.holder", env=tree.env)  # SIGKILL: no close at all
    assert said == "open"
    tree.wait_all_ended()


def _launch(*command: str, holder: int | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``command`` through the launcher as the ``mcp`` client spawns it (a new session)."""
    holder = os.getpid() if holder is None else holder
    argv = [sys.executable, "-I", "-S", str(LAUNCHER), str(holder), *command]
    return subprocess.run(
        argv, capture_output=True, text=True, start_new_session=True, timeout=BOUND
    )


@linux_tree
def test_the_launched_server_is_the_spawned_process_with_its_output_stderr_and_status() -> None:
    """The launcher becomes the server: the pid the client holds, its stdout, its stderr and
    its exit status are the server's, and it ignores no signal the plain spawn would not."""
    script = "echo $$; grep SigIgn /proc/$$/status; echo said >&2; exit 3"
    plain = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=BOUND)
    child = subprocess.Popen(
        [sys.executable, "-I", "-S", str(LAUNCHER), str(os.getpid()), "sh", "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    out, err = child.communicate(timeout=BOUND)
    assert child.returncode == plain.returncode == 3
    assert err == plain.stderr == "said\n"
    pid, ignored = out.splitlines()
    assert int(pid) == child.pid
    assert ignored == plain.stdout.splitlines()[1]


@linux_tree
def test_a_launcher_whose_holder_is_already_gone_starts_nothing() -> None:
    launched = _launch("sh", "-c", "echo ran", holder=a_dead_pid())
    assert (launched.returncode, launched.stdout) == (1, "")


@linux_tree
def test_a_command_only_its_exec_refuses_is_said_on_the_server_s_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A file that is executable but not a program passes the check before the spawn; the
    launcher's exec fails, and says so where a server explains itself."""
    program = tmp_path / "not-a-program"
    program.write_bytes(b"\x00\x01 not a program\n")
    program.chmod(0o755)
    card = MCPTool(name="odd", connection=MCPStdioConnectionConfig(stdio_command=str(program)))
    with pytest.raises(MCPProbeError, match=r"exited before the MCP handshake \(its stderr"):
        card.probe(timeout=10)
    assert "akgentic: cannot run an MCP server's command: Exec format error\n" in (
        capfd.readouterr().err
    )
    assert _launch(str(program)).returncode == 126
    assert _launch(str(tmp_path / "gone")).returncode == 127


# -- spawn_error: what the spawn would raise, before the launcher's spawn -------------------
def _script(path: Path, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(mode)
    return path


def _subprocess_says(command: str, env: dict[str, str], cwd: str | None) -> OSError | None:
    """What the ``mcp`` client's own spawn (``subprocess``) raises for ``command``."""
    try:
        subprocess.run([command], env=env, cwd=cwd, timeout=BOUND, check=False)
    except OSError as exc:
        return exc
    return None


@pytest.mark.parametrize(
    "case",
    [
        "a bare name on no folder of PATH",
        "a bare name executable in a later folder of PATH",
        "a bare name not executable in the only folder of PATH",
        "a path to a folder",
        "a path to a file without its x bit",
        "a path under a file",
        "a relative path from cwd",
        "a relative path not under cwd",
        "a missing cwd",
    ],
)
def test_the_check_before_the_spawn_says_what_subprocess_says(tmp_path: Path, case: str) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    _script(first / "tool", 0o644)
    _script(second / "tool")
    _script(tmp_path / "here" / "run.sh")
    command, cwd = {
        "a bare name on no folder of PATH": ("no-such-tool", None),
        "a bare name executable in a later folder of PATH": ("tool", None),
        "a bare name not executable in the only folder of PATH": ("tool", None),
        "a path to a folder": (str(first), None),
        "a path to a file without its x bit": (str(first / "tool"), None),
        "a path under a file": (str(first / "tool" / "x"), None),
        "a relative path from cwd": ("./run.sh", str(tmp_path / "here")),
        "a relative path not under cwd": ("./run.sh", str(tmp_path)),
        "a missing cwd": ("tool", str(tmp_path / "gone")),
    }[case]
    only_first = case == "a bare name not executable in the only folder of PATH"
    path = str(first) if only_first else f"{first}{os.pathsep}{second}"
    env = {"PATH": path}
    expected = _subprocess_says(command, {**os.environ, **env}, cwd)
    found = spawn_error(command, env, cwd)
    if case == "a missing cwd":  # the spawn itself says it, naming the cwd: nothing to add
        assert found is None and expected is not None and expected.filename == cwd
        return
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert (type(found), found.errno, found.strerror, found.filename) == (
        type(expected),
        expected.errno,
        expected.strerror,
        expected.filename,
    )


def test_where_the_tree_cannot_be_ended_the_transport_is_fastmcp_s_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not Linux (or no pidfds): the server is spawned as the ``mcp`` client spawns it,
    without the launcher — and so without a check of the command before the spawn."""
    tree_supported.cache_clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        assert not tree_supported()
    finally:
        tree_supported.cache_clear()
    monkeypatch.setattr(stdio_module, "tree_supported", lambda: False)
    plain = stdio_transport("npx", ["-y", "server"], env=None, cwd=None, log_file=sys.stderr)
    assert type(plain) is StdioTransport
    assert (plain.command, plain.args, plain.keep_alive) == ("npx", ["-y", "server"], False)
    monkeypatch.setattr(stdio_module, "tree_supported", lambda: True)
    wrapped = stdio_transport("npx", ["-y", "server"], env=None, cwd=None, log_file=sys.stderr)
    assert isinstance(wrapped, ProcessTreeTransport)
    assert (wrapped.server_command, wrapped.server_args, wrapped.keep_alive) == (
        "npx",
        ["-y", "server"],
        False,
    )
