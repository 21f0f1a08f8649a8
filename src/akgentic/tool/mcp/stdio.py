"""The stdio transport of an MCP server whose whole process tree ends with it.

fastmcp's ``StdioTransport`` spawns the server through the ``mcp`` SDK, which puts it in a
new session and kills that process group only when the server outlives the grace after its
stdin closes (2 s). A server that exits in time, or on its own, leaves the processes it
started running (a server launched through ``npx``, ``uvx`` or a shell script that forks
workers); so does our own process dying, ``SIGKILL`` included — nothing is left to kill
them. On Linux (with pidfds, 5.3+) the server is therefore started through ``launcher.py``,
which becomes the server (same pid, pipes, stderr and exit status) and leaves a watchdog
that ends the server's process group when the server or this process ends; see there.

Elsewhere (macOS, Windows, older kernels) :func:`stdio_transport` is fastmcp's transport
as it is: the SDK's own kill at the grace's end is all there is.

The launcher is one more Python start (``-I -S``, the standard library only) before the
server's own: about 20 ms, where ``npx`` or ``uvx`` take seconds. Since what is spawned is
now Python, which always runs, a command that cannot be found or run is refused before the
spawn, with the error the SDK's own spawn raises for it (:func:`spawn_error`), so it is
said in the same words.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, cast

from fastmcp.client.transports import StdioTransport
from mcp import ClientSession
from mcp.client.stdio import get_default_environment

__all__ = ["LAUNCHER", "ProcessTreeTransport", "spawn_error", "stdio_transport", "tree_supported"]

LAUNCHER = Path(__file__).with_name("launcher.py")


@functools.cache
def tree_supported() -> bool:
    """Whether this host can end a server's process tree with it: Linux with pidfds (5.3+)
    and a Python to run the launcher with."""
    if sys.platform != "linux" or not sys.executable:
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:  # ENOSYS before 5.3; a seccomp filter may refuse it too
        return False
    return True


def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: dict[str, str] | None,
    cwd: str | None,
    log_file: TextIO | Path,
    shaped: Callable[[type[StdioTransport]], type[StdioTransport]] = lambda kind: kind,
) -> StdioTransport:
    """The transport for a stdio server: :class:`ProcessTreeTransport` where
    :func:`tree_supported`, else fastmcp's own — each as ``shaped`` makes its class (the
    client's own reading of tool lists, see ``toolset.py``). Either way the process lives
    exactly as long as the connection (``keep_alive=False``) and its stderr goes to
    ``log_file``."""
    if tree_supported():
        tree = cast("type[ProcessTreeTransport]", shaped(ProcessTreeTransport))
        return tree(command, args, env=env, cwd=cwd, log_file=log_file)
    return shaped(StdioTransport)(
        command=command, args=args, env=env, cwd=cwd, keep_alive=False, log_file=log_file
    )


class ProcessTreeTransport(StdioTransport):
    """fastmcp's ``StdioTransport``, spawning ``python -I -S launcher.py <our pid> command
    args...`` instead of ``command args...`` (see the module docstring). ``server_command``
    and ``server_args`` are the server's own; a command that cannot be run raises at each
    connection, as the SDK's spawn would (:func:`spawn_error`)."""

    def __init__(
        self,
        command: str,
        args: list[str],
        *,
        env: dict[str, str] | None,
        cwd: str | None,
        log_file: TextIO | Path,
    ) -> None:
        super().__init__(
            command=sys.executable, args=[], env=env, cwd=cwd, keep_alive=False, log_file=log_file
        )
        self.server_command = command
        self.server_args = list(args)

    async def connect(self, **kwargs: Any) -> ClientSession | None:
        failure = spawn_error(self.server_command, self.env, self.cwd)
        if failure is not None:
            raise failure
        # Our pid now, not when built: it is what the watchdog watches.
        self.args = ["-I", "-S", str(LAUNCHER), str(os.getpid())]
        self.args += [self.server_command, *self.server_args]
        return await super().connect(**kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}(command={self.server_command!r}, args={self.server_args})>"


def spawn_error(command: str, env: dict[str, str] | None, cwd: str | None) -> OSError | None:
    """The ``OSError`` spawning ``command`` would raise because it cannot be found or run,
    or None: what ``subprocess`` raises for it, with the command as its ``filename``.

    Looked up as ``subprocess`` does: a command with a ``/`` as it is, a bare name in each
    folder of the ``PATH`` the server gets (the SDK's inherited environment under ``env``),
    either relative to ``cwd``; of several failures, the first that is not "no such file"
    (a file on the ``PATH`` that is not executable). A ``cwd`` that is not a folder gives
    None: the spawn itself fails entering it, and says so. What only an ``exec`` can tell (a
    file that is not a program) is not foreseen: the launcher says it on the server's stderr.
    """
    if cwd is not None and not os.path.isdir(cwd):
        return None
    if os.path.dirname(command):
        candidates = [command]
    else:
        path = os.get_exec_path(get_default_environment() | (env or {}))
        candidates = [os.path.join(folder, command) for folder in path]
    saved: int | None = None
    last = errno.ENOENT
    for candidate in candidates:
        where = os.path.join(cwd or os.curdir, candidate)
        try:
            found = os.stat(where)
        except OSError as exc:
            last = exc.errno or errno.ENOENT
        else:
            if stat.S_ISREG(found.st_mode) and os.access(where, os.X_OK):
                return None
            last = errno.EACCES  # what exec says of a folder or a file without its x bit
        if saved is None and last not in (errno.ENOENT, errno.ENOTDIR):
            saved = last
    code = saved if saved is not None else last
    return OSError(code, os.strerror(code), command)
