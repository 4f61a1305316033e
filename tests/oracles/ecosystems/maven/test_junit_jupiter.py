"""The junit-jupiter contract and the junit4-to-5 recipe's declared test rewrites, against
the real recipe spec."""

from __future__ import annotations

import pytest

from migration_evals.core.model import Evidence
from migration_evals.core.specs import Recipe, SpecSet
from migration_evals.oracles.ecosystems.registry import check_contract, ecosystem_of, ecosystems
from migration_evals.oracles.test_edits import EditKind, TestPolicy, classify_test_edit
from migration_evals.oracles.tree import ChangeKind, FileChange, MemoryTree

TEST = "src/test/java/com/example/LedgerTest.java"
MAIN = "src/main/java/com/example/Ledger.java"
JUNIT4 = "junit:junit:4.13.2"
JUPITER = "org.junit.jupiter:junit-jupiter:5.14.1"
VINTAGE = "org.junit.vintage:junit-vintage-engine:5.14.1"


@pytest.fixture
def recipe(specs: SpecSet) -> Recipe:
    return specs.recipe("junit4-to-5")


def _pom(*dependencies: str, surefire: str = "3.5.2", properties: str = "") -> str:
    declared = "".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId>"
        f"<version>{v}</version><scope>test</scope></dependency>\n"
        for g, a, v in (d.split(":") for d in dependencies)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        "  <groupId>demo</groupId><artifactId>demo</artifactId><version>1.0</version>\n"
        f"  <properties>{properties}</properties>\n"
        f"  <dependencies>\n{declared}  </dependencies>\n"
        "  <build><plugins><plugin><artifactId>maven-surefire-plugin</artifactId>"
        f"<version>{surefire}</version></plugin></plugins></build>\n"
        "</project>\n"
    )


def _patched(pom: str, **edited: str) -> MemoryTree:
    """The base (JUnit 4) and the tree after a patch changing pom.xml and ``edited``."""
    base = {"pom.xml": _pom(JUNIT4), TEST: "class LedgerTest {}\n", MAIN: "class Ledger {}\n"}
    paths = {"pom": "pom.xml", "test": TEST, "main": MAIN}
    patched = base | {"pom.xml": pom} | {paths[k]: v for k, v in edited.items()}
    changes = [FileChange(ChangeKind.MODIFY, p, p) for p in patched if patched[p] != base[p]]
    return MemoryTree(
        {p: c.encode() for p, c in base.items()},
        {p: c.encode() for p, c in patched.items()},
        changes,
    )


def _messages(evidence: list[Evidence]) -> list[str]:
    return [e.message for e in evidence]


def test_the_registry_lists_the_kind_and_the_recipe_is_maven_s(recipe: Recipe) -> None:
    kinds = {kind.name for each in ecosystems() for kind in each.contract_kinds()}
    assert "junit-jupiter" in kinds
    assert recipe.contract.kind == "junit-jupiter"
    assert ecosystem_of(recipe).name == "maven"


def test_tests_and_a_pom_moved_to_jupiter_hold(recipe: Recipe) -> None:
    tree = _patched(_pom(JUPITER), test="class LedgerTest { void t() {} }\n")
    assert check_contract(recipe, {}, tree) == []


def test_a_main_code_edit_is_named(recipe: Recipe) -> None:
    tree = _patched(_pom(JUPITER), main="class Ledger { int x; }\n")
    [evidence] = check_contract(recipe, {}, tree)
    assert evidence.path == MAIN
    assert "the patch changes " + MAIN in evidence.message
    assert "test sources and pom.xml only" in evidence.message


def test_junit4_kept_without_the_vintage_engine_is_named_at_its_line(recipe: Recipe) -> None:
    [evidence] = check_contract(recipe, {}, _patched(_pom(JUNIT4, JUPITER)))
    assert (evidence.path, evidence.line) == ("pom.xml", 7)
    assert "junit:junit is still a dependency and junit-vintage-engine is not" in evidence.message


def test_junit4_beside_the_vintage_engine_holds(recipe: Recipe) -> None:
    assert check_contract(recipe, {}, _patched(_pom(JUNIT4, JUPITER, VINTAGE))) == []


def test_a_build_without_jupiter_is_named(recipe: Recipe) -> None:
    messages = _messages(check_contract(recipe, {}, _patched(_pom(VINTAGE))))
    assert len(messages) == 1
    assert "declares a dependency of group org.junit.jupiter" in messages[0]


def test_a_surefire_older_than_2_22_is_named_and_a_property_is_read(recipe: Recipe) -> None:
    old = _messages(check_contract(recipe, {}, _patched(_pom(JUPITER, surefire="2.12.4"))))
    assert old == [
        "maven-surefire-plugin is 2.12.4, which does not run JUnit Platform tests; "
        "the recipe requires 2.22.0 or later"
    ]
    by_property = _pom(
        JUPITER,
        surefire="${surefire.version}",
        properties="<surefire.version>2.22.2</surefire.version>",
    )
    assert check_contract(recipe, {}, _patched(by_property)) == []


# --- the recipe's declared rewrites (graded by the tests tier) -------------------------

BASE_TEST = """\
package com.example;

import static org.junit.Assert.*;

import org.junit.Before;
import org.junit.Ignore;
import org.junit.Test;

public class LedgerTest {
    private Ledger ledger;

    @Before
    public void open() {
        ledger = new Ledger("alice");
    }

    @Test
    public void keepsItsOwner() {
        assertEquals("the owner", "alice", ledger.owner());
        assertTrue("positive", ledger.balance() >= 0);
    }

    @Test(expected = IllegalStateException.class)
    public void refusesAnOverdraft() {
        ledger.withdraw(1);
    }

    @Test(timeout = 500)
    public void isQuick() {
        assertNotNull(ledger.entries());
    }

    @Ignore("later")
    @Test
    public void later() {
        fail("not yet");
    }
}
"""

JUPITER_TEST = """\
package com.example;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

public class LedgerTest {
    private Ledger ledger;

    @BeforeEach
    public void open() {
        ledger = new Ledger("alice");
    }

    @Test
    public void keepsItsOwner() {
        assertEquals("alice", ledger.owner(), "the owner");
        assertTrue(ledger.balance() >= 0, "positive");
    }

    @Test
    public void refusesAnOverdraft() {
        assertThrows(IllegalStateException.class, () -> {
            ledger.withdraw(1);
        });
    }

    @Test
    @Timeout(value = 500, unit = TimeUnit.MILLISECONDS)
    public void isQuick() {
        assertNotNull(ledger.entries());
    }

    @Disabled("later")
    @Test
    public void later() {
        fail("not yet");
    }
}
"""


def _edit(recipe: Recipe, patched: str) -> tuple[EditKind, str]:
    policy = TestPolicy.of(recipe.test_policy)
    edit = classify_test_edit(
        TEST, BASE_TEST.encode(), patched.encode(), policy.groups, policy.syntax
    )
    return edit.kind, edit.reason


def test_the_declared_rewrites_make_the_jupiter_class_mechanical(recipe: Recipe) -> None:
    assert _edit(recipe, JUPITER_TEST) == (EditKind.MECHANICAL, "")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            (
                "    @Test\n    public void keepsItsOwner",
                '    @Disabled("slow")\n    @Test\n    public void keepsItsOwner',
            ),
            "keepsItsOwner() was changed",
        ),
        (
            ('assertEquals("alice", ledger.owner(), "the owner");', ""),
            "keepsItsOwner() was changed",
        ),
        (
            ("ledger.withdraw(1);\n        });", "ledger.withdraw(0);\n        });"),
            "refusesAnOverdraft() was changed",
        ),
    ],
    ids=["newly-disabled", "assertion-removed", "expected-exception-weakened"],
)
def test_an_edit_beyond_the_rewrites_that_weakens_a_test_fails(
    recipe: Recipe, change: tuple[str, str], reason: str
) -> None:
    old, new = change
    assert old in JUPITER_TEST
    kind, found = _edit(recipe, JUPITER_TEST.replace(old, new))
    assert kind is EditKind.OFFENDING
    assert reason in found


def test_a_removed_test_fails(recipe: Recipe) -> None:
    later = '    @Disabled("later")\n    @Test\n    public void later() {\n'
    later += '        fail("not yet");\n    }\n'
    removed = JUPITER_TEST.replace(later, "")
    assert removed != JUPITER_TEST
    assert _edit(recipe, removed) == (EditKind.OFFENDING, "LedgerTest#later() was removed")
