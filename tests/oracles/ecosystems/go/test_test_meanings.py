"""A Go test edit keeps what every name means: a package-level declaration beside an
import the patch drops, or a builtin shadowed beside a test it left alone, fails naming
the name and both meanings; the recipe's rewrites and changed helpers stay usable."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.test_edits import EditKind, TestPolicy
from tests.oracles.edited_trees import classified_edits as _edits


@pytest.fixture
def go_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("go-import-rewrite").test_policy)


STORE = """package kv

import "io/ioutil"

func Load(path string) ([]string, error) {
\tdata, err := ioutil.ReadFile(path)
\treturn []string{string(data)}, err
}
"""
STORE_TEST = """package kv

import (
\t"io/ioutil"
\t"reflect"
\t"testing"
)

func TestLoad(t *testing.T) {
\tdir := t.TempDir()
\tif err := ioutil.WriteFile(dir+"/a", []byte("v"), 0o600); err != nil {
\t\tt.Fatal(err)
\t}
\tgot, _ := Load(dir + "/a")
\tif !reflect.DeepEqual(got, []string{"v"}) {
\t\tt.Fatalf("got %v", got)
\t}
}
"""
GO_BASE = {"kv/store.go": STORE, "kv/store_test.go": STORE_TEST}
REWRITTEN_STORE = STORE.replace('"io/ioutil"', '"os"').replace("ioutil.ReadFile", "os.ReadFile")
REWRITTEN_TEST = STORE_TEST.replace('\t"io/ioutil"\n', '\t"os"\n').replace(
    "ioutil.WriteFile", "os.WriteFile"
)
# A package-level declaration named like the test's import: the base's test no longer
# compiles ("reflect redeclared"), so its copy, without the import, would be graded.
FAKE_REFLECT = """package kv

type lenient struct{}

func (lenient) DeepEqual(a, b interface{}) bool { return true }

var reflect = lenient{}
"""


def test_go_a_test_copy_whose_import_a_package_var_replaces_fails(go_policy: TestPolicy) -> None:
    patched = {
        "kv/store.go": REWRITTEN_STORE,
        "kv/lenient.go": FAKE_REFLECT,
        "kv/store_test.go": REWRITTEN_TEST.replace('\t"reflect"\n', ""),
    }
    edit = _edits(go_policy, GO_BASE, patched)["kv/store_test.go"]
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason == (
        "a name the tests use is rebound: reflect means var reflect (kv/lenient.go) in the"
        ' patch, import "reflect" at the base'
    )
    assert edit.line == 14
    assert edit.hunk == '+if !reflect.DeepEqual(got, []string{"v"}) {'


@pytest.mark.parametrize(
    "declaration",
    ["func reflect() {}\n", "type reflect struct{}\n", "const reflect = 1\n"],
)
def test_go_any_package_declaration_taking_an_imports_name_fails(
    go_policy: TestPolicy, declaration: str
) -> None:
    patched = {
        "kv/store.go": REWRITTEN_STORE + "\n" + declaration,
        "kv/store_test.go": REWRITTEN_TEST.replace('\t"reflect"\n', ""),
    }
    assert _edits(go_policy, GO_BASE, patched)["kv/store_test.go"].kind is EditKind.OFFENDING


def test_go_a_builtin_shadowed_for_a_test_the_patch_left_alone_fails(
    go_policy: TestPolicy,
) -> None:
    # len is the universe's at the base; a package-level len captures it with no test edit.
    test = STORE_TEST.replace('!reflect.DeepEqual(got, []string{"v"})', "len(got) != 1")
    base = {"kv/store.go": STORE, "kv/store_test.go": test}
    patched = {
        "kv/store.go": REWRITTEN_STORE + "\nfunc len(x []string) int { return 1 }\n",
        "kv/store_test.go": test,
    }
    edit = _edits(go_policy, base, patched)["kv/store_test.go"]
    assert edit.kind is EditKind.OFFENDING
    assert "len means func len (kv/store.go) in the patch, the builtin len at the base" in (
        edit.reason
    )


def test_go_a_new_import_in_place_of_the_tests_fails(go_policy: TestPolicy) -> None:
    patched = {
        "kv/store.go": REWRITTEN_STORE,
        "kv/store_test.go": REWRITTEN_TEST.replace(
            '\t"reflect"\n', '\treflect "example.com/lenient/reflect"\n'
        ),
    }
    edit = _edits(go_policy, GO_BASE, patched)["kv/store_test.go"]
    assert edit.kind is EditKind.OFFENDING
    assert 'import "example.com/lenient/reflect" in the patch' in edit.reason


def test_go_the_recipes_rewrite_beside_changed_code_stays_mechanical(
    go_policy: TestPolicy,
) -> None:
    other_test = 'package kv\n\nimport "testing"\n\nfunc TestNothing(t *testing.T) {}\n'
    base = {**GO_BASE, "kv/other_test.go": other_test}
    patched = {
        "kv/store.go": REWRITTEN_STORE.replace(
            "err\n}", "err\n}\n\nfunc helper() int { return 1 }"
        ),
        "kv/store_test.go": REWRITTEN_TEST,
        "kv/other_test.go": other_test,
        # a new test file is left out of grading: what it declares means nothing here
        "kv/extra_test.go": "package kv\n\nvar reflect = 1\n",
    }
    edits = _edits(go_policy, base, patched)
    assert edits["kv/store_test.go"].kind is EditKind.MECHANICAL
    assert edits["kv/extra_test.go"].kind is EditKind.ADDED
    assert "kv/other_test.go" not in edits  # read, and every name means what it meant


def test_go_a_changed_helper_is_still_preserving(go_policy: TestPolicy) -> None:
    test = STORE_TEST + '\nfunc name() string { return "a" }\n'
    base = {"kv/store.go": STORE, "kv/store_test.go": test}
    patched = {
        "kv/store.go": REWRITTEN_STORE,
        "kv/store_test.go": REWRITTEN_TEST + '\nfunc name() string { return "b" }\n',
    }
    assert _edits(go_policy, base, patched)["kv/store_test.go"].kind is EditKind.PRESERVING
