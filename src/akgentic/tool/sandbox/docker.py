"""DockerBackend: each run in an ephemeral container of the ``akgentic-sandbox`` image.

Through the ``docker`` SDK (the ``docker`` extra), against whatever engine
``docker.from_env()`` finds (``DOCKER_HOST``, else the local socket). A run is one
container, removed afterwards:

- the image's root filesystem read-only, a size-capped tmpfs on ``/tmp``, the tree
  bind-mounted read-write at ``/workspace`` (the working directory);
- ``network_mode="none"`` unless the card allows the network;
- every capability dropped, ``no-new-privileges``, the caller's uid:gid (so what the
  command writes in the tree belongs to the caller);
- ``mem_limit`` and ``pids_limit`` from the limits; the wall-time budget is the wait's
  timeout, after which the container is killed and the run reports ``exit_code`` 124.

The cold start: :meth:`DockerBackend.prepare` builds the image from the repository's
top-level ``sandbox/Dockerfile`` when the engine does not have it, on a thread of its own,
waited on under the caller's cold-start budget. Past it the caller gets
:class:`SandboxNotReadyError` (the build goes on; a later run finds the image), never a slow
run that looks like a finished one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from akgentic.tool.sandbox.backend import (
    SANDBOX_WORKDIR,
    TIMEOUT_EXIT_CODE,
    BoundedOutput,
    ExecLimits,
    ExecResult,
    SandboxNotReadyError,
    SandboxUnavailableError,
    Started,
    sandbox_environment,
)

__all__ = ["DEFAULT_IMAGE", "DockerBackend", "dockerfile_dir"]

logger = logging.getLogger("akgentic.tool.sandbox")

DEFAULT_IMAGE = "akgentic-sandbox:v1"
"""The image tag runs use; ``AKGENTIC_SANDBOX_IMAGE`` overrides it."""


def dockerfile_dir() -> Path:
    """Where the image is built from: ``AKGENTIC_SANDBOX_DOCKERFILE_DIR``, else the
    repository's top-level ``sandbox/`` folder."""
    configured = os.environ.get("AKGENTIC_SANDBOX_DOCKERFILE_DIR", "").strip()
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[4] / "sandbox"


class DockerBackend:
    """Runs commands in ephemeral containers; see the module docstring."""

    name = "docker"

    def __init__(self, image: str | None = None, client: Any = None) -> None:
        self.image = image or os.environ.get("AKGENTIC_SANDBOX_IMAGE", "").strip() or DEFAULT_IMAGE
        self._client = client
        self._lock = threading.Lock()
        self._build: threading.Thread | None = None
        self._build_error: str | None = None
        self._ready = False

    # -- the client -----------------------------------------------------------------------
    def client(self) -> Any:
        """The engine's client (``docker.from_env()``), made once."""
        with self._lock:
            if self._client is None:
                try:
                    import docker  # type: ignore[import-untyped]
                except ImportError:
                    raise SandboxUnavailableError(
                        "the Docker sandbox needs the docker SDK: pip install 'akgentic[docker]'"
                    ) from None
                self._client = docker.from_env()
            return self._client

    def unavailable_reason(self) -> str | None:
        try:
            self.client().ping()
        except SandboxUnavailableError as exc:
            return str(exc)
        except Exception as exc:
            return (
                f"no Docker engine answers ({type(exc).__name__}: {exc}); start dockerd or "
                f"set DOCKER_HOST, or use bubblewrap (AKGENTIC_SANDBOX_BACKEND=bubblewrap)"
            )
        return None

    # -- the cold start ----------------------------------------------------------------------
    def prepare(self, timeout: float) -> None:
        """Make sure the image exists, building it if needed, within ``timeout`` seconds."""
        if self._ready:
            return
        client = self.client()
        try:
            client.images.get(self.image)
            self._ready = True
            return
        except Exception as exc:
            if type(exc).__name__ != "ImageNotFound":
                raise SandboxUnavailableError(f"the Docker engine failed: {exc}") from exc
        with self._lock:
            if self._build is None or (not self._build.is_alive() and self._build_error):
                context = dockerfile_dir()
                if not (context / "Dockerfile").is_file():
                    raise SandboxUnavailableError(
                        f"the image {self.image} is missing and there is no Dockerfile at "
                        f"{context}: build it with 'docker build -t {self.image} sandbox/' "
                        f"from the akgentic repository, or set AKGENTIC_SANDBOX_DOCKERFILE_DIR"
                    )
                self._build_error = None
                self._build = threading.Thread(
                    target=self._build_image, args=(client, context), daemon=True
                )
                self._build.start()
            build = self._build
        build.join(timeout)
        if build.is_alive():
            raise SandboxNotReadyError(
                f"the sandbox image {self.image} is still building after {timeout:.0f}s; "
                f"the build goes on — run the command again in a minute"
            )
        if self._build_error:
            raise SandboxUnavailableError(f"building the sandbox image failed: {self._build_error}")
        self._ready = True

    def _build_image(self, client: Any, context: Path) -> None:
        try:
            client.images.build(path=str(context), dockerfile="Dockerfile", tag=self.image, rm=True)
        except Exception as exc:
            self._build_error = f"{type(exc).__name__}: {exc}"
            logger.warning("building %s failed: %s", self.image, self._build_error)

    # -- the run ------------------------------------------------------------------------------
    def container_spec(self, tree: Path, command: str, limits: ExecLimits) -> dict[str, Any]:
        """The arguments of ``containers.create`` for one run (no engine needed to build them)."""
        return {
            "image": self.image,
            "command": ["/bin/sh", "-c", command],
            "working_dir": SANDBOX_WORKDIR,
            "volumes": {str(tree.resolve()): {"bind": SANDBOX_WORKDIR, "mode": "rw"}},
            "read_only": True,
            "tmpfs": {"/tmp": f"size={min(limits.memory_mb, 256)}m"},
            "network_mode": "bridge" if limits.network else "none",
            "mem_limit": f"{limits.memory_mb}m",
            "memswap_limit": f"{limits.memory_mb}m",
            "pids_limit": limits.max_processes,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "user": f"{os.getuid()}:{os.getgid()}",
            "environment": sandbox_environment({"HOME": "/tmp"}),
            "detach": True,
            "stdin_open": False,
            "tty": False,
        }

    def run(
        self,
        tree: Path,
        command: str,
        limits: ExecLimits,
        started: Started | None = None,
    ) -> ExecResult:
        client = self.client()
        output = BoundedOutput(limits.max_output_chars)
        container = client.containers.create(**self.container_spec(tree, command, limits))
        begin = time.monotonic()
        timed_out = False
        try:
            container.start()

            def kill() -> None:
                try:
                    container.kill()
                except Exception as exc:  # already gone
                    logger.debug("killing %s: %r", container.id, exc)

            if started is not None:
                started(kill)
            try:
                status = container.wait(timeout=limits.timeout_seconds)
                code = int(status.get("StatusCode", 1))
            except Exception as exc:  # the client's read timeout: the budget is spent
                if (
                    "timed out" not in str(exc).lower()
                    and "timeout" not in type(exc).__name__.lower()
                ):
                    raise
                timed_out = True
                kill()
                code = TIMEOUT_EXIT_CODE
            for chunk in container.logs(stdout=True, stderr=True, stream=True, follow=False):
                output.feed(chunk)
        finally:
            try:
                container.remove(force=True)
            except Exception as exc:
                logger.warning("could not remove sandbox container %s: %r", container.id, exc)
        text, omitted = output.text()
        return ExecResult(
            exit_code=code,
            output=text,
            duration_seconds=round(time.monotonic() - begin, 3),
            timed_out=timed_out,
            truncated_chars=omitted,
            backend=self.name,
        )
