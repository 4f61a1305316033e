"""Pulling base images by digest from a configured registry, over a stand-in client."""

from __future__ import annotations

import pytest

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.ecosystems.dockerfile.image_refs import parse_image
from migration_evals.oracles.sandbox import DockerSandbox, SandboxLimits
from migration_evals.oracles.sandbox.pulls import ImageSource, pull_by_digest
from tests.fakes import FakeDockerClient, FakeRegistryImages

DIGEST = "sha256:" + "d" * 64


def test_docker_hub_images_go_through_the_registry_and_other_registries_are_their_own() -> None:
    source = ImageSource("mirror.example:5000/hub")
    assert (
        source.repository_for(parse_image("debian:12-slim"))
        == "mirror.example:5000/hub/library/debian"
    )
    assert (
        source.repository_for(parse_image("bitnami/redis:7"))
        == "mirror.example:5000/hub/bitnami/redis"
    )
    assert source.repository_for(parse_image("ghcr.io/org/app:1")) == "ghcr.io/org/app"


def test_a_tag_is_pulled_by_the_digest_it_points_to_and_named_as_the_dockerfile_does() -> None:
    images = FakeRegistryImages({"mirror.example/library/debian:12-slim": DIGEST})
    found = pull_by_digest(
        FakeDockerClient(images), "debian:12-slim", ImageSource("mirror.example")
    )
    assert images.pulls == [f"mirror.example/library/debian@{DIGEST}"]
    assert images.local[images.pulls[0]].tags == [("debian", "12-slim")]
    assert found.digest == f"mirror.example/library/debian@{DIGEST}"
    assert found.id == "sha256:pulled-dddddddd"


def test_a_digest_pin_is_pulled_under_its_own_name() -> None:
    images = FakeRegistryImages({})
    found = pull_by_digest(
        FakeDockerClient(images), f"node:20-alpine@{DIGEST}", ImageSource("mirror.example")
    )
    assert images.pulls == [f"node@{DIGEST}"]
    assert found.digest == f"node@{DIGEST}"


def test_a_tag_the_registry_does_not_know_is_an_infrastructure_error() -> None:
    with pytest.raises(SandboxError, match="cannot resolve mirror.example/library/debian:13-slim"):
        pull_by_digest(
            FakeDockerClient(FakeRegistryImages({})),
            "debian:13-slim",
            ImageSource("mirror.example"),
        )


def test_the_live_adapter_pulls_only_with_a_registry_configured() -> None:
    images = FakeRegistryImages({"mirror.example/library/debian:12-slim": DIGEST})
    without = DockerSandbox(FakeDockerClient(images), SandboxLimits())  # type: ignore[arg-type]
    with pytest.raises(
        SandboxError, match="not on the Docker engine.*MIGRATION_EVALS_IMAGE_REGISTRY"
    ):
        without.resolve("debian:12-slim")
    assert images.pulls == []
    source = ImageSource("mirror.example")
    pulling = DockerSandbox(FakeDockerClient(images), SandboxLimits(), source=source)  # type: ignore[arg-type]
    found = pulling.resolve("debian:12-slim")
    assert (found.id, found.digest) == (
        "sha256:pulled-dddddddd",
        f"mirror.example/library/debian@{DIGEST}",
    )
