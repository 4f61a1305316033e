"""Trees for the ecosystems' tests: files at base and a patch that touches some."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

__all__ = ["touched_tree"]


def touched_tree(
    files: Mapping[str, bytes], touched: Iterable[str], deleted: Iterable[str] = ()
) -> MemoryTree:
    """``files`` at base and after the patch, which modifies ``touched`` and deletes
    ``deleted`` (gone from the patched tree)."""
    gone = set(deleted)
    changes = [FileChange(ChangeKind.MODIFY, path, path) for path in touched]
    changes += [FileChange(ChangeKind.DELETE, path, None) for path in gone]
    patched = {path: content for path, content in files.items() if path not in gone}
    return MemoryTree(dict(files), patched, changes)
