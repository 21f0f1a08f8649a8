"""The bubblewrap sandbox, for real: what a command can and cannot do, and its bounds.

These run real ``bwrap`` (CI installs it; elsewhere they skip saying what is missing).
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.tool.sandbox import TIMEOUT_EXIT_CODE, BubblewrapBackend, ExecLimits, ExecResult
from akgentic.tool.sandbox.backend import Kill


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    path = tmp_path / "tree"
    path.mkdir()
    return path


def run(backend: BubblewrapBackend, tree: Path, command: str, **limits: object) -> ExecResult:
    return backend.run(tree, command, ExecLimits(**limits))  # type: ignore[arg-type]


def python(tree: Path, code: str) -> str:
    """A command running ``code`` (written into the tree, so no quoting games)."""
    name = f"script_{uuid.uuid4().hex[:8]}.py"
    (tree / name).write_text(code)
    return f"python3 {name}"


def processes_with(marker: str) -> list[str]:
    """Command lines of live processes containing ``marker`` (the host's view)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\x00", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(cmdline)
    return found


def test_the_tree_is_the_writable_working_directory(bwrap: BubblewrapBackend, tree: Path) -> None:
    result = run(bwrap, tree, "pwd && echo hello > made.txt && cat made.txt")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["/workspace", "hello"]
    assert (tree / "made.txt").read_text() == "hello\n"
    assert result.backend == "bubblewrap" and not result.timed_out


def test_the_exit_code_is_the_commands(bwrap: BubblewrapBackend, tree: Path) -> None:
    assert run(bwrap, tree, python(tree, "import sys\nsys.exit(3)\n")).exit_code == 3


@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server on the host's loopback; the host itself can reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    probe = socket.create_connection(("127.0.0.1", port), timeout=5)  # the control
    probe.close()
    yield port
    server.close()


def test_there_is_no_network(bwrap: BubblewrapBackend, tree: Path, host_server: int) -> None:
    code = f"""
import socket
for host, port in (("127.0.0.1", {host_server}), ("1.1.1.1", 53)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        print("reached", host)
    except OSError as exc:
        print("blocked", host, exc.errno)
print(open("/proc/net/dev").read().count(":"))
"""
    result = run(bwrap, tree, python(tree, code))
    lines = result.output.splitlines()
    assert lines[0].startswith("blocked 127.0.0.1"), result.output  # the host's loopback
    assert lines[1].startswith("blocked 1.1.1.1"), result.output
    assert lines[2] == "1"  # one interface: the sandbox's own, unconnected loopback


def test_the_network_is_there_only_when_the_card_allows_it(
    bwrap: BubblewrapBackend, tree: Path, host_server: int
) -> None:
    code = (
        f'import socket\nsocket.create_connection(("127.0.0.1", {host_server}), 2)\nprint("ok")\n'
    )
    result = run(bwrap, tree, python(tree, code), network=True)
    assert result.output.strip() == "ok", result.output


def test_nothing_outside_the_tree_is_writable(bwrap: BubblewrapBackend, tree: Path) -> None:
    marker = f"escape-{uuid.uuid4().hex}"
    code = f"""
import os
for path in ("/usr/{marker}", "/etc/{marker}", "/{marker}", "/workspace/../{marker}"):
    try:
        open(path, "w").write("x")
        print("wrote", path)
    except OSError as exc:
        print("refused", path, exc.strerror)
open("/tmp/{marker}", "w").write("scratch")  # a private tmpfs: gone with the sandbox
print("tmp ok")
"""
    result = run(bwrap, tree, python(tree, code))
    assert result.output.count("refused") == 4, result.output
    assert "tmp ok" in result.output
    for host in (Path("/usr") / marker, Path("/etc") / marker, Path("/") / marker):
        assert not host.exists()
    assert not (Path("/tmp") / marker).exists()
    assert not (tree.parent / marker).exists()


def test_the_host_home_and_files_beside_the_tree_are_not_there(
    bwrap: BubblewrapBackend, tree: Path
) -> None:
    secret = tree.parent / "secret.txt"
    secret.write_text("top secret")
    home = Path.home()
    code = f"""
import os
for path in ({str(secret)!r}, {str(home)!r}):
    try:
        seen = open(path).read() if path.endswith(".txt") else os.listdir(path)
        print(path, "readable:", seen)
    except OSError as exc:
        print(path, "missing:", exc.strerror)
"""
    result = run(bwrap, tree, python(tree, code))
    assert "top secret" not in result.output
    assert result.output.count("missing:") == 2, result.output


def test_a_sleep_past_its_budget_is_killed_with_exit_124(
    bwrap: BubblewrapBackend, tree: Path
) -> None:
    marker = f"29.{uuid.uuid4().int % 1000:03d}"
    # 5 s, not 1: on a loaded machine (both cores busy) bubblewrap's own start can take
    # seconds, and "started" must be printed before the budget runs out for the assertion.
    result = run(bwrap, tree, f"echo started && sleep {marker}", timeout_seconds=5)
    assert result.exit_code == TIMEOUT_EXIT_CODE
    assert result.timed_out and "started" in result.output
    assert processes_with(f"sleep {marker}") == []  # the whole sandbox is gone


def test_the_process_count_is_capped(bwrap: BubblewrapBackend, tree: Path) -> None:
    code = """
import os, time
made = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        made += 1
except OSError as exc:
    print("fork refused:", exc.errno)
print("made", made)
os._exit(0)
"""
    result = run(bwrap, tree, python(tree, code), max_processes=16)
    assert "fork refused" in result.output, result.output
    made = int(result.output.split("made")[1])
    assert made < 16


def test_a_fork_bomb_is_bounded_and_leaves_nothing_behind(
    bwrap: BubblewrapBackend, tree: Path
) -> None:
    marker = f"bomb_{uuid.uuid4().hex[:8]}"
    code = f"""import os
# {marker}
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    (tree / f"{marker}.py").write_text(code)
    result = run(bwrap, tree, f"python3 {marker}.py", timeout_seconds=1.5, max_processes=32)
    assert result.exit_code == TIMEOUT_EXIT_CODE and result.timed_out
    assert processes_with(f"{marker}.py") == []


def test_memory_is_capped(bwrap: BubblewrapBackend, tree: Path) -> None:
    code = """
try:
    block = bytearray(600 * 1024 * 1024)
    print("allocated")
except MemoryError:
    print("MemoryError")
"""
    result = run(bwrap, tree, python(tree, code), memory_mb=128)
    assert result.output.strip() == "MemoryError", result.output


def test_output_past_the_cap_is_cut_in_the_middle_with_a_note(
    bwrap: BubblewrapBackend, tree: Path
) -> None:
    result = run(bwrap, tree, "seq 1 100000", max_output_chars=1000)
    assert result.exit_code == 0
    assert result.output.startswith("1\n2\n3\n") and result.output.rstrip().endswith("100000")
    assert result.truncated_chars > 500_000
    assert f"[… {result.truncated_chars:,} characters of output omitted …]" in result.output


def test_started_hands_over_a_kill_that_ends_the_run(bwrap: BubblewrapBackend, tree: Path) -> None:
    kills: list[Kill] = []
    started = threading.Event()

    def on_start(kill: Kill) -> None:
        kills.append(kill)
        started.set()
        kill()

    result = bwrap.run(tree, "sleep 30", ExecLimits(timeout_seconds=60), on_start)
    assert started.is_set() and len(kills) == 1
    assert result.exit_code == 137 and not result.timed_out
