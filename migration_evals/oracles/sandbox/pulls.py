"""Bringing a Dockerfile's base images into the engine from a registry, by digest.

Builds run with no network, so the images they start FROM must be on the engine before
they begin. With a registry configured (``Settings.image_registry``), an image the engine
lacks is pulled here, outside any sandbox: Docker Hub images through that registry (a
mirror: ``debian:12-slim`` from ``<registry>/library/debian``), images naming a registry
of their own from it. A tag is first resolved to the digest it points to, and that digest
is pulled, so what was built from is exactly what the envelope records; the image is then
tagged with the name the Dockerfile uses, so the build finds it.

A reference pinned by digest is pulled under its own name, whichever registry the engine
reaches it through: the engine matches ``name@digest`` only to what was pulled under that
very name, and a digest cannot be given another name by tagging.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import docker.errors
import requests

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import ImageRef
from migration_evals.oracles.ecosystems.dockerfile.image_refs import ImageName, parse_image

__all__ = ["ImageSource", "pull_by_digest"]

_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, OSError)


@dataclass(frozen=True, slots=True)
class ImageSource:
    """The registry images are pulled from: ``host[:port][/prefix]``."""

    registry: str

    def repository_for(self, name: ImageName) -> str:
        """Where to pull ``name`` from."""
        if not name.on_docker_hub:
            return f"{name.host}/{name.path}"
        path = name.repository.removeprefix("docker.io/")
        return f"{self.registry.rstrip('/')}/{path}"


def _local_name(name: ImageName) -> tuple[str, str]:
    """(repository, tag) under which the engine finds ``name`` as a FROM line writes it."""
    repository = name.text.partition("@")[0]
    if name.tag is not None:
        repository = repository[: -len(name.tag) - 1]
    return repository, name.effective_tag


def _digest_of(client: Any, repository: str, tag: str) -> str:
    try:
        return str(client.images.get_registry_data(f"{repository}:{tag}").id)
    except _ERRORS as exc:
        raise SandboxError(f"cannot resolve {repository}:{tag} at the registry: {exc}") from exc


def pull_by_digest(client: Any, image: str, source: ImageSource) -> ImageRef:
    """Pull ``image`` by digest and make its FROM name resolve to it on the engine."""
    name = parse_image(image)
    local, tag = _local_name(name)
    if name.digest:
        # Only a pull under its own name lets the engine match ``name@digest``.
        repository, digest = local, name.digest
    else:
        repository = source.repository_for(name)
        digest = _digest_of(client, repository, tag)
    try:
        pulled = client.images.pull(f"{repository}@{digest}")
        if not name.digest:
            pulled.tag(local, tag=tag)
    except _ERRORS as exc:
        raise SandboxError(f"cannot pull {repository}@{digest} for {image}: {exc}") from exc
    return ImageRef(image, str(pulled.id), digest=f"{repository}@{digest}")
