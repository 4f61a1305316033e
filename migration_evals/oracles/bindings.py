"""What the names a test uses mean, at the base and in the patch, and where they differ.

A patch that cannot change a test can still change what it calls: declare ``var reflect``
beside a Go test that imports ``reflect`` (the base's test no longer compiles) and ship a
copy of the test without the import, and ``reflect.DeepEqual`` is the patch's; add an
``assertEquals`` overload to a class a Java test imports from, or a method of that name
to its superclass, and the call is captured. Every token of every test is unchanged.

So each test file the graded tree may hold (the patch's copy of one it edited, the
base's copy of one in a package the patch changed) is resolved on both sides: every name
used in a declaration the patch left unchanged (tests, helpers, class headers, fields)
gets its *meanings*, the declarations it may resolve to, found by structural scope
resolution over tree-sitter trees of the file's package
(``migration_evals.oracles.ecosystems.go.bindings``,
``migration_evals.oracles.ecosystems.maven.bindings``). A meaning is one of:

* ``local``: declared inside the same declaration (a parameter, a local, a type
  parameter);
* ``import``: a declaration outside the repository, reached through an import (Go's dot
  imports and Java's on-demand imports too, for the names they may bring);
* ``inherited``: a member a Java class outside the tree, that a class of the file
  extends, may have;
* ``builtin``: the language's own (Go's universe, ``java.lang``, ``Object``'s methods);
* ``main`` or ``test``: a declaration in the repository's code or in its tests, named
  with its package or class (Java methods with every overload's parameter types);
* ``unresolved``: nothing found (a package name, or a declaration the tree lacks).

A name *keeps its meaning* when its meanings are the same on both sides, apart from the
recipe's declared import rewrites (``ioutil`` may become ``os``); a name the rewrites
introduced may mean only what the file's imports and those rewrites allow. A meaning in
the repository's code that the base did not have is a capture; a meaning dropped while
one in the repository's code remains is a redirection (an import taken away so the
name falls to the patch's declaration). Either makes the file offending, naming the
identifier and both meanings. Names whose meaning is lost (a declaration deleted) are
left to the compiler.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from tree_sitter import Node

from migration_evals.oracles.syntax import SourceLanguage, parse
from migration_evals.oracles.tree import ChangeKind, TreeView

__all__ = [
    "Meaning",
    "MeaningKind",
    "Reference",
    "Resolved",
    "Side",
    "TestBindings",
    "base_side",
    "first_rebinding",
    "patched_side",
    "rebinding",
    "unchanged_uses",
]


class MeaningKind(StrEnum):
    LOCAL = "local"
    IMPORT = "import"
    INHERITED = "inherited"
    BUILTIN = "builtin"
    MAIN = "main"
    TEST = "test"
    UNRESOLVED = "unresolved"


@dataclass(frozen=True, slots=True, order=True)
class Meaning:
    """A declaration a name may resolve to: its kind and what identifies it; ``shown``
    says it to a reader (and does not take part in comparisons)."""

    kind: MeaningKind
    target: str = ""
    shown: str = field(default="", compare=False)

    @property
    def in_repository(self) -> bool:
        return self.kind in (MeaningKind.MAIN, MeaningKind.TEST)

    def describe(self) -> str:
        return self.shown or (f"{self.kind.value} {self.target}".strip())


@dataclass(frozen=True, slots=True)
class Reference:
    """One use of a name: the declaration it is used in, the name, what it may mean."""

    declaration: str
    name: str
    meanings: frozenset[Meaning]
    line: int


@dataclass
class Side:
    """One side's tree as its build sees it: the paths it holds and their contents,
    parsed once."""

    files: frozenset[str]
    read_file: Callable[[str], bytes | None]
    is_test: Callable[[str], bool]
    _trees: dict[str, tuple[bytes, Node] | None] = field(default_factory=dict)
    _dirs: dict[str, list[str]] | None = None

    def read(self, path: str) -> bytes | None:
        return self.read_file(path) if path in self.files else None

    def root(self, path: str, language: SourceLanguage) -> tuple[bytes, Node] | None:
        """The file's content and parse tree, or None if the side has no such file."""
        if path not in self._trees:
            content = self.read(path)
            self._trees[path] = (
                (content, parse(language, content).root_node) if content is not None else None
            )
        return self._trees[path]

    def in_dir(self, directory: str) -> list[str]:
        """The side's files directly in ``directory``."""
        if self._dirs is None:
            self._dirs = {}
            for path in sorted(self.files):
                self._dirs.setdefault(posixpath.dirname(path), []).append(path)
        return self._dirs.get(directory, [])

    def dirs(self) -> Iterable[str]:
        self.in_dir("")
        return self._dirs or {}


# A file's imports, its declarations by key and the names they use, on one side.
Resolved = tuple[list[str], dict[str, list[Node]], list[Reference]]


class TestBindings(Protocol):
    """One language's names, resolved on the base's side and the patched side of a patch
    (``TestLanguage.bind``)."""

    def candidates(self, changed: Iterable[str]) -> set[str]:
        """The test files whose meanings a patch changing ``changed`` can reach, besides
        those it edited (in a package it changed, or naming a class it changed)."""

    def resolved(self, path: str, patched: bool) -> Resolved | None:
        """The file's imports, declarations and references on one side; None if the side
        has no such file."""


def _added(view: TreeView) -> set[str]:
    return {
        c.new_path
        for c in view.changes
        if c.new_path is not None and c.kind in (ChangeKind.ADD, ChangeKind.COPY, ChangeKind.RENAME)
    }


def base_side(view: TreeView, is_test: Callable[[str], bool]) -> Side:
    """The base commit's tree."""
    files = set(view.files()) - _added(view)
    files |= {
        c.old_path
        for c in view.changes
        if c.old_path is not None and c.kind in (ChangeKind.DELETE, ChangeKind.RENAME)
    }
    return Side(frozenset(files), view.read_base, is_test)


def patched_side(view: TreeView, is_test: Callable[[str], bool], left_out: Iterable[str]) -> Side:
    """The patched tree without the files grading leaves out (the tests the patch added)."""
    return Side(frozenset(set(view.files()) - set(left_out)), view.read, is_test)


def _allowed(meaning: Meaning, imports: Sequence[str]) -> bool:
    """Whether a meaning the base did not have is one the file's imports or the recipe's
    rewrites explain (never a declaration of the repository)."""
    if meaning.kind in (
        MeaningKind.LOCAL,
        MeaningKind.BUILTIN,
        MeaningKind.INHERITED,
        MeaningKind.UNRESOLVED,
    ):
        return True
    if meaning.kind is not MeaningKind.IMPORT:
        return False
    return any(
        meaning.target == imported or meaning.target.startswith(imported + ".")
        for imported in imports
    )


def rebinding(
    name: str,
    base: frozenset[Meaning],
    patched: frozenset[Meaning],
    imports: Sequence[str],
) -> str | None:
    """Why ``name`` no longer means what it meant at the base, or None if it does.

    ``imports`` are what a new meaning may come from: the base file's imports and the
    imports the recipe's rewrites put in their place (Go paths, Java qualified names)."""
    if base == patched or not patched:
        return None
    new = sorted(patched - base)
    captured = [meaning for meaning in new if not _allowed(meaning, imports)]
    dropped = sorted(base - patched)
    if not captured and (not dropped or not any(m.in_repository for m in patched)):
        return None
    was = ", ".join(m.describe() for m in sorted(base)) or "nothing"
    now = ", ".join(m.describe() for m in sorted(patched))
    return f"{name} means {now} in the patch, {was} at the base"


def unchanged_uses(
    base: Iterable[Reference], patched: Iterable[Reference], unchanged: Callable[[str], bool]
) -> tuple[dict[str, frozenset[Meaning]], dict[str, tuple[frozenset[Meaning], int]]]:
    """Each name's meanings in the declarations ``unchanged`` accepts, on each side (the
    patched side with the line of the name's first use)."""
    before: dict[str, set[Meaning]] = {}
    after: dict[str, tuple[set[Meaning], int]] = {}
    for reference in base:
        if unchanged(reference.declaration):
            before.setdefault(reference.name, set()).update(reference.meanings)
    for reference in patched:
        if unchanged(reference.declaration):
            found = after.setdefault(reference.name, (set(), reference.line))
            found[0].update(reference.meanings)
    return (
        {name: frozenset(meanings) for name, meanings in before.items()},
        {name: (frozenset(meanings), line) for name, (meanings, line) in after.items()},
    )


def first_rebinding(
    base: Mapping[str, frozenset[Meaning]],
    patched: Mapping[str, tuple[frozenset[Meaning], int]],
    imports: Sequence[str],
) -> tuple[str, int] | None:
    """The first name (by line) whose meaning the patch changed, and its line."""
    for name, (meanings, line) in sorted(patched.items(), key=lambda item: item[1][1]):
        why = rebinding(name, base.get(name, frozenset()), meanings, imports)
        if why is not None:
            return why, line
    return None
