"""Build roots: which projects of a repository own the files a patch touches.

A real repository is rarely one build at its root. Maven: the project of a file is the
nearest folder above it with a ``pom.xml``, and its build root is the top of the reactor
that aggregates that module (walking up ``<modules>`` entries, of the project and its
profiles), so a module is built with the siblings it depends on. Go: the nearest folder
with a ``go.mod``; Go files that no ``go.mod`` owns in either tree (a GOPATH-era layout)
make a project at the repository root that ``needs_module``: tiers 2-3 build it with a
go.mod the harness makes at the base commit (``migration_evals.oracles.ecosystems.go.gopath``). Tier
1's contract and tiers 2-3 take their projects from here, so they look at the same builds.

A layout the recipe cannot build is ``unsupported`` with a reason (a Gradle-only Java
repository), which the tiers report as an infrastructure ``error``: it says nothing about
the patch.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from migration_evals.oracles.ecosystems.maven.pom import children, read_pom, scopes
from migration_evals.oracles.tree import FileChange, TreeView

__all__ = [
    "BuildSystem",
    "Project",
    "ProjectSet",
    "find_projects",
    "parent_folders",
    "reactor_poms",
]

_GRADLE_FILES = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
_MAX_DEPTH = 64  # aggregators above aggregators; a cycle must still end
_MAX_MODULES = 10_000


class BuildSystem(StrEnum):
    MAVEN = "maven"
    GO = "go"


@dataclass(frozen=True, slots=True)
class Project:
    """One build: the folder it runs in ("" is the repository root)."""

    system: BuildSystem
    root: str
    # Go: no go.mod owns its files in either tree (GOPATH era); the harness makes one.
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


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _exists(tree: TreeView, path: str) -> bool:
    return tree.read(path) is not None or tree.read_base(path) is not None


def _nearest(tree: TreeView, path: str, marker: str) -> str | None:
    for folder in parent_folders(path):
        if _exists(tree, _join(folder, marker)):
            return folder
    return None


def _touched(changes: Sequence[FileChange]) -> list[str]:
    return sorted({path for change in changes for path in change.paths()})


# -- Maven -------------------------------------------------------------------------------


def maven_modules(
    pom: bytes, folder: str, *, active_only: bool = False, jdk: int | None = None
) -> set[str]:
    """The folders a pom aggregates (project and profile ``<modules>``; with
    ``active_only``, only the profiles a default build on JDK ``jdk`` activates),
    normalised."""
    try:
        root, _lines = read_pom(pom)
    except ET.ParseError:
        return set()
    found = set()
    counted = (
        scopes(root, jdk, possible=False)
        if active_only
        else [root, *children(root, "profiles", "profile")]
    )
    for scope in counted:
        for module in children(scope, "modules", "module"):
            entry = (module.text or "").strip().removesuffix("pom.xml").rstrip("/")
            if not entry:
                continue
            normal = posixpath.normpath(_join(folder, entry))
            if normal != "." and not normal.startswith("../"):
                found.add(normal)
    return found


def _pom(tree: TreeView, folder: str) -> bytes | None:
    path = _join(folder, "pom.xml")
    return tree.read(path) if tree.read(path) is not None else tree.read_base(path)


def _pom_folders(tree: TreeView) -> list[str]:
    """Every folder with a pom.xml: an aggregator may sit beside its modules (``../m``)."""
    return sorted(posixpath.dirname(p) for p in tree.files() if posixpath.basename(p) == "pom.xml")


def _reactor_top(tree: TreeView, module: str, elsewhere: Sequence[str]) -> str:
    """Walk up aggregators: the highest folder whose reactor builds ``module``. Folders
    above come first, then the other POM folders (``elsewhere``)."""
    current = module
    for _ in range(_MAX_DEPTH):
        if not current:
            return current
        for folder in [*parent_folders(current), *elsewhere]:
            pom = _pom(tree, folder) if folder != current else None
            if pom is not None and current in maven_modules(pom, folder):
                current = folder
                break
        else:
            return current
    return current


def _is_java_source(path: str) -> bool:
    name = posixpath.basename(path)
    return path.endswith(".java") or name == "pom.xml" or name in _GRADLE_FILES


def _maven(tree: TreeView, changes: Sequence[FileChange]) -> ProjectSet:
    roots: set[str] = set()
    orphans: list[str] = []
    elsewhere = _pom_folders(tree)
    for path in _touched(changes):
        module = _nearest(tree, path, "pom.xml")
        if module is None:
            if _is_java_source(path):
                orphans.append(path)
            continue
        roots.add(_reactor_top(tree, module, elsewhere))
    if orphans:
        gradle = any(posixpath.basename(p) in _GRADLE_FILES for p in tree.files())
        why = "a Gradle build" if gradle else "no pom.xml owns it"
        return ProjectSet(unsupported=f"not supported: {orphans[0]} is in {why}")
    if not roots:
        return ProjectSet(unsupported="not supported: no pom.xml owns any file the patch touches")
    return ProjectSet(_projects(BuildSystem.MAVEN, roots))


# -- Go ----------------------------------------------------------------------------------


def _is_go_file(path: str) -> bool:
    return path.endswith(".go") or posixpath.basename(path) in ("go.mod", "go.sum")


def _go(tree: TreeView, changes: Sequence[FileChange]) -> ProjectSet:
    roots: set[str] = set()
    gopath = False  # a touched file no go.mod owns: there is none at the root either
    for path in _touched(changes):
        if not _is_go_file(path):
            continue
        module = _nearest(tree, path, "go.mod")
        gopath = gopath or module is None
        if module is not None:
            roots.add(module)
    if not roots and not gopath:
        return ProjectSet(unsupported="not supported: the patch touches no Go file")
    found = _projects(BuildSystem.GO, roots)
    if gopath:
        found = (Project(BuildSystem.GO, "", needs_module=True), *found)
    return ProjectSet(found)


def _projects(system: BuildSystem, roots: Iterable[str]) -> tuple[Project, ...]:
    return tuple(Project(system, root) for root in sorted(roots))


def find_projects(system: BuildSystem, tree: TreeView) -> ProjectSet:
    """The projects of ``system`` that own the files ``tree``'s patch touches."""
    if system is BuildSystem.MAVEN:
        return _maven(tree, tree.changes)
    return _go(tree, tree.changes)


def reactor_poms(tree: TreeView, root: str, *, patched: bool = True, jdk: int | None) -> list[str]:
    """The POMs a default Maven build at ``root`` on JDK ``jdk`` reads as its reactor: the
    top one and, through ``<modules>`` (of the project and the profiles that build
    activates),
    every module's, transitively. A POM elsewhere under the folder (an integration-test
    fixture, an example project, a module only a profile on demand adds) is not listed."""
    read = tree.read if patched else tree.read_base
    found: list[str] = []
    pending = [root]
    seen: set[str] = set()
    while pending and len(seen) < _MAX_MODULES:
        folder = pending.pop(0)
        if folder in seen:
            continue
        seen.add(folder)
        path = _join(folder, "pom.xml")
        content = read(path)
        if content is None:
            continue
        found.append(path)
        pending.extend(sorted(maven_modules(content, folder, active_only=True, jdk=jdk)))
    return found
