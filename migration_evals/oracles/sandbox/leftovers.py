"""Removing containers and volumes: each run's own at its end, and those a crashed
harness left behind (found by their labels, ``migration_evals.oracles.sandbox.hardening``)."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import docker
import docker.errors

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.engine import ENGINE_ERRORS
from migration_evals.oracles.sandbox.hardening import DEADLINE_LABEL, OWNER_LABEL, SANDBOX_LABEL

__all__ = ["Leftovers", "remove_container", "remove_volume"]

log = logging.getLogger(__name__)


class Leftovers:
    """Reaps what dead harnesses left on the engine; never a live harness's."""

    def __init__(self, client: docker.DockerClient, owner: str) -> None:
        self._client = client
        self._owner = owner

    def reap(self, *, now: float | None = None, alive: Callable[[int], bool] | None = None) -> int:
        """Remove labelled containers (and their workspace volumes) a crashed harness left
        behind; returns how many containers.

        A container is left behind when its deadline passed, or when its owner ran on
        this host and that process is gone. A live harness's containers are never touched.
        """
        now = time.time() if now is None else now
        alive = alive or _process_alive
        host = self._owner.rsplit(":", 1)[0]
        try:
            containers = self._client.containers.list(
                all=True, filters={"label": SANDBOX_LABEL}, ignore_removed=True
            )
            removed = 0
            for container in containers:
                if _stale(container.labels, now, host, alive):
                    removed += _removed_by_us(container.remove, force=True, v=True)
            for volume in self._client.volumes.list(filters={"label": SANDBOX_LABEL}):
                if _stale(volume.attrs.get("Labels") or {}, now, host, alive):
                    _removed_by_us(volume.remove, force=True)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot clean up old sandbox containers: {exc}") from exc
        if removed:
            log.warning("removed %d sandbox container(s) left by an earlier crash", removed)
        return removed


def remove_container(container: Any) -> None:
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    except ENGINE_ERRORS as exc:
        # Labelled: the next start-up's reap removes it.
        log.warning("could not remove sandbox container %s: %s", container.id, exc)


def remove_volume(client: docker.DockerClient, name: str) -> None:
    for attempt in range(3):
        try:
            client.volumes.get(name).remove(force=True)
            return
        except docker.errors.NotFound:
            return
        except ENGINE_ERRORS as exc:
            if attempt == 2:  # labelled: the next start-up's reap removes it
                log.warning("could not remove workspace volume %s: %s", name, exc)
            time.sleep(0.2)


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
