"""Test edits of a whole tree: every file two mappings of paths to contents differ in,
classified as tier 3 classifies a patch's test edits."""

from __future__ import annotations

from collections.abc import Mapping

from migration_evals.oracles.test_edits import TestEdit, TestPolicy, classify_test_edits
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree


def classified_edits(
    policy: TestPolicy, base: Mapping[str, str], patched: Mapping[str, str]
) -> dict[str, TestEdit]:
    changes = []
    for path in sorted(set(base) | set(patched)):
        if path not in base:
            changes.append(FileChange(ChangeKind.ADD, None, path))
        elif path not in patched:
            changes.append(FileChange(ChangeKind.DELETE, path, None))
        elif base[path] != patched[path]:
            changes.append(FileChange(ChangeKind.MODIFY, path, path))
    tree = MemoryTree(
        {p: text.encode() for p, text in base.items()},
        {p: text.encode() for p, text in patched.items()},
        changes,
    )
    return {edit.path: edit for edit in classify_test_edits(tree, policy).edits}
