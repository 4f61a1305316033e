"""Go's build roots: the nearest folder with a ``go.mod`` owns a Go file. Go files that no
``go.mod`` owns in either tree (a GOPATH-era layout) make a project at the repository root
that ``needs_module``: tiers 2-3 build it with a go.mod the harness makes at the base
commit (``migration_evals.oracles.ecosystems.go.gopath``)."""

from __future__ import annotations

import posixpath

from migration_evals.oracles.projects import (
    Project,
    ProjectSet,
    nearest_folder,
    projects_at,
    touched_paths,
)
from migration_evals.oracles.tree import TreeView

__all__ = ["GO", "find_projects"]

GO = "go"  # the build system's name, as recipes spell it (``sandbox.build_system``)


def _is_go_file(path: str) -> bool:
    return path.endswith(".go") or posixpath.basename(path) in ("go.mod", "go.sum")


def find_projects(tree: TreeView) -> ProjectSet:
    """The Go modules that own the Go files ``tree``'s patch touches."""
    roots: set[str] = set()
    gopath = False  # a touched file no go.mod owns: there is none at the root either
    for path in touched_paths(tree.changes):
        if not _is_go_file(path):
            continue
        module = nearest_folder(tree, path, "go.mod")
        gopath = gopath or module is None
        if module is not None:
            roots.add(module)
    if not roots and not gopath:
        return ProjectSet(unsupported="not supported: the patch touches no Go file")
    found = projects_at(GO, roots)
    if gopath:
        found = (Project(GO, "", needs_module=True), *found)
    return ProjectSet(found)
