"""The image set: definitions, the mirror found in apt's configuration, FROM parsing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import docker
import pytest

from migration_evals.core.errors import SandboxError, SpecError
from migration_evals.core.specs import SpecSet
from migration_evals.core.stamps import stamp
from migration_evals.oracles.sandbox.images import (
    BaseImage,
    ImageBuilder,
    LayerImage,
    apt_mirror,
    in_dependency_order,
    load_image_set,
)
from migration_evals.oracles.sandbox.toolchains import MavenDistribution
from tests.conftest import SANDBOX_IMAGES


def test_the_bundled_image_set_loads_and_covers_every_recipe_image(specs: SpecSet) -> None:
    images = load_image_set(SANDBOX_IMAGES)
    wanted = {r.sandbox.image for r in specs.recipes.values()} - {"@dockerfile"}
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


# -- the Java images: one Dockerfile, a JDK per image, JDK 8 and 11 from Debian unstable --


def _java_layers() -> list[LayerImage]:
    return [
        layer
        for layer in load_image_set(SANDBOX_IMAGES).layers
        if layer.dockerfile.name == "java.Dockerfile"
    ]


def _layer(tag: str) -> LayerImage:
    return next(layer for layer in load_image_set(SANDBOX_IMAGES).layers if layer.tag == tag)


def test_the_java_images_share_one_dockerfile_and_unstable_s_jdks_are_pinned() -> None:
    images = load_image_set(SANDBOX_IMAGES)
    sid = next(base for base in images.bases if base.suite == "sid")
    assert sid.apt_options == ("Acquire::Check-Valid-Until=false",)
    tags = {layer.tag: layer for layer in _java_layers()}
    assert set(tags) == {
        "migration-evals/java17:3",
        "migration-evals/java8:1",
        "migration-evals/java11:1",
    }
    assert tags["migration-evals/java17:3"].parents() == ["debian:12-slim"]
    assert tags["migration-evals/java17:3"].build_args["JDK"] == "openjdk-17-jdk-headless"
    for tag, jdk in (("migration-evals/java8:1", 8), ("migration-evals/java11:1", 11)):
        layer = tags[tag]
        assert layer.parents() == [sid.tag]
        package, _, version = layer.build_args["JDK"].partition("=")
        assert (package, bool(version)) == (f"openjdk-{jdk}-jdk-headless", True)
    assert len({layer.maven for layer in tags.values()}) == 1


@pytest.mark.parametrize(
    "base",
    [
        "{tag: t, suite: sid, apt_options: ['Acquire::Check-Valid-Until=false']}",
        "{tag: t, suite: sid, apt_options: ['Acquire::http::Pipeline-Depth=0', 'APT::Get::x=1']}",
        "{tag: t, suite: sid, apt_options: []}",
    ],
)
def test_a_base_may_carry_apt_options(tmp_path: Path, base: str) -> None:
    path = tmp_path / "images.yaml"
    path.write_text(f"bases: [{base}]\nlayers: []\n")
    assert load_image_set(path).bases[0].suite == "sid"


@pytest.mark.parametrize(
    "options",
    [
        "['-o Acquire::Check-Valid-Until=false']",  # flags are the builder's to add
        "['Acquire::Check-Valid-Until']",  # no value
        "['Acquire::Check-Valid-Until=false; rm -rf /']",  # a shell word of its own
        "['']",
        "Acquire::Check-Valid-Until=false",  # a list, not one string
    ],
)
def test_apt_options_that_are_not_one_key_value_are_refused(tmp_path: Path, options: str) -> None:
    path = tmp_path / "images.yaml"
    path.write_text(f"bases: [{{tag: t, suite: sid, apt_options: {options}}}]\nlayers: []\n")
    with pytest.raises(SpecError, match=r"bases\[0\]\.apt_options"):
        load_image_set(path)


def test_apt_options_are_part_of_a_base_definition_only_when_set() -> None:
    base = BaseImage("debian:12-slim", "bookworm", ("curl",))
    # Bases without options keep the definition they always had, so their images stay current.
    assert base.definition() == stamp({"kind": "base", "suite": "bookworm", "offline": ["curl"]})
    with_options = replace(base, apt_options=("Acquire::Check-Valid-Until=false",))
    assert with_options.definition() != base.definition()
    assert with_options.apt_flags() == ["-o", "Acquire::Check-Valid-Until=false"]


def test_a_layer_definition_changes_with_its_pinned_jdk(tmp_path: Path) -> None:
    image_set = load_image_set(SANDBOX_IMAGES)
    tags = {tag: f"sha256:{tag}" for tag in image_set.tags}
    builder = ImageBuilder(
        SimpleNamespace(images=_Images(tags, set())),  # type: ignore[arg-type]
        image_set,
        workdir=tmp_path,
        mirror=None,
    )
    java8 = _layer("migration-evals/java8:1")
    other = replace(java8, build_args={**java8.build_args, "JDK": "openjdk-8-jdk-headless=8u1-1"})
    assert builder._layer_definition(other) != builder._layer_definition(java8)
    assert builder._layer_definition(replace(java8)) == builder._layer_definition(java8)


class _Api:
    """``client.api`` recording what each layer build was given."""

    def __init__(self) -> None:
        self.builds: list[dict[str, Any]] = []

    def build(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        dockerfile = Path(kwargs["path"], "Dockerfile").read_text(encoding="utf-8")
        self.builds.append({**kwargs, "dockerfile": dockerfile})
        yield {"stream": "Step 1/1 : FROM x\n"}
        yield {"aux": {"ID": f"sha256:built-{kwargs['tag']}"}}


class _Mavens:
    def __init__(self) -> None:
        self.unpacked: list[MavenDistribution] = []

    def unpack(self, maven: MavenDistribution, target: Path) -> None:
        self.unpacked.append(maven)
        (target / "bin").mkdir(parents=True)


def _recording_builder(tmp_path: Path) -> tuple[ImageBuilder, _Api, _Mavens]:
    image_set = load_image_set(SANDBOX_IMAGES)
    api, mavens = _Api(), _Mavens()
    client = SimpleNamespace(
        images=_Images({tag: f"sha256:{tag}" for tag in image_set.tags}, set()), api=api
    )
    builder = ImageBuilder(
        client,  # type: ignore[arg-type]
        image_set,
        workdir=tmp_path,
        mirror="http://mirror.example/debian",
        is_root=True,
        mavens=mavens,  # type: ignore[arg-type]
    )
    return builder, api, mavens


def test_the_jdk_the_base_and_the_suite_s_apt_options_reach_the_layer_build(
    tmp_path: Path,
) -> None:
    builder, api, mavens = _recording_builder(tmp_path)
    tags = ["migration-evals/java17:3", "migration-evals/java8:1", "migration-evals/java11:1"]
    outcomes = builder.build(only=tags, rebuild=True)
    assert [o.image_id for o in outcomes] == [f"sha256:built-{tag}" for tag in tags]
    java17, java8, java11 = (build["buildargs"] for build in api.builds)
    assert java8 == {
        "BASE": "migration-evals/debian-sid:1",
        "JDK": _layer("migration-evals/java8:1").build_args["JDK"],
        "APT_SOURCES": "deb http://mirror.example/debian sid main",
        "APT_OPTIONS": "-o Acquire::Check-Valid-Until=false",
    }
    assert java11["JDK"].startswith("openjdk-11-jdk-headless=")
    assert java11["APT_OPTIONS"] == java8["APT_OPTIONS"]
    # JDK 17 builds as it always did: bookworm, no options (no flag for apt to misread).
    assert java17 == {
        "BASE": "debian:12-slim",
        "JDK": "openjdk-17-jdk-headless",
        "APT_SOURCES": "deb http://mirror.example/debian bookworm main",
    }
    assert {b["dockerfile"] for b in api.builds} == {
        (SANDBOX_IMAGES.parent / "java.Dockerfile").read_text(encoding="utf-8")
    }
    assert all(b["network_mode"] == "host" for b in api.builds)
    assert len(mavens.unpacked) == 3


def test_a_mirror_layer_that_builds_from_no_base_says_what_to_fix(tmp_path: Path) -> None:
    builder, _api, _mavens = _recording_builder(tmp_path)
    java8 = _layer("migration-evals/java8:1")
    stray = replace(java8, build_args={**java8.build_args, "BASE": "elsewhere:1"})
    with pytest.raises(SandboxError, match="must build FROM one of the bases in images.yaml"):
        builder._build_args(stray)


def test_a_base_s_apt_options_go_to_its_own_apt_get_runs(tmp_path: Path) -> None:
    commands: list[tuple[str, ...]] = []

    class _Recording(ImageBuilder):
        def _chroot(self, rootfs: Path, *command: str) -> str:
            commands.append(command)
            return ""

    rootfs = tmp_path / "rootfs"
    (rootfs / "etc" / "apt").mkdir(parents=True)
    builder = _Recording(
        SimpleNamespace(),  # type: ignore[arg-type]
        load_image_set(SANDBOX_IMAGES),
        workdir=tmp_path,
        mirror=None,
    )
    base = BaseImage("t", "sid", ("curl",), ("Acquire::Check-Valid-Until=false",))
    builder._offline_source(rootfs, base)
    apt_get = ["apt-get", "-o", "Acquire::Check-Valid-Until=false"]
    download = ["install", "-q", "-y", "--download-only", "--no-install-recommends", "curl"]
    # Those on the mirror's suite; the last reads the image's own offline source.
    assert [list(c) for c in commands if c[0] == "apt-get"] == [
        [*apt_get, "update", "-q"],
        ["apt-get", "clean"],
        [*apt_get, *download],
        ["apt-get", "update", "-q"],
    ]


@pytest.mark.docker
@pytest.mark.parametrize("layer", _java_layers(), ids=lambda layer: layer.tag)
def test_each_java_image_runs_its_own_jdk_and_maven_on_it(
    docker_client: docker.DockerClient, layer: LayerImage
) -> None:
    package, _, pinned = layer.build_args["JDK"].partition("=")
    major = int(package.split("-")[1])
    script = f"java -version 2>&1 && mvn -v && dpkg-query -W -f '${{Version}}\\n' {package}"
    # As the sandbox runs it: no network, unprivileged, read-only but for /tmp.
    output = docker_client.containers.run(
        layer.tag,
        ["sh", "-c", script],
        network_mode="none",
        user="65534:65534",
        environment={"HOME": "/tmp"},
        read_only=True,
        tmpfs={"/tmp": "exec"},
        remove=True,
    ).decode()
    version = "1.8.0_" if major == 8 else f"{major}."
    assert f'openjdk version "{version}' in output
    assert "Apache Maven 3.9.11" in output
    # Maven (MAVEN_OPTS included) runs on the image's JDK, found through JAVA_HOME.
    assert f"Java version: {version}" in output
    assert f"runtime: /usr/lib/jvm/java-{major}-openjdk-" in output
    assert not pinned or output.splitlines()[-1] == pinned


def test_independent_builds_run_at_the_same_time_and_each_waits_for_what_it_needs() -> None:
    # Both bases must be inside `work` together for the barrier to open: run one at a
    # time, the first waits alone and the barrier breaks.
    together = threading.Barrier(2, timeout=5)
    events: list[str] = []

    def work(name: str) -> str:
        events.append(f"start {name}")
        if name in {"base-a", "base-b"}:
            together.wait()
        events.append(f"end {name}")
        return name.upper()

    needs = {"layer": {"base-a"}, "top": {"layer", "base-b"}}
    done = in_dependency_order(["base-a", "base-b", "layer", "top"], needs, work, jobs=2)
    assert done == {"base-a": "BASE-A", "base-b": "BASE-B", "layer": "LAYER", "top": "TOP"}
    assert events.index("start layer") > events.index("end base-a")
    assert events.index("start top") > max(events.index("end layer"), events.index("end base-b"))


def test_after_a_failed_build_nothing_new_starts_and_the_failure_is_raised() -> None:
    started: list[str] = []

    def work(name: str) -> str:
        started.append(name)
        if name == "base":
            raise SandboxError("debootstrap bookworm failed")
        return name

    with pytest.raises(SandboxError, match="debootstrap bookworm failed"):
        in_dependency_order(["base", "other", "layer"], {"layer": {"base"}}, work, jobs=1)
    assert started == ["base"]


def test_a_parallel_build_builds_each_layer_after_the_images_it_builds_from(
    tmp_path: Path,
) -> None:
    image_set = load_image_set(SANDBOX_IMAGES)
    finished: list[str] = []
    lock = threading.Lock()

    class _Ordered(_Builder):
        def _moved(self, tag: str) -> str:
            image_id = super()._moved(tag)
            with lock:
                finished.append(tag)
            return image_id

    old = {tag: f"sha256:old-{tag}" for tag in image_set.tags}
    images = _Images(dict(old), in_use=set())
    builder = _Ordered(
        SimpleNamespace(images=images),  # type: ignore[arg-type]
        image_set,
        workdir=tmp_path,
        mirror=None,
    )
    outcomes = builder.build(rebuild=True, jobs=3)
    assert [o.tag for o in outcomes] == image_set.tags
    assert sorted(finished) == sorted(image_set.tags)
    for layer in image_set.layers:
        for parent in set(layer.parents()) & set(image_set.tags):
            assert finished.index(parent) < finished.index(layer.tag), (layer.tag, parent)
    # Removal still goes layers first, whatever order the builds finished in.
    assert images.removed == [old[t] for t in reversed(image_set.tags)]
