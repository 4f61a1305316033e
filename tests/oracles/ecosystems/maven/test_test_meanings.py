"""A Java test edit keeps what every name means: an overload, a redirected or dropped
static import, a method gained by the test class or its superclass, or a class of the
package in place of an on-demand import fails naming the name and both meanings; changed
code under test, syntax-only edits and the recipe's rewrites stay usable."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.test_edits import EditKind, TestPolicy
from tests.oracles.edited_trees import classified_edits as _edits


@pytest.fixture
def java_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("java8-to-17").test_policy)


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
