"""Container lifecycle on the engine: a run's workspace volume (a tmpfs whose size and
inode count the kernel caps) and its waiting container, and starts of a built image as it
would run (``SandboxAction.START``, ``hardening.start_options``), stopped at its timeout."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

import docker.errors
from docker.types import Mount

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SandboxRequest, SandboxResult
from migration_evals.oracles.sandbox.accounting import ResourceAccounting
from migration_evals.oracles.sandbox.capture import OutputCap
from migration_evals.oracles.sandbox.dependency_caches import DependencyCaches
from migration_evals.oracles.sandbox.engine import ENGINE_ERRORS, EngineSetup
from migration_evals.oracles.sandbox.execution import CommandExecution
from migration_evals.oracles.sandbox.hardening import (
    container_options,
    start_options,
    workspace_volume_options,
)
from migration_evals.oracles.sandbox.leftovers import remove_container

__all__ = ["Containers"]

# What a run's container does until the harness has put the tree in and started the
# command with exec (``sleep`` is in every image with a shell).
_WAITER = ("sleep", "infinity")


class Containers:
    """Workspace volumes and containers made for one run each, labelled for the reaper."""

    def __init__(
        self,
        setup: EngineSetup,
        caches: DependencyCaches,
        execution: CommandExecution,
        accounting: ResourceAccounting,
    ) -> None:
        self._setup = setup
        self._caches = caches
        self._execution = execution
        self._accounting = accounting

    def workspace(self, timeout_s: float) -> str:
        """A fresh workspace volume for one run; its name."""
        name = f"me-ws-{uuid.uuid4().hex}"
        try:
            self._setup.client.volumes.create(
                name=name,
                driver="local",
                driver_opts=workspace_volume_options(self._setup.limits, self._setup.user),
                labels=self._setup.labels(timeout_s),
            )
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox's workspace volume: {exc}") from exc
        return name

    def create(
        self, request: SandboxRequest, volume: str, extra: Iterable[Mount], network: str | None
    ) -> Any:
        """A container over ``volume`` that only waits: the command runs with exec once
        the tree is in."""
        options = container_options(
            self._setup.limits,
            workspace=volume,
            user=self._setup.user,
            labels=self._setup.labels(request.timeout_s),
            extra_mounts=[*self._caches.mounts(request.mounts, request.image_id()), *extra],
            environment=dict(request.environment),
            network=network,
        )
        try:
            return self._setup.client.containers.create(
                request.image_id(), entrypoint=list(_WAITER), **options
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {request.image} is not on the Docker engine") from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox container: {exc}") from exc

    def start(self, request: SandboxRequest) -> SandboxResult:
        """Start ``request.image`` with its own entrypoint (``request.command`` as its CMD,
        when given) and stop it at the timeout; a ``timed_out`` result stayed up."""
        limits = self._setup.limits
        options = start_options(limits, labels=self._setup.labels(request.timeout_s))
        output = OutputCap(limits.output_limit_bytes)
        started = time.monotonic()
        try:
            container = self._setup.client.containers.create(
                request.image_id(), command=list(request.command) or None, **options
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {request.image} is not on the Docker engine") from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the container to start: {exc}") from exc
        since = time.time()
        try:
            finished = self._execution.run_to_end(container, request.timeout_s, output)
            self._accounting.read_events(container, since, finished)
        finally:
            remove_container(container)
        return SandboxResult(
            exit_code=finished.exit_code,
            output=output.text(),
            duration_s=round(time.monotonic() - started, 3),
            timed_out=finished.timed_out,
            image_id=request.image_id(),
            output_truncated=output.truncated,
            oom_killed=finished.oom_killed,
        )
