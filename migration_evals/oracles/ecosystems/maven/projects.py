"""Maven's build roots: the project of a file is the nearest folder above it with a
``pom.xml``, and its build root is the top of the reactor that aggregates that module
(walking up ``<modules>`` entries, of the project and its profiles), so a module is built
with the siblings it depends on. A Java file no POM owns (a Gradle build) is
``unsupported``. ``reactor_poms`` lists the POMs a default build at a root reads."""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence

from migration_evals.oracles.ecosystems.maven.pom import children, read_pom, scopes
from migration_evals.oracles.projects import (
    ProjectSet,
    join_path,
    nearest_folder,
    parent_folders,
    projects_at,
    touched_paths,
)
from migration_evals.oracles.tree import TreeView, remembered

__all__ = ["MAVEN", "find_projects", "maven_modules", "reactor_poms"]

MAVEN = "maven"  # the build system's name, as recipes spell it (``sandbox.build_system``)
_GRADLE_FILES = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
_MAX_DEPTH = 64  # aggregators above aggregators; a cycle must still end
_MAX_MODULES = 10_000


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
            normal = posixpath.normpath(join_path(folder, entry))
            if normal != "." and not normal.startswith("../"):
                found.add(normal)
    return found


def _pom(tree: TreeView, folder: str) -> bytes | None:
    path = join_path(folder, "pom.xml")
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


def find_projects(tree: TreeView) -> ProjectSet:
    """The Maven reactors that own the files ``tree``'s patch touches (asked by the build
    plan and by tier 1's checks of one trial's tree: worked out once for it)."""
    return remembered(tree, "maven-projects", lambda: _find_projects(tree))


def _find_projects(tree: TreeView) -> ProjectSet:
    roots: set[str] = set()
    orphans: list[str] = []
    elsewhere = _pom_folders(tree)
    for path in touched_paths(tree.changes):
        module = nearest_folder(tree, path, "pom.xml")
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
    return ProjectSet(projects_at(MAVEN, roots))


def reactor_poms(tree: TreeView, root: str, *, patched: bool = True, jdk: int | None) -> list[str]:
    """The POMs a default Maven build at ``root`` on JDK ``jdk`` reads as its reactor: the
    top one and, through ``<modules>`` (of the project and the profiles that build
    activates),
    every module's, transitively. A POM elsewhere under the folder (an integration-test
    fixture, an example project, a module only a profile on demand adds) is not listed."""
    side = "patched" if patched else "base"
    return list(
        remembered(
            tree,
            f"maven-reactor {side} {root!r} {jdk}",
            lambda: tuple(_reactor_poms(tree.read if patched else tree.read_base, root, jdk)),
        )
    )


def _reactor_poms(read: Callable[[str], bytes | None], root: str, jdk: int | None) -> list[str]:
    found: list[str] = []
    pending = [root]
    seen: set[str] = set()
    while pending and len(seen) < _MAX_MODULES:
        folder = pending.pop(0)
        if folder in seen:
            continue
        seen.add(folder)
        path = join_path(folder, "pom.xml")
        content = read(path)
        if content is None:
            continue
        found.append(path)
        pending.extend(sorted(maven_modules(content, folder, active_only=True, jdk=jdk)))
    return found
