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

With an ``ImageSource``, an image the engine lacks is pulled by digest before anything
uses it (``migration_evals.oracles.sandbox.pulls``); without one it is an infrastructure error.

Docker SDK and transport errors become ``SandboxError`` (infrastructure, verdict
``error``); whatever the candidate's code does is a ``SandboxResult``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import os
import re
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import docker
import docker.errors
import requests
from docker.types import Mount

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import (
    SANDBOX_WORKDIR,
    CacheMount,
    ImageConfig,
    ImageRef,
    RegistryFetch,
    SandboxAction,
    SandboxRequest,
    SandboxResult,
)
from migration_evals.oracles.dockerfile_model import read_dockerfile
from migration_evals.oracles.sandbox.archives import (
    WorkspaceReading,
    jar_packages_in_stream,
    read_workspace,
)
from migration_evals.oracles.sandbox.as_of import parse_as_of
from migration_evals.oracles.sandbox.capture import Capture, OutputCap, capture_for
from migration_evals.oracles.sandbox.commands import (
    build_arguments,
    build_target,
    dockerfile_in_context,
)
from migration_evals.oracles.sandbox.files import jar_packages, link_to_store, remove_tree
from migration_evals.oracles.sandbox.hardening import (
    DEADLINE_LABEL,
    OWNER_LABEL,
    SANDBOX_LABEL,
    UNPRIVILEGED_USER,
    SandboxLimits,
    build_limits,
    container_options,
    start_options,
    workspace_volume_options,
)
from migration_evals.oracles.sandbox.inspection import image_config
from migration_evals.oracles.sandbox.pulls import ImageSource, pull_by_digest
from migration_evals.oracles.sandbox.registry import GATE_PORT, GATE_SOCKET, RegistryGate
from migration_evals.oracles.sandbox.usage import (
    TreeLimits,
    limit_hit,
    measure_command,
    special_entries,
)

__all__ = ["DockerSandbox", "default_user"]

log = logging.getLogger(__name__)

_ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
# A dead harness's containers are stale once their own timeout and this grace have passed.
_GRACE_S = 120
_BUILT = re.compile(r"Successfully built ([0-9a-f]{12,64})")
_KILLED_EXIT = 137
# The first wait between the end of a command's output and the engine's word that it
# exited; doubled up to the poll interval while the command runs on.
_EXIT_SETTLE_S = 0.01
# What a run's container does until the harness has put the tree in and started the
# command with exec (``sleep`` is in every image with a shell).
_WAITER = ("sleep", "infinity")
_GATE_DIR = "/run/registry"
_TMP = "/tmp"  # noqa: S108 - the container's own private tmpfs, not the host's /tmp
_CACHE_LABEL = "org.migration-evals.cache"


def _forwarder(target: str) -> str:
    """A resolution run's command starts behind a forwarder from the container's own
    loopback to the registry gate (``target``, a socat address: the gate's Unix socket, or
    its TCP port on the run's network), once it listens."""
    return (
        f"socat TCP-LISTEN:{GATE_PORT},bind=127.0.0.1,reuseaddr,fork {target} & "
        f'for _ in $(seq 100); do grep -q ":{GATE_PORT:04X} " /proc/net/tcp && break; '
        "sleep 0.05; done; "
        'exec "$@"'
    )


def default_user(*, euid: int, uid: int, gid: int) -> str:
    """``nobody`` when the harness is root (it can hand the tree copy over); otherwise the
    harness's own unprivileged user, which already owns the copy."""
    return UNPRIVILEGED_USER if euid == 0 else f"{uid}:{gid}"


@dataclass
class _Finished:
    """How a container's run ended, as observed by the harness (never by the container)."""

    exit_code: int
    timed_out: bool = False
    workspace_limit: str = ""  # the workspace limit the run broke, named; empty: none
    special: tuple[str, ...] = ()  # entries of a special kind it left in the workspace
    oom_killed: bool = False
    duration_s: float = 0.0


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
        workspace_check_s: float = 2.0,
        caches: Path | None = None,
        gate: RegistryGate | None = None,
        source: ImageSource | None = None,
        cache_volumes: bool = False,
        gate_network: str | None = None,
        gate_host: str | None = None,
    ) -> None:
        self.client = client
        self.source = source
        # An engine that cannot see this machine's folders: caches are named volumes, and
        # resolution runs join ``gate_network`` to reach the gate at ``gate_host``.
        self.cache_volumes = cache_volumes
        self.gate_network = gate_network
        self.gate_host = gate_host
        # Dependency caches live in folders under ``caches``, named by ``CacheMount.cache``.
        self.caches = caches
        self.gate = gate
        self.limits = limits
        self.user = user
        self.as_root = as_root
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}"
        self.poll_s = poll_s
        self.workspace_check_s = workspace_check_s
        self._resolved: dict[str, ImageRef] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        # Build responses are captured per thread so a timed-out build can be cancelled.
        client.api.hooks["response"].append(self._capture_response)

    # -- images ------------------------------------------------------------------------

    def resolve(self, image: str) -> ImageRef:
        with self._lock:
            known = self._resolved.get(image)
        if known is not None:
            return known
        try:
            local = self.client.images.get(image)
            digests = local.attrs.get("RepoDigests") or [""]
            found = ImageRef(image, str(local.id), digest=str(digests[0]))
        except docker.errors.ImageNotFound as exc:
            if self.source is None:
                raise SandboxError(
                    f"image {image} is not on the Docker engine; build it with "
                    "`migration-evals images build`, point the recipe at an image you have, "
                    "or name a registry to pull from (MIGRATION_EVALS_IMAGE_REGISTRY)"
                ) from exc
            found = pull_by_digest(self.client, image, self.source)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"the Docker engine did not answer: {exc}") from exc
        with self._lock:
            self._resolved[image] = found
        return found

    def inspect(self, image: str) -> ImageConfig:
        try:
            return image_config(self.client.api.inspect_image(image))
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {image} is not on the Docker engine") from exc
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot inspect image {image}: {exc}") from exc

    # -- leftovers ---------------------------------------------------------------------

    def reap(self, *, now: float | None = None, alive: Callable[[int], bool] | None = None) -> int:
        """Remove labelled containers (and their workspace volumes) a crashed harness left
        behind; returns how many containers.

        A container is left behind when its deadline passed, or when its owner ran on
        this host and that process is gone. A live harness's containers are never touched.
        """
        now = time.time() if now is None else now
        alive = alive or _process_alive
        host = self.owner.rsplit(":", 1)[0]
        try:
            containers = self.client.containers.list(
                all=True, filters={"label": SANDBOX_LABEL}, ignore_removed=True
            )
            removed = 0
            for container in containers:
                if _stale(container.labels, now, host, alive):
                    removed += _removed_by_us(container.remove, force=True, v=True)
            for volume in self.client.volumes.list(filters={"label": SANDBOX_LABEL}):
                if _stale(volume.attrs.get("Labels") or {}, now, host, alive):
                    _removed_by_us(volume.remove, force=True)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot clean up old sandbox containers: {exc}") from exc
        if removed:
            log.warning("removed %d sandbox container(s) left by an earlier crash", removed)
        return removed

    # -- runs --------------------------------------------------------------------------

    def run(self, request: SandboxRequest) -> SandboxResult:
        if request.action is SandboxAction.START:
            return self._start(request)  # an image as it runs: no tree to copy
        if request.tree is None:
            raise SandboxError("the live sandbox needs the request's tree")
        if request.action is SandboxAction.BUILD:
            return self._build(request)
        if request.action is SandboxAction.RESOLVE:
            return self._resolve(request)
        return self._run(request)

    def _resolve(self, request: SandboxRequest) -> SandboxResult:
        """A run whose only way out is a fresh registry gate session; what went through
        the gate comes back with the result."""
        if self.gate is None:
            raise SandboxError(
                "dependency resolution needs the registry gate, which this sandbox was "
                "not given (see the dependency settings in the README)"
            )
        host = self._gate_address() if self.gate_network else None
        as_of = parse_as_of(request.registry_as_of) if request.registry_as_of else None
        with self.gate.session_for_run(host, as_of=as_of) as session:
            if host is None:
                target = f"UNIX-CONNECT:{_GATE_DIR}/{GATE_SOCKET}"
                extra = [
                    Mount(target=_GATE_DIR, source=str(session.folder), type="bind", read_only=True)
                ]
            else:
                address, port = session.address
                target, extra = f"TCP:{address}:{port}", []
            command = ("sh", "-c", _forwarder(target), "resolve", *request.command)
            result = self._run(request, command=command, extra=extra, network=self.gate_network)
            fetches: tuple[RegistryFetch, ...] = session.fetches
        self._link_to_store(request)
        packages = result.packages or self._packages(request)
        return dataclasses.replace(result, fetches=fetches, packages=packages)

    def _gate_address(self) -> str:
        """Where resolution runs on ``gate_network`` reach the gate: the configured host,
        or the network's gateway (this machine, when the harness runs beside the engine)."""
        if self.gate_host:
            return self.gate_host
        try:
            network = self.client.networks.get(self.gate_network)
            return str(network.attrs["IPAM"]["Config"][0]["Gateway"])
        except (KeyError, IndexError, *_ENGINE_ERRORS) as exc:
            raise SandboxError(
                f"cannot find where runs on network {self.gate_network!r} reach the registry "
                f"gate ({exc}); set MIGRATION_EVALS_GATE_HOST"
            ) from exc

    def _link_to_store(self, request: SandboxRequest) -> None:
        """One copy on disk of each artifact: a fresh repository's files become links to
        the gate's store (what the registry served, whatever the run wrote)."""
        if self.gate is None or self.caches is None or self.cache_volumes:
            return
        for mount in request.mounts:
            if mount.fresh and mount.writable:
                folder = self.caches / _cache_folder(mount.cache) / "repository"
                link_to_store(folder, self.gate.store)

    def _packages(self, request: SandboxRequest) -> tuple[str, ...]:
        """The packages in the jars a fresh cache folder now holds (what the build can
        import); volumes are read while their run's container is still there."""
        found: set[str] = set()
        for mount in request.mounts:
            if (
                mount.fresh
                and mount.writable
                and self.caches is not None
                and not self.cache_volumes
            ):
                found.update(jar_packages(self.caches / _cache_folder(mount.cache)))
        return tuple(sorted(found))

    def has_cache(self, cache: str) -> bool:
        if self.cache_volumes:
            try:
                self.client.volumes.get(_cache_volume(cache))
            except docker.errors.NotFound:
                return False
            except _ENGINE_ERRORS as exc:
                raise SandboxError(f"the Docker engine did not answer: {exc}") from exc
            return True
        return self.caches is not None and (self.caches / _cache_folder(cache)).is_dir()

    def _cache_mounts(self, mounts: Iterable[CacheMount], image: str) -> list[Mount]:
        """Mounts of the dependency caches (folders bound from this machine, or named
        volumes), made and handed to the container's user on first use."""
        if self.cache_volumes:
            return [self._cache_volume_mount(mount, image) for mount in mounts]
        found = []
        for mount in mounts:
            if self.caches is None:
                raise SandboxError("this sandbox has no folder for dependency caches")
            folder = self.caches / _cache_folder(mount.cache)
            if mount.fresh and mount.writable:
                remove_tree(folder)
            if not folder.is_dir():
                folder.mkdir(parents=True, exist_ok=True)
                if self.as_root:
                    uid, gid = _ids(self.user)
                    os.chown(folder, uid, gid)
            found.append(
                Mount(
                    target=mount.target,
                    source=str(folder),
                    type="bind",
                    read_only=not mount.writable,
                )
            )
        return found

    def _cache_volume_mount(self, mount: CacheMount, image: str) -> Mount:
        name = _cache_volume(mount.cache)
        try:
            if mount.fresh and mount.writable:
                with contextlib.suppress(docker.errors.NotFound):
                    self.client.volumes.get(name).remove(force=True)
            try:
                self.client.volumes.get(name)
            except docker.errors.NotFound:
                self.client.volumes.create(name=name, labels={_CACHE_LABEL: mount.cache})
                self._hand_over(name, mount.target, image)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot prepare the dependency cache {mount.cache}: {exc}") from exc
        return Mount(target=mount.target, source=name, type="volume", read_only=not mount.writable)

    def _hand_over(self, volume: str, target: str, image: str) -> None:
        """Make a new cache volume the run's user's (a new volume belongs to root)."""
        self.client.containers.run(
            image,
            entrypoint=["chown", self.user, target],
            user="0:0",
            mounts=[Mount(target=target, source=volume, type="volume")],
            network_mode="none",
            network_disabled=True,
            cap_drop=["ALL"],
            cap_add=["CHOWN"],
            labels=self._labels(60),
            remove=True,
        )

    def _labels(self, timeout_s: float) -> dict[str, str]:
        return {
            SANDBOX_LABEL: "run",
            OWNER_LABEL: self.owner,
            DEADLINE_LABEL: str(int(time.time() + timeout_s + _GRACE_S)),
        }

    def _run(
        self,
        request: SandboxRequest,
        *,
        command: tuple[str, ...] | None = None,
        extra: Iterable[Mount] = (),
        network: str | None = None,
    ) -> SandboxResult:
        started = time.monotonic()
        volume = self._workspace(request.timeout_s)
        try:
            container = self._create(request, volume, extra, network)
            try:
                return self._in_container(container, request, command or request.command, started)
            finally:
                self._remove(container)
        finally:
            self._remove_volume(volume)

    def _workspace(self, timeout_s: float) -> str:
        """A fresh workspace volume for one run; its name."""
        name = f"me-ws-{uuid.uuid4().hex}"
        try:
            self.client.volumes.create(
                name=name,
                driver="local",
                driver_opts=workspace_volume_options(self.limits, self.user),
                labels=self._labels(timeout_s),
            )
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox's workspace volume: {exc}") from exc
        return name

    def _create(
        self, request: SandboxRequest, volume: str, extra: Iterable[Mount], network: str | None
    ) -> Any:
        options = container_options(
            self.limits,
            workspace=volume,
            user=self.user,
            labels=self._labels(request.timeout_s),
            extra_mounts=[*self._cache_mounts(request.mounts, request.image_id()), *extra],
            environment=dict(request.environment),
            network=network,
        )
        try:
            # The container only waits: the command runs with exec once the tree is in.
            return self.client.containers.create(
                request.image_id(), entrypoint=list(_WAITER), **options
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {request.image} is not on the Docker engine") from exc
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox container: {exc}") from exc

    def _in_container(
        self, container: Any, request: SandboxRequest, command: tuple[str, ...], started: float
    ) -> SandboxResult:
        since = time.time()
        try:
            container.start()
            self._copy_in(container, request)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot put the tree into the sandbox: {exc}") from exc
        output = capture_for(request.output_events, self.limits.output_limit_bytes)
        try:
            finished = self._exec(container, request, command, output)
        except SandboxError:
            # A container killed between its start and the command's start fails the
            # exec call; say what happened rather than what the engine answered.
            self._read_events(container, since, _Finished(exit_code=_KILLED_EXIT))
            raise
        if not finished.timed_out:
            # Whatever the exit status: a run that filled its workspace and carried on
            # still hit the limit.
            finished.workspace_limit, finished.special = self._measure(container)
        self._read_events(container, since, finished)
        # Over a limit, nothing in the workspace counts: it is not read. Entries of a
        # special kind alone do not stop the reading (the archive holds no data of
        # theirs and only regular files are read), so a tier can still weigh them
        # against the base commit's own run.
        only_special = bool(finished.special) and finished.workspace_limit == finished.special[0]
        over = finished.workspace_limit and not only_special
        reading = WorkspaceReading() if over else self._read_back(container, request)
        packages = self._volume_packages(container, request)
        finished.duration_s = time.monotonic() - started
        # A reading cut short is over a limit that no base run excuses.
        limit = finished.workspace_limit if over else ""
        limit = limit or self._reading_limit(reading) or finished.workspace_limit
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

    def _volume_packages(self, container: Any, request: SandboxRequest) -> tuple[str, ...]:
        """For a resolution run into a fresh cache volume: the packages of its jars, read
        back from the (frozen) container before it goes."""
        fresh = [m for m in request.mounts if m.fresh and m.writable]
        if not self.cache_volumes or request.action is not SandboxAction.RESOLVE or not fresh:
            return ()
        found: set[str] = set()
        try:
            _freeze(container)
            for mount in fresh:
                chunks, _stat = container.get_archive(f"{mount.target}/repository")
                found.update(jar_packages_in_stream(chunks))
        except docker.errors.NotFound:
            return tuple(sorted(found))
        except (tarfile.TarError, *_ENGINE_ERRORS) as exc:
            raise SandboxError(f"cannot read the dependency cache back: {exc}") from exc
        return tuple(sorted(found))

    def _copy_in(self, container: Any, request: SandboxRequest) -> None:
        assert request.tree is not None
        uid, gid = _ids(self.user)
        with request.tree(uid, gid, "") as archive:
            if not container.put_archive(SANDBOX_WORKDIR, archive):
                raise SandboxError("the engine refused the tree")

    def _exec(
        self, container: Any, request: SandboxRequest, command: tuple[str, ...], output: Capture
    ) -> _Finished:
        """Run ``command`` in the container and wait for it; kill the container at the
        deadline. The exit code is the engine's, never anything the code printed."""
        workdir = _relative(request.workdir)
        try:
            exec_id = self.client.api.exec_create(
                container.id,
                list(command),
                user=self.user,
                workdir=f"{SANDBOX_WORKDIR}/{workdir}" if workdir else SANDBOX_WORKDIR,
                environment=dict(request.environment),
            )["Id"]
            stream = self.client.api.exec_start(exec_id, stream=True)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"the sandbox could not start the command: {exc}") from exc
        reader = threading.Thread(target=_drain, args=(stream, output), daemon=True)
        reader.start()
        finished = self._wait(container, exec_id, request.timeout_s, reader)
        # What the command printed is in; a process it left behind may hold the stream.
        reader.join(timeout=2)
        return finished

    def _wait(
        self, container: Any, exec_id: str, timeout_s: float, reader: threading.Thread
    ) -> _Finished:
        deadline = time.monotonic() + timeout_s
        settle = _EXIT_SETTLE_S
        while True:
            try:
                info = self.client.api.exec_inspect(exec_id)
            except _ENGINE_ERRORS as exc:
                raise SandboxError(f"lost track of the sandboxed command: {exc}") from exc
            if not info.get("Running") and info.get("ExitCode") is not None:
                return _Finished(exit_code=int(info["ExitCode"]))
            if time.monotonic() >= deadline:
                _kill(container)
                return _Finished(exit_code=_KILLED_EXIT, timed_out=True)
            # The output stream ends when the command does: wake then rather than up to
            # a poll later, which a short build felt as a tenth of its time. A command
            # that closed its output and carries on is polled less and less often.
            if reader.is_alive():
                reader.join(timeout=min(self.poll_s, max(0.0, deadline - time.monotonic())))
            else:
                time.sleep(settle)
                settle = min(2 * settle, self.poll_s)

    def _tree_limits(self) -> TreeLimits:
        limits = self.limits
        return TreeLimits(
            workspace=SANDBOX_WORKDIR,
            tmp=_TMP,
            workspace_mb=limits.workspace_mb,
            workspace_inodes=limits.workspace_inodes,
            tmpfs_mb=limits.tmpfs_mb,
            max_depth=limits.workspace_depth,
        )

    def _measure(self, container: Any) -> tuple[str, tuple[str, ...]]:
        """The workspace or /tmp limit the finished run broke
        (``migration_evals.oracles.sandbox.usage``),
        measured in its container, and the entries of a special kind it left; empty when
        none, or when it cannot answer any more."""
        tree = self._tree_limits()
        try:
            done = container.exec_run(measure_command(tree), user=self.user)
        except _ENGINE_ERRORS:
            return "", ()
        output = done.output.decode("utf-8", "replace")
        return limit_hit(output, tree), special_entries(output)

    def _reading_limit(self, reading: WorkspaceReading) -> str:
        """A workspace the harness could not read to the end is over its limits too."""
        if reading.too_deep:
            return f"workspace depth ({self.limits.workspace_depth} folders)"
        if not reading.complete:
            return f"workspace entries ({reading.members - 1})"
        return ""

    def _read_events(self, container: Any, since: float, finished: _Finished) -> None:
        """OOM kills (the engine reports them on cgroup v1 and v2 alike) and kills the
        harness did not send: the candidate's code cannot signal its container from inside,
        so those are infrastructure."""
        try:
            events = list(
                self.client.events(
                    since=since,
                    until=time.time(),
                    filters={"container": container.id, "event": ["kill", "oom"]},
                    decode=True,
                )
            )
            container.reload()
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read the sandbox container's events: {exc}") from exc
        state = container.attrs.get("State", {})
        finished.oom_killed = any(e.get("Action") == "oom" for e in events) or bool(
            state.get("OOMKilled", False)
        )
        kills = [e for e in events if e.get("Action") == "kill"]
        if kills and not finished.timed_out:
            signal = kills[0].get("Actor", {}).get("Attributes", {}).get("signal", "?")
            raise SandboxError(f"the sandbox container was killed from outside (signal {signal})")

    def _read_back(self, container: Any, request: SandboxRequest) -> WorkspaceReading:
        """The reports and class-file heads the request names, from the frozen workspace."""
        if not request.collect and not request.inspect:
            return WorkspaceReading()
        workdir = _relative(request.workdir)
        path = f"{SANDBOX_WORKDIR}/{workdir}" if workdir else SANDBOX_WORKDIR
        cap = self.limits.output_limit_bytes
        try:
            if not _freeze(container):
                return WorkspaceReading()  # gone with its container: nothing to read
            chunks, _stat = container.get_archive(path)
            return read_workspace(
                chunks,
                collect=request.collect,
                inspect=request.inspect,
                per_file=cap,
                total=4 * cap,
                max_depth=self.limits.workspace_depth,
            )
        except docker.errors.NotFound:
            return WorkspaceReading()  # the folder was never made (the run stopped early)
        except (tarfile.TarError, *_ENGINE_ERRORS) as exc:
            raise SandboxError(f"cannot read the sandbox's workspace back: {exc}") from exc

    @staticmethod
    def _remove(container: Any) -> None:
        try:
            container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except _ENGINE_ERRORS as exc:
            # Labelled: the next start-up's reap removes it.
            log.warning("could not remove sandbox container %s: %s", container.id, exc)

    def _remove_volume(self, name: str) -> None:
        for attempt in range(3):
            try:
                self.client.volumes.get(name).remove(force=True)
                return
            except docker.errors.NotFound:
                return
            except _ENGINE_ERRORS as exc:
                if attempt == 2:  # labelled: the next start-up's reap removes it
                    log.warning("could not remove workspace volume %s: %s", name, exc)
                time.sleep(0.2)

    # -- starts (the image contract of Dockerfile recipes) --------------------------------

    def _start(self, request: SandboxRequest) -> SandboxResult:
        """Start ``request.image`` with its own entrypoint (``request.command`` as its CMD,
        when given) and stop it at the timeout; a ``timed_out`` result stayed up."""
        options = start_options(self.limits, labels=self._labels(request.timeout_s))
        output = OutputCap(self.limits.output_limit_bytes)
        started = time.monotonic()
        try:
            container = self.client.containers.create(
                request.image_id(), command=list(request.command) or None, **options
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {request.image} is not on the Docker engine") from exc
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the container to start: {exc}") from exc
        since = time.time()
        try:
            finished = self._run_to_end(container, request.timeout_s, output)
            self._read_events(container, since, finished)
        finally:
            self._remove(container)
        return SandboxResult(
            exit_code=finished.exit_code,
            output=output.text(),
            duration_s=round(time.monotonic() - started, 3),
            timed_out=finished.timed_out,
            image_id=request.image_id(),
            output_truncated=output.truncated,
            oom_killed=finished.oom_killed,
        )

    def _run_to_end(self, container: Any, timeout_s: float, output: OutputCap) -> _Finished:
        """Start a created container, read its output, and wait for it to exit; kill it at
        the deadline. The exit code comes from the engine."""
        try:
            stream = container.attach(stdout=True, stderr=True, stream=True, logs=False)
            reader = threading.Thread(target=_drain, args=(stream, output), daemon=True)
            reader.start()
            container.start()
            deadline = time.monotonic() + timeout_s
            while True:
                container.reload()
                if container.status in ("exited", "dead"):
                    code = container.attrs.get("State", {}).get("ExitCode", _KILLED_EXIT)
                    finished = _Finished(exit_code=int(code))
                    break
                if time.monotonic() >= deadline:
                    _kill(container)
                    finished = _Finished(exit_code=_KILLED_EXIT, timed_out=True)
                    break
                time.sleep(self.poll_s)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"the started image could not be followed: {exc}") from exc
        reader.join(timeout=2)
        return finished

    # -- builds ------------------------------------------------------------------------

    def _capture_response(self, response: requests.Response, *_: Any, **__: Any) -> None:
        sink = getattr(self._local, "responses", None)
        if sink is not None:
            sink.append(response)

    def _build(self, request: SandboxRequest) -> SandboxResult:
        dockerfile, context = build_arguments(request.command)
        target = build_target(request.command)
        output = OutputCap(self.limits.output_limit_bytes)
        outcome: dict[str, Any] = {}
        responses: list[requests.Response] = []
        started = time.monotonic()

        def build() -> None:
            self._local.responses = responses
            try:
                assert request.tree is not None
                with request.tree(0, 0, context) as archive:
                    name = _stages_to_build(
                        archive, dockerfile_in_context(dockerfile, context), target
                    )
                    outcome.update(
                        self._stream_build(archive, name, target, output, request.timeout_s)
                    )
            except BaseException as exc:  # handed to the harness thread below
                outcome["exception"] = exc
            finally:
                self._local.responses = None

        worker = threading.Thread(target=build, daemon=True)
        worker.start()
        worker.join(request.timeout_s)
        timed_out = worker.is_alive()
        if timed_out:
            _cancel(responses)
            worker.join(60)
        duration = round(time.monotonic() - started, 3)
        if timed_out:
            return SandboxResult(
                _KILLED_EXIT,
                output.text(),
                duration_s=duration,
                timed_out=True,
                output_truncated=output.truncated,
            )
        if "exception" in outcome:
            raise SandboxError(f"the image build failed to run: {outcome['exception']}")
        return SandboxResult(
            exit_code=int(outcome["exit_code"]),
            output=output.text(),
            duration_s=duration,
            image_id=str(outcome.get("image_id", "")),
            output_truncated=output.truncated,
        )

    def _stream_build(
        self,
        context: IO[bytes],
        dockerfile: str,
        target: str | None,
        output: OutputCap,
        timeout_s: float,
    ) -> dict[str, Any]:
        stream = self.client.api.build(
            fileobj=context,
            custom_context=True,
            dockerfile=dockerfile,
            target=target,
            network_mode="none",
            container_limits=build_limits(self.limits),
            labels={SANDBOX_LABEL: "image"},
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            # The read timeout between progress messages; the deadline is enforced above.
            timeout=timeout_s + _GRACE_S,
        )
        return _read_build(stream, output)


def _removed_by_us(remove: Callable[..., Any], **options: bool) -> int:
    """Remove a leftover; 0 when another harness starting at the same time got there
    first (it is gone, or its removal is under way: 404 or 409), 1 when we did."""
    try:
        remove(**options)
    except docker.errors.APIError as exc:
        if exc.status_code in (404, 409):
            return 0
        raise
    return 1


_FREEZE_ATTEMPTS = 5
_FREEZE_PAUSE_S = 0.5


def _freeze(container: Any, *, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Pause a run's container so nothing in it changes while it is read; False when it
    has stopped (its workspace is gone with it).

    The cgroup freezer gives up ("unable to freeze") when a process of the container does
    not reach a freezable state in time, which a busy machine makes likely (a JVM writing
    its coverage data as it exits); the pause is asked again a few times, a little later
    each time, before that is an infrastructure error."""
    attempt = 1
    while True:
        container.reload()
        if container.status != "running":
            return bool(container.status == "paused")
        try:
            container.pause()
        except docker.errors.APIError as exc:
            if attempt == _FREEZE_ATTEMPTS or "freeze" not in str(exc):
                raise
            sleep(_FREEZE_PAUSE_S * attempt)
            attempt += 1
            continue
        return True


def _cache_volume(cache: str) -> str:
    """The named volume of a dependency cache."""
    return "me-cache-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", cache)


def _ids(user: str) -> tuple[int, int]:
    uid, gid = (int(part) for part in user.split(":"))
    return uid, gid


def _relative(path: str) -> str:
    """A request's folder inside the tree, checked: plain segments only."""
    parts = [part for part in path.split("/") if part]
    if any(part in (".", "..") for part in parts) or path.startswith("/"):
        raise SandboxError(f"not a folder inside the tree: {path!r}")
    return "/".join(parts)


def _cache_folder(name: str) -> str:
    """A cache's folder under the sandbox's cache root (names are the harness's own)."""
    return _relative(name) or "default"


_STAGES_DOCKERFILE = ".migration-evals-stages.Dockerfile"


def _stages_to_build(archive: IO[bytes], dockerfile: str, target: str | None) -> str:
    """The Dockerfile argument of a build: the file's path in the context, or, when the
    file has stages the build's target (the last stage when none is named) does not need,
    a copy holding only the stages the target needs, added to the context stream under a
    name of its own. The stream is left at its start."""
    with tarfile.open(fileobj=archive, mode="r:") as tar:
        member = next((m for m in tar if m.isreg() and m.name == dockerfile), None)
        handle = tar.extractfile(member) if member is not None else None
        source = handle.read() if handle is not None else None
    trimmed = None
    if source is not None:
        try:
            trimmed = read_dockerfile(source).trimmed(source, target)
        except ValueError:  # no such target stage: the engine says so in its own words
            trimmed = None
    archive.seek(0)
    if trimmed is None:
        return dockerfile
    with tarfile.open(fileobj=archive, mode="a") as tar:
        info = tarfile.TarInfo(_STAGES_DOCKERFILE)
        info.size = len(trimmed)
        tar.addfile(info, io.BytesIO(trimmed))
    archive.seek(0)
    return _STAGES_DOCKERFILE


def _read_build(stream: Iterable[Mapping[str, Any]], output: OutputCap) -> dict[str, Any]:
    """The build's exit code and image id from the engine's progress messages."""
    image_id = ""
    for message in stream:
        if "error" in message:
            output.feed(f"{message['error']}\n".encode())
            code = (message.get("errorDetail") or {}).get("code") or 1
            return {"exit_code": int(code)}
        text = str(message.get("stream", ""))
        output.feed(text.encode())
        aux = message.get("aux")
        if isinstance(aux, Mapping) and "ID" in aux:
            image_id = str(aux["ID"])
        elif found := _BUILT.search(text):
            image_id = image_id or found[1]
    return {"exit_code": 0 if image_id else 1, "image_id": image_id}


def _cancel(responses: Iterable[requests.Response]) -> None:
    """Close a build's connection: the engine then cancels it and removes its containers."""
    for response in responses:
        connection = getattr(response.raw, "connection", None)
        sock = getattr(connection, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: nothing left to cancel
                sock.shutdown(socket.SHUT_RDWR)


def _drain(stream: Iterable[bytes], output: Capture) -> None:
    try:
        for chunk in stream:
            output.feed(chunk)
    except _ENGINE_ERRORS:
        pass  # the container is gone; what was read is kept


def _kill(container: Any) -> None:
    try:
        container.kill()
    except docker.errors.APIError as exc:
        # Already stopped between the check and the kill: nothing left to kill.
        if exc.status_code not in (404, 409):
            raise SandboxError(f"cannot kill the sandbox container: {exc}") from exc


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale(labels: Mapping[str, str], now: float, host: str, alive: Callable[[int], bool]) -> bool:
    try:
        if float(labels.get(DEADLINE_LABEL, "0")) < now:
            return True
    except ValueError:
        return True
    owner_host, _, pid = labels.get(OWNER_LABEL, "").rpartition(":")
    return owner_host == host and pid.isdigit() and not alive(int(pid))
