"""Build roots: which projects of a repository own the files a patch touches.

A real repository is rarely one build at its root. Each ecosystem says where its
projects are (``Ecosystem.find_projects``: a Maven reactor, a Go module); this module
holds what they share: the ``Project`` and ``ProjectSet`` types and the walk from a
touched file up to the nearest folder holding a project file. Tier 1's contract and tiers
2-3 take their projects from the ecosystem, so they look at the same builds.

A layout the recipe cannot build is ``unsupported`` with a reason (a Gradle-only Java
repository), which the tiers report as an infrastructure ``error``: it says nothing about
the patch.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from migration_evals.oracles.tree import FileChange, TreeView

__all__ = [
    "Project",
    "ProjectSet",
    "join_path",
    "nearest_folder",
    "parent_folders",
    "projects_at",
    "touched_paths",
]


@dataclass(frozen=True, slots=True)
class Project:
    """One build: the folder it runs in ("" is the repository root), and the build system
    that builds it (its ecosystem's ``build_system``)."""

    system: str
    root: str
    # No project file owns its files in either tree (a GOPATH-era Go tree); the
    # ecosystem has the harness make one.
    needs_module: bool = False

    @property
    def label(self) -> str:
        return self.root or "."


@dataclass(frozen=True, slots=True)
class ProjectSet:
    """The projects to build, or why this layout cannot be built here."""

    projects: tuple[Project, ...] = ()
    unsupported: str | None = None

    @property
    def roots(self) -> list[str]:
        return [project.root for project in self.projects]


def parent_folders(path: str) -> Iterator[str]:
    """The folders above ``path``, nearest first, ending with the root ("")."""
    folder = posixpath.dirname(path)
    while folder:
        yield folder
        folder = posixpath.dirname(folder)
    yield ""


def join_path(folder: str, name: str) -> str:
    """``name`` in ``folder`` ("" is the repository root)."""
    return f"{folder}/{name}" if folder else name


def _exists(tree: TreeView, path: str) -> bool:
    return tree.read(path) is not None or tree.read_base(path) is not None


def nearest_folder(tree: TreeView, path: str, marker: str) -> str | None:
    """The nearest folder above ``path`` holding ``marker`` in either tree; None: none."""
    for folder in parent_folders(path):
        if _exists(tree, join_path(folder, marker)):
            return folder
    return None


def touched_paths(changes: Sequence[FileChange]) -> list[str]:
    """Every path a patch's changes name, old and new, sorted."""
    return sorted({path for change in changes for path in change.paths()})


def projects_at(system: str, roots: Iterable[str]) -> tuple[Project, ...]:
    """One project of ``system`` per root, in root order."""
    return tuple(Project(system, root) for root in sorted(roots))
