"""Which test files the graded tree may hold with names the patch rebinds: the check the
test-edit classifier (``migration_evals.oracles.test_edits``) adds to the principle
``migration_evals.oracles.bindings`` states.

The files checked are those whose meanings the patch can reach: each test file it
edited whose edit would be usable (mechanical or preserving: its copy may be graded),
and each test file it left alone that shares a package with a source file it changed
(Go: the directory; Java: the package, in any source folder) or that names a class
declared in a Java file it changed, or a class extending one (its members are
inherited). For each, the names used in the declarations the patch left unchanged
(after the recipe's rewrites and syntax-only forms) are resolved on the base commit's
tree and on the patched tree without the test files grading leaves out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from migration_evals.oracles.bindings import (
    Reference,
    Side,
    base_side,
    first_rebinding,
    patched_side,
    unchanged_uses,
)
from migration_evals.oracles.ecosystems.go.bindings import go_references
from migration_evals.oracles.ecosystems.go.test_settings import builds_on
from migration_evals.oracles.ecosystems.maven.bindings import JavaClass, JavaWorld, java_references
from migration_evals.oracles.ecosystems.maven.syntax import Slot, slot_forms
from migration_evals.oracles.ecosystems.registry import source_languages
from migration_evals.oracles.grading import path_matches
from migration_evals.oracles.rewrites import Rewrite, RewriteGroup, apply_rewrites
from migration_evals.oracles.sources import tokenize
from migration_evals.oracles.syntax import language_of
from migration_evals.oracles.tree import TreeView

__all__ = ["Rebound", "explained", "rebound_tests"]

_GOOS, _GOARCH = "linux", "amd64"
_HEADER = re.compile(rb"\b(?:extends|implements)\b([^{;]*)")
_WORD = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")


@dataclass(frozen=True, slots=True)
class Rebound:
    """A test file one of whose names means something else in the patch."""

    path: str
    reason: str
    line: int
    text: str  # the line, as the patched file has it


def explained(
    base: Sequence[str],
    base_slots: Sequence[Slot],
    patched: Sequence[str],
    patched_slots: Sequence[Slot],
    calls: Sequence[Rewrite],
) -> set[str] | None:
    """The syntax-only forms that, with the rewrites, make ``base`` into ``patched``
    (empty: the rewrites alone), or None if they do not. A rewrite is an equivalence the
    recipe declares, so a call the patch left as it was counts as rewritten too. The base
    rewritten once may also be ``patched`` itself: a rewrite that reorders arguments (a
    message moved last) can match its own output again, so rewriting both sides would
    move the patch's correct call on."""
    rewritten = apply_rewrites(base, calls)
    if rewritten != list(patched) and rewritten != apply_rewrites(patched, calls):
        return None
    return slot_forms(base_slots, patched_slots, lambda tokens: apply_rewrites(tokens, calls))


@dataclass
class _Sides:
    base: Side
    patched: Side
    base_java: JavaWorld
    patched_java: JavaWorld


def _resolved(
    language: str, sides: _Sides, path: str, patched: bool
) -> tuple[list[str], dict[str, list[Node]], list[Reference]] | None:
    """The file's imports, its declarations by key and the names they use, on a side."""
    if language == "go":
        found = go_references(sides.patched if patched else sides.base, path)
        if found is None:
            return None
        file, references = found
        declarations = {key: [node] for key, node in file.declarations.items()}
        return file.import_paths(), declarations, references
    java = java_references(sides.patched_java if patched else sides.base_java, path)
    if java is None:
        return None
    return java[0].imports, java[1], java[2]


def _unchanged(
    language: str,
    before: dict[str, list[Node]],
    after: dict[str, list[Node]],
    calls: Sequence[Rewrite],
    syntax: frozenset[str],
) -> Callable[[str], bool]:
    kept: dict[str, bool] = {}

    def unchanged(key: str) -> bool:
        if key not in kept:
            was, now = before.get(key), after.get(key)
            kept[key] = False
            if was is not None and now is not None:
                old, new = tokenize(language, was, syntax), tokenize(language, now, syntax)
                kept[key] = any(
                    explained(old.tokens, old.slots, new.tokens, new.slots, rewrites) is not None
                    for rewrites in ((), calls)  # a file the patch left alone, or rewrote
                )
        return kept[key]

    return unchanged


def _rebound_file(
    language: str, path: str, sides: _Sides, groups: Sequence[RewriteGroup], syntax: frozenset[str]
) -> Rebound | None:
    before = _resolved(language, sides, path, patched=False)
    after = _resolved(language, sides, path, patched=True)
    if before is None or after is None:
        return None
    imports, declarations, references = before
    active = [group for group in groups if any(group.covers(name) for name in imports)]
    allowed = list(imports)
    for group in active:
        allowed += [
            target for name in imports if group.covers(name) for target in group.replacements(name)
        ]
    calls = [call for group in active for call in group.calls]
    unchanged = _unchanged(language, declarations, after[1], calls, syntax)
    was, now = unchanged_uses(references, after[2], unchanged)
    found = first_rebinding(was, now, allowed)
    if found is None:
        return None
    why, line = found
    content = sides.patched.read(path) or b""
    lines = content.decode("utf-8", "replace").splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Rebound(path, f"a name the tests use is rebound: {why}", line, text)


def _changed(view: TreeView) -> set[str]:
    return {path for change in view.changes for path in change.paths()}


def _go_candidates(view: TreeView, side: Side) -> set[str]:
    """The built Go test files of every directory holding a Go file the patch changed."""
    found = set()
    for directory in {posixpath.dirname(path) for path in _changed(view) if path.endswith(".go")}:
        for path in side.in_dir(directory):
            content = side.read(path) if path.endswith("_test.go") and side.is_test(path) else None
            if content is not None and builds_on(path, content, _GOOS, _GOARCH):
                found.add(path)
    return found


def _java_candidates(view: TreeView, sides: _Sides) -> set[str]:
    """The Java test files in a package the patch changed, or naming a class declared in
    a file it changed or extending one."""
    changed = [path for path in _changed(view) if path.endswith(".java")]
    if not changed:
        return set()
    packages: set[str] = set()
    names: set[bytes] = set()
    for path in changed:
        for world in (sides.base_java, sides.patched_java):
            file = world.file(path)
            if file is not None:
                packages.add(file.package)
                names |= {
                    q.rsplit(".", 1)[-1].encode() for q in _class_names(file.classes.values())
                }
    texts = {
        path: sides.patched.read(path) or b""
        for path in sides.patched.files
        if path.endswith(".java")
    }
    names |= _subclasses(texts, names)
    found = {path for package in packages for path in _package_files(sides.patched_java, package)}
    pattern = (
        re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(names)) + rb")\b")
        if names
        else None
    )
    for path, text in texts.items():
        if pattern is not None and pattern.search(text):
            found.add(path)
    return {path for path in found if sides.patched.is_test(path)}


def _class_names(classes: Iterable[JavaClass]) -> set[str]:
    found: set[str] = set()
    stack = list(classes)
    while stack:
        current = stack.pop()
        found.add(current.qname)
        stack += list(current.member_types.values())
    return found


def _subclasses(texts: dict[str, bytes], names: set[bytes]) -> set[bytes]:
    """The names of classes that extend or implement one of ``names``, transitively
    (read from each file's ``extends``/``implements`` clauses)."""
    found: set[bytes] = set()
    pending = set(names)
    while pending:
        new: set[bytes] = set()
        for path, text in texts.items():
            for clause in _HEADER.finditer(text):
                if pending & set(_WORD.findall(clause[1])):
                    declared = path.rsplit("/", 1)[-1].removesuffix(".java").encode()
                    new.add(declared)
        pending = new - names - found
        found |= new
    return found


def _package_files(world: JavaWorld, package: str) -> list[str]:
    return [file.path for file in world.package(package)]


def rebound_tests(
    view: TreeView,
    test_paths: Sequence[str],
    groups: Sequence[RewriteGroup],
    syntax: frozenset[str],
    *,
    edited: Iterable[str],
    left_out: Iterable[str],
) -> list[Rebound]:
    """Each test file the graded tree may hold whose names the patch rebinds: ``edited``
    are the test files whose patched copy may be graded, ``left_out`` those it never is."""

    def is_test(path: str) -> bool:
        return path_matches(path, test_paths)

    base, patched = base_side(view, is_test), patched_side(view, is_test, left_out)
    sides = _Sides(base, patched, JavaWorld(base), JavaWorld(patched))
    candidates = set(edited) | _go_candidates(view, patched) | _java_candidates(view, sides)
    found = []
    for path in sorted(candidates):
        found_language = language_of(path, source_languages())
        language = found_language.name if found_language else None
        if language in ("go", "java"):
            rebound = _rebound_file(language, path, sides, groups, syntax)
            if rebound is not None:
                found.append(rebound)
    return found
