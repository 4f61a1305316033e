"""What a recipe does not explain: constructs a patch adds that no migration needs.

A recipe's contract lists under ``outside`` the families of construct it does not explain
(``Family``); the ecosystem's own module finds them on the parse trees of the base and
patched files (``migration_evals.oracles.ecosystems.go.outside``,
``migration_evals.oracles.ecosystems.maven.outside``). This module holds what they share:

* ``Construct``: one such thing at a file and line, inside a declaration (its scope);
* ``added``: what the patched files have beyond the base's, counted per (family, what it
  does, scope) over the files the patch changed, one folder (a package) at a time. A
  construct the base already had in that declaration is not the patch's, whichever line
  or file of the package it moved to; one the patch adds to any declaration is;
* ``outside_evidence``: a ``fail`` line naming each added construct at its file and line.

A family the recipe does not list is not looked for; one its ecosystem cannot look for is
a broken spec (``SpecError``), never the candidate's fault.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from migration_evals.core.errors import SpecError
from migration_evals.core.model import Evidence, Severity
from migration_evals.core.specs import Recipe
from migration_evals.oracles.grading import path_matches
from migration_evals.oracles.tree import TreeView

__all__ = [
    "Construct",
    "Family",
    "FolderSides",
    "added",
    "changed_by_folder",
    "declared_families",
    "is_test_path",
    "outside_evidence",
]


class Family(StrEnum):
    """Kinds of change a migration recipe does not explain (``contract.outside``)."""

    LOAD_TIME_CODE = "load-time-code"  # runs without being called: init, initialisers
    PROCESS_CONTROL = "process-control"  # ends, starts or re-executes processes
    TEST_DETECTION = "test-detection"  # senses whether it runs under a test harness
    TEST_OUTPUT = "test-output"  # writes where the test harness reads its results
    TEST_FRAMEWORK_HOOKS = "test-framework-hooks"  # code the test framework loads itself
    FOREIGN_CODE = "foreign-code"  # code the language's compiler does not check as source
    NEW_DEPENDENCIES = "new-dependencies"  # code from a module the base does not use


@dataclass(frozen=True, slots=True)
class Construct:
    """One construct of a family in a file: ``shown`` as written, ``does`` what it does,
    ``scope`` the declaration holding it ("" for the file or package itself)."""

    family: Family
    does: str
    shown: str
    scope: str
    path: str
    line: int
    column: int = 1
    context: str = ""  # its source line, whitespace collapsed: which one moved, which is new

    @property
    def key(self) -> tuple[Family, str, str]:
        return (self.family, self.does, self.scope)


@dataclass(slots=True)
class FolderSides:
    """The files of one folder the patch changed: base contents and patched contents."""

    base: dict[str, bytes] = field(default_factory=dict)
    patched: dict[str, bytes] = field(default_factory=dict)


def declared_families(recipe: Recipe, checked: Collection[Family]) -> frozenset[Family]:
    """The families ``recipe`` declares outside it; each must be one ``checked`` covers."""
    raw = recipe.contract.outside
    where = f"recipe {recipe.name}"
    known = ", ".join(sorted(checked))
    families: set[Family] = set()
    for name in raw:
        family = Family(name) if name in Family._value2member_map_ else None
        if family is None or family not in checked:
            raise SpecError(where, "contract.outside", f"families among {known}, not {name!r}")
        families.add(family)
    return frozenset(families)


def is_test_path(recipe: Recipe) -> Callable[[str], bool]:
    """Whether a path is one of the recipe's test files (``test_policy.test_paths``)."""
    patterns = recipe.test_policy.test_paths
    return lambda path: path_matches(path, patterns)


def changed_by_folder(tree: TreeView, wanted: Callable[[str], bool]) -> dict[str, FolderSides]:
    """The ``wanted`` files the patch adds, changes, renames or deletes, by folder: each
    side's content under its own path (a file moved between folders counts in both)."""
    folders: dict[str, FolderSides] = {}
    for change in tree.changes:
        if change.old_path is not None and wanted(change.old_path):
            content = tree.read_base(change.old_path)
            if content is not None:
                sides = folders.setdefault(posixpath.dirname(change.old_path), FolderSides())
                sides.base[change.old_path] = content
        if change.new_path is not None and wanted(change.new_path):
            content = tree.read(change.new_path)
            if content is not None:
                sides = folders.setdefault(posixpath.dirname(change.new_path), FolderSides())
                sides.patched[change.new_path] = content
    return folders


def added(base: Iterable[Construct], patched: Iterable[Construct]) -> list[Construct]:
    """The patched constructs beyond the base's count of their (family, does, scope).

    Where a key has more than at base, those whose line is not one of the base's are named
    first, then those written differently: a line the base has moved, it was not added."""
    base = list(base)
    have = Counter(c.key for c in base)
    lines = Counter((c.key, c.context) for c in base)
    written = Counter((c.key, c.shown) for c in base)
    groups: dict[tuple[Family, str, str], list[Construct]] = {}
    for construct in patched:
        groups.setdefault(construct.key, []).append(construct)
    result: list[Construct] = []
    for key, found in groups.items():
        extra = len(found) - have[key]
        if extra <= 0:
            continue
        moved = [c for c in found if _take(lines, (key, c.context))]
        rest = [c for c in found if c not in moved]
        same = [c for c in rest if _take(written, (key, c.shown))]
        result += ([c for c in rest if c not in same] + same + moved)[:extra]
    return sorted(result, key=lambda c: (c.path, c.line, c.column))


def _take(
    counts: Counter[tuple[tuple[Family, str, str], str]], item: tuple[tuple[Family, str, str], str]
) -> bool:
    """Use up one of ``item`` in ``counts``; False when none is left."""
    if counts[item] <= 0:
        return False
    counts[item] -= 1
    return True


def outside_evidence(constructs: Iterable[Construct]) -> list[Evidence]:
    """One ``fail`` line per construct, naming it, what it does and where."""
    evidence = []
    for c in constructs:
        where = f" in {c.scope}" if c.scope else ""
        message = f"{c.shown} {c.does}{where}: outside what the recipe explains ({c.family})"
        evidence.append(Evidence(message, c.path, c.line, c.column, Severity.FAILURE))
    return evidence
