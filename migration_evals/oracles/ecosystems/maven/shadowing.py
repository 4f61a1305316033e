"""Java's shadowing rule: a package belongs to someone else when it is

* the platform's or a usual test library's, by prefix: the recipe's
  ``integrity.shadowed_packages`` (``java``, ``javax``, ``org.junit``, ...); checked in
  tier 1;
* in the dependency jars that resolution fetched for either tree
  (``Resolution.packages``); checked once they are known, in tier 2.

Each added or changed ``.java`` file is judged by its ``package`` clause. A package the
base commit's own sources already declare is the repository's own (a library migrating
itself, or a build that fetches the project's previous release to compare APIs with):
files added to it or changed in it are its own code.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable, Sequence

from migration_evals.core.model import Evidence
from migration_evals.oracles.ecosystems.maven.language import JAVA_LANGUAGE
from migration_evals.oracles.shadowing import shadowing_evidence, written
from migration_evals.oracles.syntax import parse
from migration_evals.oracles.tree import TreeView

__all__ = ["check_java_shadowing", "java_package"]


# Each trial asks for the packages of the same base files (every tier, both trees, each
# model's patch on the base), and a parse costs more than the lookup.
@functools.lru_cache(maxsize=1024)
def java_package(source: bytes) -> tuple[str, int] | None:
    """The package a Java file declares, and its line; None for the default package."""
    root = parse(JAVA_LANGUAGE, source).root_node
    for node in root.children:
        if node.type == "package_declaration":
            for child in node.named_children:
                if child.type in ("scoped_identifier", "identifier") and child.text:
                    name = "".join(child.text.decode("utf-8", "replace").split())
                    return name, node.start_point.row + 1
    return None


def _under(package: str, prefixes: Iterable[str]) -> str | None:
    for prefix in prefixes:
        if package == prefix or package.startswith(prefix + "."):
            return prefix
    return None


def _own_packages(tree: TreeView) -> set[str]:
    """The packages the base commit's own Java sources declare (only files the patch
    touches or sits beside are read: a package is a folder)."""
    folders = {posixpath.dirname(p) for c in tree.changes for p in c.paths()}
    own: set[str] = set()
    for change in tree.changes:
        for path in change.paths():
            source = tree.read_base(path) if path.endswith(".java") else None
            found = java_package(source) if source is not None else None
            if found:
                own.add(found[0])
    for path in tree.files():
        if path.endswith(".java") and posixpath.dirname(path) in folders:
            source = tree.read_base(path)
            found = java_package(source) if source is not None else None
            if found:
                own.add(found[0])
    return own


def check_java_shadowing(
    tree: TreeView, prefixes: Sequence[str], dependency_packages: Iterable[str] = ()
) -> list[Evidence]:
    """Evidence for each added or changed Java file whose package is the platform's, a
    test library's (``prefixes``) or a resolved dependency's."""
    dependencies = set(dependency_packages)
    own = _own_packages(tree)
    evidence: list[Evidence] = []
    for change in written(tree):
        path = change.new_path
        source = tree.read(path) if path and path.endswith(".java") else None
        found = java_package(source) if source is not None else None
        if path is None or found is None:
            continue
        package, line = found
        owner = None
        if package in own:
            continue
        if package in dependencies:
            owner = "a dependency of the build"
        elif (prefix := _under(package, prefixes)) is not None:
            owner = f"{prefix} (the platform or a test library)"
        if owner is not None:
            message = (
                f"{path} declares package {package}, which belongs to {owner}: it would shadow it"
            )
            evidence.append(shadowing_evidence(message, path, line))
    return evidence
