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
