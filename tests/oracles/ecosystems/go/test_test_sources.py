"""Go test edits: the recipe's ioutil and pkg/errors rewrites pass, anything that weakens
or bypasses a test fails with its hunk, and a file the base's suite never builds is not
graded."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.test_edits import EditKind, TestEdit, TestPolicy, classify_test_edit


@pytest.fixture
def go_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("go-import-rewrite").test_policy)


GO_BASE = """package kv

import (
	"io/ioutil"
	"path/filepath"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	dir, err := ioutil.TempDir("", "kv-")
	if err != nil {
		t.Fatal(err)
	}
	if err := ioutil.WriteFile(filepath.Join(dir, "a"), []byte("v"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := ioutil.ReadFile(filepath.Join(dir, "a"))
	if string(got) != "v" {
		t.Fatalf("got %q, want %q", got, "v")
	}
}

func fixture() string { return "v" }
"""

# The recipe's rewrite, with the imports reordered, a comment and different spacing.
GO_MECHANICAL = """package kv

import (
	"testing"
	"os"
	"path/filepath"
)

func TestRoundTrip(t *testing.T) {
	// moved off io/ioutil
	dir, err := os.MkdirTemp("", "kv-")
	if err != nil { t.Fatal(err) }
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("v"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a"))
	if string(got) != "v" {
		t.Fatalf("got %q, want %q", got, "v")
	}
}

func fixture() string { return "v" }
"""

ASSERTION = """	if string(got) != "v" {
		t.Fatalf("got %q, want %q", got, "v")
	}
"""


def _go(policy: TestPolicy, patched: str | None, base: str | None = GO_BASE) -> TestEdit:
    encoded = patched.encode() if patched is not None else None
    return classify_test_edit(
        "kv/kv_test.go", base.encode() if base else None, encoded, policy.groups
    )


def test_the_recipes_ioutil_rewrite_of_a_test_file_is_mechanical(go_policy: TestPolicy) -> None:
    assert _go(go_policy, GO_MECHANICAL).kind is EditKind.MECHANICAL


def test_the_same_rewrite_with_an_assertion_removed_fails_naming_the_hunk(
    go_policy: TestPolicy,
) -> None:
    edit = _go(go_policy, GO_MECHANICAL.replace(ASSERTION, ""))
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason == "func TestRoundTrip was changed"
    # The hunk is the removed assertion, not the rewrites around it.
    assert edit.hunk.startswith('-if string(got) != "v" {')
    assert "MkdirTemp" not in edit.hunk
    evidence = edit.evidence()
    assert evidence.path == "kv/kv_test.go"
    assert evidence.line == 17


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (('!= "v"', '== "never"'), "func TestRoundTrip was changed"),  # a weakened condition
        ((ASSERTION, "\tdefer func() { recover() }()\n" + ASSERTION), "func TestRoundTrip"),
        (("func fixture", "func init() {}\n\nfunc fixture"), "func init was added"),
        (
            ("func fixture", "func TestMain(m *testing.M) { m.Run() }\n\nfunc fixture"),
            "func TestMain was added",
        ),
        (("package kv", "//go:build ignore\n\npackage kv"), "the file's build constraints changed"),
    ],
)
def test_go_edits_that_weaken_or_bypass_a_test_fail(
    go_policy: TestPolicy, change: tuple[str, str], reason: str
) -> None:
    assert change[0] in GO_MECHANICAL
    edit = _go(go_policy, GO_MECHANICAL.replace(*change))
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason.startswith(reason)


def test_a_skip_in_a_helper_fails(go_policy: TestPolicy) -> None:
    skipping = GO_MECHANICAL.replace(
        'func fixture() string { return "v" }',
        'func fixture(t *testing.T) string {\n\tt.Skip("later")\n\treturn "v"\n}',
    )
    edit = _go(go_policy, skipping)
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason == "a test is newly skipped or ended early"
    assert "Skip" in edit.hunk


def test_a_changed_helper_without_assertions_is_preserving(go_policy: TestPolicy) -> None:
    edit = _go(go_policy, GO_MECHANICAL.replace('return "v" }', 'return "w" }'))
    assert edit.kind is EditKind.PRESERVING


def test_a_deleted_test_file_fails_and_an_added_one_is_left_out(go_policy: TestPolicy) -> None:
    assert _go(go_policy, None).kind is EditKind.OFFENDING
    main = 'package kv\n\nimport "testing"\n\nfunc TestMain(m *testing.M) {}\n'
    added = _go(go_policy, main, base=None)
    assert added.kind is EditKind.ADDED
    assert added.reason == "a new test file (defines TestMain): left out of grading"


def test_the_pkg_errors_rewrites_keep_their_arguments(go_policy: TestPolicy) -> None:
    base = (
        'package c\n\nimport (\n\t"testing"\n\n\t"github.com/pkg/errors"\n)\n\n'
        "func TestWrap(t *testing.T) {\n"
        '\terr := errors.Wrap(load(1, "a"), "reading config")\n'
        '\terr = errors.Wrapf(err, "line %d of %s", 3, name())\n'
        '\tif errors.Cause(err) == nil {\n\t\tt.Fatal(errors.Errorf("no %s", "cause"))\n\t}\n}\n'
    )
    rewritten = (
        'package c\n\nimport (\n\t"errors"\n\t"fmt"\n\t"testing"\n)\n\n'
        "func TestWrap(t *testing.T) {\n"
        '\terr := fmt.Errorf("reading config: %w", load(1, "a"))\n'
        '\terr = fmt.Errorf("line %d of %s: %w", 3, name(), err)\n'
        '\tif errors.Cause(err) == nil {\n\t\tt.Fatal(fmt.Errorf("no %s", "cause"))\n\t}\n}\n'
    )
    policy = go_policy
    edit = classify_test_edit("c/c_test.go", base.encode(), rewritten.encode(), policy.groups)
    assert edit.kind is EditKind.MECHANICAL
    # Swapped arguments are not the rewrite (and change what the test checks).
    swapped = rewritten.replace('%w", load(1, "a"))', '%w", nil)')
    edit = classify_test_edit("c/c_test.go", base.encode(), swapped.encode(), policy.groups)
    assert edit.kind is EditKind.OFFENDING


def test_rewrites_apply_only_where_their_import_is(go_policy: TestPolicy) -> None:
    # No io/ioutil import at base: "ioutil.ReadFile" is someone else's, not the recipe's.
    base = GO_BASE.replace('"io/ioutil"', 'ioutil "example.com/myioutil"')
    edit = classify_test_edit(
        "kv/kv_test.go", base.encode(), GO_MECHANICAL.encode(), go_policy.groups
    )
    assert edit.kind is not EditKind.MECHANICAL


def test_a_go_test_file_the_base_never_builds_is_not_graded_whatever_the_patch_did(
    go_policy: TestPolicy,
) -> None:
    # cockroachdb/apd's sql_test.go: behind "+build sql", so go test ./... never builds it;
    # its real migration changed the test's setup, which would otherwise read as weakening.
    tagged = "//go:build sql\n// +build sql\n\n" + GO_BASE
    edit = _go(go_policy, tagged.replace(ASSERTION, ""), base="// +build sql\n\n" + GO_BASE)
    assert edit.kind is EditKind.RESOURCE
    assert edit.reason == "not built by the base's suite: the base's is used"
    assert _go(go_policy, GO_MECHANICAL.replace(ASSERTION, "")).kind is EditKind.OFFENDING
