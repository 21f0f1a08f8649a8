"""The one SANDBOX_BACKEND setting: which backend runs, or why none can."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.tool.sandbox import (
    BubblewrapBackend,
    ExecLimits,
    ExecResult,
    backend_setting,
    registry,
    reset_backends,
    resolve_backend,
)
from akgentic.tool.sandbox.backend import Started


class Unavailable:
    name = "never"

    def unavailable_reason(self) -> str | None:
        return "it never runs anything"

    def prepare(self, timeout: float) -> None: ...

    def run(
        self, tree: Path, command: str, limits: ExecLimits, started: Started | None = None
    ) -> ExecResult:
        raise AssertionError("an unavailable backend is never asked to run")


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AKGENTIC_SANDBOX_BACKEND", raising=False)
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", None)
    reset_backends()


def test_the_default_is_auto_and_the_environment_overrides_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert backend_setting() == "auto"
    monkeypatch.setenv("AKGENTIC_SANDBOX_BACKEND", " Docker ")
    assert backend_setting() == "docker"
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", "none")
    assert backend_setting() == "none"  # the module slot wins over the environment


def test_none_switches_exec_off_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKGENTIC_SANDBOX_BACKEND", "none")
    assert resolve_backend() == (
        None,
        "exec is switched off on this deployment (AKGENTIC_SANDBOX_BACKEND=none)",
    )


def test_an_unknown_name_lists_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AKGENTIC_SANDBOX_BACKEND", "firejail")
    backend, reason = resolve_backend()
    assert backend is None and "use one of auto, bubblewrap, docker, none" in reason


def test_a_deployment_backend_is_used_only_when_it_can_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", Unavailable())
    assert resolve_backend() == (None, "it never runs anything")
    monkeypatch.setattr(registry, "SANDBOX_BACKEND", Unavailable)
    assert resolve_backend() == (None, "it never runs anything")


def test_auto_takes_bubblewrap_where_it_works_and_otherwise_gives_every_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend, reason = resolve_backend()
    if BubblewrapBackend().unavailable_reason() is None:
        assert isinstance(backend, BubblewrapBackend) and reason == ""
    monkeypatch.setattr(registry, "BACKENDS", {"bubblewrap": Unavailable, "docker": Unavailable})
    reset_backends()
    backend, reason = resolve_backend()
    assert backend is None
    assert reason == (
        "no sandbox backend is available — bubblewrap: it never runs anything; "
        "docker: it never runs anything"
    )


def test_bubblewrap_without_bwrap_says_how_to_install_it() -> None:
    backend = BubblewrapBackend()
    backend.bwrap = ""  # as on a machine without it
    assert "apt-get install bubblewrap" in (backend.unavailable_reason() or "")


def _program(path: Path, script: str) -> str:
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return str(path)


def test_a_bubblewrap_that_cannot_run_says_in_one_line_what_to_install_or_enable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each way bubblewrap fails to start a sandbox is one line naming the fix: a launcher
    that is not there, a launcher that cannot make namespaces (the kernel's or AppArmor's
    setting, named — bwrap's own words may run over several lines), a missing prlimit."""
    monkeypatch.setattr("os.geteuid", lambda: 1000)  # not root: no pids cgroup is looked for
    cannot = _program(
        tmp_path / "bwrap",
        'echo "bwrap: setting up uid map:" >&2; echo "Permission denied" >&2; exit 1',
    )
    said = BubblewrapBackend(bwrap=cannot).unavailable_reason()
    assert said == (
        "bubblewrap cannot create namespaces here (bwrap: setting up uid map: Permission "
        "denied): enable unprivileged user namespaces (sysctl "
        "kernel.unprivileged_userns_clone=1; on Ubuntu 23.10 and later "
        "kernel.apparmor_restrict_unprivileged_userns=0), or set AKGENTIC_SANDBOX_BACKEND=docker"
    )
    missing = BubblewrapBackend(bwrap=str(tmp_path / "nowhere" / "bwrap")).unavailable_reason()
    assert missing == (
        f"bubblewrap could not be started ({tmp_path / 'nowhere' / 'bwrap'}: No such file or "
        f"directory): install it (apt-get install bubblewrap) or set "
        f"AKGENTIC_SANDBOX_BACKEND=docker"
    )
    no_prlimit = BubblewrapBackend(bwrap=cannot)
    no_prlimit.prlimit = ""
    assert no_prlimit.unavailable_reason() == (
        "'prlimit' is not on PATH, and without it the sandbox cannot bound memory: install "
        "util-linux (apt-get install util-linux)"
    )
