"""No shadowing: a patch may not put its own code in the place of a dependency's or the
platform's.

A source file the patch adds or changes that its build would compile in place of code
it does not own (an ``org/junit/Assert.java`` with empty methods makes every assertion
pass; a Go ``replace`` pointing a dependency at a folder of the repository) is a failure.
Whose code is whose is each ecosystem's rule (``Ecosystem.check_shadowing``: Java
packages in ``migration_evals.oracles.ecosystems.maven.shadowing``, Go module paths in
``migration_evals.oracles.ecosystems.go.shadowing``); the rule is checked twice, in
tier 1 against the platform and the recipe's ``integrity.shadowed_packages``, and in
tier 2 once resolution has named the dependencies either tree builds with. This module
holds what the rules share: the recipe's switch, the changes they read and the evidence
they give.
"""

from __future__ import annotations

from collections.abc import Iterator

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.tree import ChangeKind, FileChange, TreeView

__all__ = ["shadowing_evidence", "shadowing_integrity", "written"]


def shadowing_evidence(message: str, path: str, line: int | None = None) -> Evidence:
    """A shadowing failure pinned to ``path`` (and ``line``)."""
    return Evidence(message, path, line, severity=Severity.FAILURE)


def written(tree: TreeView) -> Iterator[FileChange]:
    """The changes that leave a file with new content behind (not deletions)."""
    for change in tree.changes:
        if change.new_path is not None and change.kind is not ChangeKind.DELETE:
            yield change


def shadowing_integrity(recipe: Recipe) -> tuple[bool, list[str]]:
    """Whether ``recipe`` asks for the shadowing check, and the Java package prefixes it
    names (``integrity.shadowed_packages``)."""
    integrity = recipe.integrity
    if integrity is None:
        return False, []
    return integrity.shadowing, list(integrity.shadowed_packages)
