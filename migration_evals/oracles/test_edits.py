"""What a patch did to the repository's tests, decided before any run: pure functions.

The tests tier grades the base commit's suite, so a patch's edits of test files count
only where the base's own tests cannot build against the patched code, and then only
file by file. Each test file the patch touches is one of:

* **mechanical**: the base file with the recipe's declared rewrites applied
  (``migration_evals.oracles.rewrites``; each is an equivalence, so a call or import the patch left
  as it was counts as rewritten too), compared token by token on the tree-sitter parse tree, so
  whitespace, comments and import order do not matter; where it also uses a form the
  recipe declares syntax-only (Java 17's ``var``, the diamond, a text block...,
  ``migration_evals.oracles.ecosystems.maven.syntax``) it is "tests changed (mechanical)", for the
  judge to review;
* **preserving**: every test method, every function holding an assertion or a skip,
  every class header and test rule of the base file is still there and unchanged apart
  from the recipe's rewrites and syntax-only forms, and nothing new skips a test or ends
  it early; the trial is then marked "tests changed" for the judge to review;
* **offending**: anything else (a test deleted, emptied or changed, an assertion removed,
  weakened or wrapped, a new skip, a changed build constraint): the tier fails with the
  first offending hunk;
* **added**: a test file the base does not have; never graded (it could define a
  ``TestMain`` that rewrites the runner's output);
* **resource**: a test file in no language an ecosystem reads tests in (its
  ``TestLanguage``, ``migration_evals.oracles.sources``: Java, Go), or one the base's
  suite never builds; the base's is always used.

A mechanical or preserving edit keeps its tokens, not necessarily their meaning: every
test file the graded tree may hold (the patch's usable copy, or the base's own in a
package the patch changed) must also keep what each name its unchanged declarations use
resolves to (``migration_evals.oracles.test_meanings``, ``migration_evals.oracles.bindings``); a
name the patch rebinds (an import dropped for its own declaration, an overload that captures a call)
makes the file offending, the tier failing with the name and both meanings.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from migration_evals.core.model import Evidence
from migration_evals.core.spec_types import EditPolicy, TestPolicySpec
from migration_evals.oracles.ecosystems.registry import test_language
from migration_evals.oracles.grading import path_matches
from migration_evals.oracles.rewrites import (
    Rewrite,
    RewriteGroup,
    apply_rewrites,
    rewrite_at,
    rewrite_groups,
)
from migration_evals.oracles.sources import Source, TestLanguage, Unit, read_source
from migration_evals.oracles.test_meanings import explained, rebound_tests
from migration_evals.oracles.tree import ChangeKind, TreeView

__all__ = [
    "EditKind",
    "TestEdit",
    "TestEdits",
    "TestPolicy",
    "classify_test_edit",
    "classify_test_edits",
]

_HUNK_CHARS = 300


@dataclass(frozen=True, slots=True)
class TestPolicy:
    """A recipe's ``test_policy``: which files are tests, whether the base's suite is
    graded (``edits: base-suite``) or any edit of a test file fails (``forbidden``, for
    suites that are scripts the harness cannot read), the recipe's rewrites, and the
    syntax-only forms it declares (Java's: ``migration_evals.oracles.ecosystems.maven.syntax``)."""

    __test__ = False

    test_paths: tuple[str, ...]
    forbids_edits: bool
    groups: tuple[RewriteGroup, ...] = ()
    syntax: frozenset[str] = frozenset()

    @classmethod
    def of(cls, spec: TestPolicySpec) -> TestPolicy:
        return cls(
            spec.test_paths,
            spec.edits is EditPolicy.FORBIDDEN,
            rewrite_groups(spec.rewrites),
            frozenset(spec.syntax),
        )


class EditKind(StrEnum):
    MECHANICAL = "mechanical"
    PRESERVING = "preserving"
    OFFENDING = "offending"
    ADDED = "added"
    RESOURCE = "resource"


@dataclass(frozen=True, slots=True)
class TestEdit:
    """One test file the patch touched, and what the edit is."""

    __test__ = False

    path: str
    kind: EditKind
    reason: str = ""
    line: int | None = None
    hunk: str = ""
    syntax: tuple[str, ...] = ()  # the declared syntax-only forms the edit uses

    def evidence(self) -> Evidence:
        message = f"{self.reason}: {self.hunk}" if self.hunk else self.reason
        return Evidence(message, self.path, self.line)

    @property
    def changes_tests(self) -> bool:
        """Whether grading this edit grades tests other than the base's, for the judge to
        review: a preserving edit, or a mechanical one that uses a syntax-only form."""
        return self.kind is EditKind.PRESERVING or (
            self.kind is EditKind.MECHANICAL and bool(self.syntax)
        )

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"path": self.path, "kind": self.kind.value}
        if self.reason:
            data["reason"] = self.reason
        if self.syntax:
            data["syntax"] = list(self.syntax)
        return data


@dataclass(frozen=True, slots=True)
class TestEdits:
    """Every test file a patch touched, classified."""

    __test__ = False

    edits: tuple[TestEdit, ...] = ()

    def of_kind(self, *kinds: EditKind) -> list[TestEdit]:
        return [edit for edit in self.edits if edit.kind in kinds]

    @property
    def offending(self) -> TestEdit | None:
        found = self.of_kind(EditKind.OFFENDING)
        return found[0] if found else None

    @property
    def usable(self) -> frozenset[str]:
        """Files whose patched version may replace the base's, if the base's cannot build."""
        return frozenset(e.path for e in self.of_kind(EditKind.MECHANICAL, EditKind.PRESERVING))

    def changes_tests(self, used: Iterable[str]) -> bool:
        """Whether using ``used`` from the patch changes tests beyond the recipe's rewrites."""
        changed = {edit.path for edit in self.edits if edit.changes_tests}
        return bool(changed & set(used))

    def to_dict(self) -> list[dict[str, object]]:
        return [edit.to_dict() for edit in self.edits]


def _active(groups: Sequence[RewriteGroup], base: Source) -> list[RewriteGroup]:
    names = base.import_names()
    return [group for group in groups if any(group.covers(name) for name in names)]


def _imports_rewritten(base: Source, patched: Source, active: Sequence[RewriteGroup]) -> bool:
    """The patched imports are the base's with the groups' imports replaced (by any of
    the replacements each allows, or kept, as a call may be; the compiler rejects an
    unused or missing one)."""
    kept: set[str] = set()
    allowed: set[str] = set()
    for imported in base.imports:
        static = "static " if imported.startswith("static ") else ""
        name = imported.removeprefix(static).split(" ")[-1]
        group = next((g for g in active if g.to and g.covers(name)), None)
        if group is None:
            kept.add(imported)
        else:
            allowed |= {imported} | {static + target for target in group.replacements(name)}
    return kept <= patched.imports <= kept | allowed


def _hunk(
    language: TestLanguage,
    before: Source,
    base: Unit,
    after: Source,
    patched: Unit,
    *,
    calls: Sequence[Rewrite],
) -> tuple[int | None, str]:
    """The first difference between a unit and its patched version that the rewrites do
    not explain: its line in the patched file and the base's and the patch's lines."""
    rewritten, lines = rewrite_at(base.tokens, base.lines, calls)
    now, now_lines = rewrite_at(patched.tokens, patched.lines, calls)
    matcher = difflib.SequenceMatcher(a=rewritten, b=now, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        line = now_lines[b1] if b1 < len(now_lines) else None
        return line, _shown(before, lines[a1:a2], after, now_lines[b1:b2])
    # The tokens agree: a slot differs (a type dropped for var over a literal of another).
    markers = [i for i, token in enumerate(rewritten) if language.is_slot(token)]

    def rewrite(tokens: Sequence[str]) -> list[str]:
        return apply_rewrites(tokens, calls)

    for i, (was, is_now) in enumerate(zip(base.slots, patched.slots, strict=False)):
        if language.slot_forms([was], [is_now], rewrite) is None:
            at = markers[i] if i < len(markers) else 0
            line = now_lines[at] if at < len(now_lines) else None
            return line, _shown(before, lines[at : at + 1], after, now_lines[at : at + 1])
    return None, ""


def _shown(before: Source, removed: Sequence[int], after: Source, added: Sequence[int]) -> str:
    """The base's lines and the patch's, as ``-line +line``, cut to a readable length."""
    text = " ".join(
        [f"-{line}" for line in _source_lines(before, removed)]
        + [f"+{line}" for line in _source_lines(after, added)]
    )
    return text[:_HUNK_CHARS] + ("…" if len(text) > _HUNK_CHARS else "")


def _source_lines(source: Source, lines: Sequence[int]) -> list[str]:
    if not lines:
        return []
    return [source.lines[n - 1].strip() for n in range(min(lines), max(lines) + 1)]


def _offending(path: str, reason: str, line: int | None, hunk: str = "") -> TestEdit:
    return TestEdit(path, EditKind.OFFENDING, reason, line, hunk)


def _new_forms(base: Counter[str], patched: Counter[str]) -> set[str]:
    """The syntax-only forms the patched side holds more of than the base."""
    return {form for form, count in patched.items() if count > base.get(form, 0)}


def _unit_problem(
    language: TestLanguage,
    path: str,
    before: Source,
    after: Source,
    *,
    key: str,
    calls: Sequence[Rewrite],
) -> TestEdit | set[str]:
    """Why a unit is not kept, or the syntax-only forms its patched version uses."""
    base, patched = before.units[key], after.units.get(key)
    if patched is None:
        return _offending(path, f"{base.key} was removed", None, _removed(base))
    forms = explained(language, base.tokens, base.slots, patched.tokens, patched.slots, calls=calls)
    if forms is not None:
        return forms | _new_forms(base.forms, patched.forms)
    line, hunk = _hunk(language, before, base, after, patched, calls=calls)
    what = "emptied" if len(patched.tokens) < len(base.tokens) // 2 else "changed"
    return _offending(path, f"{base.key} was {what}", line, hunk)


def _removed(unit: Unit) -> str:
    text = " ".join(f"-{line.strip()}" for line in unit.text.splitlines())
    return text[:_HUNK_CHARS] + ("…" if len(text) > _HUNK_CHARS else "")


def _new_skips(base: Source, patched: Source, calls: Sequence[Rewrite]) -> list[tuple[str, ...]]:
    before = Counter(tuple(apply_rewrites(skip, calls)) for skip in base.skips)
    return list((Counter(patched.skips) - before).elements())


def _preserving_problem(
    language: TestLanguage, path: str, base: Source, patched: Source, calls: Sequence[Rewrite]
) -> TestEdit:
    """Why the edit is not preserving, or the preserving edit."""
    forms: set[str] = set()
    for key in base.units:
        problem = _unit_problem(language, path, base, patched, key=key, calls=calls)
        if isinstance(problem, TestEdit):
            return problem
        forms |= problem
    skips = _new_skips(base, patched, calls)
    if skips:
        return _offending(path, "a test is newly skipped or ended early", None, " ".join(skips[0]))
    if base.constraints != patched.constraints:
        added = " ".join(sorted(patched.constraints - base.constraints)) or "(removed)"
        return _offending(path, "the file's build constraints changed", None, added)
    for key in patched.units.keys() - base.units.keys():
        if language.offends_when_added(key):
            unit = patched.units[key]
            return _offending(path, f"{unit.key} was added", unit.line, unit.text.split("\n")[0])
    reason = "tests kept; other code changed"
    if forms:
        reason += f" ({language.syntax_named} in tests: {', '.join(sorted(forms))})"
    return TestEdit(path, EditKind.PRESERVING, reason, syntax=tuple(sorted(forms)))


def classify_test_edit(
    path: str,
    base: bytes | None,
    patched: bytes | None,
    groups: Sequence[RewriteGroup],
    syntax: frozenset[str] = frozenset(),
) -> TestEdit:
    """What the patch did to one test file (``None``: the file is absent on that side);
    ``syntax``: the syntax-only forms the recipe declares."""
    language = test_language(path)
    if language is None:
        return TestEdit(path, EditKind.RESOURCE, "not a test source: the base's is used")
    if base is None:
        return TestEdit(path, EditKind.ADDED, _added_note(language, patched or b""))
    if patched is None:
        return _offending(path, "the test file was deleted", None)
    if not language.built(path, base):
        # The base's suite never builds this file (a build tag such as "integration"), and
        # the graded tree keeps the base's copy: nothing the patch wrote in it is measured.
        return TestEdit(
            path, EditKind.RESOURCE, "not built by the base's suite: the base's is used"
        )
    before = read_source(language, base, syntax)
    after = read_source(language, patched, syntax)
    active = _active(groups, before)
    calls = [call for group in active for call in group.calls]
    forms = explained(language, before.tokens, before.slots, after.tokens, after.slots, calls=calls)
    if (
        forms is not None
        and before.constraints == after.constraints
        and _imports_rewritten(before, after, active)
    ):
        return _mechanical(language, path, forms | _new_forms(before.forms, after.forms))
    return _preserving_problem(language, path, before, after, calls)


def _mechanical(language: TestLanguage, path: str, forms: set[str]) -> TestEdit:
    if not forms:
        return TestEdit(path, EditKind.MECHANICAL)
    used = tuple(sorted(forms))
    reason = f"tests changed (mechanical): {language.syntax_named} only ({', '.join(used)})"
    return TestEdit(path, EditKind.MECHANICAL, reason, syntax=used)


def _added_note(language: TestLanguage, content: bytes) -> str:
    source = read_source(language, content)
    controls = language.controls(source.units)
    if controls:
        return f"a new test file (defines {', '.join(controls)}): left out of grading"
    return "a new test file: left out of grading"


def classify_test_edits(view: TreeView, policy: TestPolicy) -> TestEdits:
    """Every test file the patch adds, modifies, deletes or renames, classified."""
    edits: dict[str, TestEdit] = {}
    test_paths, groups, syntax = policy.test_paths, policy.groups, policy.syntax
    for change in view.changes:
        old = change.old_path if change.kind is not ChangeKind.COPY else None
        new = change.new_path
        if old is not None and old != new and path_matches(old, test_paths):
            edits[old] = classify_test_edit(old, view.read_base(old), None, groups, syntax)
        if new is not None and path_matches(new, test_paths) and new not in edits:
            before, after = view.read_base(new), view.read(new)
            edits[new] = classify_test_edit(new, before, after, groups, syntax)
    _mark_rebound(view, policy, edits)
    return TestEdits(tuple(edits[path] for path in sorted(edits)))


_USABLE = frozenset({EditKind.MECHANICAL, EditKind.PRESERVING})


def _mark_rebound(view: TreeView, policy: TestPolicy, edits: dict[str, TestEdit]) -> None:
    """Each test file the graded tree may hold (a usable edit, or the base's copy) whose
    names the patch rebinds becomes offending (``migration_evals.oracles.test_meanings``)."""
    usable = [path for path, edit in edits.items() if edit.kind in _USABLE]
    left_out = [path for path, edit in edits.items() if edit.kind is EditKind.ADDED]
    for found in rebound_tests(
        view, policy.test_paths, policy.groups, policy.syntax, edited=usable, left_out=left_out
    ):
        current = edits.get(found.path)
        if current is None or current.kind in _USABLE:
            edits[found.path] = _offending(found.path, found.reason, found.line, f"+{found.text}")
