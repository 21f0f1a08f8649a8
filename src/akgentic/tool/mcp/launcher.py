"""Runs an MCP stdio server so that every process it starts ends with it (Linux).

Run by ``stdio.py``, never by hand, with the standard library only (it is a separate
Python start on the way to every stdio server, so it imports nothing else)::

    python -I -S launcher.py <holder pid> <command> [args...]

The ``mcp`` SDK spawns this script as it would the server: the leader of a new session and
process group, on the server's pipes, stderr, cwd and environment. It forks a **watchdog**,
then **becomes the server** (``exec``, same pid): the server keeps the pid, the pipes, the
stderr and the exit status the SDK knows, and the processes it starts (``npx``'s node,
``uvx``'s Python, a shell script's workers) are in its process group unless they leave it
on purpose (``setsid``/``setpgid``, as a daemon does: those escape, as they do the SDK's own
kill).

The SDK kills that group only when the server outlives the 2 s grace after its stdin
closes; a server that exits in time (a clean close) or on its own leaves its children
behind, and so does the holder (the akgentic process) dying. The watchdog covers those: it
moves to a group of its own (no kill of the server's group reaches it) and waits, on two
pidfds, for whichever comes first — the server ending (however: a clean close, its own
exit, a kill) or the holder ending (``SIGKILL`` included). Then it ends the server's group
as the SDK does past its grace — ``SIGTERM``, up to ``GRACE`` seconds for the group to go,
``SIGKILL`` — and exits. Nothing waits for it.

Where the kernel has no ``pidfd_open`` (before Linux 5.3) the server is started without a
watchdog: the SDK's own behaviour. A command that cannot be run is said on stderr (the
server's, so the user reads it where a server explains itself) and ends this process with a
shell's status (127 not found, 126 otherwise); the caller checks the command before the
spawn, so this is the rare case it could not foresee (a file that is not a program).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

GRACE = 2.0
"""Seconds the server's group has, after ``SIGTERM``, before ``SIGKILL`` (the SDK's own)."""

_POLL = 0.01
"""Seconds between looks at whether the group is gone."""


def main(argv: list[str]) -> None:
    holder, command = int(argv[1]), argv[2:]
    # Python ignores these at start and an exec keeps what is ignored; the server must get
    # the defaults, as the SDK's own spawn restores them.
    for name in ("SIGPIPE", "SIGXFSZ"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    if os.getpgrp() != os.getpid():  # the SDK makes the server lead a session, so a group;
        os.setpgid(0, 0)  # were it not so, the watchdog must still never end another group
    try:
        watched = (os.pidfd_open(holder), os.pidfd_open(os.getpid()))  # close-on-exec
    except OSError:  # no pidfds (before Linux 5.3): the server runs as the SDK starts it
        watched = None
    if os.getppid() != holder:  # the holder already ended: nobody would talk to the server
        os._exit(1)
    if watched is not None:
        _fork_watchdog(*watched)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        # Not naming the command: it may hold an expanded ${VAR}. The server's name is on
        # the team stream, said at the same moment.
        os.write(2, f"akgentic: cannot run an MCP server's command: {exc.strerror}\n".encode())
        os._exit(127 if isinstance(exc, FileNotFoundError) else 126)


def _fork_watchdog(holder: int, server: int) -> None:
    """Fork the watchdog; only this process returns."""
    group = os.getpid()
    try:
        child = os.fork()
    except OSError:  # no process to spare: the server runs as the SDK starts it
        return
    if child == 0:
        try:
            os.setpgid(0, 0)
            _watch(holder, server, group)
        finally:
            os._exit(0)  # never back into the caller, which would run the server twice
    try:  # noqa: SIM105 (no contextlib: each import delays every stdio server's start)
        os.setpgid(child, child)  # set by both sides: done before the exec either way
    except OSError:
        pass
    os.close(holder)
    os.close(server)


def _watch(holder: int, server: int, group: int) -> None:
    """Wait for the holder or the server to end, then end the server's group."""
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # holding the server's pipes would keep them open after it
        os.dup2(quiet, fd)
    poller = select.poll()
    poller.register(holder, select.POLLIN)
    poller.register(server, select.POLLIN)
    poller.poll()
    _end_group(group)


def _end_group(group: int) -> None:
    """``SIGTERM`` the process group, then ``SIGKILL`` it if it is not gone within ``GRACE``
    seconds. A group is gone once its last member is reaped; members this process may not
    signal are left alone."""
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        return
    except PermissionError:
        pass
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        time.sleep(_POLL)
    try:  # noqa: SIM105 (no contextlib, as above)
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    main(sys.argv)
