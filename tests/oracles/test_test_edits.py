"""The test-edit classifier: the recipe's own rewrites pass, anything that weakens a test
fails with its hunk, and the rest is usable only as "tests changed"."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.maven.test_sources import JAVA_TESTS
from migration_evals.oracles.rewrites import Rewrite, RewriteGroup, apply_rewrites, split_tokens
from migration_evals.oracles.sources import read_source
from migration_evals.oracles.test_edits import (
    EditKind,
    TestPolicy,
    classify_test_edit,
    classify_test_edits,
)
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree
from tests.oracles.ecosystems.maven.test_test_sources import JAVA_BASE, JAVA_MECHANICAL


@pytest.fixture
def java_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("java8-to-17").test_policy)


def test_a_placeholder_takes_one_balanced_expression() -> None:
    rewrite = Rewrite.of('errors.Wrap($err, "$msg")', 'fmt.Errorf("$msg: %w", $err)')
    tokens = split_tokens('x := errors.Wrap(f(a, g(b)), "m")')
    assert (
        " ".join(apply_rewrites(tokens, [rewrite]))
        == 'x := fmt . Errorf ( "m: %w" , f ( a , g ( b ) ) )'
    )
    with pytest.raises(ValueError, match="placeholder"):
        Rewrite.of("errors.Wrap($err", "x")


def test_a_pattern_keeps_the_operators_a_parsed_source_keeps_whole() -> None:
    # tree-sitter reads a lambda's arrow as one token: a pattern must too, or never match.
    rewrite = Rewrite.of("run($body)", "assertThrows(E.class, () -> $body)")
    parsed = read_source(JAVA_TESTS, b"class A { void t() { run(f(x)); } }").tokens
    rewritten = apply_rewrites(parsed, [rewrite])
    assert "->" in rewritten
    wanted = b"class A { void t() { assertThrows(E.class, () -> f(x)); } }"
    assert rewritten == list(read_source(JAVA_TESTS, wanted).tokens)
    assert split_tokens("a::b == c && d") == ("a", "::", "b", "==", "c", "&&", "d")


def test_a_trees_test_files_are_classified_by_path(java_policy: TestPolicy) -> None:
    test = "core/src/test/java/x/CalcTest.java"
    resource = "core/src/test/resources/mockito-extensions/org.mockito.plugins.MockMaker"
    added = "core/src/test/java/x/NewTest.java"
    tree = MemoryTree(
        base={test: JAVA_BASE.encode(), resource: b""},
        patched={
            test: JAVA_MECHANICAL.encode(),
            resource: b"mock-maker-inline\n",
            added: b"package x;\nclass NewTest {}\n",
        },
        changes=[
            FileChange(ChangeKind.MODIFY, test, test),
            FileChange(ChangeKind.MODIFY, resource, resource),
            FileChange(ChangeKind.ADD, None, added),
            FileChange(ChangeKind.MODIFY, "core/pom.xml", "core/pom.xml"),
        ],
    )
    edits = classify_test_edits(tree, java_policy)
    kinds = {edit.path: edit.kind for edit in edits.edits}
    assert kinds == {test: EditKind.MECHANICAL, resource: EditKind.RESOURCE, added: EditKind.ADDED}
    assert edits.offending is None
    assert edits.usable == {test}
    assert not edits.changes_tests(edits.usable)


def test_a_rewrite_that_moves_a_string_argument_explains_the_moved_call() -> None:
    # Rewriting the patch's correct call again would move "alice" last too: the base
    # rewritten once must be enough.
    rewrite = Rewrite.of('assertEquals("$m", $e, $a)', 'assertEquals($e, $a, "$m")')
    group = RewriteGroup("org.junit.Assert", ("org.junit.jupiter.api.Assertions",), (rewrite,))
    base = MOVED_MESSAGE.format(imported="org.junit.Assert", call='"owner", "alice", owner()')
    moved = MOVED_MESSAGE.format(
        imported="org.junit.jupiter.api.Assertions", call='"alice", owner(), "owner"'
    )
    wrong = MOVED_MESSAGE.format(
        imported="org.junit.jupiter.api.Assertions", call='owner(), "owner", "alice"'
    )
    path = "src/test/java/OwnerTest.java"
    assert classify_test_edit(path, base.encode(), moved.encode(), [group]).kind is (
        EditKind.MECHANICAL
    )
    assert classify_test_edit(path, base.encode(), wrong.encode(), [group]).kind is (
        EditKind.OFFENDING
    )


MOVED_MESSAGE = """\
import static {imported}.assertEquals;

import org.junit.Test;

public class OwnerTest {{
    @Test
    public void keepsItsOwner() {{
        assertEquals({call});
    }}
}}
"""
