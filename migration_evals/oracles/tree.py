"""What tier 1's later checks see of a patched tree: the files the diff touched, their
base and patched contents, and the paths of the whole patched tree.

``TreeView`` is the read-only interface the syntax and contract checks take;
``MemoryTree`` is the in-memory implementation tests use; the workspace provides the
real one over a base snapshot and the applied patch.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, TypeVar, cast

__all__ = ["ChangeKind", "FileChange", "MemoryTree", "TreeView", "deleted_files", "remembered"]


class ChangeKind(StrEnum):
    ADD = "add"
    DELETE = "delete"
    MODIFY = "modify"
    RENAME = "rename"
    COPY = "copy"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file entry of a diff, as declared by its headers.

    ``old_path`` is None for additions, ``new_path`` None for deletions. Modes are the
    octal strings from the headers (``100644``), when given.
    """

    kind: ChangeKind
    old_path: str | None
    new_path: str | None
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False
    added_lines: int = 0
    removed_lines: int = 0

    @property
    def path(self) -> str:
        """The path the change leaves behind (the old one for deletions)."""
        result = self.new_path or self.old_path
        assert result is not None
        return result

    def paths(self) -> tuple[str, ...]:
        return tuple(p for p in (self.old_path, self.new_path) if p is not None)


class TreeView(Protocol):
    """Read-only access to a base tree and the same tree with the patch applied."""

    @property
    def changes(self) -> Sequence[FileChange]:
        """The diff's file entries, in diff order."""
        ...

    def read(self, path: str) -> bytes | None:
        """Content after the patch, or None if the path does not exist after it."""
        ...

    def read_base(self, path: str) -> bytes | None:
        """Content at the base commit, or None if it did not exist there."""
        ...

    def files(self) -> Iterable[str]:
        """Every regular file path of the patched tree (POSIX, relative)."""
        ...


@dataclass
class MemoryTree:
    """A ``TreeView`` held in dictionaries; for tests and synthetic inputs."""

    base: Mapping[str, bytes]
    patched: Mapping[str, bytes]
    changes: Sequence[FileChange] = field(default_factory=list)

    def read(self, path: str) -> bytes | None:
        return self.patched.get(path)

    def read_base(self, path: str) -> bytes | None:
        return self.base.get(path)

    def files(self) -> Iterable[str]:
        return sorted(self.patched)


def deleted_files(tree: TreeView, suffix: str, is_test: Callable[[str], bool]) -> list[str]:
    """Non-test files ending in ``suffix`` that the patch deletes; a file the patch adds
    again under the same name elsewhere moved, and is not listed."""
    added = {
        posixpath.basename(c.new_path)
        for c in tree.changes
        if c.new_path and c.kind is not ChangeKind.MODIFY
    }
    return [
        c.old_path
        for c in tree.changes
        if c.kind is ChangeKind.DELETE
        and c.old_path is not None
        and c.old_path.endswith(suffix)
        and not is_test(c.old_path)
        and posixpath.basename(c.old_path) not in added
    ]


T = TypeVar("T")


def remembered(tree: TreeView, name: str, make: Callable[[], T]) -> T:
    """``make()``, worked out once per tree that keeps what is worked out from it (an
    ``answers`` dictionary: a trial's tree, which never changes once the patch is applied)
    and every time for any other tree. ``name`` says what is kept; the answer must not be
    changed by those it is given to."""
    answers = getattr(tree, "answers", None)
    if not isinstance(answers, dict):
        return make()
    if name not in answers:
        answers[name] = make()
    return cast(T, answers[name])
