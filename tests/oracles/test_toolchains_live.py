"""Each side built as its authors built it, on a real engine: the base on the JDK its
build declares, the patched tree on 17; what only JDK 17 breaks is the candidate's.

These reach Maven Central through the registry gate.
"""

from __future__ import annotations

from typing import Any

import pytest

from migration_evals.core.model import Tier, Trial, Verdict
from tests.conftest import LiveGrader, RepoFactory, diff_of
from tests.oracles.maven_poms import junit_pom

pytestmark = pytest.mark.docker

_MAIN = "src/main/java/com/example/Greeter.java"
_TEST = "src/test/java/com/example/GreeterTest.java"
_GREETER = """package com.example;

public class Greeter {
    public static String greet(String name) {
        return "Hello, " + name;
    }
}
"""
# Reflection into java.base: allowed on JDK 8, refused by JDK 17's strong encapsulation.
_JDK8_ONLY_TEST = """package com.example;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;

import java.lang.reflect.Field;
import org.junit.Test;

public class GreeterTest {
    @Test
    public void greets() {
        assertEquals("Hello, Ada", Greeter.greet("Ada"));
    }

    @Test
    public void readsStringInternals() throws Exception {
        Field value = String.class.getDeclaredField("value");
        value.setAccessible(true);
        assertNotNull(value.get(Greeter.greet("Ada")));
    }
}
"""
_TEST_SOURCE = """package com.example;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class GreeterTest {
    @Test
    public void greets() {
        assertEquals("Hello, Ada", Greeter.greet("Ada"));
    }
}
"""
_LOMBOK_MAIN = """package com.example;

import lombok.Getter;

public class Greeter {
    @Getter private final String greeting = "Hello, ";

    public static String greet(String name) {
        return new Greeter().getGreeting() + name;
    }
}
"""


def _levels(source: str | None = None, release: str | None = None) -> str:
    if release is not None:
        return f"<maven.compiler.release>{release}</maven.compiler.release>"
    return (
        f"<maven.compiler.source>{source}</maven.compiler.source>"
        f"<maven.compiler.target>{source}</maven.compiler.target>"
    )


def _lombok(version: str) -> str:
    return (
        "<dependency><groupId>org.projectlombok</groupId><artifactId>lombok</artifactId>"
        f"<version>{version}</version><scope>provided</scope></dependency>"
    )


def _pom(levels: str, dependency: str = "") -> str:
    return junit_pom(levels, artifact="toolchains", dependency=dependency)


def _envelope(trial: Trial, tier: Tier) -> Any:
    return next(e for e in trial.envelopes if e.tier is tier)


def _sides(trial: Trial) -> dict[str, Any]:
    """Tier 2's record of each side's toolchain (one project)."""
    (toolchains,) = _envelope(trial, Tier.COMPILE).details["toolchains"]
    return {side: toolchains[side] for side in ("base", "patched")}


def _verdicts(trial: Trial) -> list[str]:
    return [e.verdict.value for e in trial.envelopes if e.tier is not Tier.JUDGE]


def test_a_test_passing_on_jdk_8_and_failing_on_17_fails_the_patch_naming_it(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    repo = make_repo({"pom.xml": _pom(_levels("1.8")), _MAIN: _GREETER, _TEST: _JDK8_ONLY_TEST})
    patch = diff_of(repo[0], {"pom.xml": _pom(_levels(release="17"))})
    trial = live.grade(repo, patch, "java8-to-17")
    sides = _sides(trial)
    assert (sides["base"]["jdk"], sides["patched"]["jdk"]) == (8, 17)
    assert sides["base"]["reported"]["java"].startswith("1.8")
    assert sides["patched"]["reported"]["java"].startswith("17")
    tests = _envelope(trial, Tier.TESTS)
    assert tests.verdict is Verdict.FAIL, tests.reason
    # The reason names the test and how it fails on 17 (strong encapsulation).
    assert "GreeterTest#readsStringInternals" in tests.reason
    assert "java.base" in tests.reason
    assert any("readsStringInternals" in e.message for e in tests.evidence)


def test_a_base_at_source_1_6_builds_on_jdk_8_and_its_migration_is_graded(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    repo = make_repo({"pom.xml": _pom(_levels("1.6")), _MAIN: _GREETER, _TEST: _TEST_SOURCE})
    patch = diff_of(repo[0], {"pom.xml": _pom(_levels(release="17"))})
    trial = live.grade(repo, patch, "java8-to-17")
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    base = _sides(trial)["base"]
    assert base["jdk"] == 8
    assert "1.6" in base["why"]


def test_a_patch_leaving_lombok_1_18_6_fails_with_the_cause_and_raising_it_is_graded(
    live: LiveGrader, make_repo: RepoFactory
) -> None:
    files = {
        "pom.xml": _pom(_levels("1.8"), _lombok("1.18.6")),
        _MAIN: _LOMBOK_MAIN,
        _TEST: _TEST_SOURCE,
    }
    repo = make_repo(files)
    minimal = diff_of(repo[0], {"pom.xml": _pom(_levels(release="17"), _lombok("1.18.6"))})
    left = live.grade(repo, minimal, "java8-to-17")
    compiled = _envelope(left, Tier.COMPILE)
    # The base built (on JDK 8): the failure is the patch's, and says what broke.
    assert compiled.verdict is Verdict.FAIL, compiled.reason
    assert "lombok" in compiled.reason.lower() or "javac" in compiled.reason.lower()
    assert "COMPILATION ERROR" not in compiled.reason
    raised = diff_of(repo[0], {"pom.xml": _pom(_levels(release="17"), _lombok("1.18.30"))})
    graded = live.grade(repo, raised, "java8-to-17")
    assert _verdicts(graded) == ["pass", "pass", "pass"], graded.envelopes


def test_a_java_11_base_builds_on_jdk_11(live: LiveGrader, make_repo: RepoFactory) -> None:
    # String.isBlank is Java 11 API: the base needs JDK 11, not 8.
    greeter = _GREETER.replace('"Hello, " + name', '(name.isBlank() ? "Hello" : "Hello, ") + name')
    repo = make_repo({"pom.xml": _pom(_levels(release="11")), _MAIN: greeter, _TEST: _TEST_SOURCE})
    patch = diff_of(repo[0], {"pom.xml": _pom(_levels(release="17"))})
    trial = live.grade(repo, patch, "java8-to-17")
    assert _verdicts(trial) == ["pass", "pass", "pass"], trial.envelopes
    sides = _sides(trial)
    assert sides["base"]["jdk"] == 11
    assert sides["base"]["reported"]["java"].startswith("11")
