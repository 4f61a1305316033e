"""Reading what a sandboxed run left in its workspace, from the engine's tar stream.

The workspace lives inside the container (a size- and inode-limited volume) and comes back
as the tar stream the engine's archive API sends: nothing the candidate wrote ever lands on
the harness's disk, so a directory chain ten thousand levels deep, a million empty files,
sockets, FIFOs or devices cannot hurt the harness. The stream is read once, in order:
regular files only (links, FIFOs and devices are skipped, never followed), at most
``max_members`` entries and ``max_depth`` folders deep (a workspace past either is the
candidate's, counted as over its limit), each report capped, class-file heads read from the
first bytes.
A report cut by a cap ends with a marker, so a parser fails on it rather than reading
half a report as a whole one.
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from migration_evals.oracles.grading import path_matches

__all__ = ["ChunkReader", "WorkspaceReading", "jar_packages_in_stream", "read_workspace"]

HEAD_BYTES = 8  # a class file's magic (4 bytes), minor and major version (2 + 2)


class ChunkReader(io.RawIOBase):
    """A readable stream over an iterable of byte chunks (the engine's archive stream)."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks: Iterator[bytes] = iter(chunks)
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self._pending = self._pending[size:]
        return size


@dataclass
class WorkspaceReading:
    """Report files as text and class-file heads as hex, relative to the folder read."""

    artifacts: dict[str, str] = field(default_factory=dict)
    heads: dict[str, str] = field(default_factory=dict)
    members: int = 0
    complete: bool = True  # False: the entry cap stopped the reading
    too_deep: bool = False  # an entry lies deeper than the harness follows


@dataclass(frozen=True, slots=True)
class _Caps:
    per_file: int
    total: int
    max_members: int
    max_heads: int
    max_depth: int


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """A stream's members one at a time, forgetting each once the next is read: a
    ``TarFile`` keeps every member it has read, which for a workspace of a million
    entries is a million headers in the harness's memory."""
    while (member := tar.next()) is not None:
        yield member
        tar.members.clear()  # type: ignore[attr-defined]  # not in the stubs, in the class


def _relative(name: str) -> str:
    """A member's path below the folder the stream was made of (its first component)."""
    _, _, rest = name.removeprefix("./").partition("/")
    return rest


def read_workspace(
    chunks: Iterable[bytes],
    *,
    collect: Sequence[str],
    inspect: Sequence[str],
    per_file: int,
    total: int,
    max_members: int = 2_000_000,
    max_heads: int = 100_000,
    max_depth: int = 1_000,
) -> WorkspaceReading:
    """Collect report files matching ``collect`` and heads of files matching ``inspect``
    from an archive stream of the run's folder. Entries deeper than ``max_depth``
    folders are not looked at, and the reading says so (``too_deep``)."""
    caps = _Caps(per_file, total, max_members, max_heads, max_depth)
    reading = WorkspaceReading()
    if not collect and not inspect:
        return reading
    budget = total
    with tarfile.open(fileobj=io.BufferedReader(ChunkReader(chunks)), mode="r|") as tar:
        for member in _members(tar):
            reading.members += 1
            if reading.members > caps.max_members:
                reading.complete = False
                break
            if member.name.count("/") > caps.max_depth:
                reading.too_deep = True
                continue
            if not member.isreg():
                continue
            relative = _relative(member.name)
            if collect and path_matches(relative, collect):
                budget = _collect(tar, member, relative, reading, caps, budget)
            elif (
                inspect and len(reading.heads) < caps.max_heads and path_matches(relative, inspect)
            ):
                handle = tar.extractfile(member)
                if handle is not None:
                    reading.heads[relative] = handle.read(HEAD_BYTES).hex()
    return reading


def _collect(  # noqa: PLR0917 - one step of read_workspace's loop, its state passed in
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    relative: str,
    reading: WorkspaceReading,
    caps: _Caps,
    budget: int,
) -> int:
    if budget <= 0:
        reading.artifacts[relative] = "[not read: report size budget exhausted]"
        return budget
    handle = tar.extractfile(member)
    if handle is None:
        return budget
    limit = min(caps.per_file, budget)
    data = handle.read(limit + 1)
    cut = len(data) > limit
    data = data[:limit]
    reading.artifacts[relative] = data.decode("utf-8", "replace") + ("\n[truncated]" if cut else "")
    return budget - len(data)


def jar_packages_in_stream(chunks: Iterable[bytes], *, max_jar_bytes: int = 64 << 20) -> list[str]:
    """The Java packages of the classes in the jars of an archive stream (a dependency
    cache read back from its volume); oversized or broken jars are skipped."""
    packages: set[str] = set()
    with tarfile.open(fileobj=io.BufferedReader(ChunkReader(chunks)), mode="r|") as tar:
        for member in _members(tar):
            if not member.isreg() or not member.name.endswith(".jar"):
                continue
            if member.size > max_jar_bytes:
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            try:
                with zipfile.ZipFile(io.BytesIO(handle.read())) as archive:
                    names = archive.namelist()
            except (zipfile.BadZipFile, ValueError):
                continue
            for name in names:
                folder, _, leaf = name.rpartition("/")
                if leaf.endswith(".class") and folder and not folder.startswith("META-INF"):
                    packages.add(folder.replace("/", "."))
    return sorted(packages)
