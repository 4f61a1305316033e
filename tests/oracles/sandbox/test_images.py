"""The image set: definitions, the mirror found in apt's configuration, FROM parsing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import docker
import pytest

from core.errors import SpecError
from core.specs import SpecSet
from oracles.sandbox.images import (
    BaseImage,
    ImageBuilder,
    LayerImage,
    apt_mirror,
    load_image_set,
)
from tests.conftest import SANDBOX_IMAGES


def test_the_bundled_image_set_loads_and_covers_every_recipe_image(specs: SpecSet) -> None:
    images = load_image_set(SANDBOX_IMAGES)
    wanted = {str(r.sandbox["image"]) for r in specs.recipes.values()} - {"@dockerfile"}
    assert wanted <= set(images.tags)
    # The examples' Dockerfiles build FROM these, with no registry to pull from.
    assert {"debian:11-slim", "debian:12-slim", "golang:1.19-bullseye"} <= set(images.tags)
    assert all(layer.dockerfile.is_file() for layer in images.layers)


def test_layers_name_their_parents_with_build_arguments_substituted() -> None:
    bullseye = next(
        layer for layer in load_image_set(SANDBOX_IMAGES).layers if "bullseye" in layer.tag
    )
    assert bullseye.parents() == ["migration-evals/go:3", "debian:11-slim"]


def test_a_base_definition_changes_with_its_packages() -> None:
    images = load_image_set(SANDBOX_IMAGES)
    base = images.bases[0]
    assert base.definition() != replace(base, offline_packages=("other",)).definition()


def test_an_invalid_image_file_names_the_key(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text("bases: [{tag: x, suite: Bookworm}]\nlayers: []\n")
    with pytest.raises(SpecError, match=r"bases\[0\]\.suite"):
        load_image_set(path)


def test_layer_parents_skip_stage_aliases(tmp_path: Path) -> None:
    dockerfile = tmp_path / "x.Dockerfile"
    dockerfile.write_text("FROM a:1 AS build\nRUN x\nFROM build\nFROM scratch\nFROM b:2\n")
    assert LayerImage("t", dockerfile).parents() == ["a:1", "b:2"]


ONE_LINE = """# comment
deb [signed-by=/k.gpg] http://mirror.example/debian-security bookworm-security main
deb http://mirror.example/debian/ bookworm main contrib
"""
DEB822 = """Types: deb
URIs: http://other.example/debian
Suites: bookworm-updates
Components: main

Types: deb deb-src
URIs: http://other.example/debian
Suites: bookworm
Components: main
"""


def test_the_mirror_is_the_first_release_suite_with_main() -> None:
    assert apt_mirror([("sources.list", ONE_LINE)]) == "http://mirror.example/debian"
    assert apt_mirror([("debian.sources", DEB822)]) == "http://other.example/debian"
    assert apt_mirror([("x.list", "deb http://m/debian bookworm-backports main\n")]) is None
    assert apt_mirror([]) is None


class _Images:
    """The slice of ``client.images`` the builder uses, over a dict of tags."""

    def __init__(self, tags: dict[str, str], in_use: set[str]) -> None:
        self.tags = tags
        self.in_use = in_use
        self.removed: list[str] = []

    def get(self, tag: str) -> SimpleNamespace:
        if tag not in self.tags:
            raise docker.errors.ImageNotFound(tag)
        return SimpleNamespace(id=self.tags[tag], attrs={"Config": {"Labels": {}}})

    def remove(self, image_id: str, noprune: bool = False) -> None:
        if image_id in self.in_use:
            raise docker.errors.APIError("conflict", explanation="image is being used")
        self.removed.append(image_id)


class _Builder(ImageBuilder):
    """Builds by handing out new ids and moving the tags, as the engine would."""

    def _build_base(self, image: BaseImage, definition: str) -> str:
        return self._moved(image.tag)

    def _build_layer(self, image: LayerImage, definition: str) -> str:
        return self._moved(image.tag)

    def _moved(self, tag: str) -> str:
        images = self.client.images
        images.tags[tag] = f"sha256:new-{tag}"
        return images.tags[tag]


def test_a_rebuild_removes_the_images_it_took_the_tags_from(tmp_path: Path) -> None:
    image_set = load_image_set(SANDBOX_IMAGES)
    old = {tag: f"sha256:old-{tag}" for tag in image_set.tags}
    first_base = image_set.bases[0].tag
    images = _Images(dict(old), in_use={old[first_base]})
    lines: list[str] = []
    builder = _Builder(
        SimpleNamespace(images=images),  # type: ignore[arg-type]
        image_set,
        workdir=tmp_path,
        mirror=None,
        log=lines.append,
    )
    outcomes = builder.build(rebuild=True)
    assert {o.tag: o.image_id for o in outcomes} == {t: f"sha256:new-{t}" for t in old}
    kept = old[first_base]
    # Layers are removed before the bases under them; an image in use stays, with the reason.
    assert images.removed == [old[t] for t in reversed(image_set.tags) if old[t] != kept]
    assert any(line.startswith(f"kept the replaced image {kept[:19]}") for line in lines)
