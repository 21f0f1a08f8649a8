"""The Docker backend: everything around the engine with a stand-in client, and the engine
itself when one answers (skipped otherwise, saying how to enable it)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from akgentic.tool.sandbox import (
    TIMEOUT_EXIT_CODE,
    DockerBackend,
    ExecLimits,
    SandboxNotReadyError,
    SandboxUnavailableError,
)

# -- a stand-in engine client (the SDK's shape: ping, images.get/build, containers.create) ---


class ImageNotFound(Exception):  # noqa: N818 — the SDK's name, matched by name
    pass


class ReadTimeout(Exception):  # noqa: N818 — requests' name
    pass


class FakeContainer:
    def __init__(self, client: FakeClient, spec: dict[str, Any]) -> None:
        self.client, self.spec, self.id = client, spec, "c0ffee"
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")

    def wait(self, timeout: float) -> dict[str, int]:
        self.calls.append(f"wait {timeout:g}")
        if self.client.hang:
            raise ReadTimeout("Read timed out. (read timeout=1)")
        return {"StatusCode": self.client.exit_code}

    def kill(self) -> None:
        self.calls.append("kill")

    def logs(self, **kwargs: Any) -> list[bytes]:
        self.calls.append("logs")
        return [b"hello ", b"from the container\n"]

    def remove(self, force: bool) -> None:
        self.calls.append("remove")


class FakeImages:
    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.built: list[dict[str, Any]] = []

    def get(self, tag: str) -> object:
        if not self.client.has_image:
            raise ImageNotFound(tag)
        return object()

    def build(self, **kwargs: Any) -> None:
        self.client.build_may_finish.wait(30)
        self.built.append(kwargs)
        self.client.has_image = True


class FakeContainers:
    def __init__(self, client: FakeClient) -> None:
        self.client = client
        self.made: list[FakeContainer] = []

    def create(self, **spec: Any) -> FakeContainer:
        container = FakeContainer(self.client, spec)
        self.made.append(container)
        return container


class FakeClient:
    def __init__(self, *, has_image: bool = True, answers: bool = True) -> None:
        self.has_image, self.answers = has_image, answers
        self.hang, self.exit_code = False, 0
        self.build_may_finish = threading.Event()
        self.images, self.containers = FakeImages(self), FakeContainers(self)

    def ping(self) -> bool:
        if not self.answers:
            raise ConnectionError("Error while fetching server API version")
        return True


# -- around the engine -------------------------------------------------------------------------


def test_the_container_spec_isolates_and_bounds_the_run(tmp_path: Path) -> None:
    spec = DockerBackend(client=FakeClient()).container_spec(
        tmp_path, "ls", ExecLimits(memory_mb=256, max_processes=32)
    )
    assert spec["command"] == ["/bin/sh", "-c", "ls"]
    assert spec["volumes"] == {str(tmp_path.resolve()): {"bind": "/workspace", "mode": "rw"}}
    assert spec["working_dir"] == "/workspace" and spec["read_only"] is True
    assert spec["network_mode"] == "none"
    assert (spec["mem_limit"], spec["pids_limit"]) == ("256m", 32)
    assert spec["cap_drop"] == ["ALL"] and spec["security_opt"] == ["no-new-privileges"]
    assert spec["user"] == f"{os.getuid()}:{os.getgid()}"
    assert "/tmp" in spec["tmpfs"] and spec["image"] == "akgentic-sandbox:v1"
    allowed = DockerBackend(client=FakeClient()).container_spec(
        tmp_path, "ls", ExecLimits(network=True)
    )
    assert allowed["network_mode"] == "bridge"


def test_no_engine_is_a_reason_saying_how_to_enable_one() -> None:
    reason = DockerBackend(client=FakeClient(answers=False)).unavailable_reason()
    assert reason is not None and "no Docker engine answers" in reason
    assert "DOCKER_HOST" in reason
    assert DockerBackend(client=FakeClient()).unavailable_reason() is None


def test_without_the_sdk_the_reason_is_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_docker(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "docker":
            raise ImportError("No module named 'docker'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_docker)
    reason = DockerBackend().unavailable_reason()
    assert reason is not None and "pip install 'akgentic[docker]'" in reason


def test_a_cold_start_past_its_budget_is_a_clear_failure_then_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Dockerfile").write_text("FROM scratch\n")
    monkeypatch.setenv("AKGENTIC_SANDBOX_DOCKERFILE_DIR", str(tmp_path))
    client = FakeClient(has_image=False)
    backend = DockerBackend(client=client)
    with pytest.raises(SandboxNotReadyError, match="still building after 0s"):
        backend.prepare(0.2)  # the build waits on the test: it cannot be done yet
    client.build_may_finish.set()
    backend.prepare(30)
    assert client.images.built == [
        {
            "path": str(tmp_path),
            "dockerfile": "Dockerfile",
            "tag": "akgentic-sandbox:v1",
            "rm": True,
        }
    ]


def test_a_missing_image_without_a_dockerfile_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_SANDBOX_DOCKERFILE_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(SandboxUnavailableError, match="docker build -t akgentic-sandbox:v1"):
        DockerBackend(client=FakeClient(has_image=False)).prepare(1)


def test_a_run_reports_the_exit_code_and_output_and_removes_the_container(tmp_path: Path) -> None:
    client = FakeClient()
    client.exit_code = 3
    starts: list[object] = []
    result = DockerBackend(client=client).run(
        tmp_path, "false", ExecLimits(timeout_seconds=7), lambda kill: starts.append(kill)
    )
    assert (result.exit_code, result.output, result.backend) == (
        3,
        "hello from the container\n",
        "docker",
    )
    [container] = client.containers.made
    assert container.calls == ["start", "wait 7", "logs", "remove"]
    assert len(starts) == 1


def test_a_run_past_its_budget_is_killed_with_exit_124(tmp_path: Path) -> None:
    client = FakeClient()
    client.hang = True
    result = DockerBackend(client=client).run(tmp_path, "sleep 99", ExecLimits(timeout_seconds=1))
    assert result.exit_code == TIMEOUT_EXIT_CODE and result.timed_out
    assert client.containers.made[0].calls == ["start", "wait 1", "kill", "logs", "remove"]


# -- the engine itself --------------------------------------------------------------------------


def _engine_reason() -> str | None:
    return DockerBackend().unavailable_reason()


ENGINE_REASON = _engine_reason()
needs_engine = pytest.mark.skipif(
    ENGINE_REASON is not None,
    reason=f"needs a Docker engine (set DOCKER_HOST or start dockerd): {ENGINE_REASON}",
)


@needs_engine
def test_engine_runs_in_the_tree_without_network(tmp_path: Path) -> None:
    backend = DockerBackend()
    backend.prepare(600)
    result = backend.run(tmp_path, "echo hi > made.txt && cat made.txt && pwd", ExecLimits())
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["hi", "/workspace"]
    assert (tmp_path / "made.txt").read_text() == "hi\n"
    code = """
import socket
try:
    socket.create_connection(("1.1.1.1", 53), 2)
    print("reached")
except OSError:
    print("blocked")
"""
    (tmp_path / "net.py").write_text(code)
    assert backend.run(tmp_path, "python3 net.py", ExecLimits()).output.strip() == "blocked"


@needs_engine
def test_engine_kills_at_the_budget_and_writes_nowhere_else(tmp_path: Path) -> None:
    backend = DockerBackend()
    backend.prepare(600)
    result = backend.run(tmp_path, "sleep 30", ExecLimits(timeout_seconds=1))
    assert result.exit_code == TIMEOUT_EXIT_CODE and result.timed_out
    refused = backend.run(tmp_path, "touch /usr/x || echo refused", ExecLimits())
    assert "refused" in refused.output
