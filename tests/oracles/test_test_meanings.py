"""A preserving test edit keeps what every name means: a patch that makes a name a test
uses resolve to its own declaration (a Go package-level var beside an import it drops,
a Java overload where an import it redirects or drops used to lead) fails, naming the
name and both meanings; the recipe's rewrites and code the patch may change stay
usable."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.test_edits import EditKind, TestEdit, TestPolicy, classify_test_edits
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree


@pytest.fixture
def go_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("go-import-rewrite").test_policy)


@pytest.fixture
def java_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("java8-to-17").test_policy)


def _edits(
    policy: TestPolicy, base: Mapping[str, str], patched: Mapping[str, str]
) -> dict[str, TestEdit]:
    changes = []
    for path in sorted(set(base) | set(patched)):
        if path not in base:
            changes.append(FileChange(ChangeKind.ADD, None, path))
        elif path not in patched:
            changes.append(FileChange(ChangeKind.DELETE, path, None))
        elif base[path] != patched[path]:
            changes.append(FileChange(ChangeKind.MODIFY, path, path))
    tree = MemoryTree(
        {p: text.encode() for p, text in base.items()},
        {p: text.encode() for p, text in patched.items()},
        changes,
    )
    return {edit.path: edit for edit in classify_test_edits(tree, policy).edits}


# -- Go --------------------------------------------------------------------------------

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


# -- Java ------------------------------------------------------------------------------

CALC = """package x;

public class Calc {
    public Integer add(int a, int b) {
        return a + b;
    }
}
"""
CHECKS = """package x;

public final class Checks {
    public static void near(double a, double b) {
    }
}
"""
CALC_TEST = """package x;

import static org.junit.Assert.*;
import static x.Checks.*;

import org.junit.Test;

public class CalcTest {
    @Test
    public void adds() {
        Integer got = new Calc().add(2, 3);
        assertEquals(got, 5);
        near(1.0, 1.0);
    }
}
"""
MAIN = "src/main/java/x/"
TEST = "src/test/java/x/"
JAVA_BASE = {
    MAIN + "Calc.java": CALC,
    TEST + "Checks.java": CHECKS,
    TEST + "CalcTest.java": CALC_TEST,
}
# assertEquals(Integer, long) beside JUnit's makes assertEquals(Integer, int) ambiguous: the
# base's test no longer compiles, so the patch's copy would be graded.
LENIENT_CHECKS = CHECKS.replace(
    "    public static void near",
    "    public static void assertEquals(Integer a, long b) {\n    }\n\n"
    "    public static void near",
)

LENIENT = """package x;

public class Assert {
    public static void assertEquals(Object a, Object b) {
    }
}
"""


def test_java_an_overload_and_a_dropped_static_import_fail(java_policy: TestPolicy) -> None:
    patched = {
        **JAVA_BASE,
        TEST + "Checks.java": LENIENT_CHECKS,
        TEST + "CalcTest.java": CALC_TEST.replace("import static org.junit.Assert.*;\n", ""),
    }
    edits = _edits(java_policy, JAVA_BASE, patched)
    edit = edits[TEST + "CalcTest.java"]
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason == (
        "a name the tests use is rebound: assertEquals means assertEquals(Integer, long) of"
        " x.Checks (src/test/java/x/Checks.java) in the patch, import static"
        " org.junit.Assert.* (if it has assertEquals) at the base"
    )
    assert edit.hunk == "+assertEquals(got, 5);"


def test_java_a_redirected_static_import_fails(java_policy: TestPolicy) -> None:
    lenient = LENIENT.replace("Assert", "Lenient")
    patched = {
        **JAVA_BASE,
        MAIN + "Lenient.java": lenient,
        TEST + "CalcTest.java": CALC_TEST.replace("org.junit.Assert.*", "x.Lenient.*"),
    }
    edit = _edits(java_policy, JAVA_BASE, patched)[TEST + "CalcTest.java"]
    assert edit.kind is EditKind.OFFENDING
    assert "assertEquals means assertEquals(Object, Object) of x.Lenient" in edit.reason


def test_java_a_method_the_test_class_gains_captures_its_calls(java_policy: TestPolicy) -> None:
    patched = {
        **JAVA_BASE,
        TEST + "CalcTest.java": CALC_TEST.replace(
            "    @Test",
            "    private static void assertEquals(Object a, Object b) {\n    }\n\n    @Test",
        ),
    }
    edit = _edits(java_policy, JAVA_BASE, patched)[TEST + "CalcTest.java"]
    assert edit.kind is EditKind.OFFENDING
    assert "assertEquals means assertEquals(Object, Object) of x.CalcTest" in edit.reason


def test_java_an_overload_in_a_superclass_captures_a_test_left_alone(
    java_policy: TestPolicy,
) -> None:
    test = CALC_TEST.replace("public class CalcTest {", "public class CalcTest extends Fixture {")
    fixture = "package x;\n\npublic abstract class Fixture {\n}\n"
    lenient = fixture.replace(
        "{\n}", "{\n    protected void assertEquals(Object a, Object b) {}\n}"
    )
    base = {**JAVA_BASE, MAIN + "Fixture.java": fixture, TEST + "CalcTest.java": test}
    patched = {**base, MAIN + "Fixture.java": lenient}
    edit = _edits(java_policy, base, patched)[TEST + "CalcTest.java"]
    assert edit.kind is EditKind.OFFENDING
    assert "assertEquals means assertEquals(Object, Object) of x.Fixture" in edit.reason


def test_java_a_class_of_the_package_captures_an_on_demand_import(
    java_policy: TestPolicy,
) -> None:
    test = CALC_TEST.replace("import org.junit.Test;", "import org.junit.*;").replace(
        "assertEquals(got", "Assert.assertEquals(got"
    )
    base = {**JAVA_BASE, TEST + "CalcTest.java": test}
    patched = {**base, MAIN + "Assert.java": LENIENT}
    edit = _edits(java_policy, base, patched)[TEST + "CalcTest.java"]
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason.startswith("a name the tests use is rebound: Assert means ")
    assert "class x.Assert (src/main/java/x/Assert.java)" in edit.reason.split(" in the patch")[0]


def test_java_changed_code_under_test_and_syntax_only_edits_stay_usable(
    java_policy: TestPolicy,
) -> None:
    calc = CALC.replace("return a + b;", "return Math.addExact(a, b);")
    patched = {
        **JAVA_BASE,
        MAIN + "Calc.java": calc,
        MAIN + "Audit.java": "package x;\n\nclass Audit {\n    static void log(String s) {}\n}\n",
        TEST + "CalcTest.java": CALC_TEST.replace("Integer got =", "var got ="),
    }
    edits = _edits(java_policy, JAVA_BASE, patched)
    assert edits[TEST + "CalcTest.java"].kind is EditKind.MECHANICAL
    assert edits[TEST + "CalcTest.java"].syntax == ("var",)


def test_java_the_mockito_rename_keeps_its_meanings(java_policy: TestPolicy) -> None:
    test = (
        "package x;\n\nimport static org.mockito.Matchers.anyString;\n"
        "import static org.mockito.Mockito.when;\n\nimport org.junit.Test;\n"
        "import org.mockito.Matchers;\n\npublic class NameTest {\n    @Test\n"
        "    public void names() {\n        when(Matchers.anyString()).thenReturn(anyString());\n"
        "    }\n}\n"
    )
    renamed = test.replace("org.mockito.Matchers", "org.mockito.ArgumentMatchers").replace(
        "Matchers.anyString()", "ArgumentMatchers.anyString()"
    )
    base = {TEST + "NameTest.java": test}
    edits = _edits(java_policy, base, {TEST + "NameTest.java": renamed})
    assert edits[TEST + "NameTest.java"].kind is EditKind.MECHANICAL
