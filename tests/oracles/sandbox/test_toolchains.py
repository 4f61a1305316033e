"""Go toolchains from the module proxy: the go.sum hash, verification, unpacking."""

from __future__ import annotations

import base64
import hashlib
import io
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from migration_evals.core.errors import SandboxError
from migration_evals.oracles.sandbox.registry import Upstream
from migration_evals.oracles.sandbox.toolchains import GoToolchain, ToolchainFetcher, zip_h1
from tests.fakes import FakeRegistry

PREFIX = "golang.org/toolchain@v0.0.1-go1.22.12.linux-amd64/"
ZIP_PATH = "golang.org/toolchain/@v/v0.0.1-go1.22.12.linux-amd64.zip"
FILES = {
    "bin/go": b"#!go\n",
    "pkg/tool/linux_amd64/compile": b"compiler",
    "src/fmt/print.go": b"package fmt\n",
    "VERSION": b"go1.22.12\n",
}


def _zip(files: Mapping[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _go_sum_hash(files: Mapping[str, bytes]) -> str:
    """dirhash.Hash1, written out: sha256 over sorted "<sha256 hex>  <name>" lines."""
    lines = "".join(
        f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files)
    )
    return "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()


def _toolchain_files() -> dict[str, bytes]:
    return {PREFIX + name: content for name, content in FILES.items()}


def test_zip_h1_is_the_hash_go_itself_reports() -> None:
    # `go mod download -json example.com/tiny@v1.0.0`, served this zip, reports this Sum.
    tiny = {
        "example.com/tiny@v1.0.0/go.mod": b"module example.com/tiny\n",
        "example.com/tiny@v1.0.0/tiny.go": b"package tiny\n\nconst Answer = 42\n",
    }
    assert zip_h1(_zip(tiny)) == "h1:X7y9qlH7uwPOqUOqnjwa0VmVX6YxDzZ3IOMXqr2qZV4="


def test_zip_h1_follows_the_go_sum_algorithm_whatever_the_zip_order() -> None:
    files = _toolchain_files()
    reordered = dict(reversed(list(files.items())))
    assert zip_h1(_zip(files)) == _go_sum_hash(files) == zip_h1(_zip(reordered))
    changed = {**files, PREFIX + "VERSION": b"go1.22.13\n"}
    assert zip_h1(_zip(changed)) != zip_h1(_zip(files))


@pytest.fixture
def proxy(upstream_registry: FakeRegistry) -> FakeRegistry:
    upstream_registry.files[ZIP_PATH] = _zip(_toolchain_files())
    return upstream_registry


def _pinned(h1: str) -> GoToolchain:
    return GoToolchain("go1.22.12", h1)


def test_a_verified_toolchain_unpacks_with_its_programs_executable(
    tmp_path: Path, proxy: FakeRegistry
) -> None:
    files = {**_toolchain_files(), "elsewhere@v1/bin/other": b"not the toolchain's"}
    proxy.files[ZIP_PATH] = _zip(files)
    toolchain = _pinned(_go_sum_hash(files))
    ToolchainFetcher(Upstream(proxy.url)).unpack(toolchain, tmp_path / "goroot")
    assert proxy.paths == [f"/{ZIP_PATH}"]
    root = tmp_path / "goroot"
    assert {
        str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()
    } == FILES
    executable = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    modes = {name: (root / name).stat().st_mode & executable for name in FILES}
    assert modes == {
        "bin/go": executable,
        "pkg/tool/linux_amd64/compile": executable,
        "src/fmt/print.go": 0,
        "VERSION": 0,
    }


def test_a_toolchain_whose_hash_is_not_the_pinned_one_is_refused_and_not_unpacked(
    tmp_path: Path, proxy: FakeRegistry
) -> None:
    pinned = _go_sum_hash({**_toolchain_files(), PREFIX + "bin/go": b"reviewed\n"})
    with pytest.raises(SandboxError, match="refusing it") as raised:
        ToolchainFetcher(Upstream(proxy.url)).unpack(_pinned(pinned), tmp_path / "goroot")
    assert pinned in str(raised.value)
    assert not (tmp_path / "goroot").exists()


def test_a_path_climbing_out_of_the_goroot_is_refused(tmp_path: Path, proxy: FakeRegistry) -> None:
    files = {**_toolchain_files(), PREFIX + "bin/../../escaped": b"x"}
    proxy.files[ZIP_PATH] = _zip(files)
    with pytest.raises(SandboxError, match="unsafe path"):
        ToolchainFetcher(Upstream(proxy.url)).unpack(
            _pinned(_go_sum_hash(files)), tmp_path / "goroot"
        )
    assert not (tmp_path / "escaped").exists()


def test_a_proxy_without_the_version_is_an_error_naming_it_without_credentials(
    proxy: FakeRegistry,
) -> None:
    del proxy.files[ZIP_PATH]
    host = proxy.url.removeprefix("http://")
    fetcher = ToolchainFetcher(Upstream(f"http://ci:hunter2@{host}"))
    with pytest.raises(SandboxError, match="answered 404 for Go go1.22.12") as raised:
        fetcher.download(_pinned("h1:whatever"))
    assert "hunter2" not in str(raised.value)
    assert proxy.seen[0].authorization is not None
