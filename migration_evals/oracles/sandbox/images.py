"""Building the sandbox images locally, so no image registry is needed.

``specs/images/images.yaml`` lists two kinds of image:

* **bases**: a minimal Debian root filesystem made with ``debootstrap`` from the apt mirror
  configured on the machine, optionally with a package source inside the image that
  serves a few packages offline, imported into the engine under its tag;
* **layers**: built in order with the engine from a Dockerfile beside ``images.yaml``.

Every image carries a label with the digest of its definition (for a layer, including the
content ids of the images it builds FROM), so a second build reuses what is current and
rebuilds only what changed. Failures raise ``SandboxError``: a missing image is the
infrastructure's problem, never a candidate's.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import docker
import docker.errors

from migration_evals.core.errors import SandboxError
from migration_evals.core.specs import validate
from migration_evals.core.stamps import stamp
from migration_evals.core.yamlio import load_yaml_file
from migration_evals.oracles.ecosystems.dockerfile.model import base_images
from migration_evals.oracles.sandbox.toolchains import (
    GoToolchain,
    MavenDistribution,
    MavenFetcher,
    ToolchainFetcher,
)

__all__ = [
    "DEFINITION_LABEL",
    "BaseImage",
    "BuildAction",
    "BuildOutcome",
    "ImageBuilder",
    "ImageSet",
    "LayerImage",
    "apt_mirror",
    "in_dependency_order",
    "load_image_set",
    "missing_images",
]

DEFINITION_LABEL = "org.migration-evals.definition"
OFFLINE_SOURCE = "/var/lib/migration-evals/apt"
T = TypeVar("T")
_CHROOT_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "DEBIAN_FRONTEND": "noninteractive",
    "LC_ALL": "C",
}
_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}}
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["bases", "layers"],
    "properties": {
        "bases": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["tag", "suite"],
                "properties": {
                    "tag": {"type": "string", "minLength": 1},
                    "suite": {"type": "string", "pattern": "^[a-z]+$"},
                    "offline_packages": _STRINGS,
                    # apt configuration (``-o`` options) for this suite on the mirror, for
                    # every apt-get run on it, here and in the layers built FROM the base:
                    # a mirror's copy of a suite whose Release file is past its Valid-Until
                    # date (a snapshot of Debian unstable) needs the date check off. One
                    # ``Key=value`` each, no spaces: a layer's Dockerfile splits them on spaces.
                    "apt_options": {
                        "type": "array",
                        "items": {"type": "string", "pattern": r"^[A-Za-z][\w-]*(::[\w-]+)*=\S+$"},
                    },
                },
            },
        },
        "layers": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["tag", "dockerfile"],
                "properties": {
                    "tag": {"type": "string", "minLength": 1},
                    "dockerfile": {"type": "string", "pattern": r"^[\w.-]+$"},
                    "needs_mirror": {"type": "boolean"},
                    "files": {
                        "type": "array",
                        "items": {"type": "string", "pattern": r"^[\w.-]+$"},
                    },
                    "build_args": {"type": "object", "additionalProperties": {"type": "string"}},
                    "maven": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["version", "sha512"],
                        "properties": {
                            "version": {"type": "string", "pattern": r"^\d+\.\d+\.\d+$"},
                            "sha512": {"type": "string", "pattern": "^[0-9a-f]{128}$"},
                        },
                    },
                    "go_toolchain": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["version", "h1"],
                        "properties": {
                            "version": {"type": "string", "pattern": r"^go1\.\d+(\.\d+)?$"},
                            "h1": {"type": "string", "pattern": "^h1:[A-Za-z0-9+/]{43}=$"},
                        },
                    },
                },
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class BaseImage:
    tag: str
    suite: str
    offline_packages: tuple[str, ...] = ()
    apt_options: tuple[str, ...] = ()

    def definition(self) -> str:
        fields: dict[str, Any] = {
            "kind": "base",
            "suite": self.suite,
            "offline": list(self.offline_packages),
        }
        # Only when set, so the definitions of bases without options (and the images
        # carrying them) stay what they were.
        if self.apt_options:
            fields["apt_options"] = list(self.apt_options)
        return stamp(fields)

    def apt_flags(self) -> list[str]:
        """``apt_options`` as apt-get's command-line flags."""
        return [flag for option in self.apt_options for flag in ("-o", option)]


@dataclass(frozen=True, slots=True)
class LayerImage:
    tag: str
    dockerfile: Path
    build_args: Mapping[str, str] = field(default_factory=dict)
    needs_mirror: bool = False
    # Unpacked into the build context as ``go/`` (a GOROOT) when set.
    go_toolchain: GoToolchain | None = None
    # Unpacked into the build context as ``maven/`` (a Maven home) when set.
    maven: MavenDistribution | None = None
    # Files beside images.yaml copied into the build context (sources the layer builds).
    files: tuple[Path, ...] = ()

    def parents(self) -> list[str]:
        """The images this layer builds FROM, with its build arguments substituted."""
        text = self.dockerfile.read_text(encoding="utf-8")
        for name, value in self.build_args.items():
            text = text.replace("${" + name + "}", value).replace("$" + name, value)
        return base_images(text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class ImageSet:
    bases: tuple[BaseImage, ...]
    layers: tuple[LayerImage, ...]

    @property
    def tags(self) -> list[str]:
        return [base.tag for base in self.bases] + [layer.tag for layer in self.layers]


def load_image_set(path: Path) -> ImageSet:
    """Read and validate ``images.yaml``; Dockerfiles are found beside it."""
    data = load_yaml_file(path, name=str(path))
    validate(data, _SCHEMA, file=str(path))
    bases = tuple(
        BaseImage(
            b["tag"],
            b["suite"],
            tuple(b.get("offline_packages", ())),
            tuple(b.get("apt_options", ())),
        )
        for b in data["bases"]
    )
    layers = tuple(
        LayerImage(
            layer["tag"],
            path.parent / layer["dockerfile"],
            dict(layer.get("build_args", {})),
            bool(layer.get("needs_mirror", False)),
            _toolchain(layer.get("go_toolchain")),
            _maven(layer.get("maven")),
            tuple(path.parent / name for name in layer.get("files", ())),
        )
        for layer in data["layers"]
    )
    return ImageSet(bases, layers)


def _toolchain(data: Mapping[str, str] | None) -> GoToolchain | None:
    return GoToolchain(data["version"], data["h1"]) if data else None


def _maven(data: Mapping[str, str] | None) -> MavenDistribution | None:
    return MavenDistribution(data["version"], data["sha512"]) if data else None


_ONE_LINE = re.compile(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)(?:\s+(.*))?$")


def _deb822_entries(text: str) -> Iterator[tuple[str, str, str]]:
    for paragraph in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in paragraph.splitlines():
            if ":" in line and not line.startswith((" ", "#")):
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled") == "no":
            continue
        for uri in fields.get("uris", "").split():
            for suite in fields.get("suites", "").split():
                yield uri, suite, fields.get("components", "")


def _entries(name: str, text: str) -> Iterator[tuple[str, str, str]]:
    if name.endswith(".sources"):
        yield from _deb822_entries(text)
        return
    for line in text.splitlines():
        found = _ONE_LINE.match(line)
        if found:
            yield found[1], found[2], found[3] or ""


def apt_mirror(sources: Iterable[tuple[str, str]]) -> str | None:
    """The Debian mirror of an apt configuration: the first ``deb`` source of a release
    suite (not -security, -updates or -backports) with the ``main`` component.

    ``sources`` are (file name, text) pairs, one-line ``.list`` or deb822 ``.sources``.
    """
    for name, text in sources:
        for uri, suite, components in _entries(name, text):
            if "-" not in suite and "main" in components.split():
                return uri.rstrip("/")
    return None


def missing_images(client: docker.DockerClient, tags: Iterable[str]) -> list[str]:
    """The tags the engine does not have (engine errors raise ``SandboxError``)."""
    missing = []
    for tag in tags:
        try:
            client.images.get(tag)
        except docker.errors.ImageNotFound:
            missing.append(tag)
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot reach the Docker engine: {exc}") from exc
    return missing


class BuildAction(StrEnum):
    BUILT = "built"
    REUSED = "reused"


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    tag: str
    image_id: str
    action: BuildAction


def _split_tag(tag: str) -> tuple[str, str]:
    repository, _, name = tag.rpartition(":")
    if not repository or "/" in name:
        return tag, "latest"
    return repository, name


class ImageBuilder:
    """Builds an ``ImageSet`` into the engine behind ``client``."""

    def __init__(
        self,
        client: docker.DockerClient,
        images: ImageSet,
        *,
        workdir: Path,
        mirror: str | None,
        log: Callable[[str], None] = lambda _line: None,
        is_root: bool = False,
        toolchains: ToolchainFetcher | None = None,
        mavens: MavenFetcher | None = None,
    ) -> None:
        self.client = client
        self.images = images
        self.toolchains = toolchains
        self.mavens = mavens
        self.workdir = workdir
        self.mirror = mirror
        self.log = log
        self.is_root = is_root
        self._replaced: dict[str, str] = {}  # tag -> the image id it had before

    def build(
        self, *, only: Sequence[str] = (), rebuild: bool = False, jobs: int = 1
    ) -> list[BuildOutcome]:
        """Build (or reuse) every image, each once the images it builds FROM are ready.

        With ``jobs`` above one, images that do not build on each other build at the same
        time: debootstrap and apt spend most of their time waiting on the mirror, so the
        three bases and the layers over them overlap well even on two cores.
        """
        unknown = sorted(set(only) - set(self.images.tags))
        if unknown:
            raise SandboxError(f"no such image in the image set: {', '.join(unknown)}")
        wanted = [tag for tag in self.images.tags if not only or tag in only]
        images: dict[str, BaseImage | LayerImage] = {
            **{base.tag: base for base in self.images.bases},
            **{layer.tag: layer for layer in self.images.layers},
        }
        outcomes = in_dependency_order(
            wanted,
            self._prerequisites(wanted),
            lambda tag: self._ensure(images[tag], rebuild),
            jobs=jobs,
        )
        self._remove_replaced()
        return [outcomes[tag] for tag in wanted]

    def _prerequisites(self, wanted: Sequence[str]) -> dict[str, set[str]]:
        """For each wanted image, the wanted images listed before it that it builds FROM
        (a layer over an image not being built uses the one the engine has)."""
        earlier: set[str] = set()
        needs: dict[str, set[str]] = {}
        layers = {layer.tag: layer for layer in self.images.layers}
        for tag in wanted:
            parents = set(layers[tag].parents()) if tag in layers else set()
            needs[tag] = parents & earlier
            earlier.add(tag)
        return needs

    def _tagged_id(self, tag: str) -> str | None:
        try:
            return str(self.client.images.get(tag).id)
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot reach the Docker engine: {exc}") from exc

    def _remove_replaced(self) -> None:
        """Remove the images a rebuild took the tags from, so they do not pile up: layers
        before the bases they were built on (the image set's order reversed, whatever order
        the builds finished in); one still in use (a container, an image built on it
        elsewhere) stays, and the engine says why."""
        replaced = [self._replaced[tag] for tag in self.images.tags if tag in self._replaced]
        for image_id in reversed(replaced):
            try:
                self.client.images.remove(image_id, noprune=False)
            except docker.errors.ImageNotFound:
                continue
            except docker.errors.APIError as exc:
                self.log(f"kept the replaced image {image_id[:19]}: {exc.explanation or exc}")
            else:
                self.log(f"removed the replaced image {image_id[:19]}")
        self._replaced.clear()

    def _current_id(self, tag: str, definition: str) -> str | None:
        try:
            image = self.client.images.get(tag)
        except docker.errors.ImageNotFound:
            return None
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot reach the Docker engine: {exc}") from exc
        labels = image.attrs.get("Config", {}).get("Labels") or {}
        return str(image.id) if labels.get(DEFINITION_LABEL) == definition else None

    def _ensure(self, image: BaseImage | LayerImage, rebuild: bool) -> BuildOutcome:
        tag = image.tag
        definition = (
            image.definition() if isinstance(image, BaseImage) else self._layer_definition(image)
        )
        current = None if rebuild else self._current_id(tag, definition)
        if current is not None:
            self.log(f"{tag}: up to date ({current[:19]})")
            return BuildOutcome(tag, current, BuildAction.REUSED)
        self.log(f"{tag}: building")
        previous = self._tagged_id(tag)
        if isinstance(image, BaseImage):
            image_id = self._build_base(image, definition)
        else:
            image_id = self._build_layer(image, definition)
        self.log(f"{tag}: built {image_id[:19]}")
        if previous is not None and previous != image_id:
            self._replaced[tag] = previous
        return BuildOutcome(tag, image_id, BuildAction.BUILT)

    def _layer_definition(self, layer: LayerImage) -> str:
        parents = {}
        for parent in layer.parents():
            try:
                parents[parent] = str(self.client.images.get(parent).id)
            except docker.errors.ImageNotFound:
                parents[parent] = "missing"  # the build below then fails, naming it
            except docker.errors.DockerException as exc:
                raise SandboxError(f"cannot reach the Docker engine: {exc}") from exc
        return stamp(
            {
                "kind": "layer",
                "dockerfile": layer.dockerfile.read_text(encoding="utf-8"),
                "build_args": dict(layer.build_args),
                "parents": parents,
                "go_toolchain": (
                    [layer.go_toolchain.version, layer.go_toolchain.h1]
                    if layer.go_toolchain
                    else None
                ),
                "maven": [layer.maven.version, layer.maven.sha512] if layer.maven else None,
                # Only when there are some: the stamps of layers without files stay as they were.
                **(
                    {"files": {f.name: f.read_text(encoding="utf-8") for f in layer.files}}
                    if layer.files
                    else {}
                ),
            }
        )

    # -- bases -------------------------------------------------------------------------

    def _require_mirror(self) -> str:
        if not self.mirror:
            raise SandboxError(
                "no Debian apt mirror found in /etc/apt/sources.list*; pass --mirror URL"
            )
        return self.mirror

    def _build_base(self, base: BaseImage, definition: str) -> str:
        if not self.is_root:
            raise SandboxError(
                f"building {base.tag} needs root (debootstrap and chroot); run "
                "`migration-evals images build` as root, or use images from a registry"
            )
        mirror = self._require_mirror()
        self.workdir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="base-", dir=self.workdir))
        try:
            rootfs = work / "rootfs"
            self._run(
                [
                    "debootstrap",
                    "--variant=minbase",
                    "--components=main",
                    base.suite,
                    str(rootfs),
                    mirror,
                ],
                what=f"debootstrap {base.suite}",
            )
            self._offline_source(rootfs, base)
            self._slim(rootfs)
            archive = work / "rootfs.tar"
            self._run(
                ["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(archive), "."],
                what="tar",
            )
            return self._import(archive, base.tag, definition)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _run(self, command: Sequence[str], *, what: str) -> str:
        done = subprocess.run(
            list(command), env=_CHROOT_ENV, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise SandboxError(f"{what} failed (exit {done.returncode}):\n{tail}")
        return done.stdout

    def _chroot(self, rootfs: Path, *command: str) -> str:
        return self._run(["chroot", str(rootfs), *command], what=" ".join(command[:3]))

    def _offline_source(self, rootfs: Path, base: BaseImage) -> None:
        """Download the base's offline packages and their dependencies into a flat apt
        repository inside the root filesystem and make it the image's only package source."""
        sources = rootfs / "etc" / "apt" / "sources.list"
        if not base.offline_packages:
            sources.write_text("")
            return
        apt_get = ("apt-get", *base.apt_flags())
        self._chroot(rootfs, *apt_get, "update", "-q")
        self._chroot(rootfs, "apt-get", "clean")  # drop what debootstrap left behind
        self._chroot(
            rootfs,
            *apt_get,
            "install",
            "-q",
            "-y",
            "--download-only",
            "--no-install-recommends",
            *base.offline_packages,
        )
        repo = rootfs / OFFLINE_SOURCE.lstrip("/")
        repo.mkdir(parents=True, exist_ok=True)
        for deb in sorted((rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb")):
            shutil.move(deb, repo / deb.name)
        packages_text = self._packages_index(rootfs, repo)
        (repo / "Packages").write_text(packages_text)
        (repo / "Release").write_text(_release(packages_text))
        sources.write_text(f"deb [trusted=yes] file:{OFFLINE_SOURCE} ./\n")
        self._chroot(rootfs, "apt-get", "update", "-q")  # proves the source works offline

    def _packages_index(self, rootfs: Path, repo: Path) -> str:
        paragraphs = []
        for deb in sorted(repo.glob("*.deb")):
            inside = f"{OFFLINE_SOURCE}/{deb.name}"
            control = self._chroot(rootfs, "dpkg-deb", "--field", inside).rstrip("\n")
            data = deb.read_bytes()
            paragraphs.append(
                f"{control}\nFilename: ./{deb.name}\nSize: {len(data)}\n"
                f"SHA256: {hashlib.sha256(data).hexdigest()}\n"
            )
        return "\n".join(paragraphs)

    @staticmethod
    def _slim(rootfs: Path) -> None:
        for folder in ("var/lib/apt/lists", "var/cache/apt/archives"):
            for path in (rootfs / folder).glob("*"):
                if path.is_file():
                    path.unlink()
        for path in (rootfs / "var" / "cache" / "apt").glob("*.bin"):
            path.unlink()

    def _import(self, archive: Path, tag: str, definition: str) -> str:
        repository, name = _split_tag(tag)
        changes = [
            "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "ENV LANG=C.UTF-8",
            'CMD ["bash"]',
            f"LABEL {DEFINITION_LABEL}={definition}",
        ]
        try:
            self.client.api.import_image(
                src=str(archive), repository=repository, tag=name, changes=changes
            )
            return str(self.client.images.get(tag).id)
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot import {tag}: {exc}") from exc

    # -- layers ------------------------------------------------------------------------

    def _build_args(self, layer: LayerImage) -> dict[str, str]:
        """The layer's own build arguments and, for one that installs from the mirror, the
        apt source of its base's suite (``APT_SOURCES``) and that suite's apt options
        (``APT_OPTIONS``, only when the base has any: other Dockerfiles do not declare it)."""
        args = dict(layer.build_args)
        if layer.needs_mirror:
            base = self._mirror_base(layer)
            args["APT_SOURCES"] = f"deb {self._require_mirror()} {base.suite} main"
            if base.apt_options:
                args["APT_OPTIONS"] = " ".join(base.apt_flags())
        return args

    def _mirror_base(self, layer: LayerImage) -> BaseImage:
        bases = {base.tag: base for base in self.images.bases}
        parents = [bases[p] for p in layer.parents() if p in bases]
        if not parents:
            raise SandboxError(
                f"{layer.tag}: a needs_mirror layer must build FROM one of the bases in "
                "images.yaml, whose suite it installs from; fix its Dockerfile or build_args"
            )
        return parents[0]

    def _build_layer(self, layer: LayerImage, definition: str) -> str:
        self.workdir.mkdir(parents=True, exist_ok=True)
        context = Path(tempfile.mkdtemp(prefix="layer-", dir=self.workdir))
        try:
            shutil.copyfile(layer.dockerfile, context / "Dockerfile")
            for source in layer.files:
                shutil.copyfile(source, context / source.name)
            if layer.go_toolchain is not None:
                self._unpack_toolchain(layer, context / "go")
            if layer.maven is not None:
                self._unpack_maven(layer, context / "maven")
            stream = self.client.api.build(
                path=str(context),
                tag=layer.tag,
                buildargs=self._build_args(layer),
                labels={DEFINITION_LABEL: definition},
                # Only our own Dockerfiles that install from the mirror get a network.
                network_mode="host" if layer.needs_mirror else "none",
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
            )
            return self._follow(layer.tag, stream)
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot build {layer.tag}: {exc}") from exc
        finally:
            shutil.rmtree(context, ignore_errors=True)

    def _unpack_toolchain(self, layer: LayerImage, target: Path) -> None:
        toolchain = layer.go_toolchain
        if toolchain is None:
            return
        if self.toolchains is None:
            raise SandboxError(f"{layer.tag} needs Go from a module proxy; none is configured")
        self.log(f"{layer.tag}: fetching Go {toolchain.version} from the module proxy")
        self.toolchains.unpack(toolchain, target)

    def _unpack_maven(self, layer: LayerImage, target: Path) -> None:
        maven = layer.maven
        if maven is None:
            return
        if self.mavens is None:
            raise SandboxError(f"{layer.tag} needs Maven from a Maven repository; none is set")
        self.log(f"{layer.tag}: fetching Maven {maven.version} from the Maven repository")
        self.mavens.unpack(maven, target)

    def _follow(self, tag: str, stream: Iterable[Mapping[str, Any]]) -> str:
        tail: list[str] = []
        image_id = ""
        for message in stream:
            if "error" in message:
                detail = "\n".join(tail[-10:])
                raise SandboxError(f"building {tag} failed: {message['error']}\n{detail}")
            text = str(message.get("stream", "")).rstrip()
            if text:
                tail = [*tail[-30:], text]
                if text.startswith("Step "):
                    self.log(f"{tag}: {text}")
            aux = message.get("aux")
            if isinstance(aux, Mapping) and "ID" in aux:
                image_id = str(aux["ID"])
        return image_id or str(self.client.images.get(tag).id)


def in_dependency_order(
    order: Sequence[str],
    needs: Mapping[str, set[str]],
    work: Callable[[str], T],
    *,
    jobs: int,
) -> dict[str, T]:
    """Run ``work`` on every name of ``order``, at most ``jobs`` at a time, each only after
    the names it ``needs`` have finished. After a failure nothing new starts; the running
    ones finish and the first failure is raised."""
    done: dict[str, T] = {}
    pending = list(order)
    failure: BaseException | None = None
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running: dict[Future[T], str] = {}
        while pending or running:
            ready = [name for name in pending if needs.get(name, set()) <= done.keys()]
            for name in ready[: max(0, max(1, jobs) - len(running))] if failure is None else []:
                pending.remove(name)
                running[pool.submit(work, name)] = name
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                name = running.pop(future)
                try:
                    done[name] = future.result()
                except BaseException as exc:  # re-raised below, after the others finish
                    failure = failure or exc
    if failure is not None:
        raise failure
    if pending:
        raise SandboxError(f"cannot order the builds of: {', '.join(pending)}")
    return done


def _release(packages_text: str) -> str:
    data = packages_text.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    return (
        "Origin: migration-evals\nLabel: offline packages\nSuite: offline\n"
        f"SHA256:\n {digest} {len(data)} Packages\n"
    )
