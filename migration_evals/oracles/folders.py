"""Walking and deleting folders whose contents the harness does not control.

A patch decides the paths of an apply tree, a repository the paths of its snapshot, and a
resolution run's build files what lands in a dependency cache, so none of them may make
the harness recurse, follow a link out of the folder, block on a FIFO or run without end.
``Walk`` lists entries iteratively (an explicit stack, no recursion limit), from the
entries' own metadata (``lstat``: a link is a link, never its target), up to a number of
entries and a depth, and says which limit cut it short. ``remove_tree`` deletes a folder
however deep, whatever its permissions, without following links or leaving the file
system.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

__all__ = ["Entry", "Walk", "WalkLimits", "remove_small_tree", "remove_tree"]


@dataclass(frozen=True, slots=True)
class WalkLimits:
    """How much of a tree written by untrusted code the harness is willing to look at."""

    max_entries: int = 2_000_000
    max_depth: int = 4_096


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a walked tree: ``kind`` is "dir", "file", "link" or "other" (FIFOs,
    sockets, devices); ``depth`` counts the folders above it below the root."""

    relative: str
    path: str
    kind: str
    depth: int


def _kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


class Walk:
    """The entries under ``root``, parents before children and in name order, once.

    After the iteration ``cut`` names the limit that stopped it (empty: none) and
    ``unreadable`` lists the folders that could not be listed (a vanished folder, one
    without read permission, one whose path is longer than the kernel takes).
    """

    def __init__(self, root: Path, limits: WalkLimits = WalkLimits()) -> None:
        self.root = root
        self.limits = limits
        self.cut = ""
        self.unreadable: list[str] = []

    def __iter__(self) -> Iterator[Entry]:
        stack: list[tuple[str, str, int]] = [(str(self.root), "", 0)]
        left = self.limits.max_entries
        while stack:
            folder, prefix, depth = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    # Never more of one folder in memory than the walk may still see.
                    found = sorted(islice(listing, left + 1), key=lambda item: item.name)
            except OSError:
                self.unreadable.append(prefix.rstrip("/"))
                continue
            folders = []
            for item in found:
                if left == 0:
                    self.cut = f"{self.limits.max_entries} entries"
                    return
                left -= 1
                try:
                    kind = _kind(item)
                except OSError:
                    continue  # vanished since it was listed
                entry = Entry(prefix + item.name, item.path, kind, depth)
                yield entry
                if kind != "dir":
                    continue
                if depth < self.limits.max_depth:
                    folders.append((item.path, entry.relative + "/", depth + 1))
                else:
                    self.cut = self.cut or f"{self.limits.max_depth} folders deep"
            stack.extend(reversed(folders))


def remove_tree(path: Path) -> None:
    """Delete a folder untrusted code wrote, however deep: GNU ``rm`` walks with descriptors
    (no recursion or path-length limit), follows no link and stays on one file system,
    where Python's ``shutil.rmtree`` recurses and fails on a few thousand levels. Folders
    left without write or search permission are opened up first (``chmod`` does not
    follow links when it recurses either)."""
    if not path.exists() and not path.is_symlink():
        return
    command = ["rm", "-rf", "--one-file-system", "--", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 and path.exists() and not path.is_symlink():
        subprocess.run(["chmod", "-R", "u+rwx", "--", str(path)], capture_output=True, check=False)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0 and (path.exists() or path.is_symlink()):
        raise OSError(f"cannot remove {path}: {done.stderr.strip()}")


# Up to this much, ``remove_small_tree`` deletes a folder itself.
_SMALL = WalkLimits(max_entries=1_000, max_depth=64)


def remove_small_tree(path: Path, walked: Sequence[Entry] | None = None) -> None:
    """``remove_tree`` without its processes for a small folder (an apply tree holds the
    files one patch declares; starting ``rm`` cost a trial more than the deleting): the
    entries of a bounded walk are removed here, children first, links as links. Anything
    else goes to ``remove_tree``: more entries or deeper, a folder that cannot be listed,
    one on another file system, an entry that cannot be removed.

    ``walked``: the entries of a whole walk of ``path`` made since it last changed (the
    caller's own, read to the end), so it need not be walked again."""
    if path.is_symlink() or not path.is_dir():  # a listing would follow the link
        remove_tree(path)
        return
    try:
        entries = _small_entries(path, walked)
        device = os.lstat(path).st_dev
        folders = [entry.path for entry in entries if entry.kind == "dir"]
        if any(os.lstat(f).st_dev != device for f in folders):
            raise OSError("not a small tree on one file system")
        for entry in reversed(entries):  # the walk lists parents first
            if entry.kind == "dir":
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        os.rmdir(path)
    except OSError:
        remove_tree(path)


def _small_entries(path: Path, walked: Sequence[Entry] | None) -> Sequence[Entry]:
    """The entries of ``path``, parents first; OSError past the small tree's limits."""
    if walked is not None:
        if len(walked) > _SMALL.max_entries or any(e.depth >= _SMALL.max_depth for e in walked):
            raise OSError("not a small tree")
        return walked
    walk = Walk(path, _SMALL)
    entries = list(walk)
    if walk.cut or walk.unreadable:
        raise OSError("not a small tree")
    return entries
