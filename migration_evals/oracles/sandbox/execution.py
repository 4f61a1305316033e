"""Running a command in a run's container and waiting for it, its output read live into
a capture; the container is killed at the deadline. The exit code is the engine's, never
anything the command printed."""

from __future__ import annotations

import threading
import time
from typing import Any

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import SANDBOX_WORKDIR, SandboxRequest
from migration_evals.oracles.sandbox.capture import Capture, OutputCap
from migration_evals.oracles.sandbox.engine import (
    ENGINE_ERRORS,
    KILLED_EXIT,
    EngineSetup,
    Finished,
    drain,
    kill,
    relative,
)

__all__ = ["CommandExecution"]

# The first wait between the end of a command's output and the engine's word that it
# exited; doubled up to the poll interval while the command runs on.
_EXIT_SETTLE_S = 0.01


class CommandExecution:
    """Commands run with ``exec`` in a waiting container, and images run to their end."""

    def __init__(self, setup: EngineSetup) -> None:
        self._setup = setup

    def exec(
        self, container: Any, request: SandboxRequest, command: tuple[str, ...], output: Capture
    ) -> Finished:
        """Run ``command`` in the container and wait for it; kill the container at the
        deadline. The exit code is the engine's, never anything the code printed."""
        workdir = relative(request.workdir)
        api = self._setup.client.api
        try:
            exec_id = api.exec_create(
                container.id,
                list(command),
                user=self._setup.user,
                workdir=f"{SANDBOX_WORKDIR}/{workdir}" if workdir else SANDBOX_WORKDIR,
                environment=dict(request.environment),
            )["Id"]
            stream = api.exec_start(exec_id, stream=True)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"the sandbox could not start the command: {exc}") from exc
        reader = threading.Thread(target=drain, args=(stream, output), daemon=True)
        reader.start()
        finished = self._wait(container, exec_id, request.timeout_s, reader)
        # What the command printed is in; a process it left behind may hold the stream.
        reader.join(timeout=2)
        return finished

    def _wait(
        self, container: Any, exec_id: str, timeout_s: float, reader: threading.Thread
    ) -> Finished:
        deadline = time.monotonic() + timeout_s
        settle = _EXIT_SETTLE_S
        poll_s = self._setup.poll_s
        while True:
            try:
                info = self._setup.client.api.exec_inspect(exec_id)
            except ENGINE_ERRORS as exc:
                raise SandboxError(f"lost track of the sandboxed command: {exc}") from exc
            if not info.get("Running") and info.get("ExitCode") is not None:
                return Finished(exit_code=int(info["ExitCode"]))
            if time.monotonic() >= deadline:
                kill(container)
                return Finished(exit_code=KILLED_EXIT, timed_out=True)
            # The output stream ends when the command does: wake then rather than up to
            # a poll later, which a short build felt as a tenth of its time. A command
            # that closed its output and carries on is polled less and less often.
            if reader.is_alive():
                reader.join(timeout=min(poll_s, max(0.0, deadline - time.monotonic())))
            else:
                time.sleep(settle)
                settle = min(2 * settle, poll_s)

    def run_to_end(self, container: Any, timeout_s: float, output: OutputCap) -> Finished:
        """Start a created container, read its output, and wait for it to exit; kill it at
        the deadline. The exit code comes from the engine."""
        try:
            stream = container.attach(stdout=True, stderr=True, stream=True, logs=False)
            reader = threading.Thread(target=drain, args=(stream, output), daemon=True)
            reader.start()
            container.start()
            deadline = time.monotonic() + timeout_s
            while True:
                container.reload()
                if container.status in ("exited", "dead"):
                    code = container.attrs.get("State", {}).get("ExitCode", KILLED_EXIT)
                    finished = Finished(exit_code=int(code))
                    break
                if time.monotonic() >= deadline:
                    kill(container)
                    finished = Finished(exit_code=KILLED_EXIT, timed_out=True)
                    break
                time.sleep(self._setup.poll_s)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"the started image could not be followed: {exc}") from exc
        reader.join(timeout=2)
        return finished
