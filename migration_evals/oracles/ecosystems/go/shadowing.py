"""Go's shadowing rule: the patch's own code would be built in place of a dependency's or
the standard library's through

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

import posixpath
import re
from collections.abc import Iterable, Iterator

from migration_evals.core.model import Evidence
from migration_evals.oracles.shadowing import shadowing_evidence, written
from migration_evals.oracles.tree import FileChange, TreeView

__all__ = ["check_go_shadowing", "go_replaces"]

_REPLACE_LINE = re.compile(r"^\s*(?:replace\s+)?(\S+)(?:\s+\S+)?\s+=>\s+(\S+)(?:\s+\S+)?\s*$")


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
            yield shadowing_evidence(message, path, line)
    declared, was = _module_line(after), _module_line(before)
    if declared is not None and (was is None or was[0] != declared[0]):
        name, line = declared
        owner = "the standard library" if _is_std(name) else None
        if _module_of(name, dependencies):
            owner = "a dependency of the build"
        if owner is not None and was is not None:
            message = f"{path} renames its module to {name}, a path of {owner}: it would shadow it"
            yield shadowing_evidence(message, path, line)


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
    for change in written(tree):
        path = change.new_path
        assert path is not None
        evidence += _go_mod_evidence(tree, change, dependencies)
        if not path.endswith(".go"):
            continue
        if (package := _vendored(path)) is not None:
            message = f"{path} is a vendored copy of {package}: the patch may not change it"
            evidence.append(shadowing_evidence(message, path))
            continue
        imported = _import_path(tree, path)
        module = _module_of(imported, dependencies - own) if imported else None
        if imported and module:
            message = (
                f"{path} is in package {imported}, under the dependency {module}:"
                " it would shadow it"
            )
            evidence.append(shadowing_evidence(message, path))
    return evidence
