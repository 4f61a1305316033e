"""Parts of the Docker adapter that need no engine: naming cache volumes, trimming a
build's Dockerfile inside the context stream."""

from __future__ import annotations

import io
import tarfile

from migration_evals.oracles.sandbox.dependency_caches import cache_volume as _cache_volume
from migration_evals.oracles.sandbox.image_builds import stages_to_build as _stages_to_build


def test_cache_volumes_have_plain_names() -> None:
    assert _cache_volume("maven/0123abcd") == "me-cache-maven-0123abcd"
    assert _cache_volume("go") == "me-cache-go"


DOCKERFILE = b"""FROM debian:12-slim AS base
RUN true
FROM unrelated:1 AS tools
RUN false
FROM base AS runtime
CMD ["true"]
"""


def _context(files: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def _names(archive: io.BytesIO) -> dict[str, bytes]:
    with tarfile.open(fileobj=archive, mode="r:") as tar:
        found = {}
        for member in tar:
            handle = tar.extractfile(member)
            found[member.name] = handle.read() if handle else b""
    archive.seek(0)
    return found


def test_a_target_gets_a_dockerfile_of_only_the_stages_it_needs() -> None:
    archive = _context({"app/Dockerfile": DOCKERFILE, "app/main.go": b"package main\n"})
    name = _stages_to_build(archive, "app/Dockerfile", "runtime")
    files = _names(archive)
    assert name in files and name != "app/Dockerfile"
    assert b"unrelated:1" not in files[name] and b"FROM base AS runtime" in files[name]
    assert files["app/Dockerfile"] == DOCKERFILE  # the context itself is untouched


def test_without_a_target_the_last_stage_decides_what_is_left_out() -> None:
    # As BuildKit does: a stage the final one never uses is not built.
    archive = _context({"Dockerfile": DOCKERFILE})
    name = _stages_to_build(archive, "Dockerfile", None)
    files = _names(archive)
    assert name != "Dockerfile" and b"unrelated:1" not in files[name]


def test_with_nothing_to_leave_out_the_dockerfile_is_used_as_is() -> None:
    whole = b'FROM debian:12-slim AS base\nRUN true\nFROM base AS runtime\nCMD ["true"]\n'
    archive = _context({"Dockerfile": whole})
    assert _stages_to_build(archive, "Dockerfile", None) == "Dockerfile"
    assert list(_names(archive)) == ["Dockerfile"]
