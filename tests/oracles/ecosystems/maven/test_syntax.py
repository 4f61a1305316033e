"""Java 17 syntax in a test edit: the forms the Java recipe declares syntax-only are
"tests changed (mechanical)", for the judge, never a fail; a form that hides a real change
(another initializer, another literal, another assertion) still fails."""

from __future__ import annotations

import pytest

from migration_evals.core.specs import SpecSet
from migration_evals.oracles.ecosystems.maven.syntax import SYNTAX_FORMS, string_value
from migration_evals.oracles.ecosystems.registry import recipe_spec_schema
from migration_evals.oracles.test_edits import (
    EditKind,
    TestEdit,
    TestEdits,
    TestPolicy,
    classify_test_edit,
)

PATH = "src/test/java/x/OrdersTest.java"

BASE = """package x;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.Test;

public class OrdersTest {
    @Test
    public void totals() {
        List<String> names = new ArrayList<String>();
        Map<String, List<Integer>> byName = new HashMap<String, List<Integer>>();
        names.add("a");
        long total = 5L;
        assertEquals(5L, total);
        assertEquals(1, names.size());
        assertEquals(0, byName.size());
    }
}
"""

# The real pull request's edit: locals to var, constructors to the diamond.
VAR_AND_DIAMOND = (
    BASE.replace(
        "List<String> names = new ArrayList<String>();", "var names = new ArrayList<String>();"
    )
    .replace("new HashMap<String, List<Integer>>()", "new HashMap<>()")
    .replace("long total = 5L;", "var total = 5L;")
)


@pytest.fixture
def policy(specs: SpecSet) -> TestPolicy:
    return TestPolicy.of(specs.recipe("java8-to-17").test_policy)


def _edit(policy: TestPolicy, patched: str, base: str = BASE) -> TestEdit:
    return classify_test_edit(PATH, base.encode(), patched.encode(), policy.groups, policy.syntax)


def test_the_recipe_declares_every_form_and_the_schema_names_them(policy: TestPolicy) -> None:
    test_policy = recipe_spec_schema()["properties"]["test_policy"]["properties"]
    assert test_policy["syntax"]["items"]["enum"] == list(SYNTAX_FORMS)
    assert policy.syntax == frozenset(SYNTAX_FORMS)


def test_var_and_the_diamond_are_tests_changed_mechanical_for_the_judge(
    policy: TestPolicy,
) -> None:
    edit = _edit(policy, VAR_AND_DIAMOND)
    assert edit.kind is EditKind.MECHANICAL
    assert edit.syntax == ("diamond", "var")
    assert edit.reason == "tests changed (mechanical): Java 17 syntax only (diamond, var)"
    edits = TestEdits((edit,))
    assert edits.offending is None
    assert edits.usable == {PATH}
    assert edits.changes_tests([PATH])  # graded in the base's place: the judge reviews it
    assert edit.to_dict()["syntax"] == ["diamond", "var"]


def test_without_the_declaration_the_same_edit_is_compared_token_by_token(
    policy: TestPolicy,
) -> None:
    edit = classify_test_edit(PATH, BASE.encode(), VAR_AND_DIAMOND.encode(), policy.groups)
    assert edit.kind is EditKind.OFFENDING


def test_the_recipes_own_rewrites_alone_are_mechanical_and_change_no_test(
    policy: TestPolicy,
) -> None:
    edit = _edit(policy, BASE.replace("    @Test", "    // checked\n    @Test"))
    assert (edit.kind, edit.syntax) == (EditKind.MECHANICAL, ())
    assert not TestEdits((edit,)).changes_tests([PATH])


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # var with another initializer
        (
            ("var names = new ArrayList<String>();", "var names = new LinkedList<String>();"),
            "OrdersTest#totals() was changed",
        ),
        # var over a literal of another type: long becomes int
        (("var total = 5L;", "var total = 5;"), "OrdersTest#totals() was changed"),
        # a diamond beside a changed assertion
        (("assertEquals(0, byName.size());", "assertEquals(byName.size(), byName.size());"), ""),
        # a changed literal
        (('names.add("a");', 'names.add("b");'), ""),
        # other type arguments are not the diamond
        (("new HashMap<>()", "new HashMap<String, List<Long>>()"), ""),
    ],
)
def test_var_or_the_diamond_does_not_hide_a_real_change(
    policy: TestPolicy, change: tuple[str, str], reason: str
) -> None:
    assert change[0] in VAR_AND_DIAMOND
    edit = _edit(policy, VAR_AND_DIAMOND.replace(*change))
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason.startswith(reason or "OrdersTest#totals() was changed")
    assert edit.hunk  # the line that differs, not only the method's name


def test_dropping_a_declared_type_for_var_shows_the_line_it_changed(policy: TestPolicy) -> None:
    edit = _edit(policy, VAR_AND_DIAMOND.replace("var total = 5L;", "var total = 5;"))
    assert edit.hunk == "-long total = 5L; +var total = 5;"
    assert edit.line == 18


FORMS_BASE = """package x;

import static org.junit.Assert.assertEquals;

import java.util.Iterator;
import java.util.List;
import org.junit.Test;

public class FormsTest {
    @Test
    public void forms() {
        String text = "line one\\n" + "line two\\n";
        assertEquals("line one\\nline two\\n", text);
        int kind;
        switch (names().size()) {
            case 1:
            case 2:
                kind = 1;
                break;
            default: {
                kind = 2;
                break;
            }
        }
        assertEquals(1, kind);
        Object found = names();
        if (found instanceof List) {
            List list = (List) found;
            assertEquals(2, list.size());
        }
        for (Iterator<String> it = names().iterator(); it.hasNext(); ) {
            String name = it.next();
            assertEquals(4, name.length());
        }
        String[] all = {"abcd"};
        for (int i = 0; i < all.length; i++) {
            String name = all[i];
            assertEquals(4, name.length());
        }
        assertEquals(10, size(1));
    }

    private List<String> names() {
        return List.of("abcd", "efgh");
    }

    private static int size(int kind) {
        switch (kind) {
            case 1:
                return 10;
            default:
                return 20;
        }
    }
}
"""

FORMS = {
    "text-block": (
        '"line one\\n" + "line two\\n"',
        '"""\n            line one\n            line two\n            """',
    ),
    "switch-expression": (
        "switch (names().size()) {\n            case 1:\n            case 2:\n"
        "                kind = 1;\n                break;\n            default: {\n"
        "                kind = 2;\n                break;\n            }\n        }",
        "switch (names().size()) {\n            case 1, 2 -> kind = 1;\n"
        "            default -> kind = 2;\n        }",
    ),
    "instanceof-pattern": (
        "if (found instanceof List) {\n            List list = (List) found;\n",
        "if (found instanceof List list) {\n",
    ),
    "enhanced-for": (
        "for (Iterator<String> it = names().iterator(); it.hasNext(); ) {\n"
        "            String name = it.next();\n",
        "for (var name : names()) {\n",
    ),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_each_declared_form_is_mechanical(policy: TestPolicy, form: str) -> None:
    before, after = FORMS[form]
    assert before in FORMS_BASE
    edit = _edit(policy, FORMS_BASE.replace(before, after), base=FORMS_BASE)
    assert edit.kind is EditKind.MECHANICAL, edit.reason
    assert form in edit.syntax


def test_an_index_loop_and_a_return_switch_are_their_java_8_forms(policy: TestPolicy) -> None:
    patched = FORMS_BASE.replace(
        "for (int i = 0; i < all.length; i++) {\n            String name = all[i];\n",
        "for (String name : all) {\n",
    ).replace(
        "switch (kind) {\n            case 1:\n                return 10;\n"
        "            default:\n                return 20;\n        }",
        "return switch (kind) {\n            case 1 -> 10;\n"
        "            default -> {\n                yield 20;\n            }\n        };",
    )
    edit = _edit(policy, patched, base=FORMS_BASE)
    assert edit.kind is EditKind.MECHANICAL, edit.reason
    assert edit.syntax == ("enhanced-for", "switch-expression")


@pytest.mark.parametrize(
    ("form", "change"),
    [
        ("text-block", ("line two", "line 2")),  # another string
        ("switch-expression", ("default -> kind = 2;", "default -> kind = 1;")),
        # the loop's element is another
        ("enhanced-for", ("for (var name : names()) {", 'for (var name : List.of("abcd")) {')),
        # the pattern tests another type
        ("instanceof-pattern", ("found instanceof List list", "found instanceof Iterable list")),
    ],
)
def test_a_declared_form_that_changes_behaviour_fails(
    policy: TestPolicy, form: str, change: tuple[str, str]
) -> None:
    before, after = FORMS[form]
    patched = FORMS_BASE.replace(before, after)
    assert change[0] in patched
    edit = _edit(policy, patched.replace(*change), base=FORMS_BASE)
    assert edit.kind is EditKind.OFFENDING
    assert edit.reason == "FormsTest#forms() was changed"


def test_a_switch_whose_groups_fall_through_is_not_its_rules(policy: TestPolicy) -> None:
    # At the base case 1 and 2 fall through to default (kind = 2); the rules do not.
    falls = FORMS_BASE.replace("                kind = 1;\n                break;\n", "kind = 1;\n")
    assert falls != FORMS_BASE
    rules = FORMS_BASE.replace(*FORMS["switch-expression"])
    assert _edit(policy, rules, base=falls).kind is EditKind.OFFENDING
    assert _edit(policy, rules, base=FORMS_BASE).kind is EditKind.MECHANICAL


def test_a_pattern_variable_needs_the_cast_to_open_the_branch(policy: TestPolicy) -> None:
    late = FORMS_BASE.replace(
        "            List list = (List) found;\n            assertEquals(2, list.size());\n",
        "            assertEquals(2, 2);\n            List list = (List) found;\n"
        "            assertEquals(2, list.size());\n",
    )
    patched = late.replace(
        "if (found instanceof List) {\n            assertEquals(2, 2);\n"
        "            List list = (List) found;\n",
        "if (found instanceof List list) {\n            assertEquals(2, 2);\n",
    )
    assert patched != late
    assert _edit(policy, patched, base=late).kind is EditKind.OFFENDING


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ('"a\\tb"', "a\tb"),
        ('"""\n    one\n      two\n    """', "one\n  two\n"),
        ('"""\n    one  \n    two"""', "one\ntwo"),
        ('"""\n    a \\s\n    b\\\n    c\n    """', "a  \nbc\n"),
        ('"\\u0041\\101"', "AA"),
    ],
)
def test_string_values_follow_the_language(literal: str, value: str) -> None:
    assert string_value(literal) == value


def test_a_syntax_only_edit_may_leave_the_recipes_rewrites_undone(policy: TestPolicy) -> None:
    """A rewrite is an equivalence the recipe declares, not an obligation: var in a test
    that still calls Mockito's verifyZeroInteractions (as Mockito 2 allows) is mechanical."""
    base = BASE.replace(
        "import static org.junit.Assert.assertEquals;",
        "import static org.junit.Assert.assertEquals;\n"
        "import static org.mockito.Mockito.verifyZeroInteractions;",
    ).replace(
        "        long total = 5L;\n",
        "        long total = 5L;\n        verifyZeroInteractions(names);\n",
    )
    patched = base.replace("long total = 5L;", "var total = 5L;")
    edit = _edit(policy, patched, base=base)
    assert (edit.kind, edit.syntax) == (EditKind.MECHANICAL, ("var",))
    renamed = patched.replace("verifyZeroInteractions", "verifyNoInteractions")
    assert _edit(policy, renamed, base=base).kind is EditKind.MECHANICAL
    other = patched.replace("verifyZeroInteractions(names)", "verifyZeroInteractions(byName)")
    assert _edit(policy, other, base=base).kind is EditKind.OFFENDING
