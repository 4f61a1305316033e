"""The harness's side of a sandbox's tree copy: preparing it, and reading it afterwards.

Everything in the copy was written by untrusted code, so reading it back follows no
symbolic link (a report that links to a host file must not leak that file), stays inside
the copy, reads regular files only and caps how much it reads.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from oracles.grading import path_matches

__all__ = ["collect_text", "file_heads", "prepare_tree", "tree_bytes"]

HEAD_BYTES = 8  # a class file's magic (4 bytes), minor and major version (2 + 2)


def prepare_tree(root: Path, uid: int, gid: int, *, as_root: bool) -> None:
    """Let the container's user write to the copy: chown it when the harness is root,
    otherwise the container runs as the harness's own user and nothing is needed."""
    if not as_root:
        return
    for folder, dirs, files in os.walk(root):
        os.lchown(folder, uid, gid)
        for name in (*dirs, *files):
            os.lchown(os.path.join(folder, name), uid, gid)


def _matching(root: Path, patterns: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(relative path, full path) of regular files matching ``patterns``, in order.

    ``os.walk`` does not descend into symbolic links to directories; linked files are
    skipped by the ``lstat`` check."""
    if not patterns:
        return
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            if not path_matches(relative, patterns):
                continue
            try:
                mode = os.lstat(full).st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode):
                yield relative, full


def _read(full: str, limit: int) -> bytes:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    descriptor = os.open(full, flags)
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(limit)


def collect_text(
    root: Path, patterns: Sequence[str], *, per_file: int, total: int
) -> dict[str, str]:
    """Report files as text. A file cut by a cap ends with a marker, so a parser fails on
    it rather than reading half a report as a whole one."""
    found: dict[str, str] = {}
    budget = total
    for relative, full in _matching(root, patterns):
        if budget <= 0:
            found[relative] = "[not read: report size budget exhausted]"
            continue
        limit = min(per_file, budget)
        try:
            data = _read(full, limit + 1)
        except OSError:
            continue
        cut = len(data) > limit
        data = data[:limit]
        budget -= len(data)
        found[relative] = data.decode("utf-8", "replace") + ("\n[truncated]" if cut else "")
    return found


def file_heads(root: Path, patterns: Sequence[str], *, limit: int = 100_000) -> dict[str, str]:
    """The first bytes (hex) of each matching file, at most ``limit`` files."""
    heads: dict[str, str] = {}
    for relative, full in _matching(root, patterns):
        if len(heads) >= limit:
            break
        try:
            heads[relative] = _read(full, HEAD_BYTES).hex()
        except OSError:
            continue
    return heads


def tree_bytes(root: Path, stop_above: int) -> int:
    """Bytes of the regular files under ``root`` (not following links); stops counting
    once above ``stop_above``, which is all a limit check needs."""
    size = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                # Allocated blocks, so sparse files count for what they take on disk.
                size += max(info.st_blocks * 512, 0)
                if size > stop_above:
                    return size
    return size
