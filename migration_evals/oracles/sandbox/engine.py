"""What the parts of the live sandbox share: the engine they talk to and how it is set up,
the engine's errors, how a run ended, and small container operations.

``EngineSetup`` is one object the parts all hold, so a change to the limits (a test
shrinking them) reaches every part at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors
import requests

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.capture import Capture
from migration_evals.oracles.sandbox.hardening import (
    DEADLINE_LABEL,
    OWNER_LABEL,
    SANDBOX_LABEL,
    SandboxLimits,
)

__all__ = [
    "ENGINE_ERRORS",
    "GRACE_S",
    "KILLED_EXIT",
    "EngineSetup",
    "Finished",
    "drain",
    "freeze",
    "ids",
    "kill",
    "relative",
]

ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)
# A dead harness's containers are stale once their own timeout and this grace have passed.
GRACE_S = 120
KILLED_EXIT = 137


@dataclass
class EngineSetup:
    """The engine and how runs use it: limits, the container's user, the owner written on
    every container and volume, how often a running command is polled."""

    client: docker.DockerClient
    limits: SandboxLimits
    user: str
    as_root: bool
    owner: str
    poll_s: float

    def labels(self, timeout_s: float) -> dict[str, str]:
        """The labels of a run's container or volume: whose it is and when it is stale."""
        return {
            SANDBOX_LABEL: "run",
            OWNER_LABEL: self.owner,
            DEADLINE_LABEL: str(int(time.time() + timeout_s + GRACE_S)),
        }


@dataclass
class Finished:
    """How a container's run ended, as observed by the harness (never by the container)."""

    exit_code: int
    timed_out: bool = False
    workspace_limit: str = ""  # the workspace limit the run broke, named; empty: none
    special: tuple[str, ...] = ()  # entries of a special kind it left in the workspace
    oom_killed: bool = False
    duration_s: float = 0.0


def ids(user: str) -> tuple[int, int]:
    uid, gid = (int(part) for part in user.split(":"))
    return uid, gid


def relative(path: str) -> str:
    """A request's folder inside the tree, checked: plain segments only."""
    parts = [part for part in path.split("/") if part]
    if any(part in (".", "..") for part in parts) or path.startswith("/"):
        raise SandboxError(f"not a folder inside the tree: {path!r}")
    return "/".join(parts)


def drain(stream: Iterable[bytes], output: Capture) -> None:
    try:
        for chunk in stream:
            output.feed(chunk)
    except ENGINE_ERRORS:
        pass  # the container is gone; what was read is kept


def kill(container: Any) -> None:
    try:
        container.kill()
    except docker.errors.APIError as exc:
        # Already stopped between the check and the kill: nothing left to kill.
        if exc.status_code not in (404, 409):
            raise SandboxError(f"cannot kill the sandbox container: {exc}") from exc


_FREEZE_ATTEMPTS = 5
_FREEZE_PAUSE_S = 0.5


def freeze(container: Any, *, sleep: Callable[[float], None] = time.sleep) -> bool:
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
