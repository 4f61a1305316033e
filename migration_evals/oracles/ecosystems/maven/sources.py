"""Which Java files of a tree can run in the JVM the harness tests.

The harness builds with its own Maven, never the repository's ``mvnw``, and Maven compiles
a module's main and test source roots and nothing else
(``migration_evals.oracles.ecosystems.maven.test_settings.module_source_roots``, read from the
base's POMs and the patch's, either side's roots counting). A Java file elsewhere below a POM (the
Maven wrapper's downloader in ``.mvn/wrapper``, a script, a template kept as text) is
neither compiled nor loaded in the tested JVM. A Java file with no POM above it belongs to
a build not read here (Gradle, none): it counts as compiled, doubt counting against the
patch.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Callable

from migration_evals.oracles.ecosystems.maven.test_settings import module_source_roots
from migration_evals.oracles.projects import parent_folders
from migration_evals.oracles.tree import TreeView

__all__ = ["compiled_java"]

_POM = "pom.xml"


def _poms(tree: TreeView) -> list[str]:
    """Every POM of either tree: the patched tree's files and those the patch removes."""
    found = {p for p in tree.files() if posixpath.basename(p) == _POM}
    found.update(p for c in tree.changes for p in c.paths() if posixpath.basename(p) == _POM)
    return sorted(found)


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")


def compiled_java(tree: TreeView, jdk: int | None) -> Callable[[str], bool]:
    """Whether a Java path of ``tree`` (either side) is one the harness's Maven may compile
    on JDK ``jdk``."""

    @functools.cache
    def roots() -> tuple[frozenset[str], tuple[str, ...]]:
        poms = _poms(tree)
        found: set[str] = set()
        for patched in (False, True):
            for folders in module_source_roots(tree, poms, patched=patched, jdk=jdk).values():
                found.update(folders)
        return frozenset(posixpath.dirname(p) for p in poms), tuple(sorted(found))

    def compiled(path: str) -> bool:
        modules, sources = roots()
        if not any(folder in modules for folder in parent_folders(path)):
            return True
        return any(_under(path, folder) for folder in sources)

    return compiled
