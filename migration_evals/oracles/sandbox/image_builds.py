"""Image builds (``SandboxAction.BUILD``) on the engine's builder: the context sent as a
stream, no network, memory limits and the request's timeout. A build past its deadline is
cancelled by closing its connection, which makes the engine stop it. A build of a target
stage gets a Dockerfile holding only the stages that target needs."""

from __future__ import annotations

import contextlib
import io
import re
import socket
import tarfile
import threading
import time
from collections.abc import Iterable, Mapping
from typing import IO, Any

import requests

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SandboxRequest, SandboxResult
from migration_evals.oracles.ecosystems.dockerfile.model import read_dockerfile
from migration_evals.oracles.sandbox.capture import OutputCap
from migration_evals.oracles.sandbox.commands import (
    build_arguments,
    build_target,
    dockerfile_in_context,
)
from migration_evals.oracles.sandbox.engine import GRACE_S, KILLED_EXIT, EngineSetup
from migration_evals.oracles.sandbox.hardening import SANDBOX_LABEL, build_limits

__all__ = ["ImageBuilds", "read_build", "stages_to_build"]

_BUILT = re.compile(r"Successfully built ([0-9a-f]{12,64})")
_STAGES_DOCKERFILE = ".migration-evals-stages.Dockerfile"


class ImageBuilds:
    """Builds of a request's tree, each cancellable at its deadline."""

    def __init__(self, setup: EngineSetup) -> None:
        self._setup = setup
        self._local = threading.local()
        # Build responses are captured per thread so a timed-out build can be cancelled.
        setup.client.api.hooks["response"].append(self._capture_response)

    def _capture_response(self, response: requests.Response, *_: Any, **__: Any) -> None:
        sink = getattr(self._local, "responses", None)
        if sink is not None:
            sink.append(response)

    def build(self, request: SandboxRequest) -> SandboxResult:
        output = OutputCap(self._setup.limits.output_limit_bytes)
        outcome: dict[str, Any] = {}
        responses: list[requests.Response] = []
        started = time.monotonic()
        dockerfile, context = build_arguments(request.command)
        where = (dockerfile, context, build_target(request.command))
        worker = threading.Thread(
            target=self._build_in_thread,
            args=(request, where, output, outcome, responses),
            daemon=True,
        )
        worker.start()
        worker.join(request.timeout_s)
        timed_out = worker.is_alive()
        if timed_out:
            _cancel(responses)
            worker.join(60)
        duration = round(time.monotonic() - started, 3)
        if timed_out:
            return SandboxResult(
                KILLED_EXIT,
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

    def _build_in_thread(
        self,
        request: SandboxRequest,
        where: tuple[str, str, str | None],
        output: OutputCap,
        outcome: dict[str, Any],
        responses: list[requests.Response],
    ) -> None:
        dockerfile, context, target = where
        self._local.responses = responses
        try:
            assert request.tree is not None
            with request.tree(0, 0, context) as archive:
                name = stages_to_build(archive, dockerfile_in_context(dockerfile, context), target)
                outcome.update(self._stream_build(archive, name, target, output, request.timeout_s))
        except BaseException as exc:  # handed to the harness thread in ``build``
            outcome["exception"] = exc
        finally:
            self._local.responses = None

    def _stream_build(
        self,
        context: IO[bytes],
        dockerfile: str,
        target: str | None,
        output: OutputCap,
        timeout_s: float,
    ) -> dict[str, Any]:
        stream = self._setup.client.api.build(
            fileobj=context,
            custom_context=True,
            dockerfile=dockerfile,
            target=target,
            network_mode="none",
            container_limits=build_limits(self._setup.limits),
            labels={SANDBOX_LABEL: "image"},
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            # The read timeout between progress messages; the deadline is enforced above.
            timeout=timeout_s + GRACE_S,
        )
        return read_build(stream, output)


def stages_to_build(archive: IO[bytes], dockerfile: str, target: str | None) -> str:
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


def read_build(stream: Iterable[Mapping[str, Any]], output: OutputCap) -> dict[str, Any]:
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
