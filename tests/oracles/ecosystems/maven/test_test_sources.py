"""Java test edits: the recipe's Mockito rename passes, anything that weakens or bypasses
a test fails with its hunk, and a changed helper is usable only as "tests changed"."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.test_edits import EditKind, TestEdit, TestPolicy, classify_test_edit


@pytest.fixture
def java_policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("java8-to-17").test_policy)


JAVA_BASE = """package x;

import static org.junit.Assert.assertEquals;
import static org.mockito.Matchers.anyString;
import static org.mockito.Mockito.when;

import org.junit.Test;
import org.mockito.Matchers;

public class CalcTest {
    private final Calc calc = new Calc();

    @Test
    public void adds() {
        when(calc.name(anyString())).thenReturn("c");
        assertEquals(5, calc.add(2, 3));
        assertEquals("c", calc.name(Matchers.anyString()));
    }

    private int fixture() {
        return 2;
    }
}
"""
JAVA_MECHANICAL = (
    JAVA_BASE.replace("org.mockito.Matchers", "org.mockito.ArgumentMatchers")
    .replace("Matchers.anyString()", "ArgumentMatchers.anyString()")
    .replace("import static org.junit.Assert.assertEquals;\n", "")
    .replace(
        "import org.mockito.ArgumentMatchers;",
        "import org.mockito.ArgumentMatchers;\nimport static org.junit.Assert.assertEquals;",
    )
)


def _java(policy: TestPolicy, patched: str) -> TestEdit:
    path = "src/test/java/x/CalcTest.java"
    return classify_test_edit(path, JAVA_BASE.encode(), patched.encode(), policy.groups)


def test_the_mockito_matchers_rename_is_mechanical(java_policy: TestPolicy) -> None:
    assert "ArgumentArgument" not in JAVA_MECHANICAL
    assert _java(java_policy, JAVA_MECHANICAL).kind is EditKind.MECHANICAL


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (("        assertEquals(5, calc.add(2, 3));\n", ""), "CalcTest#adds() was changed"),
        (("@Test\n", "@Test\n    @Ignore\n"), "CalcTest#adds() was changed"),
        (("@Test\n", "@Test(expected = AssertionError.class)\n"), "CalcTest#adds() was changed"),
        (
            (
                "        assertEquals(5, calc.add(2, 3));\n",
                "        try {\n            assertEquals(5, calc.add(2, 3));\n"
                "        } catch (AssertionError e) {\n        }\n",
            ),
            "CalcTest#adds() was changed",
        ),
        (("public class CalcTest {", "@Ignore\npublic class CalcTest {"), "class CalcTest was"),
        (
            (
                "    private final Calc calc",
                "    @Rule public Swallow s = new Swallow();\n    private final Calc calc",
            ),
            "CalcTest#field s = new Swallow() was added",
        ),
        (
            ("    @Test\n    public void adds() {\n", "    public void adds() {\n"),
            "CalcTest#adds() was",
        ),
    ],
)
def test_java_edits_that_weaken_or_bypass_a_test_fail(
    java_policy: TestPolicy, change: tuple[str, str], reason: str
) -> None:
    assert change[0] in JAVA_MECHANICAL
    edit = _java(java_policy, JAVA_MECHANICAL.replace(*change))
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason.startswith(reason), edit.reason


def test_an_emptied_test_method_is_named_so(java_policy: TestPolicy) -> None:
    body = JAVA_MECHANICAL[
        JAVA_MECHANICAL.index("        when(") : JAVA_MECHANICAL.index("    }\n")
    ]
    edit = _java(java_policy, JAVA_MECHANICAL.replace(body, ""))
    assert edit.reason == "CalcTest#adds() was emptied"


def test_an_assume_in_a_helper_fails(java_policy: TestPolicy) -> None:
    edit = _java(
        java_policy,
        JAVA_MECHANICAL.replace("return 2;", "Assume.assumeTrue(false);\n        return 2;"),
    )
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason == "a test is newly skipped or ended early"


def test_a_changed_java_helper_is_preserving(java_policy: TestPolicy) -> None:
    assert _java(java_policy, JAVA_MECHANICAL.replace("return 2;", "return 1 + 1;")).kind is (
        EditKind.PRESERVING
    )
