"""Which Java test files a patch can change the meanings of, and what their names mean on
each side (``migration_evals.oracles.test_meanings``): a test file in a package the
patch changed (in any source folder), or naming a class declared in a Java file it
changed, or a class extending one (its members are inherited); its names resolved by
``migration_evals.oracles.ecosystems.maven.bindings``."""

from __future__ import annotations

import re
from collections.abc import Iterable

from migration_evals.oracles.bindings import Resolved, Side
from migration_evals.oracles.ecosystems.maven.bindings import JavaClass, JavaWorld, java_references

__all__ = ["JavaTestBindings"]

_HEADER = re.compile(rb"\b(?:extends|implements)\b([^{;]*)")
_WORD = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*")


class JavaTestBindings:
    """The Java classes of both sides of a patch, read on demand."""

    def __init__(self, base: Side, patched: Side) -> None:
        self.base, self.patched = base, patched
        self.base_world, self.patched_world = JavaWorld(base), JavaWorld(patched)

    def candidates(self, changed: Iterable[str]) -> set[str]:
        return _java_candidates(changed, self)

    def resolved(self, path: str, patched: bool) -> Resolved | None:
        found = java_references(self.patched_world if patched else self.base_world, path)
        if found is None:
            return None
        return found[0].imports, found[1], found[2]


def _java_candidates(changed_paths: Iterable[str], sides: JavaTestBindings) -> set[str]:
    """The Java test files in a package the patch changed, or naming a class declared in
    a file it changed or extending one."""
    changed = [path for path in changed_paths if path.endswith(".java")]
    if not changed:
        return set()
    patched = sides.patched
    tests = {path for path in patched.files if path.endswith(".java") and patched.is_test(path)}
    if not tests:
        return set()  # only a test file is a candidate: a tree without any has none
    packages: set[str] = set()
    names: set[bytes] = set()
    for path in changed:
        for world in (sides.base_world, sides.patched_world):
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
    found = {path for package in packages for path in _package_files(sides.patched_world, package)}
    pattern = (
        re.compile(rb"\b(?:" + b"|".join(re.escape(n) for n in sorted(names)) + rb")\b")
        if names
        else None
    )
    for path, text in texts.items():
        if pattern is not None and pattern.search(text):
            found.add(path)
    return found & tests


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
