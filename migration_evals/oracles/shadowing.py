"""No shadowing: a patch may not put its own code in the place of a dependency's or the
platform's.

A source file the patch adds or changes whose package belongs to someone else would be
compiled in place of theirs (an ``org/junit/Assert.java`` with empty methods makes every
assertion pass). Whose a package is:

Java (the ``package`` clause of each added or changed ``.java`` file)
  * the platform and the usual test libraries, by prefix: the recipe's
    ``integrity.shadowed_packages`` (``java``, ``javax``, ``org.junit``, ...); checked in
    tier 1;
  * the packages in the dependency jars that resolution fetched for either tree
    (``Resolution.packages``); checked once they are known, in tier 2.
  A package the base commit's own sources already declare is the repository's own (a
  library migrating itself, or a build that fetches the project's previous release to
  compare APIs with): files added to it or changed in it are its own code.
Go
  * a ``replace`` directive the patch adds or changes that points a module at a folder
    (``=> ./fork``): the folder's copy is built in place of the dependency;
  * a vendored file (``vendor/...``) the patch adds or changes: the copy the build uses
    in vendor mode instead of the module;
  * a ``module`` line the patch changes to a standard-library path (no dot in its first
    element) or to a dependency's path;
  * an added or changed file whose import path falls under a dependency module's path
    (the resolved build list of either tree), checked in tier 2.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence

from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.syntax import parse
from migration_evals.oracles.tree import ChangeKind, FileChange, TreeView

__all__ = [
    "check_go_shadowing",
    "check_java_shadowing",
    "go_replaces",
    "java_package",
    "shadowing_integrity",
]

_REPLACE_LINE = re.compile(r"^\s*(?:replace\s+)?(\S+)(?:\s+\S+)?\s+=>\s+(\S+)(?:\s+\S+)?\s*$")


def _evidence(message: str, path: str, line: int | None = None) -> Evidence:
    return Evidence(message, path, line, severity=Severity.FAILURE)


def _written(tree: TreeView) -> Iterator[FileChange]:
    """The changes that leave a file with new content behind (not deletions)."""
    for change in tree.changes:
        if change.new_path is not None and change.kind is not ChangeKind.DELETE:
            yield change


# -- Java --------------------------------------------------------------------------------


# Each trial asks for the packages of the same base files (every tier, both trees, each
# model's patch on the base), and a parse costs more than the lookup.
@functools.lru_cache(maxsize=1024)
def java_package(source: bytes) -> tuple[str, int] | None:
    """The package a Java file declares, and its line; None for the default package."""
    root = parse("java", source).root_node
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
    for change in _written(tree):
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
            evidence.append(_evidence(message, path, line))
    return evidence


# -- Go ----------------------------------------------------------------------------------


def go_replaces(source: bytes | None) -> dict[str, tuple[str, int]]:
    """A go.mod's replace directives: old module -> (replacement, line)."""
    found: dict[str, tuple[str, int]] = {}
    block = False
    for number, raw in enumerate((source or b"").decode("utf-8", "replace").splitlines(), 1):
        line = raw.split("//", 1)[0].strip()
        if block and line == ")":
            block = False
            continue
        if line.startswith("replace") and line.removeprefix("replace").strip() == "(":
            block = True
            continue
        if (block or line.startswith("replace ")) and (match := _REPLACE_LINE.match(line)):
            found[match.group(1)] = (match.group(2), number)
    return found


def _module_line(source: bytes | None) -> tuple[str, int] | None:
    for number, raw in enumerate((source or b"").decode("utf-8", "replace").splitlines(), 1):
        words = raw.split("//", 1)[0].split()
        if len(words) == 2 and words[0] == "module":
            return words[1].strip('"'), number
    return None


def _is_local(target: str) -> bool:
    return target.startswith(("./", "../", "/")) or target in (".", "..")


def _is_std(path: str) -> bool:
    return "." not in path.split("/", 1)[0]


def _module_of(path: str, modules: Iterable[str]) -> str | None:
    return next((m for m in modules if path == m or path.startswith(m + "/")), None)


def _go_mod_evidence(
    tree: TreeView, change: FileChange, dependencies: set[str]
) -> Iterator[Evidence]:
    path = change.new_path
    if path is None or posixpath.basename(path) != "go.mod":
        return
    after = tree.read(path)
    before = tree.read_base(change.old_path) if change.old_path else None
    old = go_replaces(before)
    for module, (target, line) in go_replaces(after).items():
        if _is_local(target) and old.get(module, ("",))[0] != target:
            message = (
                f"{path} replaces {module} with the folder {target}: a copy in the"
                " repository would shadow it"
            )
            yield _evidence(message, path, line)
    declared, was = _module_line(after), _module_line(before)
    if declared is not None and (was is None or was[0] != declared[0]):
        name, line = declared
        owner = "the standard library" if _is_std(name) else None
        if _module_of(name, dependencies):
            owner = "a dependency of the build"
        if owner is not None and was is not None:
            message = f"{path} renames its module to {name}, a path of {owner}: it would shadow it"
            yield _evidence(message, path, line)


def _import_path(tree: TreeView, path: str) -> str | None:
    """The import path of a Go file's package: its module's path and folder."""
    folder = posixpath.dirname(path)
    while True:
        go_mod = posixpath.join(folder, "go.mod") if folder else "go.mod"
        declared = _module_line(tree.read(go_mod))
        if declared is not None:
            relative = posixpath.dirname(path)[len(folder) :].lstrip("/")
            return f"{declared[0]}/{relative}" if relative else declared[0]
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _vendored(path: str) -> str | None:
    """The package a file under a vendor folder is a copy of."""
    parts = path.split("/")
    if "vendor" not in parts[:-1]:
        return None
    index = parts.index("vendor")
    return "/".join(parts[index + 1 : -1]) or None


def check_go_shadowing(tree: TreeView, dependency_modules: Iterable[str] = ()) -> list[Evidence]:
    """Evidence for each route by which the patch's own Go code would be built in place of
    a dependency's or the standard library's."""
    dependencies = set(dependency_modules)
    own = {
        m[0]
        for p in tree.files()
        if p.endswith("go.mod") and (m := _module_line(tree.read_base(p)))
    }
    evidence: list[Evidence] = []
    for change in _written(tree):
        path = change.new_path
        assert path is not None
        evidence += _go_mod_evidence(tree, change, dependencies)
        if not path.endswith(".go"):
            continue
        if (package := _vendored(path)) is not None:
            message = f"{path} is a vendored copy of {package}: the patch may not change it"
            evidence.append(_evidence(message, path))
            continue
        imported = _import_path(tree, path)
        module = _module_of(imported, dependencies - own) if imported else None
        if imported and module:
            message = (
                f"{path} is in package {imported}, under the dependency {module}:"
                " it would shadow it"
            )
            evidence.append(_evidence(message, path))
    return evidence


def shadowing_integrity(recipe: Recipe) -> tuple[bool, list[str]]:
    """Whether ``recipe`` asks for the shadowing check, and the Java package prefixes it
    names (``integrity.shadowed_packages``)."""
    integrity = recipe.integrity
    if integrity is None:
        return False, []
    return integrity.shadowing, list(integrity.shadowed_packages)
