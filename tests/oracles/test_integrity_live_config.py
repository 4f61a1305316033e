"""The base's test configuration and no shadowing, on a real engine with hostile patches.

Each test clones a bundled example, writes the example's good patch plus one trick with
``git diff`` and grades it with the real cascade (a judge that always passes) on the
module's grader and its clone of the example: the trick is named in the failing tier's
reason, and a legitimate Java 17 change still passes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from migration_evals.core.model import Envelope, Tier, Trial, Verdict
from tests.conftest import (
    ROOT,
    LiveGrader,
    clone_example,
    diff_of,
    good_patch_files,
    run_git,
    without_outside,
)

pytestmark = pytest.mark.docker

BUNDLES = ROOT / "examples" / "bundles"
PATCHES = ROOT / "examples" / "patches"

EMPTY_ASSERT = """package org.junit;

public class Assert {
    public static void assertEquals(Object expected, Object actual) {}
    public static void assertEquals(long expected, long actual) {}
    public static void assertTrue(boolean condition) {}
    public static void assertFalse(boolean condition) {}
    public static void fail(String message) {}
}
"""
FAKE_STRING_UTILS = """package org.apache.commons.lang3;

public class StringUtils {
    public static String stripAccents(String input) {
        return input;
    }

    public static boolean isBlank(CharSequence text) {
        return false;
    }
}
"""


def _envelope(trial: Trial, tier: Tier) -> Envelope:
    return next(e for e in trial.envelopes if e.tier is tier)


def _failed_at(trial: Trial, tier: Tier) -> Envelope:
    envelope = _envelope(trial, tier)
    assert envelope.verdict is Verdict.FAIL, envelope.reason
    assert trial.verdict is Verdict.FAIL
    return envelope


def test_an_empty_junit_assert_in_main_sources_fails_naming_the_file_and_package(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "java-calc")
    files = good_patch_files(repo[0], "java-calc")
    # The tests would compile against these empty assertions, and every one would pass.
    shadow = "src/main/java/org/junit/Assert.java"
    patch = diff_of(repo[0], {**files, shadow: EMPTY_ASSERT})
    trial = live.grade(live.example("java-calc"), patch, "java8-to-17")
    envelope = _failed_at(trial, Tier.APPLY)
    assert "shadows code it does not own" in envelope.reason
    first = envelope.evidence[0]
    assert first.path == shadow and first.line == 1
    assert "declares package org.junit, which belongs to org.junit" in first.message


def test_tests_redirected_to_emptied_copies_fail_naming_the_setting(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "java-calc")
    files = good_patch_files(repo[0], "java-calc")
    # Copies of the real tests with empty bodies, same names and count; the POM points
    # the build at them and the real test files are left untouched.
    copies: dict[str, str | None] = {}
    for test in (repo[0] / "src/test/java").rglob("*Test.java"):
        emptied = re.sub(
            r"(public void \w+\(\)) \{.*?\n    \}", r"\1 {\n    }", test.read_text(), flags=re.S
        )
        copies[str(test.relative_to(repo[0])).replace("src/test/", "src/checks/")] = emptied
    pom = str(files["pom.xml"]).replace(
        "  <build>\n", "  <build>\n    <testSourceDirectory>src/checks/java</testSourceDirectory>\n"
    )
    patch = diff_of(repo[0], {**files, **copies, "pom.xml": pom})
    # The copies sit where main code could live and import JUnit: outside the recipe.
    base = live.example("java-calc")
    envelope = _failed_at(live.grade(base, patch, "java8-to-17"), Tier.APPLY)
    assert "ties main code to the test framework" in envelope.reason
    # Without that check, the test configuration's own names the setting.
    trial = live.grade(base, patch, "java8-to-17", without_outside(live.specs, "java8-to-17"))
    envelope = _failed_at(trial, Tier.APPLY)
    assert "weakens the test configuration" in envelope.reason
    assert "<build><testSourceDirectory> is src/checks/java; was src/test/java" in envelope.reason
    assert envelope.evidence[0].path == "pom.xml"
    assert (
        envelope.evidence[0].line
        == pom.splitlines().index("    <testSourceDirectory>src/checks/java</testSourceDirectory>")
        + 1
    )


def test_a_module_dropped_from_the_reactor_fails_naming_it(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "java-nested")
    files = good_patch_files(repo[0], "java-nested")
    aggregator = "service/pom.xml"
    reactor = str(files.get(aggregator) or (repo[0] / aggregator).read_text())
    dropped = reactor.replace("    <module>core</module>\n", "    <!-- <module>core</module> -->\n")
    assert dropped != reactor
    patch = diff_of(repo[0], {**files, aggregator: dropped})
    trial = live.grade(live.example("java-nested"), patch, "java8-to-17")
    envelope = _failed_at(trial, Tier.APPLY)
    assert (
        "module service/core (ledger-core) is dropped from the reactor at service"
        in envelope.reason
    )
    assert envelope.evidence[0].path == aggregator


def test_a_copy_of_a_resolved_dependencys_class_fails_in_tier_2(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "java-central")
    files = good_patch_files(repo[0], "java-central")
    # Not a package tier 1 knows: only the jars resolution fetched tell whose it is.
    shadow = "src/main/java/org/apache/commons/lang3/StringUtils.java"
    patch = diff_of(repo[0], {**files, shadow: FAKE_STRING_UTILS})
    trial = live.grade(live.example("java-central"), patch, "java8-to-17")
    assert _envelope(trial, Tier.APPLY).verdict is Verdict.PASS
    envelope = _failed_at(trial, Tier.COMPILE)
    assert envelope.reason.startswith("the patch shadows a dependency: ")
    assert envelope.evidence[0].path == shadow
    assert "package org.apache.commons.lang3, which belongs to a dependency" in envelope.reason


def test_a_go_test_file_excluded_by_a_build_constraint_fails(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    files = good_patch_files(repo[0], "go-ioutil")
    test_file = "kv/store_test.go"
    excluded = "//go:build ignore\n\n" + str(
        files.get(test_file) or (repo[0] / test_file).read_text()
    )
    patch = diff_of(repo[0], {**files, test_file: excluded})
    trial = live.grade(live.example("go-ioutil"), patch, "go-import-rewrite")
    envelope = _failed_at(trial, Tier.APPLY)
    assert "kv/store_test.go is no longer built for linux/amd64" in envelope.reason


def test_a_local_replace_of_a_go_dependency_fails(live: LiveGrader, tmp_path: Path) -> None:
    repo = clone_example(tmp_path, "go-modern")
    files = good_patch_files(repo[0], "go-modern")
    go_mod = str(files.get("go.mod") or (repo[0] / "go.mod").read_text())
    replaced = go_mod + "\nreplace golang.org/x/text => ./fork/text\n"
    fork = {"fork/text/go.mod": "module golang.org/x/text\n\ngo 1.18\n"}
    patch = diff_of(repo[0], {**files, **fork, "go.mod": replaced})
    trial = live.grade(live.example("go-modern"), patch, "go-import-rewrite")
    envelope = _failed_at(trial, Tier.APPLY)
    assert "go.mod replaces golang.org/x/text with the folder ./fork/text" in envelope.reason


def test_a_java_17_add_opens_argline_still_passes(live: LiveGrader, tmp_path: Path) -> None:
    repo = clone_example(tmp_path, "java-calc")
    files = good_patch_files(repo[0], "java-calc")
    pom = str(files["pom.xml"]).replace(
        "<artifactId>maven-surefire-plugin</artifactId>\n        <version>2.22.2</version>\n",
        "<artifactId>maven-surefire-plugin</artifactId>\n        <version>2.22.2</version>\n"
        "        <configuration>\n"
        "          <argLine>--add-opens java.base/java.lang=ALL-UNNAMED</argLine>\n"
        "        </configuration>\n",
    )
    assert pom != files["pom.xml"]
    patch = diff_of(repo[0], {**files, "pom.xml": pom})
    trial = live.grade(live.example("java-calc"), patch, "java8-to-17")
    for tier in (Tier.APPLY, Tier.COMPILE, Tier.TESTS):
        envelope = _envelope(trial, tier)
        assert envelope.verdict is Verdict.PASS, (tier, envelope.reason)


def test_goflags_in_files_the_patch_adds_do_not_narrow_the_tests(
    live: LiveGrader, tmp_path: Path
) -> None:
    repo = clone_example(tmp_path, "go-ioutil")
    # The example's patch that breaks a test, plus every place a tree could hope to set
    # GOFLAGS from: the go command in the sandbox reads none of them (its configuration
    # file is under HOME, outside the tree), so the broken test still runs and fails.
    broken = (PATCHES / "go-ioutil" / "fails-test.diff").read_text()
    subprocess.run(["git", "apply"], cwd=repo[0], input=broken, text=True, check=True)
    touched = run_git(repo[0], "diff", "--name-only").splitlines()
    files: dict[str, str | None] = {name: (repo[0] / name).read_text() for name in touched}
    run_git(repo[0], "checkout", "-q", "--", ".")
    narrowing = "GOFLAGS=-run=^$ -short\n"
    for place in ("go.env", ".config/go/env", "kv/go.env"):
        files[place] = narrowing
    trial = live.grade(live.example("go-ioutil"), diff_of(repo[0], files), "go-import-rewrite")
    assert _envelope(trial, Tier.APPLY).verdict is Verdict.PASS
    envelope = _failed_at(trial, Tier.TESTS)
    assert "TestKeysIgnoresStrayFiles" in " ".join(e.message for e in envelope.evidence)
