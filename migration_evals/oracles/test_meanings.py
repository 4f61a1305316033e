"""Which test files the graded tree may hold with names the patch rebinds: the check the
test-edit classifier (``migration_evals.oracles.test_edits``) adds to the principle
``migration_evals.oracles.bindings`` states.

The files checked are those whose meanings the patch can reach: each test file it
edited whose edit would be usable (mechanical or preserving: its copy may be graded),
and each test file it left alone that its language says the patch can reach
(``TestBindings.candidates``: Go, one in a directory holding a Go file it changed; Java,
one in a package it changed, in any source folder, or naming a class declared in a Java
file it changed, or a class extending one). For each, the names used in the
declarations the patch left unchanged (after the recipe's rewrites and syntax-only
forms) are resolved on the base commit's tree and on the patched tree without the test
files grading leaves out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from migration_evals.oracles.bindings import (
    Side,
    TestBindings,
    base_side,
    first_rebinding,
    patched_side,
    unchanged_uses,
)
from migration_evals.oracles.ecosystems.registry import test_language, test_languages
from migration_evals.oracles.grading import path_matches
from migration_evals.oracles.rewrites import Rewrite, RewriteGroup, apply_rewrites
from migration_evals.oracles.sources import Slot, TestLanguage
from migration_evals.oracles.tree import TreeView

__all__ = ["Rebound", "explained", "rebound_tests"]


@dataclass(frozen=True, slots=True)
class Rebound:
    """A test file one of whose names means something else in the patch."""

    path: str
    reason: str
    line: int
    text: str  # the line, as the patched file has it


def explained(
    language: TestLanguage,
    base: Sequence[str],
    base_slots: Sequence[Slot],
    patched: Sequence[str],
    patched_slots: Sequence[Slot],
    *,
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
    return language.slot_forms(
        base_slots, patched_slots, lambda tokens: apply_rewrites(tokens, calls)
    )


def _unchanged(
    language: TestLanguage,
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
                old, new = language.tokens(was, syntax), language.tokens(now, syntax)
                kept[key] = any(
                    explained(
                        language, old.tokens, old.slots, new.tokens, new.slots, calls=rewrites
                    )
                    is not None
                    for rewrites in ((), calls)  # a file the patch left alone, or rewrote
                )
        return kept[key]

    return unchanged


def _rebound_file(
    language: TestLanguage,
    bound: TestBindings,
    path: str,
    patched: Side,
    *,
    groups: Sequence[RewriteGroup],
    syntax: frozenset[str],
) -> Rebound | None:
    before = bound.resolved(path, patched=False)
    after = bound.resolved(path, patched=True)
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
    content = patched.read(path) or b""
    lines = content.decode("utf-8", "replace").splitlines()
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return Rebound(path, f"a name the tests use is rebound: {why}", line, text)


def _changed(view: TreeView) -> set[str]:
    return {path for change in view.changes for path in change.paths()}


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
    bound = {each.language.name: each.bind(base, patched) for each in test_languages()}
    changed = _changed(view)
    candidates = set(edited).union(*(each.candidates(changed) for each in bound.values()))
    found = []
    for path in sorted(candidates):
        language = test_language(path)
        if language is not None:
            rebound = _rebound_file(
                language, bound[language.language.name], path, patched, groups=groups, syntax=syntax
            )
            if rebound is not None:
                found.append(rebound)
    return found
