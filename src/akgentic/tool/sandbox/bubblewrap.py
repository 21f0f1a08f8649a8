"""BubblewrapBackend: commands in Linux namespaces through ``bwrap`` — no daemon, no image.

What a run gets (see :mod:`akgentic.tool.sandbox.backend` for the contract):

- Every namespace unshared (user, pid, ipc, uts, cgroup, **net** unless the card allows
  it), all capabilities dropped, a fixed non-root uid inside, a new session, and
  ``--die-with-parent``: when the launcher dies, so does everything it started.
- The filesystem: ``/usr`` (and the ``/bin``, ``/lib``… links to it) and a short list of
  harmless ``/etc`` files read-only; a fresh ``/proc`` and ``/dev``; a size-capped private
  tmpfs on ``/tmp``; the tree read-write at ``/workspace``; the sandbox's own root
  remounted read-only. Nothing else exists inside — the host's home, other trees and the
  journal's git directory are simply not there.
- Limits: ``prlimit`` sets the address space (memory) and, for an unprivileged caller,
  the process count. Root is exempt from ``RLIMIT_NPROC``, so a root caller puts the run
  in a pids cgroup of its own (``pids.max``) and kills whatever is left in it at the end;
  without a writable pids cgroup a root caller gets no exec at all, and is told why.
- Wall time: the Popen dance of :class:`ProcessBackend` — the group is killed at the
  budget and the run reports ``exit_code`` 124.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import ClassVar

from akgentic.core import clip
from akgentic.tool.sandbox.backend import (
    SANDBOX_WORKDIR,
    ExecLimits,
    ProcessBackend,
    sandbox_environment,
)

__all__ = ["BubblewrapBackend", "PidsCgroup", "find_pids_cgroup"]

logger = logging.getLogger("akgentic.tool.sandbox")

SANDBOX_UID = 65534
"""The uid (and gid) a command runs as inside the sandbox: ``nobody``. It maps to the
caller's own uid outside, so what the command writes in the tree is the caller's."""

_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/mime.types",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/gitconfig",
)
_NETWORK_ETC = ("/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf")
_CGROUP_PREFIX = "akgentic-sandbox"


class PidsCgroup:
    """A pids cgroup per run, under ``base`` (cgroup v1's pids hierarchy or a v2 subtree)."""

    def __init__(self, base: Path, v2: bool) -> None:
        self.base = base
        self.v2 = v2

    def create(self, run_id: str, max_processes: int) -> Path:
        path = self.base / run_id
        path.mkdir()
        (path / "pids.max").write_text(str(max_processes))
        return path

    def destroy(self, path: Path) -> None:
        """Kill every process left in ``path``, then remove it (bounded; logs on failure)."""
        deadline = time.monotonic() + 5.0
        pause, delay = threading.Event(), 0.0005
        while True:
            self._kill_all(path)
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as exc:  # busy: its last processes are still being reaped
                if time.monotonic() > deadline:
                    logger.warning("could not remove the sandbox cgroup %s: %s", path, exc)
                    return
                pause.wait(delay)
                delay = min(delay * 2, 0.02)

    def _kill_all(self, path: Path) -> None:
        if self.v2 and (path / "cgroup.kill").exists():
            try:
                (path / "cgroup.kill").write_text("1")
                return
            except OSError:
                pass
        try:
            pids = (path / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(pid), signal.SIGKILL)


def find_pids_cgroup() -> PidsCgroup | None:
    """A place to create per-run pids cgroups, or None (read from ``/proc/self/mountinfo``).

    cgroup v1: the ``pids`` hierarchy's mount point. cgroup v2: the unified mount, when
    its root offers the ``pids`` controller (a subtree ``akgentic-sandbox`` is made with
    the controller enabled for its children).
    """
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    v2_mount: Path | None = None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, extra = left.split(), right.split()
        if len(fields) < 5 or len(extra) < 3:
            continue
        mount_point, fstype, options = Path(fields[4]), extra[0], extra[2].split(",")
        if fstype == "cgroup" and "pids" in options:
            base = mount_point / _CGROUP_PREFIX
            if _writable_dir(base):
                return PidsCgroup(base, v2=False)
        elif fstype == "cgroup2":
            v2_mount = mount_point
    if v2_mount is not None:
        try:
            if "pids" not in (v2_mount / "cgroup.controllers").read_text().split():
                return None
            subtree = v2_mount / "cgroup.subtree_control"
            if "pids" not in subtree.read_text().split():
                subtree.write_text("+pids")
            base = v2_mount / _CGROUP_PREFIX
            if not _writable_dir(base):
                return None
            control = base / "cgroup.subtree_control"
            if "pids" not in control.read_text().split():
                control.write_text("+pids")
            return PidsCgroup(base, v2=True)
        except OSError:
            return None
    return None


def _writable_dir(path: Path) -> bool:
    try:
        path.mkdir(exist_ok=True)
    except OSError:
        return False
    return os.access(path, os.W_OK)


class BubblewrapBackend(ProcessBackend):
    """Runs commands under ``bwrap``; see the module docstring."""

    name = "bubblewrap"

    probe_timeout: ClassVar[float] = 10.0

    def __init__(self, bwrap: str | None = None, prlimit: str | None = None) -> None:
        self.bwrap = bwrap or shutil.which("bwrap") or ""
        self.prlimit = prlimit or shutil.which("prlimit") or ""
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._probed = False
        self._cgroup: PidsCgroup | None = None
        self._cgroups: dict[str, Path] = {}

    # -- availability -------------------------------------------------------------------
    def unavailable_reason(self) -> str | None:
        """Checked once per backend: ``bwrap`` and ``prlimit`` exist, a trivial sandbox runs,
        and (as root) a pids cgroup can be made."""
        with self._lock:
            if not self._probed:
                self._reason = self._probe()
                self._probed = True
            return self._reason

    def _probe(self) -> str | None:
        if not self.bwrap:
            return (
                "bubblewrap is not installed (no 'bwrap' on PATH): install it "
                "(apt-get install bubblewrap) or set AKGENTIC_SANDBOX_BACKEND=docker"
            )
        if not self.prlimit:
            return (
                "'prlimit' is not on PATH, and without it the sandbox cannot bound memory: "
                "install util-linux (apt-get install util-linux)"
            )
        if os.geteuid() == 0:
            self._cgroup = find_pids_cgroup()
            if self._cgroup is None:
                return (
                    "running as root, the process cap needs a writable pids cgroup "
                    "(cgroup v1 'pids' or v2 with the pids controller) and none is "
                    "available: run as an unprivileged user or give this process cgroup access"
                )
        argv = [self.bwrap, *self._isolation(network=False), "--", "/bin/true"]
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                timeout=self.probe_timeout,
                env=sandbox_environment(),
                cwd="/",
            )
        except FileNotFoundError:
            return (
                f"bubblewrap could not be started ({self.bwrap}: No such file or directory): "
                f"install it (apt-get install bubblewrap) or set AKGENTIC_SANDBOX_BACKEND=docker"
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return (
                f"bubblewrap could not start a sandbox here ({clip(' '.join(str(exc).split()))}); "
                f"set AKGENTIC_SANDBOX_BACKEND=docker to use Docker instead"
            )
        if done.returncode != 0:
            said = " ".join(done.stderr.decode(errors="replace").split())  # one line
            why = clip(said, 300) or f"exit {done.returncode}"
            return (
                f"bubblewrap cannot create namespaces here ({why}): enable unprivileged user "
                f"namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10 and "
                f"later kernel.apparmor_restrict_unprivileged_userns=0), or set "
                f"AKGENTIC_SANDBOX_BACKEND=docker"
            )
        return None

    # -- the launch ----------------------------------------------------------------------
    def setup(self, run_id: str, limits: ExecLimits) -> None:
        if self._cgroup is not None:
            self._cgroups[run_id] = self._cgroup.create(run_id, limits.max_processes)

    def teardown(self, run_id: str) -> None:
        path = self._cgroups.pop(run_id, None)
        if path is not None and self._cgroup is not None:
            self._cgroup.destroy(path)

    def argv(self, tree: Path, command: str, limits: ExecLimits, run_id: str) -> list[str]:
        memory = limits.memory_mb * 1024 * 1024
        prlimit = [
            self.prlimit,
            f"--as={memory}",
            f"--nproc={limits.max_processes}",
            "--core=0",
            "--",
        ]
        tmp_size = min(limits.memory_mb, 256) * 1024 * 1024
        bwrap = [
            self.bwrap,
            *self._isolation(network=limits.network),
            "--size",
            str(tmp_size),
            "--tmpfs",
            "/tmp",
            "--bind",
            str(tree.resolve()),
            SANDBOX_WORKDIR,
            "--remount-ro",  # the sandbox's own root too: only the tree and /tmp are writable
            "/",
            "--chdir",
            SANDBOX_WORKDIR,
            "--",
            "/bin/sh",
            "-c",
            command,
        ]
        cgroup = self._cgroups.get(run_id)
        if cgroup is None:
            return [*prlimit, *bwrap]
        # The launcher joins the run's cgroup *before* exec'ing the rest, so nothing the
        # command forks can start outside it.
        join = 'echo $$ > "$1" || exit 125; shift; exec "$@"'
        return ["/bin/sh", "-c", join, "join", str(cgroup / "cgroup.procs"), *prlimit, *bwrap]

    def _isolation(self, network: bool) -> list[str]:
        args = [
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--cap-drop",
            "ALL",
            "--hostname",
            "sandbox",
            "--ro-bind",
            "/usr",
            "/usr",
        ]
        if network:
            args.insert(args.index("--unshare-all") + 1, "--share-net")
        for link in _SYSTEM_LINKS:
            if os.path.islink(link):
                args += ["--symlink", os.readlink(link), link]
            elif os.path.isdir(link):
                args += ["--ro-bind", link, link]
        for path in (*_ETC_FILES, *(_NETWORK_ETC if network else ())):
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        return args
