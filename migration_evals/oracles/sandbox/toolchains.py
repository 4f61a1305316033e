"""Toolchains from the registries, for the sandbox images.

Go publishes every release as the module ``golang.org/toolchain`` (version
``v0.0.1-go1.22.12.linux-amd64``): the same zips the ``go`` command fetches when a
``go.mod`` asks for a newer Go. Apache Maven publishes its distributions on Maven Central
(``org.apache.maven:apache-maven:<version>:tar.gz:bin``). The image set pins a version
and its hash (the checksum database's ``h1:`` for Go, the SHA-512 Apache publishes for
Maven), so the bytes a build puts in an image are the ones reviewed, whichever registry or
company mirror served them.
"""

from __future__ import annotations

import base64
import hashlib
import io
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import requests

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.registry import Upstream

__all__ = ["GoToolchain", "MavenDistribution", "MavenFetcher", "ToolchainFetcher", "zip_h1"]

_MODULE = "golang.org/toolchain"
_PLATFORM = "linux-amd64"
_EXECUTABLE_DIRS = ("bin/", f"pkg/tool/{_PLATFORM.replace('-', '_')}/")


@dataclass(frozen=True, slots=True)
class GoToolchain:
    """A pinned Go release: ``version`` like ``go1.22.12``, ``h1`` its module hash."""

    version: str
    h1: str

    @property
    def module_version(self) -> str:
        return f"v0.0.1-{self.version}.{_PLATFORM}"

    @property
    def prefix(self) -> str:
        """Every file in the zip sits under this folder name."""
        return f"{_MODULE}@{self.module_version}/"


@dataclass(frozen=True, slots=True)
class MavenDistribution:
    """A pinned Apache Maven release: ``version`` like ``3.9.11``, ``sha512`` of its
    ``-bin.tar.gz``."""

    version: str
    sha512: str

    @property
    def path(self) -> str:
        """Where Maven Central (or a mirror of it) keeps the distribution."""
        name = f"apache-maven-{self.version}-bin.tar.gz"
        return f"org/apache/maven/apache-maven/{self.version}/{name}"

    @property
    def prefix(self) -> str:
        return f"apache-maven-{self.version}/"


def zip_h1(data: bytes) -> str:
    """The module hash of a module zip, as go.sum and the checksum database write it."""
    summary = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in sorted(archive.namelist()):
            if name.endswith("/"):
                continue
            digest = hashlib.sha256(archive.read(name)).hexdigest()
            summary.append(f"{digest}  {name}\n")
    combined = hashlib.sha256("".join(summary).encode("utf-8")).digest()
    return "h1:" + base64.b64encode(combined).decode("ascii")


class ToolchainFetcher:
    """Downloads pinned toolchains through a Go module proxy and unpacks them."""

    def __init__(self, proxy: Upstream, session: requests.Session | None = None) -> None:
        self.proxy = proxy
        self.session = session or requests.Session()

    def download(self, toolchain: GoToolchain) -> bytes:
        url, auth = self.proxy.target(f"{_MODULE}/@v/{toolchain.module_version}.zip")
        try:
            response = self.session.get(url, auth=auth, timeout=(10, 600))
        except requests.RequestException as exc:
            raise SandboxError(
                f"cannot download Go {toolchain.version} from the module proxy "
                f"{self.proxy.shown}: {type(exc).__name__}"
            ) from exc
        if response.status_code != 200:
            raise SandboxError(
                f"the module proxy {self.proxy.shown} answered {response.status_code} "
                f"for Go {toolchain.version}"
            )
        found = zip_h1(response.content)
        if found != toolchain.h1:
            raise SandboxError(
                f"Go {toolchain.version} from {self.proxy.shown} has hash {found}; the image "
                f"set pins {toolchain.h1}: refusing it"
            )
        return response.content

    def unpack(self, toolchain: GoToolchain, target: Path) -> None:
        """Download, verify and unpack the toolchain as a GOROOT at ``target``."""
        data = self.download(toolchain)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                name = info.filename
                if info.is_dir() or not name.startswith(toolchain.prefix):
                    continue
                relative = name.removeprefix(toolchain.prefix)
                if relative.startswith("/") or ".." in relative.split("/"):
                    raise SandboxError(f"unsafe path in the Go toolchain zip: {name}")
                destination = target / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(archive.read(info))
                # Module zips carry no file modes; Go marks its own programs executable.
                if relative.startswith(_EXECUTABLE_DIRS):
                    mode = destination.stat().st_mode
                    destination.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class MavenFetcher:
    """Downloads pinned Maven distributions through a Maven repository and unpacks them."""

    def __init__(self, repository: Upstream, session: requests.Session | None = None) -> None:
        self.repository = repository
        self.session = session or requests.Session()

    def download(self, maven: MavenDistribution) -> bytes:
        url, auth = self.repository.target(maven.path)
        what = f"Maven {maven.version} from {self.repository.shown}"
        try:
            response = self.session.get(url, auth=auth, timeout=(10, 600))
        except requests.RequestException as exc:
            raise SandboxError(f"cannot download {what}: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise SandboxError(
                f"cannot download {what}: the registry answered {response.status_code}"
            )
        found = hashlib.sha512(response.content).hexdigest()
        if found != maven.sha512:
            raise SandboxError(
                f"{what} has SHA-512 {found[:16]}…; the image set pins another: refusing it"
            )
        return response.content

    def unpack(self, maven: MavenDistribution, target: Path) -> None:
        """Download, verify and unpack the distribution as a Maven home at ``target``."""
        data = self.download(maven)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                relative = member.name.removeprefix(maven.prefix)
                if relative == member.name or not relative:
                    continue
                if relative.startswith("/") or ".." in relative.split("/"):
                    raise SandboxError(f"unsafe path in the Maven distribution: {member.name}")
                destination = target / relative
                if member.isdir():
                    destination.mkdir(parents=True, exist_ok=True)
                elif member.isfile():
                    handle = archive.extractfile(member)
                    assert handle is not None
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    destination.write_bytes(handle.read())
                    destination.chmod(0o755 if member.mode & 0o111 else 0o644)
