"""Image resolution on the engine: an image's content id (pulled by digest from an
``ImageSource`` when the engine lacks it), remembered per process, and its configuration."""

from __future__ import annotations

import threading

import docker
import docker.errors

from migration_evals.core.errors import SandboxError
from migration_evals.core.ports import ImageConfig, ImageRef
from migration_evals.oracles.sandbox.engine import ENGINE_ERRORS
from migration_evals.oracles.sandbox.inspection import image_config
from migration_evals.oracles.sandbox.pulls import ImageSource, pull_by_digest

__all__ = ["ImageLookup"]


class ImageLookup:
    """What the engine knows of an image, pulling it first when it can."""

    def __init__(self, client: docker.DockerClient, source: ImageSource | None) -> None:
        self._client = client
        self.source = source
        self._resolved: dict[str, ImageRef] = {}
        self._lock = threading.Lock()

    def resolve(self, image: str) -> ImageRef:
        with self._lock:
            known = self._resolved.get(image)
        if known is not None:
            return known
        try:
            local = self._client.images.get(image)
            digests = local.attrs.get("RepoDigests") or [""]
            found = ImageRef(image, str(local.id), digest=str(digests[0]))
        except docker.errors.ImageNotFound as exc:
            if self.source is None:
                raise SandboxError(
                    f"image {image} is not on the Docker engine; build it with "
                    "`migration-evals images build`, point the recipe at an image you have, "
                    "or name a registry to pull from (MIGRATION_EVALS_IMAGE_REGISTRY)"
                ) from exc
            found = pull_by_digest(self._client, image, self.source)
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"the Docker engine did not answer: {exc}") from exc
        with self._lock:
            self._resolved[image] = found
        return found

    def inspect(self, image: str) -> ImageConfig:
        try:
            return image_config(self._client.api.inspect_image(image))
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(f"image {image} is not on the Docker engine") from exc
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"cannot inspect image {image}: {exc}") from exc
