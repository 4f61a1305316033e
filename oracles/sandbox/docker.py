"""The live sandbox: one hardened Docker container per run, through the docker SDK.

Runs (``SandboxAction.RUN``) create a container with every setting of
``oracles.sandbox.hardening`` over a disposable copy of the tree, read its output live
with a cap, and enforce the wall-clock timeout and the workspace limit by killing the
whole container. Builds (``SandboxAction.BUILD``) use the engine's builder with no
network, memory limits and the same timeout; a build past its deadline is cancelled by
closing its connection, which makes the engine stop it and remove its containers.

Docker SDK and transport errors become ``SandboxError`` (infrastructure, verdict
``error``); whatever the candidate's code does is a ``SandboxResult``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests

from core.errors import SandboxError
from core.ports import ImageRef, SandboxAction, SandboxRequest, SandboxResult
from oracles.sandbox.capture import OutputCap
from oracles.sandbox.commands import build_arguments, dockerfile_in_context
from oracles.sandbox.files import collect_text, file_heads, prepare_tree, tree_bytes
from oracles.sandbox.hardening import (
    DEADLINE_LABEL,
    OWNER_LABEL,
    SANDBOX_LABEL,
    UNPRIVILEGED_USER,
    SandboxLimits,
    build_limits,
    container_options,
)

__all__ = ["DockerSandbox", "default_user"]

log = logging.getLogger(__name__)

_ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
# A dead harness's containers are stale once their own timeout and this grace have passed.
_GRACE_S = 120
_BUILT = re.compile(r"Successfully built ([0-9a-f]{12,64})")
_KILLED_EXIT = 137


def default_user(*, euid: int, uid: int, gid: int) -> str:
    """``nobody`` when the harness is root (it can hand the tree copy over); otherwise the
    harness's own unprivileged user, which already owns the copy."""
    return UNPRIVILEGED_USER if euid == 0 else f"{uid}:{gid}"


@dataclass
class _Finished:
    """How a container's run ended, as observed by the harness (never by the container)."""

    exit_code: int
    timed_out: bool = False
    workspace_exceeded: bool = False
    oom_killed: bool = False
    duration_s: float = 0.0


class DockerSandbox:
    """The sandbox port on a Docker engine; ``client`` is a ``docker.DockerClient``."""

    identity = "sandbox:docker/1"

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
    ) -> None:
        self.client = client
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
            found = ImageRef(image, str(self.client.images.get(image).id))
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(
                f"image {image} is not on the Docker engine; build it with "
                "`migration-evals images build` or point the recipe at an image you have"
            ) from exc
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"the Docker engine did not answer: {exc}") from exc
        with self._lock:
            self._resolved[image] = found
        return found

    # -- leftovers ---------------------------------------------------------------------

    def reap(self, *, now: float | None = None, alive: Callable[[int], bool] | None = None) -> int:
        """Remove labelled containers a crashed harness left behind; returns how many.

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
                    container.remove(force=True)
                    removed += 1
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot clean up old sandbox containers: {exc}") from exc
        if removed:
            log.warning("removed %d sandbox container(s) left by an earlier crash", removed)
        return removed

    # -- runs --------------------------------------------------------------------------

    def run(self, request: SandboxRequest) -> SandboxResult:
        if request.tree is None:
            raise SandboxError("the live sandbox needs the request's tree")
        tree = request.tree()
        if request.action is SandboxAction.BUILD:
            return self._build(request, tree)
        return self._run(request, tree)

    def _labels(self, timeout_s: float) -> dict[str, str]:
        return {
            SANDBOX_LABEL: "run",
            OWNER_LABEL: self.owner,
            DEADLINE_LABEL: str(int(time.time() + timeout_s + _GRACE_S)),
        }

    def _run(self, request: SandboxRequest, tree: Path) -> SandboxResult:
        uid, gid = (int(part) for part in self.user.split(":"))
        prepare_tree(tree, uid, gid, as_root=self.as_root)
        options = container_options(
            self.limits, workspace=tree, user=self.user, labels=self._labels(request.timeout_s)
        )
        started = time.monotonic()
        output = OutputCap(self.limits.output_limit_bytes)
        try:
            container = self.client.containers.create(
                request.image_id(), entrypoint=list(request.command), **options
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {request.image} is not on the Docker engine") from exc
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot create the sandbox container: {exc}") from exc
        since = time.time()
        try:
            finished = self._execute(container, request, tree, output)
            finished.oom_killed = self._oom_killed(container)
            if not finished.timed_out and not finished.workspace_exceeded:
                self._check_not_killed(container, since)
        finally:
            self._remove(container)
        finished.duration_s = time.monotonic() - started
        return self._result(request, tree, output, finished)

    def _execute(
        self, container: Any, request: SandboxRequest, tree: Path, output: OutputCap
    ) -> _Finished:
        try:
            stream = container.attach(stdout=True, stderr=True, stream=True, logs=False)
            reader = threading.Thread(target=_drain, args=(stream, output), daemon=True)
            reader.start()
            container.start()
            finished = self._wait(container, request.timeout_s, tree)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"the sandbox container failed to run: {exc}") from exc
        # The stream ends when the container's last process is gone.
        reader.join(timeout=30)
        return finished

    def _wait(self, container: Any, timeout_s: float, tree: Path) -> _Finished:
        """Wait for the container to exit; kill it at the deadline or over the workspace
        limit. The exit code comes from the engine, not from anything the code printed."""
        status: dict[str, Any] = {}
        errors: list[BaseException] = []
        done = threading.Event()

        def waiter() -> None:
            try:
                status.update(container.wait())
            except BaseException as exc:  # handed to the harness thread below
                errors.append(exc)
            finally:
                done.set()

        threading.Thread(target=waiter, daemon=True).start()
        deadline = time.monotonic() + timeout_s
        next_check = time.monotonic() + self.workspace_check_s
        limit = self.limits.workspace_mb * 1024 * 1024
        finished = _Finished(exit_code=-1)
        while not done.wait(self.poll_s):
            now = time.monotonic()
            if now >= deadline:
                finished.timed_out = True
            elif now >= next_check:
                next_check = now + self.workspace_check_s
                finished.workspace_exceeded = tree_bytes(tree, limit) > limit
            if finished.timed_out or finished.workspace_exceeded:
                _kill(container)
                done.wait(60)
                break
        if errors:
            raise SandboxError(f"lost track of the sandbox container: {errors[0]}")
        if not done.is_set():
            raise SandboxError("the sandbox container did not stop after being killed")
        finished.exit_code = int(status.get("StatusCode", _KILLED_EXIT))
        return finished

    def _oom_killed(self, container: Any) -> bool:
        try:
            container.reload()
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot inspect the sandbox container: {exc}") from exc
        return bool(container.attrs.get("State", {}).get("OOMKilled", False))

    def _check_not_killed(self, container: Any, since: float) -> None:
        """A kill the harness did not send (an operator, the engine) is infrastructure: the
        candidate's code cannot signal its container from inside. OOM kills are the
        kernel's and show as ``oom_killed`` instead."""
        try:
            # Fractional timestamps: an ``until`` in the future would make the engine wait.
            events = self.client.events(
                since=since,
                until=time.time(),
                filters={"container": container.id, "event": "kill"},
                decode=True,
            )
            kills = list(events)
        except _ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot read the sandbox container's events: {exc}") from exc
        if kills:
            signal = kills[0].get("Actor", {}).get("Attributes", {}).get("signal", "?")
            raise SandboxError(f"the sandbox container was killed from outside (signal {signal})")

    @staticmethod
    def _remove(container: Any) -> None:
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass
        except _ENGINE_ERRORS as exc:
            # Labelled: the next start-up's reap removes it.
            log.warning("could not remove sandbox container %s: %s", container.id, exc)

    def _result(
        self, request: SandboxRequest, tree: Path, output: OutputCap, finished: _Finished
    ) -> SandboxResult:
        cap = self.limits.output_limit_bytes
        return SandboxResult(
            exit_code=finished.exit_code,
            output=output.text(),
            artifacts=collect_text(tree, request.collect, per_file=cap, total=4 * cap),
            duration_s=round(finished.duration_s, 3),
            timed_out=finished.timed_out,
            image_id=request.image_id(),
            output_truncated=output.truncated,
            file_heads=file_heads(tree, request.inspect),
            oom_killed=finished.oom_killed,
            workspace_exceeded=finished.workspace_exceeded,
        )

    # -- builds ------------------------------------------------------------------------

    def _capture_response(self, response: requests.Response, *_: Any, **__: Any) -> None:
        sink = getattr(self._local, "responses", None)
        if sink is not None:
            sink.append(response)

    def _build(self, request: SandboxRequest, tree: Path) -> SandboxResult:
        dockerfile, context = build_arguments(request.command)
        output = OutputCap(self.limits.output_limit_bytes)
        outcome: dict[str, Any] = {}
        responses: list[requests.Response] = []
        started = time.monotonic()

        def build() -> None:
            self._local.responses = responses
            try:
                outcome.update(
                    self._stream_build(
                        tree / context,
                        dockerfile_in_context(dockerfile, context),
                        output,
                        request.timeout_s,
                    )
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
        self, context: Path, dockerfile: str, output: OutputCap, timeout_s: float
    ) -> dict[str, Any]:
        stream = self.client.api.build(
            path=str(context),
            dockerfile=dockerfile,
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


def _drain(stream: Iterable[bytes], output: OutputCap) -> None:
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
