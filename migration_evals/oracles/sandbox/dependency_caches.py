"""The dependency caches runs mount: folders bound from this machine, or named volumes on
an engine that cannot see its folders; made and handed to the container's user on first
use, emptied for a fresh resolution, and read back for the packages their jars hold."""

from __future__ import annotations

import contextlib
import os
import re
import tarfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import docker.errors
from docker.types import Mount

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import CacheMount, SandboxAction, SandboxRequest
from migration_evals.oracles.sandbox.archives import jar_packages_in_stream
from migration_evals.oracles.sandbox.engine import (
    ENGINE_ERRORS,
    EngineSetup,
    freeze,
    ids,
    relative,
)
from migration_evals.oracles.sandbox.files import jar_packages, link_to_store, remove_tree
from migration_evals.oracles.sandbox.registry import RegistryGate

__all__ = ["DependencyCaches", "cache_folder", "cache_volume"]

_CACHE_LABEL = "org.migration-evals.cache"


def cache_volume(cache: str) -> str:
    """The named volume of a dependency cache."""
    return "me-cache-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", cache)


def cache_folder(name: str) -> str:
    """A cache's folder under the sandbox's cache root (names are the harness's own)."""
    return relative(name) or "default"


class DependencyCaches:
    """The caches under ``folder`` (named by ``CacheMount.cache``), or named volumes when
    ``volumes``; the registry ``gate``'s store holds one copy of each artifact."""

    def __init__(
        self,
        setup: EngineSetup,
        folder: Path | None,
        *,
        volumes: bool,
        gate: RegistryGate | None,
    ) -> None:
        self._setup = setup
        self.folder = folder
        self.volumes = volumes
        self._gate = gate

    def has_cache(self, cache: str) -> bool:
        if self.volumes:
            try:
                self._setup.client.volumes.get(cache_volume(cache))
            except docker.errors.NotFound:
                return False
            except ENGINE_ERRORS as exc:
                raise SandboxError(f"the Docker engine did not answer: {exc}") from exc
            return True
        return self.folder is not None and (self.folder / cache_folder(cache)).is_dir()

    def mounts(self, mounts: Iterable[CacheMount], image: str) -> list[Mount]:
        """Mounts of the dependency caches (folders bound from this machine, or named
        volumes), made and handed to the container's user on first use."""
        if self.volumes:
            return [self._volume_mount(mount, image) for mount in mounts]
        found = []
        for mount in mounts:
            if self.folder is None:
                raise SandboxError("this sandbox has no folder for dependency caches")
            folder = self.folder / cache_folder(mount.cache)
            if mount.fresh and mount.writable:
                remove_tree(folder)
            if not folder.is_dir():
                folder.mkdir(parents=True, exist_ok=True)
                if self._setup.as_root:
                    uid, gid = ids(self._setup.user)
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

    def _volume_mount(self, mount: CacheMount, image: str) -> Mount:
        name = cache_volume(mount.cache)
        volumes = self._setup.client.volumes
        try:
            if mount.fresh and mount.writable:
                with contextlib.suppress(docker.errors.NotFound):
                    volumes.get(name).remove(force=True)
            try:
                volumes.get(name)
            except docker.errors.NotFound:
                volumes.create(name=name, labels={_CACHE_LABEL: mount.cache})
                self._hand_over(name, mount.target, image)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot prepare the dependency cache {mount.cache}: {exc}") from exc
        return Mount(target=mount.target, source=name, type="volume", read_only=not mount.writable)

    def _hand_over(self, volume: str, target: str, image: str) -> None:
        """Make a new cache volume the run's user's (a new volume belongs to root)."""
        self._setup.client.containers.run(
            image,
            entrypoint=["chown", self._setup.user, target],
            user="0:0",
            mounts=[Mount(target=target, source=volume, type="volume")],
            network_mode="none",
            network_disabled=True,
            cap_drop=["ALL"],
            cap_add=["CHOWN"],
            labels=self._setup.labels(60),
            remove=True,
        )

    def link_to_store(self, request: SandboxRequest) -> None:
        """One copy on disk of each artifact: a fresh repository's files become links to
        the gate's store (what the registry served, whatever the run wrote)."""
        if self._gate is None or self.folder is None or self.volumes:
            return
        for mount in request.mounts:
            if mount.fresh and mount.writable:
                folder = self.folder / cache_folder(mount.cache) / "repository"
                link_to_store(folder, self._gate.store)

    def packages(self, request: SandboxRequest) -> tuple[str, ...]:
        """The packages in the jars a fresh cache folder now holds (what the build can
        import); volumes are read while their run's container is still there."""
        found: set[str] = set()
        for mount in request.mounts:
            if mount.fresh and mount.writable and self.folder is not None and not self.volumes:
                found.update(jar_packages(self.folder / cache_folder(mount.cache)))
        return tuple(sorted(found))

    def volume_packages(self, container: Any, request: SandboxRequest) -> tuple[str, ...]:
        """For a resolution run into a fresh cache volume: the packages of its jars, read
        back from the (frozen) container before it goes."""
        fresh = [m for m in request.mounts if m.fresh and m.writable]
        if not self.volumes or request.action is not SandboxAction.RESOLVE or not fresh:
            return ()
        found: set[str] = set()
        try:
            freeze(container)
            for mount in fresh:
                chunks, _stat = container.get_archive(f"{mount.target}/repository")
                found.update(jar_packages_in_stream(chunks))
        except docker.errors.NotFound:
            return tuple(sorted(found))
        except (tarfile.TarError, *ENGINE_ERRORS) as exc:
            raise SandboxError(f"cannot read the dependency cache back: {exc}") from exc
        return tuple(sorted(found))
