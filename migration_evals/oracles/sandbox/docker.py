"""The live sandbox: one hardened Docker container per run, through the docker SDK.

Runs (``SandboxAction.RUN`` and ``RESOLVE``) never mount a folder of the harness for the
tree: each gets a workspace volume of its own (a tmpfs whose size and inode count the
kernel caps), a container that waits, the tree copied in through the engine's archive API,
and the command started in it with ``exec``, so the exit code comes from the engine. The
output is read live with a cap; the wall-clock timeout kills the whole container. Then the
workspace is measured inside the container (``migration_evals.oracles.sandbox.usage``: bytes,
inodes, depth, special and unreadable entries; a run over a limit is not read back), the
container is frozen (a candidate's background process cannot rewrite a report while it is
read), the reports and class-file heads the request names come back as a bounded tar
stream (``migration_evals.oracles.sandbox.archives``), and container and volume are removed. Nothing
the candidate wrote touches the harness's disk, and the same code works with any engine that
speaks the Docker API: a worker in a container, a remote ``DOCKER_HOST``, Podman.

Builds (``SandboxAction.BUILD``) use the engine's builder with the context sent as a
stream, no network, memory limits and the same timeout; a build past its deadline is
cancelled by closing its connection, which makes the engine stop it. A build of a target
stage gets a Dockerfile holding only the stages that target needs.

Starts (``SandboxAction.START``) run a built image as it would run, with
``hardening.start_options``, and stop it at its timeout.

A request's ``output_events`` names how its output is kept; the sandbox is handed the
captures it can use (``captures``, by name, from the ecosystems through the bot) and knows
no report format itself (``migration_evals.oracles.sandbox.capture``).

With an ``ImageSource``, an image the engine lacks is pulled by digest before anything
uses it (``migration_evals.oracles.sandbox.pulls``); without one it is an infrastructure error.

Docker SDK and transport errors become ``SandboxError`` (infrastructure, verdict
``error``); whatever the candidate's code does is a ``SandboxResult``.

``DockerSandbox`` is a thin composition of parts with one job each, over one
``EngineSetup`` (``engine``): image resolution (``image_lookup``), container lifecycle
(``containers``), file transfer (``transfer``), command execution and output capture
(``execution``), resource accounting (``accounting``), dependency caches
(``dependency_caches``), resolution runs through the registry gate (``gate_runs``), image
builds (``image_builds``) and leftovers (``leftovers``).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import docker
from docker.types import Mount

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import (
    ImageConfig,
    ImageRef,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.oracles.sandbox.accounting import ResourceAccounting
from migration_evals.oracles.sandbox.archives import WorkspaceReading
from migration_evals.oracles.sandbox.capture import Capture, Captures, capture_for
from migration_evals.oracles.sandbox.containers import Containers
from migration_evals.oracles.sandbox.dependency_caches import DependencyCaches
from migration_evals.oracles.sandbox.engine import (
    ENGINE_ERRORS,
    KILLED_EXIT,
    EngineSetup,
    Finished,
)
from migration_evals.oracles.sandbox.execution import CommandExecution
from migration_evals.oracles.sandbox.gate_runs import GateRuns
from migration_evals.oracles.sandbox.hardening import UNPRIVILEGED_USER, SandboxLimits
from migration_evals.oracles.sandbox.image_builds import ImageBuilds
from migration_evals.oracles.sandbox.image_lookup import ImageLookup
from migration_evals.oracles.sandbox.leftovers import Leftovers, remove_container, remove_volume
from migration_evals.oracles.sandbox.pulls import ImageSource
from migration_evals.oracles.sandbox.registry import RegistryGate
from migration_evals.oracles.sandbox.transfer import FileTransfer

__all__ = ["DockerSandbox", "default_user"]


def default_user(*, euid: int, uid: int, gid: int) -> str:
    """``nobody`` when the harness is root (it can hand the tree copy over); otherwise the
    harness's own unprivileged user, which already owns the copy."""
    return UNPRIVILEGED_USER if euid == 0 else f"{uid}:{gid}"


class DockerSandbox:
    """The sandbox port on a Docker engine; ``client`` is a ``docker.DockerClient``."""

    identity = "sandbox:docker/3"

    def __init__(
        self,
        client: docker.DockerClient,
        limits: SandboxLimits,
        *,
        user: str = UNPRIVILEGED_USER,
        as_root: bool = False,
        owner: str | None = None,
        poll_s: float = 0.25,
        caches: Path | None = None,
        gate: RegistryGate | None = None,
        source: ImageSource | None = None,
        cache_volumes: bool = False,
        gate_network: str | None = None,
        gate_host: str | None = None,
        captures: Captures | None = None,
    ) -> None:
        owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self.engine = EngineSetup(client, limits, user, as_root, owner, poll_s)
        self.images = ImageLookup(client, source)
        self.leftovers = Leftovers(client, owner)
        # Dependency caches live in folders under ``caches``, named by ``CacheMount.cache``;
        # on an engine that cannot see this machine's folders they are named volumes, and
        # resolution runs join ``gate_network`` to reach the gate at ``gate_host``.
        self.caches = DependencyCaches(self.engine, caches, volumes=cache_volumes, gate=gate)
        self.gate_runs = GateRuns(client, gate, self.caches, network=gate_network, host=gate_host)
        self.execution = CommandExecution(self.engine)
        self.accounting = ResourceAccounting(self.engine)
        self.transfer = FileTransfer(self.engine)
        self.containers = Containers(self.engine, self.caches, self.execution, self.accounting)
        self.builds = ImageBuilds(self.engine)
        # How a request's output is kept, by its ``output_events`` name (head and tail
        # for none): what the report formats' owners declare, handed over by the bot.
        self.captures: Captures = dict(captures or {})

    @property
    def limits(self) -> SandboxLimits:
        return self.engine.limits

    @limits.setter
    def limits(self, limits: SandboxLimits) -> None:
        self.engine.limits = limits  # every part reads them from the one setup

    @property
    def owner(self) -> str:
        return self.engine.owner

    @property
    def gate(self) -> RegistryGate | None:
        return self.gate_runs.gate

    # -- the port ----------------------------------------------------------------------

    def resolve(self, image: str) -> ImageRef:
        return self.images.resolve(image)

    def inspect(self, image: str) -> ImageConfig:
        return self.images.inspect(image)

    def has_cache(self, cache: str) -> bool:
        return self.caches.has_cache(cache)

    @property
    def runs_live(self) -> bool:
        return True

    def reap(self, *, now: float | None = None, alive: Callable[[int], bool] | None = None) -> int:
        """Remove what a crashed harness left behind (``leftovers``)."""
        return self.leftovers.reap(now=now, alive=alive)

    def run(self, request: SandboxRequest) -> SandboxResult:
        if request.action is SandboxAction.START:
            return self.containers.start(request)  # an image as it runs: no tree to copy
        if request.tree is None:
            raise SandboxError("the live sandbox needs the request's tree")
        if request.action is SandboxAction.BUILD:
            return self.builds.build(request)
        if request.action is SandboxAction.RESOLVE:
            return self.gate_runs.resolve(request, self._run_in_container)
        return self._run_in_container(request, request.command, (), None)

    # -- one run: a workspace, a container, the tree in, the command, the reports out ----

    def _run_in_container(
        self,
        request: SandboxRequest,
        command: tuple[str, ...],
        extra: Iterable[Mount],
        network: str | None,
    ) -> SandboxResult:
        started = time.monotonic()
        # Before any container: a name the sandbox has no capture for is its own error.
        output = capture_for(request.output_events, self.limits.output_limit_bytes, self.captures)
        volume = self.containers.workspace(request.timeout_s)
        try:
            container = self.containers.create(request, volume, extra, network)
            try:
                return self._in_container(container, request, command, started, output)
            finally:
                remove_container(container)
        finally:
            remove_volume(self.engine.client, volume)

    def _in_container(
        self,
        container: Any,
        request: SandboxRequest,
        command: tuple[str, ...],
        started: float,
        output: Capture,
    ) -> SandboxResult:
        since = time.time()
        try:
            container.start()
            self.transfer.copy_in(container, request)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot put the tree into the sandbox: {exc}") from exc
        try:
            finished = self.execution.exec(container, request, command, output)
        except SandboxError:
            # A container killed between its start and the command's start fails the
            # exec call; say what happened rather than what the engine answered.
            self.accounting.read_events(container, since, Finished(exit_code=KILLED_EXIT))
            raise
        if not finished.timed_out:
            # Whatever the exit status: a run that filled its workspace and carried on
            # still hit the limit.
            finished.workspace_limit, finished.special = self.accounting.measure(container)
        self.accounting.read_events(container, since, finished)
        reading, limit = self._read_workspace(container, request, finished)
        packages = self.caches.volume_packages(container, request)
        finished.duration_s = time.monotonic() - started
        return SandboxResult(
            exit_code=finished.exit_code,
            output=output.text(),
            artifacts=reading.artifacts,
            duration_s=round(finished.duration_s, 3),
            timed_out=finished.timed_out,
            image_id=request.image_id(),
            output_truncated=output.truncated,
            file_heads=reading.heads,
            oom_killed=finished.oom_killed,
            workspace_exceeded=bool(limit),
            workspace_limit=limit,
            packages=packages,
            special_entries=finished.special,
        )

    def _read_workspace(
        self, container: Any, request: SandboxRequest, finished: Finished
    ) -> tuple[WorkspaceReading, str]:
        """The reports the request names, and the workspace limit the run broke."""
        # Over a limit, nothing in the workspace counts: it is not read. Entries of a
        # special kind alone do not stop the reading (the archive holds no data of
        # theirs and only regular files are read), so a tier can still weigh them
        # against the base commit's own run.
        only_special = bool(finished.special) and finished.workspace_limit == finished.special[0]
        over = finished.workspace_limit and not only_special
        reading = WorkspaceReading() if over else self.transfer.read_back(container, request)
        # A reading cut short is over a limit that no base run excuses.
        limit = finished.workspace_limit if over else ""
        limit = limit or self.accounting.reading_limit(reading) or finished.workspace_limit
        return reading, limit
